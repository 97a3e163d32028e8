import GRDB

/// The tables and indexes of the history log, and the versioned migrations that create them.
///
/// `Schemas/history.sql` holds the same statements; a test checks that the objects SQLite
/// holds after installation match that file, so the documented format never drifts.
///
/// Migrations are recorded in `searchlight_meta` (key `schemaVersion`) rather than GRDB's
/// `grdb_migrations`, which belongs to the host application's own `DatabaseMigrator`. They run
/// inside the same transaction as the trigger installation, so setup is all or nothing.
package enum HistorySchema {
    /// Each element is one schema version: the statements that bring the previous version to it.
    package static let migrations: [[String]] = [
        // Version 1
        [
            """
            CREATE TABLE "searchlight_meta" (
              "key" TEXT PRIMARY KEY NOT NULL,
              "value"
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE "searchlight_entity" (
              "id" INTEGER PRIMARY KEY,
              "name" TEXT NOT NULL UNIQUE,
              "table_name" TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE "searchlight_log" (
              "id" INTEGER PRIMARY KEY,
              "token" INTEGER NOT NULL,
              "type" INTEGER NOT NULL,
              "entity_id" INTEGER,
              "object_id",
              "updated_columns" TEXT,
              "tombstone" TEXT,
              "timestamp" REAL,
              "author" TEXT,
              "context" TEXT,
              "process_id" INTEGER,
              "open" INTEGER
            )
            """,
            """
            CREATE TABLE "searchlight_replaced" (
              "entity_id" INTEGER NOT NULL,
              "object_id" NOT NULL,
              "tombstone" TEXT,
              PRIMARY KEY ("entity_id", "object_id")
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE "searchlight_consumer" (
              "author" TEXT PRIMARY KEY NOT NULL,
              "required" INTEGER NOT NULL,
              "registered_at" REAL NOT NULL,
              "token" INTEGER,
              "transaction_timestamp" REAL,
              "checkpointed_at" REAL
            ) WITHOUT ROWID
            """,
        ],
    ]

    package static var currentVersion: Int { migrations.count }

    /// Applies the migrations the database lacks. Must run inside a write transaction.
    package static func migrate(_ db: Database) throws {
        let version: Int
        if try db.tableExists("searchlight_meta") {
            version = try Int.fetchOne(db, sql: #"SELECT "value" FROM "searchlight_meta" WHERE "key" = 'schemaVersion'"#) ?? 0
        } else {
            version = 0
        }
        guard version < currentVersion else {
            if version > currentVersion {
                throw SearchlightError(.schemaMismatch, "the database was set up by a newer Searchlight (history schema version \(version), this one knows \(currentVersion))")
            }
            return
        }
        for statements in migrations[version...] {
            for statement in statements { try db.execute(sql: statement) }
        }
        try Meta.set(db, "schemaVersion", currentVersion)
    }
}

/// Small typed access to `searchlight_meta`.
package enum Meta {
    package static func get<T: DatabaseValueConvertible>(_ db: Database, _ key: String, as type: T.Type = T.self) throws -> T? {
        try T.fetchOne(db, sql: #"SELECT "value" FROM "searchlight_meta" WHERE "key" = ?"#, arguments: [key])
    }

    package static func set(_ db: Database, _ key: String, _ value: (any DatabaseValueConvertible)?) throws {
        try db.execute(sql: #"INSERT OR REPLACE INTO "searchlight_meta"("key", "value") VALUES (?, ?)"#, arguments: [key, value])
    }
}
