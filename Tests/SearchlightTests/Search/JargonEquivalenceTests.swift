import Foundation
import GRDB
import Testing
import Searchlight
import SearchlightDemoData
import SearchlightHistory
import SearchlightTestSupport

/// Search on the Jargon File returns exactly what a plain FTS5 table, built independently
/// with the same tokenizer, returns for the same MATCH expressions.
@Suite struct JargonEquivalenceTests {
    @Test func matchingIdsEqualAPlainFTS5Table() throws {
        let entries = try DemoData.jargon()
        #expect(entries.count == 2_307)
        let db = try TestDatabase(schema: "CREATE TABLE entries(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT);")
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Entry", table: "entries", primaryKey: "id",
                   fields: [SearchlightModel.Field(column: "title", weight: 5, role: .title), SearchlightModel.Field(column: "body")]),
        ])
        let store = try db.openStore(model: model)
        try store.write(author: "import") { db in
            for entry in entries {
                try db.execute(sql: "INSERT INTO entries VALUES (?, ?, ?)", arguments: [entry.id, entry.title, entry.body])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)

        // The reference: a plain FTS5 table in a separate database.
        let reference = try DatabaseQueue()
        try reference.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE plain USING fts5(id UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2')")
            for entry in entries {
                try db.execute(sql: "INSERT INTO plain VALUES (?, ?, ?)", arguments: [entry.id, entry.title, entry.body])
            }
        }
        let queries = ["hacker", "kernel panic", "\"black magic\"", "wiz*", "bogus OR crufty", "unix -linux",
                       "foo bar", "the", "Mac*", "lossage", "\"real programmer\"", "ITS", "naïve", "döwn", "c++"]
        for text in queries {
            let query = try #require(SearchQuery(userText: text))
            let ours = Set(try index.search(query, limit: nil, typos: .off).hits.map(\.objectID.description))
            let theirs = Set(try reference.read { db in
                try String.fetchAll(db, sql: "SELECT id FROM plain WHERE plain MATCH ?", arguments: [query.expression])
            })
            #expect(ours == theirs, "query \(text): \(ours.count) vs \(theirs.count)")
            #expect(try index.search(query, limit: 0, typos: .off).total == theirs.count)
        }
    }
}
