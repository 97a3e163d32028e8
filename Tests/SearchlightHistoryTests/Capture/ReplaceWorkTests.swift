import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

/// What a tracked write costs as scratch rows of `searchlight_replaced` pile up (each
/// `INSERT OR REPLACE` of an existing key leaves one until that key is next updated or deleted,
/// or until cleanup). Counted in SQLite virtual-machine instructions of the app's statement
/// (`SQLITE_STMTSTATUS_VM_STEP`, which counts the instructions of the triggers it fires too),
/// never timed.
@Suite(.serialized) struct ReplaceWorkTests {
    /// One kind of primary key: the table's columns and options after `CREATE TABLE t(`, the key of row `?1`, and a spelling of
    /// that key that is the same key for SQLite (1.0 for 1, 'K1' for a NOCASE 'k1', …).
    struct KeyKind: CustomStringConvertible, Sendable {
        var description: String
        var table: String
        var key: String
        var sameKey: String
    }

    static let kinds: [KeyKind] = [
        KeyKind(description: "INTEGER PRIMARY KEY (rowid)", table: "k INTEGER PRIMARY KEY, v TEXT)", key: "?1", sameKey: "?1 + 0.0"),
        KeyKind(description: "INTEGER, WITHOUT ROWID", table: "k INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID", key: "?1", sameKey: "?1 + 0.0"),
        KeyKind(description: "no declared type", table: "k PRIMARY KEY NOT NULL, v TEXT)", key: "?1", sameKey: "?1 + 0.0"),
        KeyKind(description: "REAL", table: "k REAL PRIMARY KEY NOT NULL, v TEXT)", key: "?1 + 0.5", sameKey: "?1 + 0.5"),
        KeyKind(description: "TEXT", table: "k TEXT PRIMARY KEY NOT NULL, v TEXT)", key: "'k' || ?1", sameKey: "'k' || ?1"),
        KeyKind(description: "TEXT COLLATE NOCASE", table: "k TEXT PRIMARY KEY NOT NULL COLLATE NOCASE, v TEXT)", key: "'k' || ?1", sameKey: "'K' || ?1"),
        KeyKind(description: "TEXT COLLATE NOCASE, WITHOUT ROWID", table: "k TEXT PRIMARY KEY NOT NULL COLLATE NOCASE, v TEXT) WITHOUT ROWID", key: "'k' || ?1", sameKey: "'K' || ?1"),
        KeyKind(description: "TEXT COLLATE RTRIM", table: "k TEXT PRIMARY KEY NOT NULL COLLATE RTRIM, v TEXT)", key: "'k' || ?1", sameKey: "'k' || ?1 || '  '"),
        KeyKind(description: "BLOB", table: "k BLOB PRIMARY KEY NOT NULL, v TEXT)", key: "CAST('k' || ?1 AS BLOB)", sameKey: "CAST('k' || ?1 AS BLOB)"),
    ]

    /// The VM instructions one statement ran, its triggers' included.
    static func steps(_ db: Database, _ sql: String, _ i: Int) throws -> Int {
        let statement = try db.makeStatement(sql: sql)
        try statement.execute(arguments: [i])
        return Int(sqlite3_stmt_status(statement.sqliteStatement, SQLITE_STMTSTATUS_VM_STEP, 0))
    }

    /// The most instructions one row of each operation ran, over `rows` rows of keys above `base`.
    static func perRowSteps(_ db: Database, _ kind: KeyKind, base: Int, rows: Int) throws -> [String: Int] {
        try db.execute(sql: """
            WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
            INSERT INTO t(k, v) SELECT \(kind.key.replacingOccurrences(of: "?1", with: "i")), 'old' FROM n
            """, arguments: [base + rows + 1, base + 4 * rows])
        var most: [String: Int] = [:]
        for row in 1...rows {
            let operations = [
                ("insert", "INSERT INTO t(k, v) VALUES (\(kind.key), 'new')", base + row),
                ("update", "UPDATE t SET v = 'updated' WHERE k = \(kind.key)", base + rows + row),
                ("replace", "INSERT OR REPLACE INTO t(k, v) VALUES (\(kind.sameKey), 'replaced')", base + 2 * rows + row),
                ("delete", "DELETE FROM t WHERE k = \(kind.key)", base + 3 * rows + row),
            ]
            for (name, sql, i) in operations {
                most[name] = max(most[name] ?? 0, try steps(db, sql, i))
            }
        }
        return most
    }

