import Foundation
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
        // Version 2: the capture triggers look up a scratch row by its key compared with the key
        // column's collation; these indexes answer NOCASE and RTRIM keys as the primary key
        // answers BINARY ones (without them, each lookup read every scratch row of the entity).
        // They cover the tombstone: SQLite 3.40 preferred scanning the primary key's entity_id
        // prefix to an index it would have to leave for the tombstone.
        [
            """
            CREATE INDEX "searchlight_replaced_nocase" ON "searchlight_replaced"("entity_id", "object_id" COLLATE NOCASE, "tombstone")
            """,
            """
            CREATE INDEX "searchlight_replaced_rtrim" ON "searchlight_replaced"("entity_id", "object_id" COLLATE RTRIM, "tombstone")
            """,
        ],
        // Version 3: the rows a REPLACE may delete for colliding on a unique key other than the
        // primary key (CaptureTriggers.conflictTemplate), kept between a statement row's BEFORE
        // and AFTER triggers. A handful of rows at most: no index.
        [
            """
            CREATE TABLE "searchlight_conflict" (
              "entity_id" INTEGER NOT NULL,
              "object_id" NOT NULL,
              "tombstone" TEXT
            )
            """,
        ],
        // Version 4 (capture triggers 8): the token of the HistoryStore.write running now, put
        // here when it starts and removed before it commits (no other writer ever sees a row);
        // a change recorded while it is empty is a transaction of its own. A release before it
        // must not read a log holding such rows: it refuses a newer schema version.
        [
            """
            CREATE TABLE "searchlight_open" (
              "token" INTEGER PRIMARY KEY
            )
            """,
            // Another writer's change takes SQLite's next rowid as its token: a log that cleanup
            // emptied (or emptied past its newest rows) before this version gets a placeholder
            // at the purge mark, so that no token at or below it is given again.
            """
            INSERT INTO "searchlight_log"("id", "token", "type")
              SELECT "value", "value", 4 FROM "searchlight_meta"
              WHERE "key" = 'purgedThroughToken' AND "value" > coalesce((SELECT max("id") FROM "searchlight_log"), 0)
            """,
        ],
    ]

    package static var currentVersion: Int { migrations.count }

    /// The tables the migrations create, in the order ``uninstall(_:)`` drops them.
    package static let tables = ["searchlight_open", "searchlight_conflict", "searchlight_replaced", "searchlight_consumer", "searchlight_log", "searchlight_entity", "searchlight_meta"]

    /// Whether `name`, of an object of `type`, is one Searchlight gives its objects: a history
    /// table or one of its indexes, a capture trigger (`searchlight_<entity id>_<kind>`, of the
    /// kinds every release installed), or a table of the search index (`searchlight_index_state`,
    /// `searchlight_document_g<n>`, `searchlight_fts_<id>_g<n>` and FTS5's shadow tables of it,
    /// `searchlight_attr_<id>_g<n>`).
    /// An app's own `searchlight_audit`, `searchlight_1_custom` or `searchlight_prefs` is not,
    /// and neither capture nor uninstall touches it.
    package static func isSearchlightObject(_ name: String, type: String) -> Bool {
        switch type {
        case "trigger":
            guard let match = name.firstMatch(of: #/^searchlight_[0-9]+_([a-z_]+)$/#) else { return false }
            return triggerKinds.contains(String(match.1))
        case "index":
            return replacedIndexes.contains(name)
        case "view":
            guard let match = name.firstMatch(of: #/^searchlight_[0-9]+_([a-z_]+)$/#) else { return false }
            return viewKinds.contains(String(match.1))
        case "table":
            if tables.contains(name) || name == "searchlight_index_state" { return true }
            return name.wholeMatch(of: #/searchlight_document_g[0-9]+/#) != nil
                || name.wholeMatch(of: #/searchlight_attr_[0-9]+_g[0-9]+/#) != nil
                || name.wholeMatch(of: #/searchlight_fts_[0-9]+_g[0-9]+(_(data|idx|content|docsize|config))?/#) != nil
        default:
            return false
        }
    }

    /// The kinds of capture triggers every release installed (``CaptureTriggers/template``).
    static let triggerKinds: Set<String> = [
        "insert_opens", "insert_replaces", "insert", "update_opens", "rekey_replaces", "update", "rekey",
        "update_clears", "delete_opens", "delete", "before_insert",
        "insert_replaced", "rekey_replaced", "insert_collides", "insert_collided", "update_collides", "update_collided",
        "insert_row", "rekey_row", "delete_clears", "insert_vanished", "keeps_replaced", "records_replaced", "delete_unwatches",
    ]

    /// The kinds of views the capture triggers write into (capture triggers 8): their INSTEAD OF
    /// triggers do a rare path's work, so that the table's triggers stay small.
    static let viewKinds: Set<String> = ["replacing", "replaced"]

    /// The indexes of `searchlight_replaced` (history schema version 2).
    static let replacedIndexes: Set<String> = ["searchlight_replaced_nocase", "searchlight_replaced_rtrim"]

    /// The names of the Searchlight objects in the database (``isSearchlightObject(_:type:)``).
    package static func searchlightObjects(_ db: Database, type: String? = nil) throws -> [String] {
        try Row.fetchAll(db, sql: """
            SELECT "name", "type" FROM "sqlite_master" WHERE "name" GLOB 'searchlight_*' AND (?1 IS NULL OR "type" = ?1) ORDER BY "name"
            """, arguments: [type]).filter { isSearchlightObject($0["name"], type: $0["type"]) }.map { $0["name"] }
    }

    /// Throws `schemaMismatch` if the app's own objects bear names Searchlight gives its own: a
    /// first install must not take them over (a rebuild would drop such a table).
    package static func checkNamesAreFree(_ db: Database) throws {
        let taken = try searchlightObjects(db)
        if !taken.isEmpty {
            throw SearchlightError(.schemaMismatch, "the database already holds objects named as Searchlight names its own (\(taken.prefix(3).joined(separator: ", "))\(taken.count > 3 ? ", …" : "")); rename them before init")
        }
    }

    /// Whether the history tables are there (read from `sqlite_master` in the caller's
    /// transaction: GRDB's schema cache of a writer does not see another process's changes).
    package static func isInstalled(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM "sqlite_master" WHERE "type" = 'table' AND "name" = 'searchlight_meta')
            """) ?? false
    }

    /// Applies the migrations the database lacks. Must run inside a write transaction.
    package static func migrate(_ db: Database) throws {
        let version: Int
        if try db.tableExistsInCurrentSchema("searchlight_meta") {
            version = try Meta.get(db, .schemaVersion, as: Int.self) ?? 0
        } else {
            version = 0
            try checkNamesAreFree(db)
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
        if version == 0 {
            try Meta.set(db, .installationID, UUID().uuidString)
            try Meta.set(db, .sourceID, UUID().uuidString)
        }
        try Meta.set(db, .schemaVersion, currentVersion)
    }
}

/// The keys of `searchlight_meta`.
package enum MetaKey: String, DatabaseValueConvertible {
    /// The history schema version (an integer; see ``HistorySchema/migrations``).
    case schemaVersion
    /// The installed model, as JSON.
    case model
    /// Incremented each time an install changes the stored model: a cheap "did it change?".
    case modelRevision
    /// The ``CaptureTriggers/version`` of the installed triggers.
    case captureVersion
    /// Capture was interrupted (triggers found missing) up to this token: consumers whose
    /// checkpoint is older must resynchronize.
    case resyncThroughToken
    /// How far cleanup deleted history, as a token (the trigger SQL reads it too).
    case purgedThroughToken
    /// The newest timestamp of a deleted transaction.
    case purgedThroughTimestamp
    /// The ``CaptureStatus`` the last install or heal found, as JSON.
    case captureStatus
    /// `PRAGMA schema_version` after the last install or heal: a different value means the
    /// schema changed since, and capture must be checked again.
    case captureSchemaVersion
    /// The model as `init` installed it (JSON), before any rename was followed: its table and
    /// column names win whenever they exist again.
    case declaredModel
    /// The root page of each captured entity's table (JSON: entity name to page): a table
    /// remade by a tool that also recreated our triggers has a new root page.
    case captureRootPages
    /// A random id given when the history tables are created: a store that opened the database
    /// before an uninstall and a new `init` tells the new setup from the one it opened.
    /// (Databases set up before it existed have none until they are set up again.)
    case installationID
    /// How many times a store filled an empty WAL when it opened (see `HistoryStore`): a
    /// write of our own instead of GRDB's table created and dropped.
    case walFills
    /// The database's id as a source of history (``HistoryStore/sourceID()``): given at
    /// install, or when first asked for in a database set up before it existed.
    case sourceID
}

/// Small typed access to `searchlight_meta`.
package enum Meta {
    package static func get<T: DatabaseValueConvertible>(_ db: Database, _ key: MetaKey, as type: T.Type = T.self) throws -> T? {
        try T.fetchOne(db.cachedStatement(sql: #"SELECT "value" FROM "searchlight_meta" WHERE "key" = ?"#), arguments: [key])
    }

    package static func set(_ db: Database, _ key: MetaKey, _ value: (any DatabaseValueConvertible)?) throws {
        try db.execute(sql: #"INSERT OR REPLACE INTO "searchlight_meta"("key", "value") VALUES (?, ?)"#, arguments: [key, value])
    }

    /// A value stored as JSON; nil if absent or unreadable (written by another release).
    package static func getJSON<T: Decodable>(_ db: Database, _ key: MetaKey, as type: T.Type = T.self) throws -> T? {
        try get(db, key, as: String.self).flatMap { try? JSONDecoder().decode(T.self, from: Data($0.utf8)) }
    }

    package static func setJSON(_ db: Database, _ key: MetaKey, _ value: some Encodable) throws {
        try set(db, key, String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
    }
}

/// What a row of `searchlight_log` is. The capture triggers (``CaptureTriggers/template``)
/// write the same numbers; a test checks that they agree.
package enum LogRowType: Int, DatabaseValueConvertible {
    /// A transaction's header: its id is the transaction's token.
    case transactionHeader = 0
    case insert = 1
    case update = 2
    case delete = 3
    /// Left by cleanup where it deleted the newest row (whose id SQLite would give again): no
    /// change, and no transaction; its token is the purge's bound.
    case placeholder = 4

    /// Where a transaction starts in `searchlight_log`: its header, or a change row that is a
    /// transaction of its own (token 0: another writer's change; its token is its id).
    package static let transactionStart = #"("type" = 0 OR "token" = 0)"#

    /// The change type of a change row; nil for a header.
    package var changeType: HistoryChange.ChangeType? { HistoryChange.ChangeType(rawValue: rawValue) }
}
