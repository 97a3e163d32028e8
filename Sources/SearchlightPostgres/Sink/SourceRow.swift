import Foundation
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory

/// A source's row of `sources`: its checkpoint in PostgreSQL, and what the lineage check
/// compares with the local checkpoint.
struct SourceRow: Sendable, Hashable {
    var token: Int64
    var tokenTimestamp: Double?
    var previousToken: Int64?
    var previousTimestamp: Double?
    var batchDigest: String?
    var modelJSON: String
    var resyncs: Int
    /// `sources.attributes`: how the attributes the documents carry compare; nil when the row
    /// was written before schema version 6 (its documents carry none).
    var attributesJSON: String? = nil

    /// Two commit times are the same one (they went through `Date` on each side).
    static func sameTime(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): abs(a - b) < 1e-6
        default: false
        }
    }

    /// Whether the row still holds the checkpoint `token` at `timestamp` (the compare of the
    /// compare-and-set).
    func holds(_ token: Int64, _ timestamp: Double?) -> Bool {
        self.token == token && Self.sameTime(tokenTimestamp, timestamp)
    }

    /// Why the documents must be written again for the attributes to compare as `comparisons`
    /// say (the source's columns now), or nil when they do already.
    func attributesResyncReason(_ comparisons: [String: [String: AttributeComparison]]) -> String? {
        guard let attributesJSON else {
            return comparisons.isEmpty ? nil : "the documents in PostgreSQL carry no attribute values (written before schema version 6)"
        }
        let stored = try? JSONDecoder().decode([String: [String: AttributeComparison]].self, from: Data(attributesJSON.utf8))
        return stored == comparisons ? nil : "the type or collation of an attribute's column changed"
    }

    /// ```sql
    /// SELECT token, token_timestamp, previous_token, previous_timestamp, batch_digest, model::text, resyncs, attributes::text
    /// FROM "searchlight".sources WHERE source = $1 [FOR UPDATE]
    /// ```
    static func read(_ source: String, schema: String, lock: Bool, _ connection: PostgresConnection, logger: Logger) async throws -> SourceRow? {
        let lockClause = lock ? "FOR UPDATE" : ""
        // The schema's version with it: a newer release may have migrated the schema since this
        // process checked it (an upgrade rolling through a fleet); this one must not write there.
        let rows = try await connection.query("""
            SELECT token, token_timestamp, previous_token, previous_timestamp, batch_digest, model::text, resyncs,
                   (SELECT value FROM \(unescaped: schema).meta WHERE key = 'schema_version'), attributes::text
            FROM \(unescaped: schema).sources WHERE source = \(source) \(unescaped: lockClause)
            """, logger: logger)
        var result: SourceRow?
        var version: String?
        for try await (token, timestamp, previous, previousTimestamp, digest, model, resyncs, schemaVersion, attributes)
            in rows.decode((Int64, Double?, Int64?, Double?, String?, String, Int32, String?, String?).self) {
            result = SourceRow(token: token, tokenTimestamp: timestamp, previousToken: previous, previousTimestamp: previousTimestamp,
                               batchDigest: digest, modelJSON: model, resyncs: Int(resyncs), attributesJSON: attributes)
            version = schemaVersion
        }
        if let version, let number = Int(version), number > PostgresSchema.currentVersion {
            throw SearchlightError(.postgresError, "PostgreSQL schema \(schema) was migrated to version \(number) by a newer release of Searchlight since this process started (this one reads \(PostgresSchema.currentVersion)): upgrade searchlight-postgres")
        }
        return result
    }
}
