import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// Scenario 5: searches with snippets (top 20; as you type, by letters typed; 1,000 hits; no
/// limit), against the same MATCH expressions run as raw SQL on a plain FTS5 table (prefix
/// indexes '2 3 4', as when this scenario was written).
enum SearchLatency {
    /// The words of the first 20,000 documents by how many documents hold them (most first),
    /// and those documents' words.
    static func words(_ documents: [Document]) -> (ranked: [String], texts: [[String]]) {
        var frequency: [String: Int] = [:]
        var texts: [[String]] = []
        for doc in documents.prefix(20_000) {
            let words = doc.body.lowercased().split { !$0.isLetter }.map(String.init).filter { $0.count > 1 }
            texts.append(words)
            for word in Set(words) { frequency[word, default: 0] += 1 }
        }
        return (frequency.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key), texts)
    }

    /// At least 300 queries drawn deterministically from the corpus: single words from very
    /// common to rare, two- and three-word queries, phrases and prefixes.
    static func queries(_ documents: [Document]) -> [SearchQuery] {
        queryTexts(documents).compactMap { SearchQuery(userText: $0) }
    }

    /// The user text of ``queries(_:)`` (scenario 9 sends the same text to PostgreSQL).
    static func queryTexts(_ documents: [Document]) -> [String] {
        let (ranked, texts) = words(documents)
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
        return queries
    }

    /// As-you-type, by the number of letters typed: `a` to `z`, then the first two, three and
    /// four letters of 60 words spread over the 600 most common (of four letters or more).
    static func typed(_ documents: [Document]) -> [(letters: Int, queries: [SearchQuery])] {
        let common = words(documents).ranked.filter { $0.count >= 4 }.prefix(600)
        let words: [String] = common.enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        var typed: [(letters: Int, queries: [SearchQuery])] = [(1, "abcdefghijklmnopqrstuvwxyz".compactMap { SearchQuery(userText: String($0), asYouType: true) })]
        for n in 2...4 {
            let prefixes: [String] = Set(words.map { String($0.prefix(n)) }).sorted()
            typed.append((n, prefixes.compactMap { SearchQuery(userText: $0, asYouType: true) }))
        }
        return typed
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
        func milliseconds(_ body: () throws -> Void) rethrows -> Double {
            let start = clock.now
            try body()
            return (clock.now - start).seconds * 1000
        }
        /// Times each query once, ours then raw, after one warm-up round of both.
        func measure(_ queries: [SearchQuery], limit: Int?) throws -> (ours: [Double], raw: [Double]) {
            func rawSearch(_ query: SearchQuery) throws {
                _ = try plain.read { db in try Row.fetchAll(db, sql: rawSQL, arguments: [query.expression, limit ?? -1]) }
            }
            for query in queries {
                _ = try index.search(query, limit: limit)
                try rawSearch(query)
            }
            var ours: [Double] = [], raw: [Double] = []
            for query in queries {
                ours.append(try milliseconds { _ = try index.search(query, limit: limit) })
                raw.append(try milliseconds { try rawSearch(query) })
            }
            let slowest = zip(queries, ours).sorted { $0.1 > $1.1 }.prefix(8).map { "\($0.0.expression) \(Int($0.1)) ms" }
            FileHandle.standardError.write(Data("search, limit \(limit.map(String.init) ?? "none"): slowest \(slowest.joined(separator: "; "))\n".utf8))
            return (ours, raw)
        }
        var figures: [Figure] = []
        func add(_ name: String, _ ours: Double, _ raw: Double, target: String? = nil, met: Bool? = nil) {
            figures.append(Figure("5 search latency", name, unit: "ms", ours: ours, baseline: raw, baselineName: "raw FTS5 SQL", target: target, met: met))
        }
        // Top 20, the main set.
        let (ours, raw) = try measure(queries, limit: 20)
        let o = percentiles(ours), r = percentiles(raw)
        add("top-20 with snippets, p50 (\(queries.count) queries)", o.p50, r.p50, target: "<= 1.2x", met: o.p50 <= 1.2 * r.p50)
        add("top-20 with snippets, p95", o.p95, r.p95)
        add("top-20 with snippets, p99", o.p99, r.p99, target: "<= 25 ms", met: o.p99 <= 25)
        add("top-20 with snippets, max", ours.max() ?? 0, raw.max() ?? 0, target: "<= 100 ms", met: (ours.max() ?? 0) <= 100)
        // As-you-type, by the number of letters typed.
        let typed = typed(documents)
        for (letters, prefixes) in typed {
            let (oursTyped, rawTyped) = try measure(prefixes, limit: 20)
            let ot = percentiles(oursTyped), rt = percentiles(rawTyped)
            let name = "top-20 as you type, \(letters) letter\(letters == 1 ? "" : "s") (\(prefixes.count) prefixes)"
            add("\(name), p50", ot.p50, rt.p50)
            add("\(name), max", oursTyped.max() ?? 0, rawTyped.max() ?? 0, target: "<= 100 ms", met: (oursTyped.max() ?? 0) <= 100)
        }
        // Large pages and no limit, on the main set and the one-letter prefixes. With no limit,
        // ours stops at its bounds (and says so), raw SQL returns every match.
        let all = queries + typed[0].queries
        let bounds = SearchIndex.Options()
        for limit in [1_000, nil] as [Int?] {
            let (oursPage, rawPage) = try measure(all, limit: limit)
            let op = percentiles(oursPage), rp = percentiles(rawPage)
            let name = limit.map { "limit \($0)" } ?? "no limit (ours: ≤ \(bounds.maximumHits) hits of ≤ \(bounds.maximumRankedMatches) ranked)"
            add("\(name), p50 (\(all.count) queries)", op.p50, rp.p50)
            add("\(name), p99", op.p99, rp.p99)
            add("\(name), max", oursPage.max() ?? 0, rawPage.max() ?? 0, target: "<= 100 ms", met: (oursPage.max() ?? 0) <= 100)
        }
        return figures
    }

    /// What a user would write by hand: ranked hits with snippets, and the total (`LIMIT -1`:
    /// no limit).
    static let rawSQL = """
        SELECT rowid, title, snippet(plain, -1, '[', ']', '…', 12), bm25(plain, 10, 1) AS score,
               (SELECT count(*) FROM plain WHERE plain MATCH ?1) AS total
        FROM plain WHERE plain MATCH ?1 ORDER BY score LIMIT ?2
        """
}
