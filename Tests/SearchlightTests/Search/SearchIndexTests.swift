import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

@Suite struct SearchIndexTests {
    func populated() throws -> Fixture {
        let f = try Fixture()
        try f.insertNote(1, title: "Hacker ethic", body: "The belief that information-sharing is a powerful good.")
        try f.insertNote(2, title: "Cracker", body: "One who breaks security on a system; a hacker would not.")
        try f.insertNote(3, title: "Wizard", body: "A person who knows how a complex piece of software works.", tags: "hacker")
        try f.insertNote(4, title: "Kludge", body: "A clever programming trick.")
        try f.store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO people(uuid, name) VALUES ('p1', 'Hacker Emeritus')")
        }
        try f.runIndexer()
        return f
    }

    @Test func fieldWeightsRank() throws {
        let f = try populated()
        let results = try f.index.search("hacker", entities: ["Note"], limit: nil)
        #expect(results.total == 3)
        // Title (weight 10) beats tags (3) beats body (1).
        #expect(results.hits.map(\.objectID) == [.integer(1), .integer(3), .integer(2)])
        #expect(results.hits.map(\.score) == results.hits.map(\.score).sorted(by: >))
    }

    @Test func hitsCarryTitleAndHighlightedSnippet() throws {
        let f = try populated()
        let hit = try #require(try f.index.search("clever").hits.first)
        #expect(hit.entity == "Note")
        #expect(hit.title == "Kludge")
        #expect(hit.snippet.contains("[clever]"))
    }

    @Test func entityFilterAndTotalAcrossEntities() throws {
        let f = try populated()
        #expect(try f.index.search("hacker", limit: nil).total == 4)
        #expect(try f.index.search("hacker", entities: ["Person"]).hits.map(\.objectID) == [.text("p1")])
        let error = try #require(throws: SearchlightError.self) { try f.index.search("hacker", entities: ["Nope"]) }
        #expect(error.code == .unknownEntity)
    }

    @Test func countsByEntityCountEveryMatchOfEachRequestedEntity() throws {
        let f = try populated()
        let all = try f.index.search("hacker", limit: 1)
        #expect(all.countsByEntity == ["Note": 3, "Person": 1])
        #expect(all.total == 4 && all.hits.count == 1)
        #expect(try f.index.search("hacker", entities: ["Person"]).countsByEntity == ["Person": 1])
        #expect(try f.index.search("kludge", limit: 0).countsByEntity == ["Note": 1, "Person": 0], "no hits asked: still counted")
        #expect(try f.index.search("nothing-matches-this").countsByEntity == ["Note": 0, "Person": 0])
    }

    @Test func hitsCarryTheirTitleWithTheMatchesHighlighted() throws {
        let f = try populated()
        let hits = try f.index.search("hacker", limit: nil).hits
        let byTitle = Dictionary(uniqueKeysWithValues: hits.map { ($0.title ?? "", $0.titleHighlight) })
        #expect(byTitle == ["Hacker ethic": "[Hacker] ethic", "Wizard": "Wizard", "Cracker": "Cracker", "Hacker Emeritus": "[Hacker] Emeritus"])
        let custom = SearchIndex(store: f.store, options: { var o = SearchIndex.Options(); o.highlightStart = "<b>"; o.highlightEnd = "</b>"; return o }())
        #expect(try custom.search("wiz", asYouType: true).hits.first?.titleHighlight == "<b>Wizard</b>")
    }

    /// A page's hits are the same whether the ranking query computed them (few rows) or the
    /// second pass did (large pages), for rowid keys and for the document map.
    @Test func hitsAreTheSameFromTheRankingQueryAndFromTheSecondPass() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for i in 1...300 {
                let words = Array(repeating: "filler", count: i % 17).joined(separator: " ")
                try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [i, "common \(i)", "the common case \(words)"])
                try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: ["p\(i)", "common person \(words)"])
            }
        }
        try f.runIndexer()
        for entity in ["Note", "Person"] {
            let small = try f.index.search("comm", asYouType: true, entities: [entity], limit: 20)  // snippets in the ranking query
            let large = try f.index.search("comm", asYouType: true, entities: [entity], limit: 300) // a second pass
            #expect(small.hits.count == 20 && large.hits.count == 300)
            #expect(Array(large.hits.prefix(20)) == small.hits, "\(entity)")
            let offset = try f.index.search("comm", asYouType: true, entities: [entity], limit: 20, offset: 250)
            #expect(offset.hits == Array(large.hits[250..<270]), "\(entity)")
            #expect(large.hits.allSatisfy { $0.snippet.contains("[common]") && $0.titleHighlight?.contains("[common]") == true })
        }
    }

    /// Every search is bounded, and says when a bound applied.
    @Test func boundsAreReportedNeverSilent() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for i in 1...25 {
                let words = Array(repeating: "filler", count: (i * 7) % 11).joined(separator: " ")
                try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [i, "note \(i)", "same \(words)"])
            }
        }
        try f.runIndexer()
        let unbounded = try f.index.search("same", limit: nil)
        #expect(unbounded.total == 25 && unbounded.rankedMatches == 25 && !unbounded.isRankingCapped && !unbounded.isTruncated)
        var options = SearchIndex.Options()
        options.maximumRankedMatches = 10
        options.maximumHits = 4
        let index = SearchIndex(store: f.store, options: options)

        // Only the newest 10 matches are ranked, exactly as an unbounded search ranks them.
        let newest = unbounded.hits.filter { if case let .integer(id) = $0.objectID { id > 15 } else { false } }
        let first = try index.search("same", limit: nil)
        #expect(first.total == 25 && first.countsByEntity == ["Note": 25, "Person": 0])
        #expect(first.rankedMatches == 10 && first.isRankingCapped)
        #expect(first.hits == Array(newest.prefix(4)))
        #expect(first.isTruncated, "no limit, cut at maximumHits while more follow")
        let rest = try index.search("same", limit: nil, offset: 4).hits + index.search("same", limit: 100, offset: 8).hits
        #expect(first.hits + rest == newest)
        #expect(try index.search("same", limit: 100, offset: 4).isTruncated, "a limit above maximumHits is cut too")
        #expect(try !index.search("same", limit: nil, offset: 6).isTruncated, "the last 4 ranked hits: nothing follows")
        #expect(try !index.search("same", limit: 3).isTruncated, "the limit asked for is no truncation")
        #expect(try index.search("same", limit: nil, offset: 10).hits.isEmpty)
        // Below the bounds nothing changes.
        let few = try index.search("note 3", limit: nil)
        #expect(few.total == 1 && few.rankedMatches == 1 && !few.isRankingCapped && !few.isTruncated)
    }

    /// Counting stops past `maximumCountedMatches` and the results say the total is a lower
    /// bound; what is ranked and the hits do not change. Matches the ranking walks anyway
    /// (fewer than `maximumRankedMatches`) are counted exactly.
    @Test func countingStopsAtItsBoundAndSaysSo() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for i in 1...25 { try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, 'same')", arguments: [i, "note \(i)"]) }
        }
        try f.runIndexer()
        func index(counted: Int, ranked: Int) -> SearchIndex {
            var options = SearchIndex.Options()
            options.maximumCountedMatches = counted
            options.maximumRankedMatches = ranked
            return SearchIndex(store: f.store, options: options)
        }
        let exact = try index(counted: .max, ranked: 10).search("same", limit: nil)
        #expect(exact.total == 25 && exact.totalRelation == .equal && exact.rankedMatches == 10)
        for counted in [1, 5, 24] {
            let bounded = try index(counted: counted, ranked: 10).search("same", limit: nil)
            #expect(bounded.total == counted && bounded.totalRelation == .atLeast, "counted \(counted)")
            #expect(bounded.countsByEntity == ["Note": counted, "Person": 0])
            #expect(bounded.rankedMatches == 10 && bounded.isRankingCapped)
            #expect(bounded.hits == exact.hits, "the same newest 10, ranked the same")
        }
        #expect(try index(counted: 25, ranked: 10).search("same", limit: nil).totalRelation == .equal)
        // 25 matches, fewer than the ranking cap: the ranking walks them all, so they are counted.
        let walked = try index(counted: 5, ranked: 30).search("same", limit: 3)
        #expect(walked.total == 25 && walked.totalRelation == .equal && walked.rankedMatches == 25 && !walked.isRankingCapped)
        // Zero matches and a bound of 1: exact.
        let none = try index(counted: 1, ranked: 10).search("absent", limit: 3)
        #expect(none.total == 0 && none.totalRelation == .equal)
    }

    /// A search sorted by a column is bounded the same way: it sorts an entity's newest matches.
    @Test func aSortedSearchIsBoundedToo() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for i in 1...25 { try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'same')", arguments: [i]) }
        }
        try f.runIndexer()
        var options = SearchIndex.Options()
        options.maximumRankedMatches = 10
        let index = SearchIndex(store: f.store, options: options)
        let oldestFirst = try index.search("same", entities: ["Note"], limit: nil, order: .column("id", descending: false))
        #expect(oldestFirst.hits.map(\.objectID) == (16...25).map { .integer(Int64($0)) })
        #expect(oldestFirst.total == 25 && oldestFirst.rankedMatches == 10 && oldestFirst.isRankingCapped)
    }

    @Test func pagingIsConsistentAndDeterministic() throws {
        let f = try Fixture()
        for i in 1...25 { try f.insertNote(i, title: "same words", body: "identical") }
        try f.runIndexer()
        let all = try f.index.search("same", limit: nil).hits
        #expect(all.count == 25)
        var paged: [SearchHit] = []
        for offset in stride(from: 0, to: 25, by: 10) {
            let page = try f.index.search("same", limit: 10, offset: offset)
            #expect(page.total == 25)
            paged += page.hits
        }
        #expect(paged == all, "ties are broken the same way every time")
        #expect(try f.index.search("same", limit: 0).hits.isEmpty)
        #expect(throws: SearchlightError.self) { try f.index.search("same", limit: -1) }
        #expect(throws: SearchlightError.self) { try f.index.search("same", offset: -1) }
    }

    @Test func prefixPhraseOrAndExclusionWork() throws {
        let f = try populated()
        #expect(try f.ids("hack", asYouType: true, entities: ["Note"]).count == 3)
        #expect(try f.ids("hack", entities: ["Note"]).isEmpty)
        #expect(try f.ids(#""hacker ethic""#) == [.integer(1)])
        #expect(try f.ids(#""ethic hacker""#).isEmpty)
        #expect(Set(try f.ids("wizard OR kludge")) == [.integer(3), .integer(4)])
        #expect(try f.ids("hacker -ethic -wizard", entities: ["Note"]) == [.integer(2)])
    }

    @Test func emptyOrPunctuationQueriesGiveNoResultsNotAnError() throws {
        let f = try populated()
        for text in ["", "  ", "\"", "-", ":", "AND NOT", "***", "()"] {
            let results = try f.index.search(text)
            #expect(results.total == 0 && results.hits.isEmpty, "query \(text.debugDescription)")
            #expect(results.explanation?.reason == .nothingToSearch, "query \(text.debugDescription)")
        }
    }

    /// Regression: a symbol that unicode61 drops was kept as a word of its
    /// own, an empty phrase that matched nothing, so `hacker ©` found nothing.
    @Test func symbolsInUserTextSeparateWordsAsTheTokenizerDoes() throws {
        let f = try populated()
        let plain = try f.index.search("hacker", limit: nil).total
        #expect(plain == 4)
        for query in ["hacker ©", "hacker =", "hacker $", "hacker +", "hacker 🎉", "hacker | ", "©hacker", "hacker™"] {
            #expect(try f.index.search(query, limit: nil).total == plain, "\(query)")
        }
        #expect(try f.index.search("information=sharing", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try f.index.search("©", limit: nil).total == 0, "only a symbol: nothing to search, no error")
    }

    /// Regression: `offset + limit` overflowed and crashed the process.
    @Test func aHugeOffsetIsAnEmptyPageNotACrash() throws {
        let f = try populated()
        let page = try f.index.search("hacker", limit: 20, offset: Int.max)
        #expect(page.hits.isEmpty && page.total == 4)
        #expect(try f.index.search("hacker", limit: Int.max, offset: 1).hits.count == 3)
    }

    @Test func rawQueriesReportSyntaxErrorsClearly() throws {
        let f = try populated()
        #expect(try f.index.search(try SearchQuery(raw: "hacker NOT ethic"), entities: ["Note"], limit: nil).total == 2)
        #expect(try f.index.search(try SearchQuery(raw: "title: wizard"), limit: nil).total == 1)
        let error = try #require(throws: SearchlightError.self) { try f.index.search(try SearchQuery(raw: "hacker AND (")) }
        #expect(error.code == .invalidQuery)
        #expect(error.message.contains("syntax error"))
        let column = try #require(throws: SearchlightError.self) { try f.index.search(try SearchQuery(raw: "nosuchcolumn: x")) }
        #expect(column.code == .invalidQuery)
    }

    @Test func searchingBeforeTheFirstIndexingSaysSo() throws {
        let f = try Fixture()
        let error = try #require(throws: SearchlightError.self) { try f.index.search("anything") }
        #expect(error.code == .indexNotBuilt)
        #expect(error.message.contains("run the indexer"))
    }

    @Test func searchingDuringTheFirstBuildSaysItIsUnderWay() throws {
        let f = try Fixture()
        // What a first build in another process leaves while it runs: its lease, not yet expired.
        try f.store.databaseWriter.write { db in
            try IndexState.migrate(db, store: f.store)
            try IndexState.set(db, .rebuildOwner, "host 1 lease")
            try IndexState.set(db, .rebuildExpiresAt, Date().timeIntervalSince1970 + 600)
        }
        for error in [try #require(throws: SearchlightError.self) { try f.index.search("anything") },
                      try #require(throws: SearchlightError.self) { try f.index.suggest("any") }] {
            #expect(error.code == .indexNotBuilt)
            #expect(error.message == "the index is being built for the first time: search again when it is done")
        }
        // A lease left by a killed process, expired: nothing is building it.
        try f.store.databaseWriter.write { db in try IndexState.set(db, .rebuildExpiresAt, Date().timeIntervalSince1970 - 1) }
        let stale = try #require(throws: SearchlightError.self) { try f.index.search("anything") }
        #expect(stale.message.contains("run the indexer"))
    }

    @Test func thousandsOfRandomStringsNeverCrashOrRaise() throws {
        let f = try populated()
        let (seed, random) = seededGenerator("thousandsOfRandomStringsNeverCrashOrRaise")
        var generator = random
        let alphabet: [Character] = Array("abcdefghijklmnopqrstuvwxyz  \"\"'-*:^()+{}[]<>.,;!?/\\|&~`@#$%=NEARORANDNOT") +
            ["\u{0}", "\u{1}", "\u{7}", "\u{1B}", "\t", "\n", "\r", "é", "e\u{301}", "ß", "😀", "表", "\u{200B}", "\u{FEFF}", "\u{202E}"]
        let operators = ["OR", "AND", "NOT", "NEAR", "NEAR(", "*", "^", "\"", "-", ":", "(", ")", "+"]
        for iteration in 0..<3_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                if Bool.random(using: &generator) {
                    text.append(alphabet.randomElement(using: &generator)!)
                } else {
                    text += " " + operators.randomElement(using: &generator)! + " "
                }
            }
            let asYouType = iteration % 2 == 0
            // The default mode never surfaces an FTS5 error: any failure fails the test.
            let results: SearchResults
            do {
                results = try f.index.search(text, asYouType: asYouType, limit: 5)
            } catch {
                Issue.record("\(error) for \(text.debugDescription) (seed \(seed))")
                continue
            }
            #expect(results.hits.count <= 5)
        }
    }
}
