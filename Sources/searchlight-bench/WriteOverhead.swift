import Foundation
import GRDB
import SearchlightHistory

/// Scenario 1: what history tracking costs a writer, against an untracked table and against
/// indexing synchronously in the write path (a GRDB `synchronize(withTable:)` FTS5 table).
enum WriteOverhead {
    static let schema = "CREATE TABLE docs(id INTEGER PRIMARY KEY, key TEXT, title TEXT, body TEXT)"

    enum Variant: String, CaseIterable {
        case tracked = "tracked (history)"
        case untracked = "untracked"
        case synchronousFTS = "synchronize(withTable:) FTS5"
    }

    /// A database with the `docs` table prepared for `variant`.
    static func prepare(_ variant: Variant, in directory: URL) throws -> (DatabasePool, HistoryStore?) {
        let path = directory.appendingPathComponent("\(variant).sqlite").path
        let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
        try pool.write { db in
            try db.execute(sql: schema)
            if variant == .synchronousFTS {
                try db.create(virtualTable: "docs_fts", using: FTS5()) { t in
                    t.synchronize(withTable: "docs")
                    t.tokenizer = .unicode61()
                    t.column("title")
                    t.column("body")
                }
            }
        }
        guard variant == .tracked else { return (pool, nil) }
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Doc", table: "docs", primaryKey: "id",
                   fields: [SearchlightModel.Field(column: "title", role: .title), SearchlightModel.Field(column: "body")], preserveOnDelete: ["title"]),
        ])
        return (pool, try HistoryStore(dbPool: pool, model: model))
    }

    static func insert(_ doc: Document, _ id: Int, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)")
            .execute(arguments: [id, doc.id, doc.title, doc.body])
    }

    /// Single-row transactions per second.
    static func singleRow(_ variant: Variant, _ documents: ArraySlice<Document>) throws -> Double {
        let directory = try scratchDirectory("single")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pool, store) = try prepare(variant, in: directory)
        let seconds = try measure {
            for (offset, doc) in documents.enumerated() {
                if let store {
                    try store.write(author: "bench") { try insert(doc, offset + 1, $0) }
                } else {
                    try pool.write { try insert(doc, offset + 1, $0) }
                }
            }
        }
        return Double(documents.count) / seconds
    }

    /// Rows per second for one bulk transaction.
    static func bulk(_ variant: Variant, _ documents: ArraySlice<Document>) throws -> Double {
        let directory = try scratchDirectory("bulk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pool, store) = try prepare(variant, in: directory)
        let body: (Database) throws -> Void = { db in
            for (offset, doc) in documents.enumerated() { try insert(doc, offset + 1, db) }
        }
        let seconds = try measure {
            if let store { try store.write(author: "bench", body) } else { try pool.write(body) }
        }
        return Double(documents.count) / seconds
    }

    static func run(_ documents: [Document], singleRowCount: Int, bulkCount: Int, rounds: Int) throws -> [Figure] {
        var figures: [Figure] = []
        let single = documents.prefix(singleRowCount)
        let bulkDocs = documents.prefix(bulkCount)
        // Interleave the variants round by round so that disk and CPU noise hits all alike; keep the best round.
        var singleRates: [Variant: Double] = [:], bulkRates: [Variant: Double] = [:]
        for _ in 0..<rounds {
            for variant in Variant.allCases {
                singleRates[variant] = max(singleRates[variant] ?? 0, try singleRow(variant, single))
                bulkRates[variant] = max(bulkRates[variant] ?? 0, try bulk(variant, bulkDocs))
            }
        }
        for (label, rates, count) in [("single-row transactions", singleRates, single.count), ("bulk insert", bulkRates, bulkDocs.count)] {
            let tracked = rates[.tracked]!, untracked = rates[.untracked]!
            figures.append(Figure("1 write overhead", "\(label), \(count) rows: tracked vs untracked", unit: "rows/s",
                                  ours: tracked, baseline: untracked, baselineName: "untracked",
                                  target: ">= 0.6x", met: tracked / untracked >= 0.6))
            figures.append(Figure("1 write overhead", "\(label), \(count) rows: tracked vs sync FTS5", unit: "rows/s",
                                  ours: tracked, baseline: rates[.synchronousFTS]!, baselineName: "sync FTS5"))
        }
        return figures
    }
}
