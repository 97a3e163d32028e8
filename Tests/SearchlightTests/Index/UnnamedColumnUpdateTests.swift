import Foundation
import GRDB
import Testing
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Updates that change what the index holds without naming a tracked column in their SET: the
/// capture triggers name their columns (`UPDATE OF`), so each of these once went unrecorded
/// (found by the black-box attack on capture triggers v6). Every case writes through the
/// `sqlite3` shell, and checks each word against the rows read back with plain SQL.
@Suite struct UnnamedColumnUpdateTests {
    struct Case {
        var schema: String
        var key: String
        var setup: String
        var change: String
        /// word → the keys of the rows that hold it, by plain SQL over `body`.
        var words: [String]
    }

    func check(_ testCase: Case, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let database = try TestDatabase(schema: testCase.schema)
        let model = try SearchlightModel(entities: [.init(name: "T", table: "t", primaryKey: testCase.key, fields: [.init(column: "body")])])
        let store = try database.openStore(model: model)
        let indexer = try Indexer(store: store)
        try database.shell(testCase.setup)
        try indexer.indexPendingChanges()
        try database.shell(testCase.change)
        try indexer.indexPendingChanges()
        let index = SearchIndex(store: store)
        for word in testCase.words {
            let expected = try database.shell("SELECT \(testCase.key) FROM t WHERE ' ' || body || ' ' LIKE '% \(word) %' ORDER BY 1;")
                .split(separator: "\n").map(String.init)
            let found = try index.search(word, limit: 100).hits.map(\.objectID.description).sorted()
            #expect(found == expected.sorted(), "\(word): \(testCase.change)", sourceLocation: sourceLocation)
        }
        #expect(try indexer.verify().isConsistent, "verify after \(testCase.change)", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["VIRTUAL", "STORED"])
    func anIndexedGeneratedColumnFollowsTheColumnItReads(_ kind: String) throws {
        try check(Case(schema: "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, body TEXT GENERATED ALWAYS AS (a) \(kind))",
                       key: "id", setup: "INSERT INTO t(id, a) VALUES (1, 'wone'), (2, 'wtwo');",
                       change: "UPDATE t SET a = 'wthree' WHERE id = 1;", words: ["wone", "wtwo", "wthree"]))
    }

    @Test(arguments: ["rowid", "oid", "_rowid_"])
    func anIntegerKeyChangedThroughARowidNameIsARekey(_ name: String) throws {
        try check(Case(schema: "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)", key: "id",
                       setup: "INSERT INTO t VALUES (1, 'wone'), (2, 'wtwo');",
                       change: "UPDATE t SET \(name) = 5 WHERE id = 1; UPDATE OR REPLACE t SET \(name) = 5 WHERE id = 2;",
                       words: ["wone", "wtwo"]))
    }

    @Test(arguments: ["rowid", "oid", "_rowid_"])
    func aRowidSetByAnyNameOnATextKeyedTableRecordsTheRowItDisplaces(_ name: String) throws {
        try check(Case(schema: "CREATE TABLE t(k TEXT PRIMARY KEY, body TEXT)", key: "k",
                       setup: "INSERT INTO t(rowid, k, body) VALUES (1, 'a', 'wone'), (2, 'b', 'wtwo');",
                       change: "UPDATE OR REPLACE t SET \(name) = 2 WHERE k = 'a';", words: ["wone", "wtwo"]))
    }

    @Test func anUpdateOfAPartialUniqueIndexsConditionRecordsTheRowItDisplaces() throws {
        try check(Case(schema: "CREATE TABLE t(id INTEGER PRIMARY KEY, e TEXT, active INT, body TEXT); CREATE UNIQUE INDEX ue ON t(e) WHERE active = 1;",
                       key: "id", setup: "INSERT INTO t VALUES (1, 'x', 1, 'wone'), (2, 'x', 0, 'wtwo');",
                       change: "UPDATE OR REPLACE t SET active = 1 WHERE id = 2;", words: ["wone", "wtwo"]))
    }

    @Test(arguments: ["VIRTUAL", "STORED"])
    func aReplaceThroughAUniqueGeneratedColumnRecordsTheRowItDisplaces(_ kind: String) throws {
        try check(Case(schema: "CREATE TABLE t(id INTEGER PRIMARY KEY, w TEXT, g TEXT GENERATED ALWAYS AS (lower(w)) \(kind) UNIQUE, body TEXT)",
                       key: "id", setup: "INSERT INTO t(id, w, body) VALUES (1, 'Ab', 'wone'), (2, 'cd', 'wtwo');",
                       change: "UPDATE OR REPLACE t SET w = 'AB' WHERE id = 2;", words: ["wone", "wtwo"]))
    }

    /// A row whose key is NULL (legal in a rowid table with a TEXT key) has no identity; a
    /// REPLACE that displaces it must still go through, as it does without Searchlight.
    @Test func aReplaceThatDisplacesARowWithANullKeyIsNotRefused() throws {
        try check(Case(schema: "CREATE TABLE t(k TEXT PRIMARY KEY, u TEXT UNIQUE, body TEXT)", key: "k",
                       setup: "INSERT INTO t VALUES (NULL, 'a', 'wone'), ('z', 'b', 'wzed');",
                       change: "INSERT OR REPLACE INTO t VALUES ('y', 'a', 'wtwo'); UPDATE OR REPLACE t SET u = 'a' WHERE k = 'z';",
                       words: ["wone", "wtwo", "wzed"]))
    }
}
