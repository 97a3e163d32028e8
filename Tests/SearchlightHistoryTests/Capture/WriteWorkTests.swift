import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

/// What the capture triggers cost a writer, counted in SQLite virtual-machine instructions of
/// the app's statement, its triggers' included (`SQLITE_STMTSTATUS_VM_STEP`): deterministic,
/// never timed. History grows for as long as consumers lag or cleanup waits; a write must cost
/// the same whatever the log holds.
@Suite(.serialized) struct WriteWorkTests {
    static let schema = """
        CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT, w TEXT);
        CREATE TABLE u(k INTEGER PRIMARY KEY, v TEXT);
        CREATE TABLE plain(k INTEGER PRIMARY KEY, v TEXT, w TEXT);
        """

    func openStore() throws -> (TestDatabase, HistoryStore) {
        let database = try TestDatabase(schema: Self.schema)
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "T", table: "t", primaryKey: "k", fields: [SearchlightModel.Field(column: "v")]),
            SearchlightModel.Entity(name: "U", table: "u", primaryKey: "k", fields: [SearchlightModel.Field(column: "v")]),
        ])
        return (database, try database.openStore(model: model))
    }

    /// The most instructions one row of each foreign write ran, over `rows` rows of keys above `base`.
    static func perRowSteps(_ db: Database, table: String = "t", base: Int, rows: Int) throws -> [String: Int] {
        try db.execute(sql: """
            WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
            INSERT INTO \(table)(k, v, w) SELECT i, 'old', 'old' FROM n
            """, arguments: [base + rows + 1, base + 4 * rows])
        var most: [String: Int] = [:]
        for row in 1...rows {
            let operations = [
                ("insert", "INSERT INTO \(table)(k, v, w) VALUES (?, 'new', 'new')", base + row),
                ("update of an indexed column", "UPDATE \(table) SET v = 'updated' WHERE k = ?", base + rows + row),
                ("update of an untracked column", "UPDATE \(table) SET w = 'updated' WHERE k = ?", base + rows + row),
                ("replace", "INSERT OR REPLACE INTO \(table)(k, v, w) VALUES (?, 'replaced', 'x')", base + 2 * rows + row),
                ("delete", "DELETE FROM \(table) WHERE k = ?", base + 3 * rows + row),
            ]
            for (name, sql, i) in operations {
                most[name] = max(most[name] ?? 0, try ReplaceWorkTests.steps(db, sql, i))
            }
        }
        return most
    }

    /// Per-row work of each foreign write with 0, 10,000 and 100,000 changes of another entity
    /// already in the log (each a transaction of its own: a foreign bulk insert), within 10%.
    @Test func aWriteCostsTheSameWhateverTheLogHolds() throws {
        let (_, store) = try openStore()
        let rows = 20
        var figures: [(log: Int, steps: [String: Int])] = []
        var inLog = 0
        for (phase, size) in [0, 10_000, 100_000].enumerated() {
            try store.dbPool.write { db in
                if size > inLog {
                    try db.execute(sql: """
                        WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
                        INSERT INTO u(k, v) SELECT i, 'bulk' FROM n
                        """, arguments: [inLog + 1, size])
                    inLog = size
                }
                let logRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_log")!
                #expect(logRows >= size)
                figures.append((logRows, try Self.perRowSteps(db, base: 1_000_000 * (phase + 1), rows: rows)))
            }
        }
        print("VM instructions per foreign row, by log rows: " + figures.map { "\($0.log): \($0.steps.sorted { $0.key < $1.key })" }.joined(separator: "; "))
        let first = figures[0].steps
        for figure in figures.dropFirst() {
            for (operation, steps) in figure.steps {
                let base = first[operation]!
                #expect(steps <= base + base / 10, "one \(operation) ran \(steps) VM instructions with \(figure.log) log rows, \(base) with none")
            }
        }
    }

    /// An update of columns the model does not track runs no trigger at all (each trigger's
    /// frame costs even when its condition is false): the same work as on an untracked table.
    @Test func anUpdateOfAColumnTheModelDoesNotTrackRunsNoTrigger() throws {
        let (_, store) = try openStore()
        try store.dbPool.write { db in
            let tracked = try Self.perRowSteps(db, table: "t", base: 0, rows: 5)
            let untracked = try Self.perRowSteps(db, table: "plain", base: 0, rows: 5)
            #expect(tracked["update of an untracked column"] == untracked["update of an untracked column"])
            // (The other kinds do run triggers: the count sees them.)
            #expect(tracked["update of an indexed column"]! > untracked["update of an indexed column"]!)
            #expect(tracked["insert"]! > untracked["insert"]!)
        }
    }
}
