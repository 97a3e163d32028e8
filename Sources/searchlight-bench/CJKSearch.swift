import Foundation
import GRDB
import Searchlight
import SearchlightEvaluation
import SearchlightHistory

/// Scenario 7: search on Chinese and Japanese text. Recall and precision against substring
/// ground truth (``RecallEvaluation``, the same code as `CJKRecallTests`), for Searchlight's
/// default model and for what a user would otherwise set up by hand: a plain FTS5 table with
/// unicode61 (the default tokenizer) or trigram, queried with each query as a phrase. Also
/// the index's size and build time, beside the main (English) corpus.
enum CJKSearch {
    static func run(corpora: [String], english: [Document], englishName: String, queriesPerKind: Int, seed: UInt64) throws -> [Figure] {
        var figures: [Figure] = []
        // Size and build time, English first.
        let englishDocuments = english.map { RecallEvaluation.Document(id: $0.id, title: $0.title, body: $0.body) }
        figures += try footprint(englishDocuments, name: englishName)
        for path in corpora {
            let name = URL(fileURLWithPath: path).lastPathComponent.replacingOccurrences(of: ".jsonl.gz", with: "")
            let documents = try RecallEvaluation.load(path)
            figures += try footprint(documents, name: name)
            let queries = RecallEvaluation.queries(documents, perCategory: queriesPerKind, seed: seed)
            let directory = try scratchDirectory("cjk")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (store, _) = try indexed(documents, in: directory)
            let index = SearchIndex(store: store)
            let ours = try RecallEvaluation.evaluate(queries) { query in
                // Rows are numbered from 1 in corpus order.
                Set(try index.search(query.text, asYouType: query.asYouType, limit: nil).hits.compactMap { hit in
                    guard case let .integer(row) = hit.objectID else { return nil }
                    return documents[Int(row) - 1].id
                })
            }.rows
            var baselines: [String: [RecallEvaluation.Row]] = [:]
            for tokenizer in ["unicode61 remove_diacritics 2", "trigram"] {
                let plain = try plainTable(documents, tokenizer: tokenizer, in: directory)
                baselines[tokenizer] = try RecallEvaluation.evaluate(queries) { query in
                    // By hand: the words as FTS5 phrases, the last one a prefix when typing.
                    let words = query.text.split(separator: " ")
                    let expression = words.enumerated().map { offset, word in
                        "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (query.asYouType && offset == words.count - 1 ? " *" : "")
                    }.joined(separator: " AND ")
                    return Set(try plain.read { db in try String.fetchAll(db, sql: "SELECT id FROM plain WHERE plain MATCH ?", arguments: [expression]) })
                }.rows
            }
            for row in ours {
                let unicode61 = baselines["unicode61 remove_diacritics 2"]!.first { $0.category == row.category }!
                let trigram = baselines["trigram"]!.first { $0.category == row.category }!
                FileHandle.standardError.write(Data("\(name) \(row.category): ours \(row); unicode61 recall \(String(format: "%.3f", unicode61.recall)); trigram recall \(String(format: "%.3f", trigram.recall)) precision \(String(format: "%.3f", trigram.precision))\n".utf8))
                figures.append(Figure("7 CJK search", "\(name) \(row.category), recall (\(row.queries) queries)", unit: "",
                                      ours: row.recall, baseline: unicode61.recall, baselineName: "plain FTS5 unicode61",
                                      target: ">= 0.99", met: row.recall >= 0.99))
                figures.append(Figure("7 CJK search", "\(name) \(row.category), recall", unit: "",
                                      ours: row.recall, baseline: trigram.recall, baselineName: "plain FTS5 trigram"))
                figures.append(Figure("7 CJK search", "\(name) \(row.category), precision", unit: "",
                                      ours: row.precision, baseline: trigram.precision, baselineName: "plain FTS5 trigram",
                                      target: ">= 0.98", met: row.precision >= 0.98))
            }
        }
        return figures
    }

    /// A tracked database holding `documents` that Searchlight has indexed (a rebuild).
    static func indexed(_ documents: [RecallEvaluation.Document], in directory: URL) throws -> (HistoryStore, Double) {
        let path = directory.appendingPathComponent("cjk-\(UUID().uuidString).sqlite").path
        let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
        try pool.write { db in
            try db.execute(sql: WriteOverhead.schema)
            for (offset, document) in documents.enumerated() {
                try db.execute(sql: "INSERT INTO docs(id, title, body) VALUES (?, ?, ?)", arguments: [offset + 1, document.title, document.body])
            }
        }
        let store = try HistoryStore(dbPool: pool, model: Indexing.model)
        let seconds = try measure { try Indexer(store: store).indexPendingChanges() }
        return (store, seconds)
    }

    /// A plain FTS5 table of the documents, with their ids.
    static func plainTable(_ documents: [RecallEvaluation.Document], tokenizer: String, in directory: URL) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("plain-\(UUID().uuidString).sqlite").path)
        try queue.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE plain USING fts5(id UNINDEXED, title, body, tokenize = \(SQLQuoting.literal(tokenizer)))")
            let statement = try db.makeStatement(sql: "INSERT INTO plain(id, title, body) VALUES (?, ?, ?)")
            for document in documents { try statement.execute(arguments: [document.id, document.title, document.body]) }
        }
        return queue
    }

    /// Index size per document and build rate: Searchlight's rebuild, and a plain FTS5 table
    /// (unicode61, prefix indexes as ours) filled in one transaction.
    static func footprint(_ documents: [RecallEvaluation.Document], name: String) throws -> [Figure] {
        let directory = try scratchDirectory("footprint")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, seconds) = try indexed(documents, in: directory)
        let indexBytes = try store.databaseWriter.read { db in
            // The index's own tables (FTS5 shadow tables, the document map), through dbstat
            // (Debian's SQLite has it).
            try Int.fetchOne(db, sql: """
                SELECT sum(pgsize) FROM dbstat WHERE name GLOB 'searchlight_fts_*' OR name GLOB 'searchlight_document_*'
                """) ?? 0
        }
        let (plainQueue, plainSeconds) = try Indexing.plainFTS5Table(documents.map { ($0.title, $0.body) }, in: directory, tokenizer: Indexing.model.tokenizer)
        let plainBytes = try plainQueue.read { db in try Int.fetchOne(db, sql: "SELECT sum(pgsize) FROM dbstat WHERE name GLOB 'plain*'") ?? 0 }
        let textBytes = documents.reduce(0) { $0 + $1.title.utf8.count + $1.body.utf8.count }
        let count = Double(documents.count)
        FileHandle.standardError.write(Data("\(name): \(documents.count) documents, \(textBytes) bytes of text, index \(indexBytes) bytes (plain FTS5 \(plainBytes)), built in \(String(format: "%.2f", seconds)) s (plain \(String(format: "%.2f", plainSeconds)) s)\n".utf8))
        return [
            Figure("7 CJK search", "\(name): index size (\(documents.count) docs, \(textBytes / 1_000_000) MB of text)", unit: "MB",
                   ours: Double(indexBytes) / 1e6, baseline: Double(plainBytes) / 1e6, baselineName: "plain FTS5 unicode61"),
            Figure("7 CJK search", "\(name): full build", unit: "docs/s",
                   ours: count / seconds, baseline: count / plainSeconds, baselineName: "plain FTS5 insert"),
        ]
    }
}
