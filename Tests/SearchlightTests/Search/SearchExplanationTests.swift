import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A search that matches nothing says why when the reason is how the query was read, and
/// suggests close words from the index's own vocabulary.
@Suite struct SearchExplanationTests {
    func populated() throws -> Fixture {
        let f = try Fixture()
        try f.insertNote(1, title: "Kernel panic", body: "The kernel stopped; the machine must reboot.")
        try f.insertNote(2, title: "Kernel modules", body: "Loadable modules extend the kernel.")
        try f.insertNote(3, title: "Panic attack", body: "Not about computers at all.")
        try f.runIndexer()
        return f
    }

    @Test func onlySymbolsOrExclusionsHaveNothingToSearchFor() throws {
        let f = try populated()
        let symbols = try f.index.search("+ ©", typos: .off)
        #expect(symbols.total == 0)
        #expect(symbols.explanation?.reason == .nothingToSearch)
        #expect(symbols.explanation?.ignored == ["+", "©"])
        #expect(symbols.explanation?.message.contains("no letters or digits") == true)
        #expect(try f.index.search("-kernel", typos: .off).explanation?.message.contains("exclusions alone") == true)
    }

    @Test func misspelledWordsGetSuggestionsThatMatch() throws {
        let f = try populated()
        let results = try f.index.search("kernal", typos: .off)
        #expect(results.total == 0)
        #expect(results.explanation?.reason == .noMatch)
        #expect(results.explanation?.suggestions == ["kernel"])
        #expect(results.explanation?.message == #"no match; did you mean "kernel"?"#)
        // Each word is corrected in place; the suggestion is checked to match.
        #expect(try f.index.search("Kernal pnaic", typos: .off).explanation?.suggestions == ["kernel panic"])
        #expect(try f.index.search("modules pnaic", typos: .off).explanation?.suggestions == [], "no note has both modules and panic")
    }

    /// A word that the index prepares before folding (ß, ligatures) is replaced in the text as
    /// it was looked up: the suggestion used to keep it as typed, and was dropped.
    @Test func wordsPreparedBeforeFoldingAreReplaced() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "Straße", body: "strasse and a file")
        try f.runIndexer()
        #expect(try f.index.search("strße", typos: .off).explanation?.suggestions == ["strasse"])
        #expect(try f.index.search("\u{FB01}lez", typos: .off).explanation?.suggestions == ["file"])
    }

    @Test func suggestionsStayWithinTheEditDistanceBound() throws {
        let f = try populated()
        #expect(try f.index.search("kerxxl", typos: .off).explanation?.suggestions == ["kernel"], "2 edits in a word of 6 letters")
        #expect(try f.index.search("kxrnel", typos: .off).explanation?.suggestions == [], "an edit in the first two letters is not looked for")
        #expect(try f.index.search("kenrel", typos: .off).explanation?.suggestions == ["kernel"], "a transposition")
        #expect(try f.index.search("kxrxxl", typos: .off).explanation?.suggestions == [], "3 edits")
        #expect(try f.index.search("kernxx", typos: .off).explanation?.suggestions == ["kernel"])
        #expect(try f.index.search("pnxc", typos: .off).explanation?.suggestions == [], "2 edits in a word of 4 letters")
        #expect(try f.index.search("pqz", typos: .off).explanation?.suggestions == [])
        #expect(try f.index.search("kernel2", typos: .off).explanation?.suggestions == [], "words with digits are not spelling-checked")
        #expect(try f.index.search("zzzzzzzz", typos: .off).explanation?.suggestions == [])
    }

    @Test func ignoredPartsAreReportedWhenTheRestMatchesNothing() throws {
        let f = try populated()
        let results = try f.index.search("qwertyuiop ©", typos: .off)
        #expect(results.explanation?.reason == .partsIgnored)
        #expect(results.explanation?.ignored == ["©"])
    }

    /// Regression: terms after the first 64 were left out
    /// without a word.
    @Test func termsBeyondTheBoundAreReported() throws {
        let f = try populated()
        let long = Array(repeating: "kernel", count: 64).joined(separator: " ") + " xyzzy"
        let results = try f.index.search(long)
        #expect(results.droppedTerms == 1 && results.total == 2)
        let exclusions = (0..<64).map { "-w\($0)" }.joined(separator: " ") + " kernel"
        let excluded = try f.index.search(exclusions)
        #expect(excluded.droppedTerms == 1)
        #expect(excluded.explanation?.message.contains("only the first 64 terms were read") == true, "\(String(describing: excluded.explanation))")
        #expect(try f.index.search("-", typos: .off).explanation?.message == "nothing to search for: the query has no words")
    }

    @Test func resultsWithHitsCarryNoExplanation() throws {
        let f = try populated()
        #expect(try f.index.search("kernel", typos: .off).explanation == nil)
    }

    @Test func editDistanceCountsTranspositionsAsOne() {
        #expect(SearchExplanation.Draft.editDistance("kernel", "kernal", bound: 2) == 1)
        #expect(SearchExplanation.Draft.editDistance("pnaic", "panic", bound: 2) == 1)
        #expect(SearchExplanation.Draft.editDistance("abc", "xyz", bound: 2) == nil)
        #expect(SearchExplanation.Draft.editDistance("kernel", "kernel", bound: 1) == 0)
    }
}
