import Foundation
import GRDB
import Searchlight
import SearchlightEvaluation
import SearchlightHistory

/// Scenario 11: typo tolerance and suggestions. Queries are made from the corpus with a seeded
/// generator: a document, a word of 5 letters or more from it, and up to two more of its words;
/// the typo'd query has one random edit (insertion, deletion, substitution or transposition of
/// neighbours) in that word. A hit is relevant when its document holds every word of the query
/// as written before the edit (checked on the corpus text, not through the index).
enum TypoSearch {
    struct Query {
        var document: Int64
        var clean: String
        var typo: String
        var words: [String]
    }

    /// The lower-case letter words of a text (the relevance oracle's own split).
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter && $0.isASCII) }.map(String.init)
    }

    /// `count` queries: a document, a word of 5 letters or more of it, and as many more of its
    /// words (0 to 4, in random order) as it takes for the query, as written, to find the
    /// document in its top 10 with exact search (`findsExactly`); documents for which no such
    /// query exists are skipped. The typo'd query has one random edit in the chosen word.
    static func queries(_ documents: [Document], count: Int, seed: UInt64, maximumOthers: Int = 4,
                        findsExactly: (String, Int64) throws -> Bool) rethrows -> [Query] {
        var random = SplitMix(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        var queries: [Query] = []
        while queries.count < count {
            let index = Int.random(in: 0..<documents.count, using: &random)
            let all = words(documents[index].title + " " + documents[index].body)
            let long = Array(Set(all.filter { $0.count >= 5 })).sorted()
            guard let target = long.randomElement(using: &random) else { continue }
            let candidates = Array(Set(all.filter { $0.count >= 3 && $0 != target })).sorted().shuffled(using: &random)
            var others: [String] = []
            var found = try findsExactly(target, Int64(index + 1))
            for word in candidates.prefix(maximumOthers) where !found {
                others.append(word)
                found = try findsExactly(([target] + others).joined(separator: " "), Int64(index + 1))
            }
            guard found else { continue }
            var edited = Array(target)
            let position = Int.random(in: 0..<edited.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: edited.insert(letters.randomElement(using: &random)!, at: position)
            case 1: edited.remove(at: position)
            case 2: edited[position] = letters.filter { $0 != edited[position] }.randomElement(using: &random)!
            default:
                let i = min(position, edited.count - 2)
                guard edited[i] != edited[i + 1] else { continue }
                edited.swapAt(i, i + 1)
            }
            let clean = ([target] + others).joined(separator: " ")
            let typo = ([String(edited)] + others).joined(separator: " ")
            queries.append(Query(document: Int64(index + 1), clean: clean, typo: typo, words: [target] + others))
        }
        return queries
    }

    /// Whether `index` finds the document in the top 10 of the text, tolerance off.
    static func findsExactly(_ index: SearchIndex) -> (String, Int64) throws -> Bool {
        { text, document in try index.search(text, limit: 10, typos: .off).hits.contains { $0.objectID == .integer(document) } }
    }

    /// One-word queries (the word alone, as written, finds its document in the top 10): how
    /// many of them still find it in the top 10 with one edit in the word, once the edits that
    /// spell another word of the index (the exact query matches: nothing is corrected) are set
    /// aside.
    static func oneWordRecall(_ documents: [Document], index: SearchIndex, count: Int, seed: UInt64) throws
        -> (found: Int, evaluated: Int, realWord: Int) {
        let queries = try queries(documents, count: count, seed: seed, maximumOthers: 0, findsExactly: findsExactly(index))
        var found = 0, evaluated = 0, realWord = 0
        let debug = ProcessInfo.processInfo.environment["SEARCHLIGHT_TYPO_DEBUG"] != nil
        for query in queries {
            if try index.search(query.typo, limit: 1, typos: .off).total > 0 { realWord += 1; continue }
            evaluated += 1
            let results = try index.search(query.typo, limit: 10)
            if results.hits.contains(where: { $0.objectID == .integer(query.document) }) {
                found += 1
            } else if debug {
                let position = try index.search(query.typo, limit: 1_000).hits.firstIndex { $0.objectID == .integer(query.document) }
                FileHandle.standardError.write(Data("one-word miss: \(query.typo) (\(query.clean)) at \(position.map { String($0 + 1) } ?? "-") of \(results.total): top \(results.hits.prefix(5).map { "\($0.title ?? "") [\($0.typos)]" }), corrections \(results.corrections.map { "\($0.word)→\($0.replacements.map(\.text).prefix(6))" })\n".utf8))
            }
        }
        return (found, evaluated, realWord)
    }

    static func run(_ documents: [Document], queryCount: Int = 1_000, seed: UInt64 = 11, oneWordQueries: Int = 300,
                    recallOnly: Bool = false) throws -> [Figure] {
        let directory = try scratchDirectory("typos")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, path) = try Indexing.trackedDatabase(documents, in: directory)
        let clock = ContinuousClock()
        let rebuild = try measure { try Indexer(store: store).indexPendingChanges() }
        let index = SearchIndex(store: store)
        var figures: [Figure] = []
        func add(_ name: String, unit: String, _ ours: Double, _ baseline: Double? = nil, _ baselineName: String? = nil,
                 target: String? = nil, met: Bool? = nil) {
            figures.append(Figure("11 typo tolerance", name, unit: unit, ours: ours, baseline: baseline, baselineName: baselineName, target: target, met: met))
        }
        let oneWord = try oneWordRecall(documents, index: index, count: oneWordQueries, seed: seed)
        let oneWordShare = 100 * Double(oneWord.found) / Double(max(oneWord.evaluated, 1))
        add("one-word queries: document in the top 10 (\(oneWord.evaluated) of \(oneWordQueries) typo'd words that spell no word of the index)",
            unit: "%", oneWordShare, target: ">= 95%", met: oneWordShare >= 95)
        if recallOnly { return figures }
        FileHandle.standardError.write(Data("typo queries: seed \(seed), \(queryCount) queries\n".utf8))
        let queries = try queries(documents, count: queryCount, seed: seed, findsExactly: findsExactly(index))
        func milliseconds(_ body: () throws -> Void) rethrows -> Double {
            let start = clock.now
            try body()
            return (clock.now - start).seconds * 1000
        }
        func relevant(_ hit: SearchHit, _ query: Query) -> Bool {
            guard case let .integer(id) = hit.objectID else { return false }
            let document = documents[Int(id) - 1]
            let held = Set(Self.words(document.title + " " + document.body))
            return query.words.allSatisfy(held.contains)
        }
        var found = (on: 0, off: 0), same = 0
        // Misses by cause: the typo'd word has 4 letters (corrected from 5 only), or it is a
        // word of the index and the exact query matched (nothing is corrected then).
        var misses = (short: 0, realWord: 0, other: 0)
        var precision = (typoOn: 0.0, typoOff: 0.0, cleanOn: 0.0, cleanOff: 0.0)
        var timing = (typoOn: [Double](), typoOff: [Double](), cleanOff: [Double]())
        // One warm-up round.
        for query in queries.prefix(50) {
            _ = try index.search(query.typo, limit: 20)
            _ = try index.search(query.clean, limit: 20, typos: .off)
        }
        for query in queries {
            var typoOn = SearchResults.empty, cleanOff = SearchResults.empty
            timing.typoOn.append(try milliseconds { typoOn = try index.search(query.typo, limit: 20) })
            timing.cleanOff.append(try milliseconds { cleanOff = try index.search(query.clean, limit: 20, typos: .off) })
            var typoOff = SearchResults.empty
            timing.typoOff.append(try milliseconds { typoOff = try index.search(query.typo, limit: 20, typos: .off) })
            let cleanOn = try index.search(query.clean, limit: 20)
            func top(_ results: SearchResults) -> [SearchHit] { Array(results.hits.prefix(10)) }
            func holds(_ results: SearchResults) -> Bool { top(results).contains { $0.objectID == .integer(query.document) } }
            func precisionAt10(_ results: SearchResults) -> Double {
                let hits = top(results)
                return hits.isEmpty ? 0 : Double(hits.filter { relevant($0, query) }.count) / Double(hits.count)
            }
            let typoWord = query.typo.split(separator: " ").first.map(String.init) ?? ""
            if !holds(typoOn) {
                if typoWord.count < 5 { misses.short += 1 } else if typoOff.total > 0 { misses.realWord += 1 } else { misses.other += 1 }
            }
            if holds(typoOn) { found.on += 1 } else if ProcessInfo.processInfo.environment["SEARCHLIGHT_TYPO_DEBUG"] != nil {
                FileHandle.standardError.write(Data("miss: \(query.typo) (\(query.clean)) → \(typoOn.total) matches, top \(typoOn.hits.prefix(3).map { "\($0.title ?? "") [\($0.typos)]" }), corrections \(typoOn.corrections.map { "\($0.word)→\($0.replacements.map(\.text).prefix(5))" })\n".utf8))
            }
            if holds(typoOff) { found.off += 1 }
            if top(cleanOn).map(\.objectID) == top(cleanOff).map(\.objectID) { same += 1 }
            precision.typoOn += precisionAt10(typoOn)
            precision.typoOff += precisionAt10(typoOff)
            precision.cleanOn += precisionAt10(cleanOn)
            precision.cleanOff += precisionAt10(cleanOff)
        }
        let n = Double(queries.count)
        let recall = 100 * Double(found.on) / n
        add("document in the top 10, one edit in a word of ≥ 5 letters (\(queries.count) queries that find it without the edit)", unit: "%", recall,
            100 * Double(found.off) / n, "tolerance off", target: ">= 95%", met: recall >= 95)
        add("misses: the typo'd word has 4 letters (a deletion in a word of 5)", unit: "%", 100 * Double(misses.short) / n)
        add("misses: the typo'd word is a word of the index and the exact query matches", unit: "%", 100 * Double(misses.realWord) / n)
        add("misses: other", unit: "%", 100 * Double(misses.other) / n)
        let agreement = 100 * Double(same) / n
        add("same top 10 as tolerance off, the queries without the edit", unit: "%", agreement, target: ">= 99%", met: agreement >= 99)
        add("precision of the top 10, typo'd queries", unit: "%", 100 * precision.typoOn / n, 100 * precision.typoOff / n, "tolerance off")
        add("precision of the top 10, queries without the edit", unit: "%", 100 * precision.cleanOn / n, 100 * precision.cleanOff / n, "tolerance off")
        // Against today's search of the same text (exact, with its "did you mean" when nothing
        // matches), and against exact search of the text without the edit.
        let on = percentiles(timing.typoOn), off = percentiles(timing.typoOff), clean = percentiles(timing.cleanOff)
        add("top-20 with snippets, typo'd queries, p50", unit: "ms", on.p50, off.p50, "tolerance off, same text",
            target: "<= 2x", met: on.p50 <= 2 * off.p50)
        add("top-20 with snippets, typo'd queries, p99", unit: "ms", on.p99, off.p99, "tolerance off, same text",
            target: "<= 50 ms", met: on.p99 <= 50)
        add("top-20 with snippets, typo'd queries, max", unit: "ms", timing.typoOn.max() ?? 0, timing.typoOff.max() ?? 0, "tolerance off, same text")
        add("top-20 with snippets, typo'd queries, p50", unit: "ms", on.p50, clean.p50, "exact search of the text without the edit")
        add("top-20 with snippets, typo'd queries, p99", unit: "ms", on.p99, clean.p99, "exact search of the text without the edit")
        // Suggestions: each query word's prefixes of 1 to 6 letters, and the typo'd word.
        var typed: [String] = []
        for query in queries.prefix(300) {
            let word = query.words[0]
            for length in 1...min(6, word.count) { typed.append(String(word.prefix(length))) }
            typed.append(query.typo.split(separator: " ").first.map(String.init) ?? word)
        }
        for text in typed.prefix(100) { _ = try index.suggest(text) }
        var suggestionTimes: [Double] = []
        for text in typed {
            let time = try milliseconds { _ = try index.suggest(text) }
            suggestionTimes.append(time)
            if time > 5, ProcessInfo.processInfo.environment["SEARCHLIGHT_TYPO_DEBUG"] != nil {
                FileHandle.standardError.write(Data("slow suggestion: \(text) \(time) ms\n".utf8))
            }
        }
        let s = percentiles(suggestionTimes)
        add("suggestions, p50 (\(typed.count) prefixes of 1 to 6 letters and typo'd words)", unit: "ms", s.p50)
        add("suggestions, p99", unit: "ms", s.p99, target: "<= 10 ms", met: s.p99 <= 10)
        add("suggestions, max", unit: "ms", suggestionTimes.max() ?? 0)
        // What the vocabulary costs: its size beside the rest of the index, and its share of a
        // rebuild (the same documents counted into an empty vocabulary, alone).
        let sizes = try DatabaseQueue(path: path).read { db -> (terms: Double, index: Double) in
            let rows = try Row.fetchAll(db, sql: """
                SELECT name LIKE 'searchlight_terms_g%' AS terms, sum(pgsize) FROM dbstat
                WHERE name LIKE 'searchlight_fts_%' OR name LIKE 'searchlight_document_g%' OR name LIKE 'searchlight_terms_g%' GROUP BY 1
                """)
            var terms = 0.0, rest = 0.0
            for row in rows { if row[0] as Bool { terms = row[1] } else { rest = row[1] } }
            return (terms / 1_048_576, rest / 1_048_576)
        }
        let wordCount = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_terms_g1") ?? 0 }
        add("vocabulary size (\(wordCount) words)", unit: "MB", sizes.terms, sizes.index, "the rest of the index")
        let text = IndexedText(tokenizer: Indexing.model.tokenizer)
        let prepared = documents.map { [text.prepare($0.title), text.prepare($0.body)] }
        let scratch = try DatabaseQueue(path: directory.appendingPathComponent("vocabulary.sqlite").path)
        let vocabularyOnly = try measure {
            try scratch.write { db in
                try db.execute(sql: "CREATE TABLE terms(term TEXT PRIMARY KEY NOT NULL, documents INTEGER NOT NULL) WITHOUT ROWID")
                var vocabulary = try IndexVocabulary(table: "terms", text: text, db)
                // As the indexer: 500 documents at a time (its default batch size).
                for start in stride(from: 0, to: prepared.count, by: 500) {
                    for fields in prepared[start..<min(start + 500, prepared.count)] { vocabulary.count(fields, sign: 1) }
                    try vocabulary.flush(db)
                }
            }
        }
        add("indexing the corpus through history (\(documents.count) inserts)", unit: "s", rebuild, vocabularyOnly, "the vocabulary's part, alone")
        // Incremental indexing through history, with and without the vocabulary kept in step.
        var rates: [Double] = []
        for keep in [true, false] {
            let count = min(20_000, documents.count)
            try store.write(author: "bench") { db in
                for offset in 0..<count {
                    let doc = documents[(offset + (keep ? 1 : 2)) % documents.count]
                    try db.execute(sql: "UPDATE docs SET title = ?, body = ? WHERE id = ?", arguments: [doc.title, doc.body, offset + 1])
                }
            }
            var configuration = Indexer.Configuration()
            configuration.skipsVocabulary = !keep
            let indexer = try Indexer(store: store, configuration: configuration)
            let seconds = try measure { try indexer.indexPendingChanges() }
            rates.append(Double(count) / seconds)
        }
        add("incremental indexing of updates", unit: "docs/s", rates[0], rates[1], "vocabulary not kept")
        return figures
    }
}
