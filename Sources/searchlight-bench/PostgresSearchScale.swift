import Foundation
import GRDB
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory
import SearchlightPostgres

/// Scenario 14: search on PostgreSQL at scale, against a server given by `--postgres URL`.
///
/// For each size (copies of the corpus, `--postgres-scale-copies`), the copies are loaded
/// through the sink's snapshot path (`PostgresSink.runOnce()` on a fresh source: `COPY`),
/// four sources at a time, into a schema `bench_scale_<copies>`; the load time and the disk
/// the documents take (table, TOAST and indexes) are reported. Then the query mix runs twice
/// (a warm-up round, then the measured one), on every source and on one source:
/// - scenario 5's queries (words common to rare, two and three words, phrases, 2–4 letter
///   prefixes) and 30 `OR` queries;
/// - as you type: `a` to `z`, and the first two and three letters of 60 common words;
/// each top 20 with snippets. The local index of the same rows runs the same texts at the
/// sizes it is built for here (`--postgres-scale-local-copies`).
///
/// With `--postgres-keep`, the loaded schemas stay, and a later run reuses one that holds the
/// expected number of documents (loading 10 million documents takes a while).
enum PostgresSearchScale {
    struct Query {
        var text: String
        var asYouType: Bool
        var kind: String
    }

    static func queries(_ documents: [Document]) -> [Query] {
        var queries = SearchLatency.queryTexts(documents).map { text in
            Query(text: text, asYouType: false, kind: text.hasSuffix("*") ? "prefix" : text.hasPrefix("\"") ? "phrase" : text.contains(" ") ? "words" : "word")
        }
        let ranked = SearchLatency.words(documents).ranked
        let step = max(1, min(ranked.count, 3_000) / 60)
        for index in stride(from: 0, to: min(ranked.count, 3_000) - step, by: step).prefix(30) {
            queries.append(Query(text: "\(ranked[index]) OR \(ranked[index + step / 2])", asYouType: false, kind: "or"))
        }
        // Typo'd words: words of 6 letters or more of every frequency, each with one edit (a
        // letter left out, doubled, replaced by the next one, or two neighbours swapped).
        let long = ranked.filter { $0.count >= 6 && $0.allSatisfy(\.isLetter) }
        let typoStep = max(1, min(long.count, 3_000) / 40)
        for (n, word) in stride(from: 0, to: min(long.count, 3_000), by: typoStep).prefix(40).map({ long[$0] }).enumerated() {
            var letters = Array(word)
            let at = 1 + n % (letters.count - 2)
            switch n % 4 {
            case 0: letters.remove(at: at)
            case 1: letters.insert(letters[at], at: at)
            case 2: letters[at] = letters[at] == "z" ? "a" : Character(Unicode.Scalar(letters[at].unicodeScalars.first!.value + 1)!)
            default: letters.swapAt(at, at + 1)
            }
            queries.append(Query(text: String(letters), asYouType: false, kind: "typo"))
        }
        queries += "abcdefghijklmnopqrstuvwxyz".map { Query(text: String($0), asYouType: true, kind: "typed-1") }
        let common = ranked.filter { $0.count >= 4 }.prefix(600).enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        for n in 2...3 {
            queries += Set(common.map { String($0.prefix(n)) }).sorted().map { Query(text: $0, asYouType: true, kind: "typed-\(n)") }
        }
        return queries
    }

    /// What suggestions are asked for: prefixes of 1 to 6 letters of 300 words of every
    /// frequency (5 letters or more), and each word with one edit (completed from words that
    /// start within an edit when none starts with it).
    static func suggestionTexts(_ documents: [Document]) -> [String] {
        let long = SearchLatency.words(documents).ranked.filter { $0.count >= 5 && $0.allSatisfy(\.isLetter) }
        let step = max(1, min(long.count, 6_000) / 300)
        var texts: [String] = []
        for (n, word) in stride(from: 0, to: min(long.count, 6_000), by: step).prefix(300).map({ long[$0] }).enumerated() {
            for length in 1...min(6, word.count) { texts.append(String(word.prefix(length))) }
            var letters = Array(word)
            let at = 1 + n % (letters.count - 2)
            if n % 2 == 0 { letters.remove(at: at) } else { letters.swapAt(at, at + 1) }
            texts.append(String(letters))
        }
        return texts
    }

