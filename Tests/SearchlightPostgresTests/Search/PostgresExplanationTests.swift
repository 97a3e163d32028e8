import Foundation
import PostgresNIO
import Searchlight
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// A search on PostgreSQL that matches nothing is explained as the local search explains it:
/// the same reason, message, ignored parts and "did you mean", on the same rows. The rows hold
/// random words over a small alphabet (many close words, so that the choice among equally close
/// corrections, by documents then binary order, is tested), and the queries are words with one
/// or two random edits (3 letters and more: typo tolerance corrects only 5 and more), two of
/// them at once, in capitals and with accents, beside symbols (left out), exclusions alone,
/// operators alone, empty text, prefixes and words with digits (never corrected), words that
/// exist but never together, with typos on and off. The local search is the oracle
/// (SearchExplanationTests check it on its own). Seeded: `SEARCHLIGHT_SEED` replays.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresExplanationTests {
    @Test func explanationsAreTheLocalOnes() async throws {
        var (seedValue, random) = seededGenerator("PostgresExplanationTests")
        let seed = seedValue
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func word(length: Int) -> String { String((0..<length).map { _ in pick(Array("abcdefg")) }) }
        func edited(_ word: String) -> String {
            var characters = Array(word)
            let at = Int(random.next() % UInt64(characters.count))
            switch random.next() % 4 {
            case 0: characters.remove(at: at)
            case 1: characters.insert(pick(Array("abcdefgh")), at: at)
            case 2: characters[at] = pick(Array("abcdefgh"))
            default: if at + 1 < characters.count { characters.swapAt(at, at + 1) }
            }
            return String(characters)
        }
        let vocabulary = (0..<400).map { _ in word(length: 3 + Int(random.next() % 6)) }
        let rows = (0..<250).map { _ in (0..<3).map { _ in pick(vocabulary) }.joined(separator: " ") }
        let database = try TestDatabase()
        let store = try database.openStore()
        try await store.write(author: "app") { db in
            for row in rows { try db.execute(sql: "INSERT INTO notes(title, body) VALUES ('', ?)", arguments: [row]) }
            try db.execute(sql: "INSERT INTO notes(title, body) VALUES ('Straße', 'strasse file λογος')")
        }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("explain")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()

        var queries: [(text: String, prefix: Bool, typos: TypoTolerance)] = [
            ("", false, .on), ("   ", false, .on), ("!!! ???", false, .on), ("-\(vocabulary[0])", false, .on), ("OR", false, .on),
            ("AND NOT", false, .off), ("zzz9", false, .on), ("qqq*", false, .on), ("\(vocabulary[1]) ###", false, .off),
            // Words the index prepares before folding (ß, a ligature), and more terms than are read.
            ("strße", false, .off), ("STRẞE", false, .off), ("\u{FB01}lez", false, .off), ("filez \(vocabulary[2])", false, .off),
            ((0..<70).map { "-k\($0)" }.joined(separator: " "), false, .on), ((0..<70).map { "zz\($0)" }.joined(separator: " "), false, .off),
            // A field only one entity has: the other is not searched, nor counted.
            ("title:\(vocabulary[3])", false, .off), ("title:\(vocabulary[3]) OR name:zzz", false, .off), ("body:\(vocabulary[4]) \(vocabulary[5])", false, .off),
        ]
        for index in 0..<160 {
            let a = pick(vocabulary), b = pick(vocabulary)
            let typos: TypoTolerance = index % 2 == 0 ? .off : .on
            switch index % 8 {
            case 0, 1: queries.append((edited(a), false, typos))
            case 2: queries.append((edited(edited(a)), false, typos))
            case 3: queries.append(("\(edited(a)) \(edited(b))", false, typos))
            case 4: queries.append(("\(edited(a).uppercased()) \(b)é", false, typos))
            case 5: queries.append(("\(edited(a)) -\(b) @@", false, typos))
            case 6: queries.append(("\(a) \(b) \(pick(vocabulary))", false, typos))
            default: queries.append(("\(b) \(edited(a))", true, typos))
            }
        }
        let index = SearchIndex(store: store)
        let cases = queries
        let local = try cases.map { try index.search($0.text, asYouType: $0.prefix, limit: 5, typos: $0.typos) }
        let remote = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
            var results: [PostgresSearchResults] = []
            for query in cases { results.append(try await search.search(query.text, asYouType: query.prefix, limit: 5, typos: query.typos)) }
            return results
        }
        var explained = 0, suggested = 0
        for (index, query) in queries.enumerated() {
            let label = "seed \(seed): \(query.text.debugDescription)\(query.prefix ? " (as you type)" : "") typos \(query.typos)"
            #expect(remote[index].total == local[index].total, "\(label)")
            #expect(remote[index].countsByEntity == local[index].countsByEntity, "\(label)")
            #expect(remote[index].droppedTerms == local[index].droppedTerms, "\(label)")
            #expect(remote[index].explanation == local[index].explanation,
                    "\(label): PostgreSQL \(remote[index].explanation?.message ?? "none"), local \(local[index].explanation?.message ?? "none")")
            if local[index].explanation != nil { explained += 1 }
            if !(local[index].explanation?.suggestions.isEmpty ?? true) { suggested += 1 }
        }
        print("seed \(seed): \(explained) of \(queries.count) explained, \(suggested) with a suggestion")
        #expect(explained > 40 && suggested > 20, "enough queries match nothing and are corrected (\(explained), \(suggested))")
    }

    /// A filter may be what excluded the matches: no explanation then, in either engine.
    @Test func aFilteredSearchIsNotExplained() async throws {
        let database = try TestDatabase()
        let model = try SearchlightModel(entities: [
            .init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "body")], attributes: [.init(column: "tags")]),
        ])
        let store = try database.openStore(model: model)
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(tags, body) VALUES ('a', 'kernel panic')") }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("explainfilter")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        let (plain, filtered) = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
            (try await search.search("kernal", typos: .off), try await search.search("kernal", typos: .off, filter: SearchFilter(parsing: "tags = 'x'")))
        }
        #expect(plain.explanation?.suggestions == ["kernel"])
        #expect(plain.explanation?.message == "no match; did you mean \"kernel\"?")
        #expect(filtered.explanation == nil)
        let local = SearchIndex(store: store)
        #expect(try local.search("kernal", typos: .off).explanation == plain.explanation)
        #expect(try local.search("kernal", typos: .off, filter: SearchFilter(parsing: "tags = 'x'")).explanation == nil)
    }
}
