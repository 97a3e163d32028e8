import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Keys SQLite accepts that a key-based index cannot address.
@Suite struct OddKeyTests {
    static let schema = """
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);
        CREATE TABLE docs(k TEXT PRIMARY KEY, title TEXT);
        """
    static let model = try! SearchlightModel(entities: [
        .init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "title")]),
        .init(name: "Doc", table: "docs", primaryKey: "k", fields: [.init(column: "title")]),
    ])

    /// Regression (found by a black-box attack): a NULL key in a TEXT PRIMARY KEY
    /// put a change in history that made every fetch throw; the indexer was stuck for good,
    /// and every other entity's changes stayed unindexed.
    @Test func aNullKeyNeverStopsIndexingOrHistory() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore(model: Self.model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try db.shell("INSERT INTO docs(k, title) VALUES (NULL, 'nameless'); INSERT INTO notes(id, title) VALUES (1, 'fresh');")
        #expect(throws: Never.self) { try store.fetchTransactions(.all) }
        try indexer.indexPendingChanges()
        let index = SearchIndex(store: store)
        #expect(try index.search("fresh", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try index.search("nameless", limit: nil).total == 0, "a row with no key cannot be indexed")
        #expect(try indexer.verify().isConsistent)
        #expect(try store.status().consumers.first { $0.consumer.author == "searchlight.indexer" }?.lag == 0)
    }
}