    static func run(_ documents: [Document], url: String, sizes: [Int], localSizes: Set<Int>, keep: Bool) async throws -> [Figure] {
        let directory = try scratchDirectory("postgres-scale")
        defer { try? FileManager.default.removeItem(at: directory) }
        let queries = queries(documents)
        var figures: [Figure] = []
        let scenario = "14 PostgreSQL search at scale"
        for copies in sizes {
            let name = "bench_scale_\(copies)"
            let schemaURL = url + (url.contains("?") ? "&" : "?") + "schema=\(name)"
            let expected = copies * documents.count
            let held = try await documentCount(url, schema: name)
            if held != expected {
                try await PostgresScenario.dropSchemas(url, [name])
                let seconds = try await load(documents, copies: copies, url: schemaURL, in: directory)
                figures.append(Figure(scenario, "load \(expected) documents (\(copies) sources, snapshot path, 4 at a time)", unit: "s", ours: seconds))
            } else {
                FileHandle.standardError.write(Data("scenario 14: reusing schema \(name) (\(expected) documents)\n".utf8))
            }
            let bytes = try await diskBytes(url, schema: name)
            figures.append(Figure(scenario, "disk of \(expected) documents (table, TOAST, indexes)", unit: "MB", ours: Double(bytes) / 1_048_576))
            let endpoint = try PostgresEndpoint(url: schemaURL)
            let local = localSizes.contains(copies) ? try localLatencies(queries, documents: documents, copies: copies, in: directory) : nil
            let suggestions = suggestionTexts(documents)
            for (scope, sources) in [("every source", nil), ("one source", Set(["copy-0"]))] as [(String, Set<String>?)] {
                let measured = try await latencies(queries, sources: sources, endpoint: endpoint)
                report(queries, measured, label: "\(expected) docs, \(scope)")
                let p = percentiles(measured), l = local.map(percentiles)
                let base = scope == "every source" ? l : nil
                let label = "top-20 with snippets at \(expected) documents, \(scope)"
                let limit = copies * documents.count >= 5_000_000 ? (scope == "one source" ? 50.0 : 250) : 100
                figures.append(Figure(scenario, "\(label), p50 (\(queries.count) queries)", unit: "ms", ours: p.p50,
                                      baseline: base?.p50, baselineName: base == nil ? nil : "local index, same data"))
                figures.append(Figure(scenario, "\(label), p99", unit: "ms", ours: p.p99, baseline: base?.p99,
                                      baselineName: base == nil ? nil : "local index, same data", target: "<= \(Int(limit)) ms", met: p.p99 <= limit))
                figures.append(Figure(scenario, "\(label), max", unit: "ms", ours: measured.max() ?? 0,
                                      baseline: base == nil ? nil : local?.max(), baselineName: base == nil ? nil : "local index, same data"))
                let suggested = try await suggestionLatencies(suggestions, sources: sources, endpoint: endpoint)
                let s = percentiles(suggested)
                figures.append(Figure(scenario, "suggestions at \(expected) documents, \(scope), p50 (\(suggestions.count) prefixes of 1-6 letters and typo'd words)", unit: "ms", ours: s.p50))
                figures.append(Figure(scenario, "suggestions at \(expected) documents, \(scope), p99", unit: "ms", ours: s.p99, target: "<= 20 ms", met: s.p99 <= 20))
            }
            if !keep { try await PostgresScenario.dropSchemas(url, [name]) }
        }
        return figures
    }

    /// Prints the slowest queries and each kind's p99 (stderr).
    static func report(_ queries: [Query], _ measured: [Double], label: String) {
        let slowest = zip(queries, measured).sorted { $0.1 > $1.1 }.prefix(8).map { "\($0.0.text)\($0.0.asYouType ? "…" : "") \(String(format: "%.1f", $0.1)) ms" }
        var kinds: [String: [Double]] = [:]
        for (query, ms) in zip(queries, measured) { kinds[query.kind, default: []].append(ms) }
        let byKind = kinds.keys.sorted().map { "\($0) p50 \(String(format: "%.1f", percentiles(kinds[$0]!).p50)) max \(String(format: "%.1f", kinds[$0]!.max()!))" }
        FileHandle.standardError.write(Data("scenario 14, \(label): slowest \(slowest.joined(separator: "; "))\n  \(byKind.joined(separator: "; "))\n".utf8))
    }

