import Foundation
import GRDB
import PostgresNIO
@testable import Searchlight
import SearchlightHistory
@testable import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// PostgreSQL's neighbourhood (a walk of its vocabulary one level at a time) finds the words
/// and distances the local walk finds in the local vocabulary of the same rows: a dense
/// vocabulary of random words over a small alphabet (many neighbours, transpositions, words
/// that are prefixes of others), and words sought that are vocabulary words with random edits
/// or random strings, for 1 and 2 edits, whole words and prefixes, and the 4-into-5 letters
/// case. The local walk is the oracle (its own is a brute-force distance over the vocabulary,
/// TermNeighbourhoodTests). Seeded: `SEARCHLIGHT_SEED` replays.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresNeighbourhoodTests {
    static func word(_ random: inout SplitMix, length: Int) -> String {
        let letters = Array("abcdefgh")
        return String((0..<length).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
    }

    static func edited(_ word: String, _ random: inout SplitMix) -> String {
        var characters = Array(word)
        let letters = Array("abcdefghi")
        let at = Int(random.next() % UInt64(characters.count))
        switch random.next() % 4 {
        case 0: characters.remove(at: at)
        case 1: characters.insert(letters[Int(random.next() % 9)], at: at)
        case 2: characters[at] = letters[Int(random.next() % 9)]
        default: if at + 1 < characters.count { characters.swapAt(at, at + 1) }
        }
        return String(characters)
    }

    @Test func findsTheWordsAndDistancesTheLocalWalkFinds() async throws {
        var (seedValue, random) = seededGenerator("PostgresNeighbourhoodTests")
        let seed = seedValue
        let vocabulary = (0..<1_500).map { _ in Self.word(&random, length: 3 + Int(random.next() % 8)) }
        let database = try TestDatabase()
        let store = try database.openStore()
        try await store.write(author: "app") { [vocabulary] db in
            for start in stride(from: 0, to: vocabulary.count, by: 5) {
                try db.execute(sql: "INSERT INTO notes(title, body) VALUES (?, ?)",
                               arguments: [vocabulary[start], vocabulary[(start + 1)..<min(start + 5, vocabulary.count)].joined(separator: " ")])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("neighbours")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        var generated: [(String, Int, Bool, Int?)] = []
        for index in 0..<160 {
            let base = vocabulary[Int(random.next() % UInt64(vocabulary.count))]
            var word = index % 4 == 3 ? Self.word(&random, length: 4 + Int(random.next() % 8)) : Self.edited(base, &random)
            if index % 5 == 4 { word = Self.edited(word, &random) }
            let edits = word.count >= 9 ? 2 : 1
            let length: Int? = index % 7 == 6 && word.count == 4 ? 5 : nil
            generated.append((word, edits, index % 3 == 2 && length == nil, length))
        }
        let cases = generated
        let table = try await store.databaseWriter.read { db in
            try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'searchlight_terms_g%' ORDER BY name DESC LIMIT 1")!
        }
        let expected = try await store.databaseWriter.read { db in
            var finder = try TermNeighbourhood(table: table, db)
            return try cases.map { word, edits, prefix, length in
                Set(try finder.neighbours(of: word, edits: edits, prefix: prefix, length: length).map { "\($0.term) \($0.distance) \($0.isPrefix)" })
            }
        }
        let schema = try PostgresEndpoint(url: url).schema
        let clock = ContinuousClock.now
        let found = try await PostgresTestServer.withClient(url) { client in
            try await client.withConnection { connection in
                var finder = PostgresNeighbourhood(schema: schema, sources: nil, connection: connection, logger: Logger(label: "test"))
                var one = PostgresNeighbourhood(schema: schema, sources: ["s"], connection: connection, logger: Logger(label: "test"))
                var found: [Set<String>] = []
                for (index, (word, edits, prefix, length)) in cases.enumerated() {
                    let matches = index % 2 == 0 ? try await finder.neighbours(of: word, edits: edits, prefix: prefix, length: length)
                                                 : try await one.neighbours(of: word, edits: edits, prefix: prefix, length: length)
                    found.append(Set(matches.map { "\($0.term) \($0.distance) \($0.isPrefix)" }))
                }
                #expect(!finder.wasBounded && !one.wasBounded)
                return found
            }
        }
        print("PostgresNeighbourhoodTests: \(cases.count) walks on PostgreSQL in \(ContinuousClock.now - clock)")
        var nonEmpty = 0
        for (index, (word, edits, prefix, length)) in cases.enumerated() {
            #expect(found[index] == expected[index], "seed \(seed): \(word) edits \(edits) prefix \(prefix) length \(length.map(String.init) ?? "-"): only PostgreSQL \(found[index].subtracting(expected[index]).sorted()), only local \(expected[index].subtracting(found[index]).sorted())")
            if !expected[index].isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 100, "most words have neighbours (\(nonEmpty))")
    }

    /// A search with typos finds on PostgreSQL what it finds locally: the same hits, each with
    /// the same typo count, the same corrections (the same words, in the same order: by typos,
    /// then by the documents that hold them), for single typo'd words, a typo'd word beside an
    /// exact one, ORs, as-you-type prefixes, quoted words (never corrected), and words of 4
    /// letters that lost one.
    @Test func typoTolerantSearchesFindWhatTheLocalSearchFinds() async throws {
        var (seedValue, random) = seededGenerator("PostgresNeighbourhoodTests.search")
        let seed = seedValue
        let vocabulary = (0..<600).map { _ in Self.word(&random, length: 5 + Int(random.next() % 6)) }
        let rows = (0..<300).map { _ in (0..<4).map { _ in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }.joined(separator: " ") }
        let database = try TestDatabase()
        let store = try database.openStore()
        try await store.write(author: "app") { db in
            for (index, row) in rows.enumerated() {
                try db.execute(sql: "INSERT INTO notes(title, body) VALUES (?, ?)", arguments: [index % 3 == 0 ? row : "", row])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("typosearch")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        var queries: [(String, Bool)] = []
        for index in 0..<120 {
            let a = vocabulary[Int(random.next() % UInt64(vocabulary.count))], b = vocabulary[Int(random.next() % UInt64(vocabulary.count))]
            let typo = Self.edited(a, &random)
            switch index % 6 {
            case 0: queries.append((typo, false))
            case 1: queries.append(("\(b) \(typo)", false))
            case 2: queries.append(("\(typo) OR \(Self.edited(b, &random))", false))
            case 3: queries.append(("\(b) \(String(typo.prefix(max(5, typo.count - 2))))", true))
            case 4: queries.append(("\"\(typo)\"", false))
            default: queries.append((Self.word(&random, length: 4), false))
            }
        }
        let index = SearchIndex(store: store)
        let cases = queries
        let local = try cases.map { text, prefix in try index.search(text, asYouType: prefix, limit: nil) }
        let remote = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
            var results: [PostgresSearchResults] = []
            for (text, prefix) in cases { results.append(try await search.search(text, asYouType: prefix, limit: nil)) }
            return results
        }
        var corrected = 0
        for (index, (text, prefix)) in queries.enumerated() {
            let a = local[index], b = remote[index]
            let label = "seed \(seed): \(text.debugDescription)\(prefix ? " (as you type)" : "")"
            let localTypos = Dictionary(uniqueKeysWithValues: a.hits.map { ($0.objectID, $0.typos) })
            let remoteTypos = Dictionary(uniqueKeysWithValues: b.hits.map { ($0.objectID, $0.typos) })
            #expect(remoteTypos == localTypos, "\(label): only PostgreSQL \(Set(remoteTypos.keys).subtracting(localTypos.keys).count), only local \(Set(localTypos.keys).subtracting(remoteTypos.keys).count), typos differ \(localTypos.filter { entry in remoteTypos[entry.key].map { $0 != entry.value } ?? false }.count)")
            #expect(b.total == a.total, "\(label)")
            #expect(b.corrections == a.corrections, "\(label): PostgreSQL \(b.corrections.map { "\($0.word) → \($0.replacements.map(\.text))" }), local \(a.corrections.map { "\($0.word) → \($0.replacements.map(\.text))" })")
            #expect(b.isCorrectionBounded == a.isCorrectionBounded, "\(label)")
            #expect(b.hits.map(\.typos) == b.hits.map(\.typos).sorted(), "\(label): exact hits first, then fewer typos")
            if !a.corrections.isEmpty { corrected += 1 }
        }
        #expect(corrected > 25, "a good part of the queries are corrected (\(corrected) of \(queries.count))")
    }

    /// Suggestions on PostgreSQL are the local ones: the same words, documents, typos and text,
    /// for prefixes of 1 to 6 letters, typo'd prefixes of 5 to 10 (completed from words 1 or 2
    /// edits away when none starts with them), a prefix after other words, inside quotes (never
    /// corrected), and text that ends otherwise.
    @Test func suggestionsAreTheLocalOnes() async throws {
        var (seedValue, random) = seededGenerator("PostgresNeighbourhoodTests.suggest")
        let seed = seedValue
        let vocabulary = (0..<600).map { _ in Self.word(&random, length: 3 + Int(random.next() % 8)) }
        let rows = (0..<300).map { _ in (0..<4).map { _ in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }.joined(separator: " ") }
        let database = try TestDatabase()
        let store = try database.openStore()
        try await store.write(author: "app") { db in
            for row in rows { try db.execute(sql: "INSERT INTO notes(title, body) VALUES ('', ?)", arguments: [row]) }
        }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("suggest")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        var texts: [String] = ["", "abc ", "数据", "x1", "\"abcde"]
        for index in 0..<100 {
            let word = vocabulary[Int(random.next() % UInt64(vocabulary.count))]
            switch index % 4 {
            case 0: texts.append(String(word.prefix(1 + index % 6)))
            case 1: texts.append("other " + Self.edited(word, &random))
            case 2: texts.append(String(Self.edited(Self.edited(word + "gh", &random), &random).prefix(10)))
            default: texts.append("\"" + Self.edited(word, &random))
            }
        }
        let index = SearchIndex(store: store)
        let cases = texts
        let local = try cases.map { try index.suggest($0, limit: 8) }
        let remote = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
            var results: [[SearchSuggestion]] = []
            for text in cases { results.append(try await search.suggest(text, limit: 8)) }
            return results
        }
        var typoed = 0
        for (index, text) in texts.enumerated() {
            #expect(remote[index] == local[index], "seed \(seed): \(text.debugDescription): PostgreSQL \(remote[index].map { "\($0.word) \($0.documents) \($0.typos)" }), local \(local[index].map { "\($0.word) \($0.documents) \($0.typos)" })")
            if local[index].contains(where: { $0.typos > 0 }) { typoed += 1 }
        }
        #expect(typoed > 10, "suggestions from corrections (\(typoed))")
    }
}
