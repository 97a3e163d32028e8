import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

@Suite struct HostileAndFaultTests {
    @Test(arguments: [#"my "quoted" table"#, "select", "tab;le --", "ünïcødé 表", "[bracketed]"])
    func hostileIdentifiersAreIndexedAndSearched(name: String) throws {
        let table = SQLQuoting.identifier(name), column = SQLQuoting.identifier(name + " col")
        let db = try TestDatabase(schema: """
            CREATE TABLE \(table)("key" TEXT PRIMARY KEY NOT NULL, \(column) TEXT, "order" TEXT);
            INSERT INTO \(table) VALUES ('k''1', 'preexisting words', 'by order');
            """)
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: name, table: name, primaryKey: "key",
                   fields: [SearchlightModel.Field(column: name + " col", weight: 2, role: .title), SearchlightModel.Field(column: "order")]),
        ])
        try Indexer.validate(model: model)
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try db.shell("INSERT INTO \(table) VALUES ('k2', 'fresh words', NULL); UPDATE \(table) SET \"order\" = 'reordered' WHERE \"key\" = 'k''1';")
        try indexer.indexPendingChanges()
        let index = SearchIndex(store: store)
        #expect(try index.search("words", limit: nil).hits.map(\.objectID).sorted() == [.text("k'1"), .text("k2")])
        #expect(try index.search("reordered").hits.first?.title == "preexisting words")
        #expect(try indexer.verify().isConsistent)
    }

    @Test func runningOutOfSpaceMidIndexRollsBackAndTheNextRunContinues() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try Indexer(store: store).indexPendingChanges()
        try store.write(author: "app") { db in
            for i in 1...3_000 {
                try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                               arguments: [i, "note \(i)", String(repeating: "lorem ipsum dolor sit amet \(i) ", count: 8)])
            }
        }
        // A second store on the same file whose connections may not grow the file.
        var config = HistoryStore.databaseConfiguration()
        let pages = try store.dbPool.read { try Int.fetchOne($0, sql: "PRAGMA page_count") }!
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA max_page_count = \(pages + 20)") }
        let cramped = try HistoryStore(dbPool: try DatabasePool(path: db.path, configuration: config))
        let crampedIndexer = try Indexer(store: cramped)
        let before = try crampedIndexer.indexedToken()
        let error = try #require(throws: SearchlightError.self) { try crampedIndexer.indexPendingChanges() }
        #expect(error.message.contains("full"), "\(error.message)")
        #expect(try crampedIndexer.indexedToken() == before, "the failed batch rolled back, checkpoint included")
        #expect(try SearchIndex(store: store).search("lorem", limit: 0).total == 0)
        // With room again, the next run continues and ends equal to the source.
        let indexer = try Indexer(store: store)
        let summary = try indexer.indexPendingChanges()
        #expect(summary.upserted == 3_000)
        #expect(try indexer.verify().isConsistent)
    }
}