    /// Loads `copies` copies of the corpus as sources `copy-0`, `copy-1`, … through the
    /// snapshot path, four at a time; the seconds it took.
    static func load(_ documents: [Document], copies: Int, url: String, in directory: URL) async throws -> Double {
        let template = directory.appendingPathComponent("template.sqlite").path
        if !FileManager.default.fileExists(atPath: template) {
            let store = try PostgresScenario.emptySource(template)
            try PostgresScenario.write(documents.enumerated().map { ($0.offset + 1, $0.element) }, to: store, rowsPerTransaction: 10_000)
            _ = try await store.databaseWriter.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        }
        let clock = ContinuousClock()
        let start = clock.now
        for first in stride(from: 0, to: copies, by: 4) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for c in first..<min(first + 4, copies) {
                    let path = directory.appendingPathComponent("copy\(c).sqlite").path
                    try FileManager.default.copyItem(atPath: template, toPath: path)
                    var configuration = PostgresSink.Configuration()
                    configuration.source = "copy-\(c)"
                    configuration.logger.logLevel = .warning
                    let sink = try PostgresSink(store: try HistoryStore(path: path), endpoint: try PostgresEndpoint(url: url), configuration: configuration)
                    group.addTask {
                        _ = try await sink.runOnce()
                        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                    }
                }
                try await group.waitForAll()
            }
            FileHandle.standardError.write(Data("scenario 14: loaded \(min(first + 4, copies)) of \(copies) sources, \(Int((clock.now - start).seconds)) s\n".utf8))
        }
        // As the sink leaves it after a first sync: statistics for the planner.
        try await PostgresScenario.withClient(try PostgresEndpoint(url: url)) { client in
            let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
            try await client.query("VACUUM (ANALYZE) \(unescaped: schema).documents")
        }
        return (clock.now - start).seconds
    }

    static func documentCount(_ url: String, schema: String) async throws -> Int {
        try await PostgresScenario.withClient(try PostgresEndpoint(url: url)) { client in
            let table = PostgresSchema.quoted(schema) + ".documents"
            var exists = false
            for try await name in try await client.query("SELECT to_regclass(\(table))::text").decode(String?.self) { exists = name != nil }
            guard exists else { return -1 }
            var count = 0
            for try await n in try await client.query("SELECT count(*) FROM \(unescaped: table)").decode(Int64.self) { count = Int(n) }
            return count
        }
    }

    static func diskBytes(_ url: String, schema: String) async throws -> Int64 {
        try await PostgresScenario.withClient(try PostgresEndpoint(url: url)) { client in
            let table = PostgresSchema.quoted(schema) + ".documents"
            var bytes: Int64 = 0
            for try await n in try await client.query("SELECT pg_total_relation_size(\(table)::regclass)").decode(Int64.self) { bytes = n }
            return bytes
        }
    }

    /// Milliseconds per query, top 20 with snippets, after one warm-up round.
    static func latencies(_ queries: [Query], sources: Set<String>?, endpoint: PostgresEndpoint) async throws -> [Double] {
        try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            for query in queries { _ = try await search.search(query.text, asYouType: query.asYouType, sources: sources, limit: 20) }
            let clock = ContinuousClock()
            var measured: [Double] = []
            for query in queries {
                let start = clock.now
                _ = try await search.search(query.text, asYouType: query.asYouType, sources: sources, limit: 20)
                measured.append((clock.now - start).seconds * 1000)
            }
            return measured
        }
    }

    /// Milliseconds per suggestion (10 completions), after one warm-up round; the slowest on stderr.
    static func suggestionLatencies(_ texts: [String], sources: Set<String>?, endpoint: PostgresEndpoint) async throws -> [Double] {
        let measured = try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            for text in texts { _ = try await search.suggest(text, sources: sources) }
            let clock = ContinuousClock()
            var measured: [Double] = []
            for text in texts {
                let start = clock.now
                _ = try await search.suggest(text, sources: sources)
                measured.append((clock.now - start).seconds * 1000)
            }
            return measured
        }
        let slowest = zip(texts, measured).sorted { $0.1 > $1.1 }.prefix(8).map { "\($0.0) \(String(format: "%.1f", $0.1))" }
        FileHandle.standardError.write(Data("scenario 14, suggestions (\(sources == nil ? "every source" : "one source")): slowest \(slowest.joined(separator: "; "))\n".utf8))
        return measured
    }

    /// The same queries on the local index of `copies` copies of the corpus.
    static func localLatencies(_ queries: [Query], documents: [Document], copies: Int, in directory: URL) throws -> [Double] {
        let store = try PostgresScenario.emptySource(directory.appendingPathComponent("local-\(copies).sqlite").path)
        var rows: [(Int, Document)] = []
        for c in 0..<copies { rows += documents.enumerated().map { (c * documents.count + $0.offset + 1, $0.element) } }
        try PostgresScenario.write(rows, to: store, rowsPerTransaction: 10_000)
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        let pairs = queries.compactMap { query in SearchQuery(userText: query.text, asYouType: query.asYouType).map { (query, $0) } }
        let prepared = pairs.map(\.1)
        for query in prepared { _ = try index.search(query, limit: 20) }
        let clock = ContinuousClock()
        let measured = try prepared.map { query in
            let start = clock.now
            _ = try index.search(query, limit: 20)
            return (clock.now - start).seconds * 1000
        }
        report(pairs.map(\.0), measured, label: "\(copies * documents.count) docs, local index")
        return measured
    }
}
