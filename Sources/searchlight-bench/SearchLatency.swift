import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// Scenario 5: top-20 searches with snippets, against the same MATCH expressions run as raw
/// SQL on a plain FTS5 table.
enum SearchLatency {
    /// At least 300 queries drawn deterministically from the corpus: single words from very
    /// common to rare, two- and three-word queries, phrases and prefixes.
    static func queries(_ documents: [Document]) -> [SearchQuery] {
        var frequency: [String: Int] = [:]
        var texts: [[String]] = []
        for doc in documents.prefix(20_000) {
            let words = doc.body.lowercased().split { !$0.isLetter }.map(String.init).filter { $0.count > 1 }
            texts.append(words)
            for word in Set(words) { frequency[word, default: 0] += 1 }
        }
        let ranked = frequency.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
        var queries: [String] = []
        // 100 single words spread over the frequency ranking, the 20 most common included.
        queries += ranked.prefix(20)
        let step = max(1, (ranked.count - 20) / 80)
        queries += stride(from: 20, to: ranked.count, by: step).prefix(80).map { ranked[$0] }
        // 60 two-word and 60 three-word queries, 60 phrases, from the texts.
        var picked = 0
        for (index, words) in texts.enumerated() where words.count >= 4 && index % 37 == 0 && picked < 60 {
            queries.append(words[0...1].joined(separator: " "))
            queries.append(words[1...3].joined(separator: " "))
            queries.append("\"" + words[0...1].joined(separator: " ") + "\"")
            picked += 1
        }
        // 60 prefixes of two to four letters.
        queries += ranked.prefix(600).enumerated().filter { $0.offset % 10 == 0 }.map { "\($0.element.prefix(2 + $0.offset % 3))*" }
        return queries.compactMap { SearchQuery(userText: $0) }
    }

    static func run(_ documents: [Document]) throws -> [Figure] {
        let directory = try scratchDirectory("search")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, _) = try Indexing.trackedDatabase(documents, in: directory)
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        let plain = try DatabaseQueue(path: directory.appendingPathComponent("plain.sqlite").path)
        try plain.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE plain USING fts5(title, body, tokenize = \(SQLQuoting.literal(Indexing.model.tokenizer)), prefix = '2 3 4')")
            let statement = try db.makeStatement(sql: "INSERT INTO plain(rowid, title, body) VALUES (?, ?, ?)")
            for (offset, doc) in documents.enumerated() { try statement.execute(arguments: [offset + 1, doc.title, doc.body]) }
        }
        let queries = queries(documents)
        let clock = ContinuousClock()
        var ours: [Double] = [], raw: [Double] = []
        // Warm both caches once, then time each query.
        for query in queries {
            _ = try index.search(query, limit: 20)
            _ = try plain.read { db in try Row.fetchAll(db, sql: rawSQL, arguments: [query.expression]) }
        }
        for query in queries {
            var start = clock.now
            _ = try index.search(query, limit: 20)
            ours.append(seconds(clock.now - start) * 1000)
            start = clock.now
            _ = try plain.read { db in try Row.fetchAll(db, sql: rawSQL, arguments: [query.expression]) }
            raw.append(seconds(clock.now - start) * 1000)
        }
        let o = percentiles(ours), r = percentiles(raw)
        let slowest = zip(queries, ours).sorted { $0.1 > $1.1 }.prefix(8).map { "\($0.0.expression) \(Int($0.1)) ms" }
        FileHandle.standardError.write(Data("search: slowest \(slowest.joined(separator: "; "))\n".utf8))
        return [
            Figure("5 search latency", "top-20 with snippets, p50 (\(queries.count) queries)", unit: "ms", ours: o.p50, baseline: r.p50,
                   baselineName: "raw FTS5 SQL", target: "<= 1.2x", met: o.p50 <= 1.2 * r.p50),
            Figure("5 search latency", "top-20 with snippets, p95", unit: "ms", ours: o.p95, baseline: r.p95, baselineName: "raw FTS5 SQL"),
            Figure("5 search latency", "top-20 with snippets, p99", unit: "ms", ours: o.p99, baseline: r.p99,
                   baselineName: "raw FTS5 SQL", target: "<= 25 ms", met: o.p99 <= 25),
        ]
    }

    /// What a user would write by hand: ranked top 20 with snippets, and the total.
    static let rawSQL = """
        SELECT rowid, title, snippet(plain, -1, '[', ']', '…', 12), bm25(plain, 10, 1) AS score,
               (SELECT count(*) FROM plain WHERE plain MATCH ?1) AS total
        FROM plain WHERE plain MATCH ?1 ORDER BY score LIMIT 20
        """
}
