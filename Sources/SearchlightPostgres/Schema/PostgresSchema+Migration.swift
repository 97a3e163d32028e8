import Foundation
import Logging
import PostgresNIO
import SearchlightHistory

/// The migration runner: brings a schema to ``PostgresSchema/currentVersion`` in one
/// transaction, serialized with any other migrator of the same schema by an advisory lock:
///
/// ```sql
/// BEGIN;
/// SELECT pg_advisory_xact_lock(1397508940, hashtext('searchlight'));  -- one migrator at a time
/// SELECT to_regclass('"searchlight".meta');                           -- a schema set up at all?
/// SELECT value FROM "searchlight".meta WHERE key = 'schema_version';
/// -- the statements of each missing version, then
/// INSERT INTO "searchlight".meta(key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO UPDATE SET value = excluded.value;
/// COMMIT;
/// ```
///
/// A schema of a newer version than this release knows is refused with `postgresError`, and
/// nothing is changed.
extension PostgresSchema {
    /// The first key of the advisory lock that serializes migrators ("SLPG").
    static let migrationLockKey: Int32 = 0x534C_5047

    static func migrate(_ session: PostgresSession) async throws {
        let name = session.endpoint.schema, schema = session.schema
        let logger = session.logger
        // A hot standby answers reads and refuses every write: a sink (the only migrator) is
        // told at once, before it registers with its database or reads anything.
        let standby = try await session.withConnection { connection in
            var standby = false
            for try await value in try await connection.query("SELECT pg_is_in_recovery()", logger: logger).decode(Bool.self) { standby = value }
            return standby
        }
        if standby {
            throw SearchlightError(.postgresError, "this server is a hot standby (read-only, replaying another server's WAL): a sink writes to the primary; searches may read a standby")
        }
        try await session.transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLockKey), hashtext(\(name)))", logger: logger)
            let version = try await Self.version(connection, schema: name, logger: logger)
            if version > currentVersion {
                throw newerVersion(version, schema: name)
            }
            guard version < currentVersion else { return }
            for statement in statements(from: version, schema: name) {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).meta(key, value) VALUES ('schema_version', \(String(currentVersion)))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, logger: logger)
            logger.notice("PostgreSQL schema \(PostgresSchema.shown(name)) migrated from version \(version) to \(currentVersion)")
        }
    }

    /// Checks, without changing anything, that the schema is set up at a version this release
    /// reads (for the commands that only read: status, verify).
    static func check(_ session: PostgresSession) async throws {
        let schema = session.endpoint.schema
        let version = try await session.withConnection { connection in
            try await Self.version(connection, schema: schema, logger: session.logger)
        }
        if version == 0 {
            throw SearchlightError(.postgresError, "PostgreSQL schema \(PostgresSchema.shown(schema)) holds no Searchlight tables: run `searchlight-postgres sink` first")
        }
        if version > currentVersion { throw newerVersion(version, schema: schema) }
    }

    /// Refuses a schema newer than this release reads (for searches, which read whatever
    /// schema is there, set up or not: `search` says itself when nothing is).
    static func checkNotNewer(_ session: PostgresSession) async throws {
        let schema = session.endpoint.schema
        let version = try await session.withConnection { connection in
            try await Self.version(connection, schema: schema, logger: session.logger)
        }
        if version > currentVersion { throw newerVersion(version, schema: schema) }
    }

    /// The schema's version: 0 when it has no `meta` table.
    static func version(_ connection: PostgresConnection, schema: String, logger: Logger) async throws -> Int {
        let name = schema, schema = quoted(name), meta = schema + ".meta"
        var exists = false
        for try await table in try await connection.query("SELECT to_regclass(\(meta))::text", logger: logger).decode(String?.self) {
            exists = table != nil
        }
        guard exists else { return 0 }
        var version = 0
        let rows = try await connection.query("SELECT value FROM \(unescaped: schema).meta WHERE key = 'schema_version'", logger: logger)
        for try await value in rows.decode(String.self) {
            guard let number = Int(value) else {
                throw SearchlightError(.postgresError, "PostgreSQL schema \(PostgresSchema.shown(name)) has an unreadable schema_version \"\(value)\"")
            }
            version = number
        }
        return version
    }

    private static func newerVersion(_ version: Int, schema: String) -> SearchlightError {
        SearchlightError(.postgresError, "PostgreSQL schema \(PostgresSchema.shown(schema)) is at version \(version), newer than this release of Searchlight reads (\(currentVersion)): upgrade searchlight-postgres")
    }
}
