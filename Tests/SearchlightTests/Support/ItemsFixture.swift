import Foundation
import GRDB
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A fresh database whose `items` table has attributes of every affinity and collation:
/// `n` INTEGER, `r` REAL, `t` TEXT COLLATE NOCASE, `u` (no type: BLOB affinity), `x` NUMERIC,
/// `k` TEXT COLLATE RTRIM, `pop` REAL and `updated` (dates).
struct ItemsFixture {
    static let schema = """
        CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT, n INTEGER, r REAL, t TEXT COLLATE NOCASE, u, x NUMERIC,
                           k TEXT COLLATE RTRIM, pop REAL, updated);
        """
    static let attributeColumns = ["n", "r", "t", "u", "x", "k"]

    static func model(ranking: [SearchlightModel.RankingHint] = [], extraAttributes: [String] = ["pop", "updated"]) throws -> SearchlightModel {
        try SearchlightModel(entities: [
            .init(name: "Item", table: "items", primaryKey: "id", fields: [.init(column: "body")],
                  attributes: (attributeColumns + extraAttributes).map { .init(column: $0) }, ranking: ranking),
        ])
    }

    let db: TestDatabase
    let store: HistoryStore
    let indexer: Indexer

    init(model: SearchlightModel? = nil, schema: String = ItemsFixture.schema) throws {
        db = try TestDatabase(schema: schema)
        store = try db.openStore(model: model ?? Self.model())
        indexer = try Indexer(store: store)
    }

    func index(maximumRankedMatches: Int = 15_000) -> SearchIndex {
        var options = SearchIndex.Options()
        options.maximumRankedMatches = maximumRankedMatches
        return SearchIndex(store: store, options: options)
    }

    func write(_ sql: String, _ arguments: StatementArguments = []) throws {
        try store.write(author: "app") { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// The indexed attribute values of an item, by attribute name (nil: no row of values).
    func indexedValues(_ id: Int64) throws -> [String: DatabaseValue]? {
        try store.databaseWriter.read { db in
            let generation = try Int.fetchOne(db, sql: #"SELECT value FROM searchlight_index_state WHERE key = 'generation'"#)!
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM searchlight_attr_1_g\(generation) WHERE rowid = ?", arguments: [id]) else { return nil }
            return Dictionary(uniqueKeysWithValues: row.columnNames.map { ($0, row[$0] as DatabaseValue) })
        }
    }
}
