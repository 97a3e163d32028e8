import Foundation
import Logging
import PostgresNIO
import SearchlightHistory

/// Where each source stands in PostgreSQL: its checkpoint, its lag, its resyncs, its documents.
///
/// ```swift
/// let sources = try await PostgresStatus.read(endpoint, database: store)
/// for source in sources { print(source.source, source.lagTokens ?? 0, source.liveLagTokens ?? 0) }
/// ```
///
/// Reads, in one transaction:
///
/// ```sql
/// SELECT source, token, token_timestamp, head_token, head_timestamp, applied_at, resyncs, resync_reason, resynced_at, database_path
/// FROM "searchlight".sources ORDER BY source;
/// SELECT source, entity, count(*) FROM "searchlight".documents GROUP BY source, entity;
/// ```
public struct PostgresSourceStatus: Hashable, Sendable, Codable {
    public var source: String
    /// PostgreSQL's checkpoint: the last token applied.
    public var token: HistoryToken
    /// The source's commit time of that token.
    public var tokenDate: Date?
    /// The source's newest token when the sink last read it.
    public var headToken: HistoryToken?
    public var headDate: Date?
    /// `headToken - token`: how far behind the last batch left it (tokens, not transactions).
    public var lagTokens: Int64?
    /// The source's commit time of its head minus that of the checkpoint, when both are known.
    public var lagSeconds: Double?
    /// When the last batch (or snapshot) committed in PostgreSQL.
    public var appliedAt: Date
    /// Seconds since then.
    public var secondsSinceApplied: Double
    public var resyncs: Int
    public var resyncReason: String?
    public var resyncedAt: Date?
    public var databasePath: String?
    /// Documents per entity.
    public var documents: [String: Int]
    /// With a database: its head token now, and how many tokens PostgreSQL is behind it.
    public var liveHeadToken: HistoryToken?
    public var liveLagTokens: Int64?
}

public enum PostgresStatus {
    /// Every source in PostgreSQL; with `database`, the live lag of the sources it feeds (those
    /// whose sink consumer, `searchlight.postgres.<source>`, is registered in it).
    public static func read(_ endpoint: PostgresEndpoint, database: HistoryStore? = nil,
                            logger: Logger = Logger(label: "searchlight.postgres.status")) async throws(SearchlightError) -> [PostgresSourceStatus] {
        var liveHead: HistoryToken?
        var fed: Set<String> = []
        if let database {
            liveHead = try database.currentToken()
            fed = Set(try database.consumers().map(\.author).filter { $0.hasPrefix("searchlight.postgres.") }
                .map { String($0.dropFirst("searchlight.postgres.".count)) })
        }
        let head = liveHead, feeds = fed
        return try await PostgresSession.with(endpoint, logger: logger, migrate: false) { session in
            let schema = session.schema
            return try await session.transaction { connection in
                var sources: [PostgresSourceStatus] = []
                let rows = try await connection.query("""
                    SELECT source, token, token_timestamp, head_token, head_timestamp, extract(epoch FROM applied_at)::float8,
                           extract(epoch FROM now() - applied_at)::float8, resyncs, resync_reason, extract(epoch FROM resynced_at)::float8, database_path
                    FROM \(unescaped: schema).sources WHERE token >= 0 ORDER BY source
                    """, logger: logger)
                for try await (source, token, tokenTime, headToken, headTime, applied, since, resyncs, reason, resynced, path)
                    in rows.decode((String, Int64, Double?, Int64?, Double?, Double, Double, Int32, String?, Double?, String?).self) {
                    var status = PostgresSourceStatus(
                        source: source, token: HistoryToken(token), tokenDate: tokenTime.map(Date.init(timeIntervalSince1970:)),
                        headToken: headToken.map { HistoryToken($0) }, headDate: headTime.map(Date.init(timeIntervalSince1970:)),
                        lagTokens: headToken.map { max(0, $0 - token) },
                        lagSeconds: headTime.flatMap { head in tokenTime.map { max(0, head - $0) } },
                        appliedAt: Date(timeIntervalSince1970: applied), secondsSinceApplied: max(0, since), resyncs: Int(resyncs),
                        resyncReason: reason, resyncedAt: resynced.map(Date.init(timeIntervalSince1970:)), databasePath: path, documents: [:])
                    if let head, feeds.contains(source) {
                        status.liveHeadToken = head
                        status.liveLagTokens = max(0, head.rawValue - token)
                    }
                    sources.append(status)
                }
                let counts = try await connection.query("""
                    SELECT source, entity, count(*) FROM \(unescaped: schema).documents GROUP BY source, entity
                    """, logger: logger)
                for try await (source, entity, count) in counts.decode((String, String, Int64).self) {
                    if let index = sources.firstIndex(where: { $0.source == source }) { sources[index].documents[entity] = Int(count) }
                }
                return sources
            }
        }
    }
}
