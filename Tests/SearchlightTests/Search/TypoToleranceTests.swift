import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Typo tolerance (``TypoTolerance``): what a misspelled word finds, in what order, and what
/// stays exact.
@Suite struct TypoToleranceTests {
    static func fixture(_ notes: [(Int, String, String)]) throws -> Fixture {
        let f = try Fixture()
        for (id, title, body) in notes { try f.insertNote(id, title: title, body: body) }
        try f.runIndexer()
        return f
    }

    @Test func aMisspelledWordFindsTheWordOneEditAwayAndSaysSo() throws {
        let f = try Self.fixture([(1, "Kernel panic", "the kernel stopped"), (2, "Lunch", "a sandwich")])
        let results = try f.index.search("kernal")
        #expect(results.hits.map(\.objectID) == [.integer(1)])
        #expect(results.hits.first?.typos == 1)
        #expect(results.hits.first?.titleHighlight == "[Kernel] panic", "the corrected word is highlighted")
        #expect(results.corrections == [SearchCorrection(word: "kernal", replacements: [.init(text: "kernel", typos: 1)])])
        let exact = try f.index.search("kernal", typos: .off)
        #expect(exact.total == 0 && exact.corrections.isEmpty)
    }

    @Test func everyKindOfEditIsForgiven() throws {
        let f = try Self.fixture([(1, "sandwich", "")])
        for typo in ["sandwch", "sandwicch", "sandwitch", "sandwihc", "asndwich"] {
            #expect(try f.ids(typo, typos: .on) == [.integer(1)], "\(typo)")
        }
        #expect(try f.ids("sanwdich", typos: .on) == [.integer(1)], "a transposition is one edit")
        #expect(try f.ids("sxnwdicch", typos: .on) == [], "3 edits")
    }

    @Test func wordsOfNineLettersOrMoreForgiveTwoEdits() throws {
        let f = try Self.fixture([(1, "photosynthesis", ""), (2, "chlorophyll", "")])
        #expect(try f.ids("fotosynthesis", typos: .on) == [.integer(1)], "2 edits (p→f, h deleted)")
        #expect(try f.ids("chlorofyll", typos: .on) == [.integer(2)], "2 edits (p→f, h deleted)")
        #expect(try f.ids("chlorofil", typos: .on) == [], "3 edits")
        let f8 = try Self.fixture([(1, "sandwich", "")])
        #expect(try f8.ids("sandwihh", typos: .on) == [.integer(1)])
        #expect(try f8.ids("sanswihh", typos: .on) == [], "a word of 8 letters: only 1 edit")
    }

    @Test func shortWordsNumbersWordsWithDigitsAndCJKMatchExactly() throws {
        let f = try Self.fixture([(1, "kern", "12345 kernel2 数据库"), (2, "panic", "")])
        #expect(try f.ids("kerm", typos: .on) == [], "4 letters: not substituted")
        #expect(try f.ids("pan", typos: .on) == [], "3 letters")
        #expect(try f.ids("12346", typos: .on) == [])
        #expect(try f.ids("kernel3", typos: .on) == [])
        #expect(try f.ids("数据车", typos: .on) == [])
        #expect(try f.ids("panik", typos: .on) == [.integer(2)], "5 letters")
    }

    @Test func aWordOfFourLettersMayBeAWordOfFiveThatLostALetter() throws {
        let f = try Self.fixture([(1, "panic", ""), (2, "pane", ""), (3, "pains", ""), (4, "spank", "")])
        let results = try f.index.search("pnic")
        #expect(results.hits.map(\.objectID) == [.integer(1)], "one letter added, and only to make 5")
        #expect(results.hits.first?.typos == 1)
        #expect(results.corrections == [SearchCorrection(word: "pnic", replacements: [.init(text: "panic", typos: 1)])])
        #expect(try f.ids("pani", typos: .on) == [.integer(1)], "the last letter lost")
        #expect(try f.ids("pans", typos: .on) == [.integer(3)], "pains; not pane (a substitution), not spank (2 edits)")
        #expect(try f.ids("pane", typos: .on) == [.integer(2)], "a word of the index that matches is not corrected")
        #expect(try f.ids("pnic", asYouType: true, typos: .on) == [], "a prefix of 4 letters is not corrected")
        #expect(try f.ids("pn1c", typos: .on) == [], "a digit")
    }

