import Foundation
import GRDB
import SearchlightHistory

/// The index's own bookkeeping, in its own table `searchlight_index_state` (History's tables
/// are History's): which generation of the FTS5 tables is live and what it was built for, and
/// the lease and progress of a rebuild under way.
///
/// `Schemas/index.sql` documents the table.
package enum IndexState {
    /// The keys of `searchlight_index_state`.
    package enum Key: String, DatabaseValueConvertible, CaseIterable {
        /// The version of the index's own schema.
        case schemaVersion
        /// The live generation (an integer).
        case generation
        /// What the live generation was built for (``IndexLayout`` as JSON).
        case layout
        /// Who holds the rebuild lease (nil when it was released), and until when (seconds
        /// since 1970): a rebuild left by a killed process can be taken over once it expires.
        case rebuildOwner, rebuildExpiresAt
        /// The generation being built, the layout it is built for, the token it started from.
        case rebuildGeneration, rebuildLayout, rebuildStartToken
        /// How far it got: the entity being filled (its position in the layout) and the last
        /// key copied, so that a stopped rebuild resumes where it stopped.
        case rebuildEntity, rebuildAfter
    }

    package static let currentVersion = 1

    package static let createTable = """
        CREATE TABLE "searchlight_index_state" (
          "key" TEXT PRIMARY KEY NOT NULL,
          "value"
        ) WITHOUT ROWID
        """

    /// Removes the table (``Indexer/uninstall(from:)``).
    package static let dropTable = #"DROP TABLE IF EXISTS "searchlight_index_state""#

    package static func get<T: DatabaseValueConvertible>(_ db: Database, _ key: Key, as type: T.Type = T.self) throws -> T? {
        try T.fetchOne(db.cachedStatement(sql: #"SELECT "value" FROM "searchlight_index_state" WHERE "key" = ?"#), arguments: [key])
    }

    package static func set(_ db: Database, _ key: Key, _ value: (any DatabaseValueConvertible)?) throws {
        try db.cachedStatement(sql: #"INSERT OR REPLACE INTO "searchlight_index_state"("key", "value") VALUES (?, ?)"#)
            .execute(arguments: [key, value])
    }

    /// Whether the table exists (a database indexed by Searchlight 0.1.0 has not migrated yet).
    package static func isInstalled(_ db: Database) throws -> Bool {
        try db.tableExistsInCurrentSchema("searchlight_index_state")
    }

    /// The live generation and its layout, or nil before the first build.
    package static func live(_ db: Database) throws -> (schema: IndexSchema, layout: String?)? {
        guard try isInstalled(db), let generation = try get(db, .generation, as: Int.self) else { return nil }
        return (IndexSchema(generation: generation), try get(db, .layout, as: String.self))
    }

    /// Creates the table, or brings it to the current version. Searchlight 0.1.0 kept the live
    /// generation and a fingerprint in History's `searchlight_meta`: they move here, and the
    /// live generation is kept (no rebuild) when its fingerprint is the one 0.1.0 computed for
    /// the installed model.
    package static func migrate(_ db: Database, store: HistoryStore) throws {
        if try isInstalled(db) {
            let version = try get(db, .schemaVersion, as: Int.self) ?? 0
            if version > currentVersion {
                throw SearchlightError(.schemaMismatch, "the index was set up by a newer Searchlight (index schema version \(version), this one knows \(currentVersion))")
            }
            return
        }
        try db.execute(sql: createTable)
        try set(db, .schemaVersion, currentVersion)
        let legacy = try Row.fetchAll(db, sql: """
            SELECT "key", "value" FROM "searchlight_meta" WHERE "key" IN ('index.generation', 'index.fingerprint')
            """)
        let values = Dictionary(legacy.map { ($0["key"] as String, $0["value"] as DatabaseValue) }, uniquingKeysWith: { a, _ in a })
        guard let generation = values["index.generation"].flatMap(Int.fromDatabaseValue) else { return }
        try set(db, .generation, generation)
        var layout = try IndexLayout(model: store.installedModel(in: db), capture: store.healCapture(in: db), store: store, db)
        if let fingerprint = values["index.fingerprint"].flatMap(String.fromDatabaseValue), fingerprint == layout.legacyFingerprint {
            // Kept as built: searches answer from it; the indexer rebuilds it with today's
            // prefix indexes (a layout that differs from the one wanted is rebuilt).
            layout.prefixes = IndexSchema.legacyPrefixes
            layout.version = 5 // built before the vocabulary: searches match exactly until the rebuild
            try set(db, .layout, layout.json)
        } // else: no layout, so the indexer rebuilds, as 0.1.0 would have.
        try db.execute(sql: #"DELETE FROM "searchlight_meta" WHERE "key" IN ('index.generation', 'index.fingerprint')"#)
    }

    /// Runs ``migrate(_:store:)`` in its own write if the table is missing or old.
    package static func migrateIfNeeded(_ store: HistoryStore) throws {
        let current = try store.databaseWriter.read { db in try isInstalled(db) && (try get(db, .schemaVersion, as: Int.self)) == currentVersion }
        if !current && store.isReadOnly {
            // Nothing can be set up or upgraded through a read-only store: say what would.
            try store.databaseWriter.read { db in
                try store.checkInstalled(in: db)
                if try isInstalled(db) {
                    throw SearchlightError(.indexNotBuilt, "the index was built by an older release of Searchlight: run the indexer once to upgrade it")
                }
                throw SearchlightError(.indexNotBuilt, "the index has not been built yet: run the indexer first")
            }
        }
        if !current {
            try store.databaseWriter.write { db in
                // Only an install creates Searchlight's tables: not after an uninstall.
                try store.checkInstalled(in: db)
                try migrate(db, store: store)
            }
        }
    }
}