    /// Regression: `object_id = NEW.k` compared with the key column's affinity (numeric keys) or
    /// collation (NOCASE, RTRIM keys), which the scratch table's BINARY, affinity-less primary
    /// key cannot answer: every tracked insert, update, delete and replace read every scratch
    /// row of its entity. 2,000 replaces took 0.9 s, the fifth batch of 2,000 5.4 s, and a bulk
    /// insert after them ran 200 times slower than untracked. Now a write costs the same with
    /// 0, 10,000 or 100,000 scratch rows, for every kind of key, and a replace still finds the
    /// row it replaced (1.0 replacing 1, 'K1' replacing a NOCASE 'k1', 'k1  ' an RTRIM 'k1').
    @Test(arguments: kinds)
    func aWriteCostsTheSameWhateverTheScratchRows(_ kind: KeyKind) throws {
        let database = try TestDatabase(schema: "CREATE TABLE t(\(kind.table);")
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "T", table: "t", primaryKey: "k", fields: [SearchlightModel.Field(column: "v")]),
        ])
        let store = try database.openStore(model: model)
        let rows = 20
        let sizes = [0, 10_000, 100_000]
        var figures: [(scratch: Int, steps: [String: Int])] = []
        try store.dbPool.write { db in
            // The table's rows first (a tracked bulk insert, before any scratch row exists).
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO t(k, v) SELECT \(kind.key.replacingOccurrences(of: "?1", with: "i")), 'scratch' FROM n
                """, arguments: [sizes.last!])
        }
        for (phase, size) in sizes.enumerated() {
            try store.dbPool.write { db in
                // The scratch rows a bulk INSERT OR REPLACE of `size` existing keys leaves, one per
                // key (written directly: with the old triggers, making them by replaces would
                // itself take quadratic time).
                try db.execute(sql: """
                    INSERT OR IGNORE INTO searchlight_replaced(entity_id, object_id, tombstone)
                    SELECT (SELECT id FROM searchlight_entity WHERE name = 'T'), k, NULL FROM t WHERE v = 'scratch' LIMIT ?
                    """, arguments: [size])
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_replaced")!
                #expect(count >= size)
                let deletesBefore = try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_log WHERE type = 3")!
                figures.append((count, try Self.perRowSteps(db, kind, base: 1_000_000 * (phase + 1), rows: rows)))
                // Each replace found the row it replaced: a delete and an insert; each delete one.
                let deletes = try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_log WHERE type = 3")! - deletesBefore
                #expect(deletes == 2 * rows, "\(kind): \(deletes) deletes recorded for \(rows) replaces and \(rows) deletes")
            }
        }
        print("\(kind): VM instructions per row, by scratch rows: " + figures.map { "\($0.scratch): \($0.steps.sorted { $0.key < $1.key })" }.joined(separator: "; "))
        let first = figures[0].steps
        for figure in figures.dropFirst() {
            for (operation, steps) in figure.steps {
                let base = first[operation]!
                #expect(steps <= base + base / 10,
                        "\(kind): one \(operation) ran \(steps) VM instructions with \(figure.scratch) scratch rows, \(base) with none")
            }
        }
    }

    /// The VM-step count includes the triggers' instructions (what the test above relies on):
    /// the same insert costs more on a tracked table than on an untracked one.
    @Test func statementStepsIncludeTheTriggers() throws {
        let database = try TestDatabase(schema: "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT); CREATE TABLE u(k INTEGER PRIMARY KEY, v TEXT);")
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "T", table: "t", primaryKey: "k", fields: [SearchlightModel.Field(column: "v")]),
        ])
        let store = try database.openStore(model: model)
        try store.dbPool.write { db in
            let tracked = try Self.steps(db, "INSERT INTO t(k, v) VALUES (?, 'x')", 1)
            let untracked = try Self.steps(db, "INSERT INTO u(k, v) VALUES (?, 'x')", 1)
            #expect(tracked > 2 * untracked, "tracked \(tracked), untracked \(untracked)")
        }
    }

    /// A database whose history tables and triggers an older release installed (schema
    /// version 1, triggers version 3, whose scratch lookups used no index) is upgraded when a
    /// store opens it, even though its schema did not change since it was last checked.
    @Test func anOlderInstallIsUpgradedOnOpen() throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let triggers = try store.dbPool.read { db in
            try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'searchlight_*'")
        }
        var old = "DROP INDEX searchlight_replaced_nocase; DROP INDEX searchlight_replaced_rtrim; DROP TABLE searchlight_conflict; DROP TABLE searchlight_open;\n"
        for trigger in triggers {
            let sql: String = trigger["sql"]
            old += "DROP TRIGGER \"\(trigger["name"] as String)\";\n"
            old += sql.replacingOccurrences(of: "+NEW.", with: "NEW.").replacingOccurrences(of: "+OLD.", with: "OLD.") + ";\n"
        }
        old += """
            UPDATE searchlight_meta SET value = 1 WHERE key = 'schemaVersion';
            UPDATE searchlight_meta SET value = 3 WHERE key = 'captureVersion';
            UPDATE searchlight_meta SET value = (SELECT schema_version FROM pragma_schema_version) WHERE key = 'captureSchemaVersion';
            """
        try database.shell(old)
        #expect(try database.shell("SELECT count(*) FROM sqlite_master WHERE sql LIKE '%+NEW.%'").trimmingCharacters(in: .whitespacesAndNewlines) == "0")

        let reopened = try HistoryStore(path: database.path)
        _ = try reopened.healCapture()
        try reopened.dbPool.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT value FROM searchlight_meta WHERE key = 'schemaVersion'") == HistorySchema.currentVersion)
            #expect(try Int.fetchOne(db, sql: "SELECT value FROM searchlight_meta WHERE key = 'captureVersion'") == CaptureTriggers.version)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name GLOB 'searchlight_replaced_*'") == 2)
            let installed = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'searchlight_*'")
            #expect(installed.count == triggers.count)
            #expect(installed.filter { $0.contains("\"object_id\" = ") }.allSatisfy { $0.contains("\"object_id\" = +NEW.") || $0.contains("\"object_id\" = +OLD.") })
            #expect(!installed.contains { $0.contains("\"object_id\" = NEW.") || $0.contains("\"object_id\" = OLD.") })
        }
    }
}