    /// Regression (an outsider): `kern` matched `kern1`, a word with a digit.
    @Test func wordsAreCorrectedIntoWordsOfLettersOnly() throws {
        let f = try Self.fixture([(1, "kern1", "panic2"), (2, "e_mail", "")])
        #expect(try f.ids("kern", typos: .on) == [])
        #expect(try f.ids("panik", typos: .on) == [])
        #expect(try f.ids("panic", typos: .on) == [])
        let model = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "unicode61 remove_diacritics 2 tokenchars '_'")
        let t = try Fixture(model: model)
        try t.insertNote(1, title: "e_mail")
        try t.runIndexer()
        #expect(try t.ids("email", typos: .on) == [], "a word with a token character is a code, matched exactly both ways")
        #expect(try t.ids("e_mial", typos: .on) == [])
    }

    /// Regression (an outsider): a word with more close words than are searched for lost the
    /// matches of the rest without saying so.
    @Test func aWordWithMoreCloseWordsThanAreSearchedForSaysSo() throws {
        let words = "bcdfghjklmnopqrstvwxy".map { "\($0)anic" }
        let f = try Self.fixture(words.enumerated().map { ($0.offset + 1, $0.element, "") })
        let results = try f.index.search("aanic", limit: nil)
        #expect(words.count > SearchIndex.maximumCorrectionsPerWord)
        #expect(results.total == SearchIndex.maximumCorrectionsPerWord)
        #expect(results.isCorrectionBounded)
        #expect(try !f.index.search("banix", limit: nil).isCorrectionBounded, "a word with few close words")
    }

    /// Regression (an outsider): sorted by a column, a typo match came before an exact one.
    @Test func exactMatchesComeFirstInAnyOrder() throws {
        let f = try Self.fixture([(1, "panic", ""), (2, "kernel", ""), (3, "panic kernel", "")])
        for order in [SearchOrder.column("id", descending: true), .column("id", descending: false), .relevance] {
            let results = try f.index.search("panic OR kernl", entities: ["Note"], order: order)
            #expect(results.hits.map(\.typos) == [0, 0, 1], "\(order)")
            #expect(results.hits.last?.objectID == .integer(2), "\(order)")
        }
    }

    @Test func exactMatchesRankAboveTypoMatchesAndFewerTyposAboveMore() throws {
        // The typo matches' titles would win on bm25 alone (short, weighted titles).
        let f = try Self.fixture([
            (1, "notes", "a long body that mentions zebra once among many many other words here and there"),
            (2, "photosynthesis", ""), (3, "photosynthetic", ""),
        ])
        let results = try f.index.search("zebra OR photosynthesix")
        #expect(results.hits.map(\.objectID) == [.integer(1), .integer(2), .integer(3)])
        #expect(results.hits.map(\.typos) == [0, 1, 2])
        #expect(results.total == 3)
    }

    /// `maret` is `market` with a letter left out (one way to make it) but `baret` with a letter
    /// typed for another, or `mare` with one too many (about 26 ways each): at one typo each,
    /// the likely correction's matches come first, though bm25 prefers the rarer words, and in
    /// any order of a source column the rest of the order stays.
    @Test func withinATypoCountTheLikelyCorrectionsMatchesComeFirst() throws {
        var notes: [(Int, String, String)] = [(1, "baret", "a word"), (2, "mare", "a horse")]
        for id in 3...12 { notes.append((id, "notes \(id)", "the market is open, a long body of many other words")) }
        let f = try Self.fixture(notes)
        let results = try f.index.search("maret", limit: 20)
        #expect(results.total == 12 && results.hits.allSatisfy { $0.typos == 1 })
        #expect(Set(results.hits.prefix(10).map(\.objectID)) == Set((3...12).map { ObjectID.integer(Int64($0)) }),
                "\(results.hits.map(\.title))")
        let typosOff = try f.index.search("maret", typos: .off)
        #expect(typosOff.total == 0)
        // A sort column still decides the order within a typo count.
        let sorted = try f.index.search("maret", entities: ["Note"], limit: 20, order: .column("id", descending: false))
        #expect(sorted.hits.map(\.objectID) == (1...12).map { ObjectID.integer(Int64($0)) })
    }

    /// A word's corrections are alternatives: a document that holds two of them (`function`
    /// and `functions` for `fuonction`) scores the better one, not their sum, so the shorter
    /// document that holds the word meant comes first, as bm25 ranks it for `function` alone.
    @Test func aMatchScoresTheBestCorrectionItHoldsNotTheirSum() throws {
        var notes: [(Int, String, String)] = [(1, "alpha", "function functions padding"), (2, "beta", "function")]
        for id in 3...6 { notes.append((id, "gamma \(id)", "functions other")) }
        for id in 7...30 { notes.append((id, "filler \(id)", "lunch sandwich")) }
        let f = try Self.fixture(notes)
        let exact = try f.index.search("function", typos: .off)
        #expect(exact.hits.map(\.objectID) == [.integer(2), .integer(1)], "bm25 of the word meant")
        let results = try f.index.search("fuonction")
        #expect(results.hits.prefix(2).map(\.objectID) == [.integer(2), .integer(1)], "\(results.hits.map(\.title))")
        #expect(results.hits.prefix(2).allSatisfy { $0.typos == 1 } && results.total == 6)
        // Words ORed together are no alternatives: a document that holds both corrected words
        // scores both, as it does for the words typed right (an outsider's finding).
        let g = try Self.fixture([(1, "processor", "processor design notes and more words here"), (2, "memory", "memory layout notes and more words here"),
                                  (3, "processor memory", "processor memory notes and more words here"), (4, "other", "unrelated text"),
                                  (5, "other2", "more unrelated text")])
        #expect(try g.index.search("processor OR memory", typos: .off).hits.first?.objectID == .integer(3))
        let ored = try g.index.search("procesor OR memry")
        #expect(ored.hits.map(\.objectID).first == .integer(3) && ored.total == 3, "\(ored.hits.map(\.title))")
        // Ranking hints and the excluded words keep working beside it.
        let excluded = try f.index.search("fuonction -padding")
        #expect(excluded.hits.first?.objectID == .integer(2) && !excluded.hits.contains { $0.objectID == .integer(1) })
    }

    @Test func theLikelyEditsAreALetterLeftOutAndNeighboursSwapped() {
        #expect(TermNeighbourhood.isLikelyEdit(of: "market", into: "maret"))
        #expect(TermNeighbourhood.isLikelyEdit(of: "market", into: "arket") && TermNeighbourhood.isLikelyEdit(of: "market", into: "marke"))
        #expect(TermNeighbourhood.isLikelyEdit(of: "market", into: "amrket") && TermNeighbourhood.isLikelyEdit(of: "market", into: "marekt"))
        #expect(TermNeighbourhood.isLikelyEdit(of: "market", into: "markte"))
        #expect(!TermNeighbourhood.isLikelyEdit(of: "baret", into: "maret"), "a substitution")
        #expect(!TermNeighbourhood.isLikelyEdit(of: "mare", into: "maret"), "a letter too many")
        #expect(!TermNeighbourhood.isLikelyEdit(of: "market", into: "market"), "no edit")
        #expect(!TermNeighbourhood.isLikelyEdit(of: "market", into: "mrakte"), "two swaps")
        #expect(!TermNeighbourhood.isLikelyEdit(of: "market", into: "mret"), "two left out")
        #expect(TermNeighbourhood.isLikelyEdit(of: "café", into: "cfaé") && TermNeighbourhood.isLikelyEdit(of: "ab", into: "ba"))
    }

    @Test func knownWordsThatMatchKeepTheirExactResults() throws {
        let f = try Self.fixture([(1, "kernel", ""), (2, "kernels", ""), (3, "kennel", "")])
        let on = try f.index.search("kernel")
        let off = try f.index.search("kernel", typos: .off)
        #expect(on == off)
        #expect(on.hits.map(\.objectID) == [.integer(1)] && on.corrections.isEmpty)
    }

    @Test func everyWordIsCorrectedWhenTheExactQueryMatchesNothing() throws {
        // `horse` and `stables` exist, in different notes: the exact AND matches nothing.
        let f = try Self.fixture([(1, "horse", ""), (2, "stables", ""), (3, "horses in stables", "")])
        let results = try f.index.search("horse stable")
        #expect(results.hits.map(\.objectID) == [.integer(3)])
        #expect(results.hits.first?.typos == 2)
        #expect(Set(results.corrections.map(\.word)) == ["horse", "stable"])
    }

    @Test func asYouTypeTheLastWordIsForgivingAsAPrefix() throws {
        let f = try Self.fixture([(1, "kernels", ""), (2, "lunch", "")])
        #expect(try f.ids("kernl", asYouType: true, typos: .on) == [.integer(1)])
        #expect(try f.ids("kernal", asYouType: true, typos: .on) == [.integer(1)])
        #expect(try f.ids("kernl", asYouType: true, typos: .off) == [])
        #expect(try f.index.search("kernl", asYouType: true).corrections.first?.replacements.first?.text == "kern*")
    }

    @Test func phrasesAndExclusionsMatchExactly() throws {
        let f = try Self.fixture([(1, "kernel panic", ""), (2, "kernel", "panic attack")])
        #expect(try f.ids("\"kernal panic\"", typos: .on) == [])
        // Regression (an outsider): a quoted single word was corrected.
        #expect(try f.ids("\"kernal\"", typos: .on) == [])
        #expect(try f.ids("title:\"pnaic\"", typos: .on) == [])
        #expect(try f.ids("\"kernl", asYouType: true, typos: .on) == [])
        #expect(Set(try f.ids("kernel -pnaic", typos: .on)) == [.integer(1), .integer(2)], "an exclusion is never corrected")
    }

    @Test func aFieldFilterStaysOnItsField() throws {
        let f = try Self.fixture([(1, "kernel", ""), (2, "other", "kernel")])
        #expect(try f.ids("title:kernal", typos: .on) == [.integer(1)])
        #expect(try f.ids("body:kernal", typos: .on) == [.integer(2)])
    }

    @Test func pagingGoesFromExactMatchesIntoTypoMatches() throws {
        var notes: [(Int, String, String)] = []
        for id in 1...6 { notes.append((id, "zebra \(id)", "")) }
        for id in 7...12 { notes.append((id, "kernel \(id)", "")) }
        let f = try Self.fixture(notes)
        let all = try f.index.search("zebra OR kernal", limit: nil).hits.map(\.objectID)
        #expect(all.count == 12)
        var paged: [ObjectID] = []
        for offset in stride(from: 0, to: 12, by: 5) {
            paged += try f.index.search("zebra OR kernal", limit: 5, offset: offset).hits.map(\.objectID)
        }
        #expect(paged == all)
        #expect(Set(all.prefix(6)) == Set((1...6).map { ObjectID.integer(Int64($0)) }))
    }

    @Test func rawQueriesAndATrigramIndexMatchExactly() throws {
        let f = try Self.fixture([(1, "kernel", "")])
        #expect(try f.index.search(SearchQuery(raw: "kernal")).total == 0)
        let model = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "trigram")
        let t = try Fixture(model: model)
        try t.insertNote(1, title: "kernel")
        try t.runIndexer()
        #expect(try t.ids("kernal", typos: .on) == [])
    }

    @Test func seededRandomTyposNeverRaiseAndExactResultsComeFirst() throws {
        var (_, random) = seededGenerator("TypoToleranceTests.seededRandomTypos")
        let words = ["kernel", "panic", "sandwich", "photosynthesis", "zebra", "stables", "horses", "lunch", "network", "protocol"]
        let f = try Fixture()
        for id in 1...60 {
            let text = (0..<Int.random(in: 1...5, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            try f.insertNote(id, title: text, body: words.randomElement(using: &random)!)
        }
        try f.runIndexer()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzé\"*-:()ß数")
        for _ in 0..<300 {
            var query = Array((0..<Int.random(in: 1...3, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " "))
            for _ in 0..<Int.random(in: 0...3, using: &random) where !query.isEmpty {
                let position = Int.random(in: 0..<query.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: query.insert(alphabet.randomElement(using: &random)!, at: position)
                case 1: query.remove(at: position)
                default: query[position] = alphabet.randomElement(using: &random)!
                }
            }
            let text = String(query)
            let on = try f.index.search(text, asYouType: Bool.random(using: &random), limit: nil)
            let exact = try f.index.search(text, asYouType: false, limit: nil, typos: .off)
            #expect(on.hits.map(\.typos) == on.hits.map(\.typos).sorted(), "\(text): typos ascending")
            #expect(on.total >= on.hits.count)
            if !on.corrections.isEmpty { #expect(on.hits.contains { $0.typos > 0 }, "\(text)") }
            // Without as-you-type, the exact hits are the first hits, in the same order.
            let plain = try f.index.search(text, asYouType: false, limit: nil)
            #expect(Array(plain.hits.prefix(exact.hits.count)) == exact.hits, "\(text)")
        }
    }
}

extension TypoToleranceTests {
    /// Regression: a word of 100,000 letters asked for 80 GB of edit-distance rows.
    @Test func aHugeWordIsNotCorrected() throws {
        let f = try Self.fixture([(1, "kernel", "")])
        let word = String(repeating: "x", count: 100_000)
        #expect(try f.index.search(word).total == 0)
        #expect(try f.index.suggest(word).isEmpty)
        #expect(TermNeighbourhood.allowedEdits(String(repeating: "x", count: 64)) == 2)
        #expect(TermNeighbourhood.allowedEdits(String(repeating: "x", count: 65)) == 0)
        #expect(TermNeighbourhood.allowedEdits(String(repeating: "α", count: 33)) == 0, "66 bytes")
    }

    /// Regression (an outsider): a word longer than the vocabulary keeps was taken for a typo
    /// although the index holds it, so an exact query gained typo matches.
    @Test func aWordLongerThanTheVocabularyKeepsIsNeverCorrected() throws {
        let long = String(repeating: "a", count: 64)
        let f = try Self.fixture([(1, long, ""), (2, long + "a", "")])
        #expect(try f.ids(long + "a", typos: .on) == [.integer(2)])
        #expect(try f.ids(long + "b", typos: .on) == [], "a typo of a word the vocabulary does not keep either")
    }
}
