import Foundation
import GRDB
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A fresh database with the notes schema, its store, an indexer and a search index.
struct Fixture {
    let db: TestDatabase
    let store: HistoryStore
    let indexer: Indexer
    let index: SearchIndex

    init(schema: String = TestDatabase.notesSchema, model: SearchlightModel = TestDatabase.notesModel,
         configuration: Indexer.Configuration = .init(), seed: String? = nil) throws {
        db = try TestDatabase(schema: schema)
        if let seed { try db.shell(seed) }
        store = try db.openStore(model: model)
        indexer = try Indexer(store: store, configuration: configuration)
        index = SearchIndex(store: store)
    }

    /// Object ids of every hit for `text` (no limit).
    /// The ids that `text` finds, exact matches only unless `typos` says otherwise.
    func ids(_ text: String, asYouType: Bool = false, entities: Set<String>? = nil, typos: TypoTolerance = .off) throws -> [ObjectID] {
        try index.search(text, asYouType: asYouType, entities: entities, limit: nil, typos: typos).hits.map(\.objectID)
    }

    @discardableResult
    func runIndexer() throws -> Indexer.Summary { try indexer.indexPendingChanges() }

    func insertNote(_ id: Int, title: String, body: String = "", tags: String = "") throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)", arguments: [id, title, body, tags])
        }
    }
}
