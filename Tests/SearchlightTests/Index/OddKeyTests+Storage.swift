import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

extension OddKeyTests {
    /// Regression (found by a black-box attack): BLOB keys (and REAL keys in a
    /// column with no type) were turned into text, so the incremental path never found their
    /// rows: never indexed, and an update removed them. `verify --repair` could not fix it.
    @Test func keysOfEveryStorageClassAreIndexedUpdatedAndRemoved() throws {
        let db = try TestDatabase(schema: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);
            CREATE TABLE docs(k TEXT PRIMARY KEY, title TEXT);
            CREATE TABLE raw(k PRIMARY KEY, title TEXT);
            """)
        let model = try SearchlightModel(entities: [
            .init(name: "Doc", table: "docs", primaryKey: "k", fields: [.init(column: "title")]),
            .init(name: "Raw", table: "raw", primaryKey: "k", fields: [.init(column: "title")]),
        ])
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try db.shell("""
            INSERT INTO docs VALUES (x'6b30303031', 'zebra blob'), (42.5, 'zebra real'), ('t', 'zebra text');
            INSERT INTO raw VALUES (x'00ff', 'zebra blob'), (1.5, 'zebra real'), ('t', 'zebra text'), (7, 'zebra integer');
            """)
        try indexer.indexPendingChanges()
        let index = SearchIndex(store: store)
        #expect(try index.search("zebra", limit: nil).total == 7)
        #expect(try Set(index.search("zebra", entities: ["Raw"], limit: nil).hits.map(\.objectID))
                == [.blob(Data([0x00, 0xFF])), .real(1.5), .text("t"), .integer(7)])
        #expect(try indexer.verify().isConsistent)
        try db.shell("UPDATE docs SET title = 'yak blob' WHERE k = x'6b30303031'; UPDATE raw SET title = 'yak real' WHERE k = 1.5;")
        try indexer.indexPendingChanges()
        #expect(try index.search("yak", limit: nil).total == 2)
        #expect(try index.search("zebra", limit: nil).total == 5)
        try db.shell("DELETE FROM docs WHERE k = x'6b30303031'; DELETE FROM raw WHERE k = x'00ff';")
        try indexer.indexPendingChanges()
        #expect(try index.search("yak", limit: nil).hits.map(\.objectID) == [.real(1.5)])
        #expect(try indexer.verify().isConsistent)
        #expect(ObjectID.blob(Data([0x6B])).description == "x'6B'")
    }
}

extension OddKeyTests {
    /// Regression: a WITHOUT ROWID table whose key is declared INTEGER PRIMARY KEY was
    /// taken for a rowid table, though it holds text keys too: the indexer was stuck for good
    /// on "object id abc … is not an integer".
    @Test func aWithoutRowidIntegerKeyMayHoldText() throws {
        let db = try TestDatabase(schema: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);
            CREATE TABLE w(id INTEGER PRIMARY KEY, title TEXT) WITHOUT ROWID;
            """)
        let model = try SearchlightModel(entities: [.init(name: "W", table: "w", primaryKey: "id", fields: [.init(column: "title")])])
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try db.shell("INSERT INTO w VALUES ('abc', 'zebra text'), (7, 'zebra number');")
        try indexer.indexPendingChanges()
        #expect(try Set(SearchIndex(store: store).search("zebra", limit: nil).hits.map(\.objectID)) == [.text("abc"), .integer(7)])
        try db.shell("DELETE FROM w WHERE id = 'abc';")
        try indexer.indexPendingChanges()
        #expect(try SearchIndex(store: store).search("zebra", limit: nil).hits.map(\.objectID) == [.integer(7)])
        #expect(try indexer.verify().isConsistent)
    }
}

extension OddKeyTests {
    /// Found by a black-box attack: in a column with no type, SQLite holds `1` and `1.0` as the
    /// same key. After `UPDATE … SET k = 1.0`, a delete of the row recorded 1.0 while the index
    /// held 1, and the document stayed as a ghost.
    @Test func anIntegerKeyThatBecameARealIsTheSameObject() throws {
        let db = try TestDatabase(schema: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);
            CREATE TABLE raw(k PRIMARY KEY, title TEXT);
            """)
        let model = try SearchlightModel(entities: [.init(name: "Raw", table: "raw", primaryKey: "k", fields: [.init(column: "title")])])
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try db.shell("INSERT INTO raw VALUES (1, 'zebra');")
        try indexer.indexPendingChanges()
        try db.shell("UPDATE raw SET k = 1.0 WHERE k = 1;")
        try indexer.indexPendingChanges()
        #expect(try indexer.verify().isConsistent)
        try db.shell("DELETE FROM raw;")
        try indexer.indexPendingChanges()
        #expect(try SearchIndex(store: store).search("zebra", limit: nil).total == 0)
        #expect(try indexer.verify().isConsistent)
        #expect(ObjectID.integer(1) == .real(1.0) && Set([ObjectID.integer(1), .real(1.0)]).count == 1)
        #expect(ObjectID.real(1.5) != .integer(1))
    }
}
