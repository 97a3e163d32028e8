import Foundation
import GRDB
import Logging
import SearchlightHistory

/// A database of a fleet, and where its source stands in PostgreSQL: what
/// `searchlight-postgres status --dbs GLOB` shows.
public struct PostgresDatabaseStatus: Hashable, Sendable, Codable {
    /// The database file.
    public var databasePath: String
    /// The database's source id, as its sink names it in PostgreSQL; nil when it could not be read.
    public var source: String?
    /// The database's newest token now.
    public var headToken: HistoryToken?
    /// How many tokens PostgreSQL is behind the database now (`headToken` minus PostgreSQL's
    /// token); nil until a sink wrote the source.
    public var lagTokens: Int64?
    /// The source's row in PostgreSQL; nil when no sink wrote it yet.
    public var postgres: PostgresSourceStatus?
    /// Why the database could not be read (not set up, not a database, no source id yet).
    public var error: String?
}

extension PostgresStatus {
    /// Every database of `glob`, sorted by path, with its source's status in PostgreSQL (looked
    /// up by the database's source id). Each database is read through a read-only connection
    /// (nothing in it changes); one that cannot be read is listed with the reason.
    ///
    /// ```swift
    /// for database in try await PostgresStatus.read(endpoint, databases: try DatabaseGlob("tenants/*.sqlite")) {
    ///     print(database.databasePath, database.source ?? "-", database.lagTokens ?? -1)
    /// }
    /// ```
    public static func read(_ endpoint: PostgresEndpoint, databases glob: DatabaseGlob,
                            logger: Logger = Logger(label: "searchlight.postgres.status")) async throws(SearchlightError) -> [PostgresDatabaseStatus] {
        let paths = try glob.matchingPaths()
        let local = try await DedicatedThread.run(name: "searchlight.postgres.status") { _ throws(SearchlightError) in
            paths.map(Self.readDatabase)
        }
        let sources = Dictionary(try await read(endpoint, logger: logger).map { ($0.source, $0) }, uniquingKeysWith: { first, _ in first })
        return local.map { database in
            var database = database
            if let source = database.source, let row = sources[source] {
                database.postgres = row
                database.lagTokens = database.headToken.map { max(0, $0.rawValue - row.token.rawValue) }
            }
            return database
        }
    }

    /// The source id and head token of the database at `path`, read-only.
    private static func readDatabase(_ path: String) -> PostgresDatabaseStatus {
        var status = PostgresDatabaseStatus(databasePath: path)
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in
                guard try HistorySchema.isInstalled(db) else {
                    status.error = "no Searchlight setup (install it with a model first)"
                    return
                }
                status.headToken = try HistoryLog.headToken(db)
                status.source = try Meta.get(db, .sourceID, as: String.self)
                if status.source == nil { status.error = "no source id yet: no sink has run on it" }
            }
        } catch {
            status.error = SearchlightError(wrapping: error, doing: "cannot read \(path)").message
        }
        return status
    }
}
