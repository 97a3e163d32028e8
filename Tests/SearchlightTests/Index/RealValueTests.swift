import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Field values of every storage class are indexed as SQLite writes them as text, the text a
/// plain FTS5 table over the same rows indexes: REAL values included (`0.1+0.2` is `0.3`,
/// not Swift's `0.30000000000000004`).
@Suite struct RealValueTests {
    static let schema = """
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);
        CREATE TABLE items(id INTEGER PRIMARY KEY, label TEXT, price REAL, extra);
        """
    static let model = try! SearchlightModel(entities: [
        .init(name: "Item", table: "items", primaryKey: "id", fields: [.init(column: "label"), .init(column: "price"), .init(column: "extra")]),
    ])
    /// Values as the `sqlite3` shell writes them: REAL results of arithmetic, an integer, a
    /// BLOB, a NULL and text.
    static let rows = """
        INSERT INTO items VALUES (1, 'sum', 0.1 + 0.2, NULL), (2, 'big', 1e15, 2.5e-7), (3, 'third', 1.0 / 3, -0.0),
            (4, 'integer', 7, 9007199254740993), (5, 'blob', 12.5, x'68656c6c6f20626c6f62'), (6, 'text', '0.1', 'e+15');
        """
    /// The values as SQLite prints them (`SELECT 0.1 + 0.2` → `0.3`), searched as a user types them.
    static let queries = ["0.3", "1.0e+15", "0.333333333333333", "2.5e-07", "9007199254740993", "hello blob", "12.5", "0.1", "e+15"]

    /// Asserts that each query finds what the same expression finds in a plain FTS5 table
    /// built by plain SQL over the same rows (in a separate database), and something.
    static func expectSearchesMatchAPlainFTS5Table(_ store: HistoryStore, _ queries: [String]) throws {
        let reference = try DatabaseQueue()
        let rows = try store.dbPool.read { db in try Row.fetchAll(db, sql: "SELECT id, label, price, extra FROM items") }
        try reference.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE plain USING fts5(label, price, extra, tokenize = '\(store.model.tokenizer)')")
            for row in rows {
                try db.execute(sql: "INSERT INTO plain(rowid, label, price, extra) VALUES (?, ?, ?, ?)", arguments: [row[0], row[1], row[2], row[3]])
            }
        }
        let index = SearchIndex(store: store)
        for text in queries {
            let query = try #require(SearchQuery(userText: text))
            let ours = Set(try index.search(query, limit: nil).hits.map(\.objectID))
            let theirs = Set(try reference.read { db in
                try Int64.fetchAll(db, sql: "SELECT rowid FROM plain WHERE plain MATCH ?", arguments: [query.expression])
            }.map(ObjectID.integer))
            #expect(!theirs.isEmpty, "query \(text): the plain table finds it")
            #expect(ours == theirs, "query \(text): \(ours) vs \(theirs)")
        }
    }

    /// The live full-text table of the Item entity.
    static func ftsTable(_ store: HistoryStore) throws -> String {
        try store.dbPool.read { db in
            let live = try #require(try IndexState.live(db))
            let layout = try IndexLayout(json: try #require(live.layout))
            return live.schema.ftsTable(try #require(layout.entities.first { $0.entity.name == "Item" }).id)
        }
    }

    @Test func realValuesAreSearchableAsSQLiteWritesThemAfterARebuild() throws {
        let db = try TestDatabase(schema: Self.schema)
        try db.shell(Self.rows)
        let store = try db.openStore(model: Self.model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try Self.expectSearchesMatchAPlainFTS5Table(store, Self.queries)
        #expect(try indexer.verify().isConsistent)
    }

    @Test func realValuesAreSearchableAsSQLiteWritesThemWhenIndexedIncrementally() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore(model: Self.model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try db.shell(Self.rows)
        #expect(try indexer.indexPendingChanges().rebuildReason == nil)
        try Self.expectSearchesMatchAPlainFTS5Table(store, Self.queries)
        try db.shell("UPDATE items SET price = 2.0 / 3 WHERE id = 1;")
        try indexer.indexPendingChanges()
        try Self.expectSearchesMatchAPlainFTS5Table(store, ["0.666666666666667"])
        try indexer.reindex(ids: [.integer(2)], entity: "Item")
        #expect(try indexer.verify().isConsistent)
    }

    /// Verify computes the expected text with SQLite, not with the indexer's conversion: an
    /// index holding Swift's digits (what earlier releases wrote) is stale, and text written
    /// by plain SQL as SQLite converts the value is what it expects.
    @Test func verifyExpectsTheTextSQLiteGivesARealValue() throws {
        let db = try TestDatabase(schema: Self.schema)
        try db.shell(Self.rows)
        let store = try db.openStore(model: Self.model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        #expect(try indexer.verify().isConsistent)
        let fts = try Self.ftsTable(store)
        // Swift's text for 0.1 + 0.2 and 1e15.
        try db.shell("""
            UPDATE \(fts) SET price = '0.30000000000000004' WHERE rowid = 1;
            UPDATE \(fts) SET price = '1000000000000000.0' WHERE rowid = 2;
            """)
        let report = try indexer.verify()
        #expect(report.entities.first?.stale == [.integer(1), .integer(2)])
        #expect(try SearchIndex(store: store).search("0.3", limit: nil).total == 0, "the damage is real")
        // The text SQLite itself gives the values, written by plain SQL: consistent again.
        try db.shell("UPDATE \(fts) SET price = (SELECT CAST(price AS TEXT) FROM items WHERE id = \(fts).rowid) WHERE rowid IN (1, 2);")
        #expect(try indexer.verify().isConsistent)
        try db.shell("UPDATE \(fts) SET price = '0.30000000000000004' WHERE rowid = 1;")
        #expect(try indexer.repair().found.entities.first?.stale == [.integer(1)])
        #expect(try indexer.verify().isConsistent)
        try Self.expectSearchesMatchAPlainFTS5Table(store, ["0.3", "1.0e+15"])
    }

    /// A builder's document is compared with what the builder returns (it decides the text).
    @Test func verifyComparesABuildersDocumentsWithWhatItReturns() throws {
        let db = try TestDatabase(schema: Self.schema)
        try db.shell(Self.rows)
        let store = try db.openStore(model: Self.model)
        var configuration = Indexer.Configuration()
        configuration.documentBuilders["Item"] = { row, _ in
            let price: Double? = row["price"]
            guard let price, price < 1e9 else { return nil }
            return IndexedDocument(["label": (row["label"] as String?) ?? "", "price": String(format: "%.2f", price)])
        }
        let indexer = try Indexer(store: store, configuration: configuration)
        try indexer.indexPendingChanges()
        #expect(try SearchIndex(store: store).search("0.30", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try indexer.verify().isConsistent)
        try store.write(author: "app") { db in try db.execute(sql: "UPDATE items SET price = 2e9 WHERE id = 1") }
        let report = try indexer.verify()
        #expect(report.pending == 1 && report.isConsistent, "pending, not wrong")
        try indexer.indexPendingChanges()
        #expect(try indexer.verify().isConsistent)
        #expect(try SearchIndex(store: store).search("sum", limit: nil).total == 0, "excluded by the builder")
    }
}
