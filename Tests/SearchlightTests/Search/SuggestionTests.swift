import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Suggestions as you type (``SearchIndex/suggest(_:limit:typos:)``).
@Suite struct SuggestionTests {
    static func fixture() throws -> Fixture {
        let f = try Fixture()
        let notes = ["kernel panic", "kernel modules", "kernels", "kernel", "kerning", "Kernighan wrote it", "panic", "dinner"]
        for (offset, title) in notes.enumerated() { try f.insertNote(offset + 1, title: title) }
        try f.runIndexer()
        return f
    }

    @Test func completionsComeByHowManyDocumentsHoldThem() throws {
        let f = try Self.fixture()
        let suggestions = try f.index.suggest("linux kern")
        #expect(suggestions.map(\.word) == ["kernel", "kernels", "kernighan", "kerning"])
        #expect(suggestions.map(\.documents) == [3, 1, 1, 1])
        #expect(suggestions.first?.text == "linux kernel")
        #expect(suggestions.allSatisfy { $0.typos == 0 })
        #expect(try f.index.suggest("kern", limit: 2).map(\.word) == ["kernel", "kernels"])
        #expect(try f.index.suggest("KERN*").first?.word == "kernel", "case and a trailing * do not matter")
    }

    @Test func countsAreTheDocumentsThatHoldTheWord() throws {
        let f = try Self.fixture()
        for suggestion in try f.index.suggest("k", limit: 100) + f.index.suggest("p", limit: 100) {
            // The oracle: SQLite's own LIKE over the source rows' words.
            let count = try f.store.databaseWriter.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM notes WHERE ' ' || lower(title) || ' ' LIKE ?", arguments: ["% \(suggestion.word) %"]) ?? 0
            }
            #expect(suggestion.documents == count, "\(suggestion.word)")
        }
    }

    @Test func aMistypedPrefixGetsTheWordsThatStartOneEditAway() throws {
        let f = try Self.fixture()
        let suggestions = try f.index.suggest("kernl")
        #expect(suggestions.first?.word == "kernel")
        #expect(suggestions.allSatisfy { $0.typos == 1 })
        #expect(try f.index.suggest("kernl", typos: .off).isEmpty)
        // Regression (an outsider): quoted text matches exactly, in suggestions as in search.
        for quoted in ["\"kernl", "title:\"kernl", "\"linux kernl", "\"panic\" \"kernl"] {
            #expect(try f.index.suggest(quoted).isEmpty, "\(quoted)")
        }
        #expect(try f.index.suggest("\"kern").first?.word == "kernel", "an exact completion inside quotes")
        #expect(try f.index.suggest("\"panic\" kernl").first?.word == "kernel", "after a closed quote")
        #expect(try f.index.suggest("kerx").isEmpty, "a prefix of 4 letters is not corrected")
    }

    /// Regression (an outsider): with `tokenchars`, suggestions split `e-ma` at the hyphen and
    /// completed `ma` into `mail-box`, making `e-mail-box`, which search does not find.
    @Test func theLastWordIsReadAsTheTokenizerReadsIt() throws {
        let model = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "unicode61 remove_diacritics 2 tokenchars '-_'")
        let f = try Fixture(model: model)
        for (id, title) in ["e-mail snake_case", "snake case", "mail-box"].enumerated() { try f.insertNote(id + 1, title: title) }
        try f.runIndexer()
        #expect(try f.index.suggest("e-ma").map(\.text) == ["e-mail"])
        #expect(try f.index.suggest("snake_c").map(\.text) == ["snake_case"])
        #expect(try f.index.suggest("my snake c").map(\.text) == ["my snake case"])
        for suggestion in try f.index.suggest("e-ma") + f.index.suggest("snake_c") {
            #expect(try f.index.search(suggestion.text, typos: .off).total > 0, "\(suggestion.text) finds something")
        }
    }

    /// Regression (an outsider): a mistyped prefix was completed into words with digits or
    /// token characters, which search never corrects into.
    @Test func aMistypedPrefixIsCompletedIntoWordsOfLettersOnly() throws {
        let model = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "unicode61 remove_diacritics 2 tokenchars '_'")
        let f = try Fixture(model: model)
        for (id, title) in ["_hello", "hell0", "hellish"].enumerated() { try f.insertNote(id + 1, title: title) }
        try f.runIndexer()
        #expect(try f.index.suggest("hellp").map(\.word) == ["hellish"])
        #expect(try f.index.suggest("hell").map(\.word).sorted() == ["hell0", "hellish"], "exact completions are any words")
    }

    /// Regression (an outsider): a count that is no integer, in a damaged vocabulary, crashed.
    @Test func aDamagedCountIsNoCrash() throws {
        let f = try Self.fixture()
        try f.db.shell("UPDATE searchlight_terms_g1 SET documents = 'abc' WHERE term = 'kernel'; UPDATE searchlight_terms_g1 SET documents = 1e300 WHERE term = 'kernels';")
        let suggestions = try f.index.suggest("kern")
        #expect(Set(suggestions.map(\.word)) == ["kernel", "kernels", "kernighan", "kerning"])
        #expect(try f.indexer.verify().vocabularyDifferences != nil)
    }

    @Test func textWithNothingToCompleteHasNoSuggestions() throws {
        let f = try Self.fixture()
        #expect(try f.index.suggest("kernel ").isEmpty)
        #expect(try f.index.suggest("数据").isEmpty)
        #expect(try f.index.suggest("©").isEmpty)
        #expect(try f.index.suggest("").isEmpty)
        #expect(throws: SearchlightError.self) { try f.index.suggest("kern", limit: 0) }
    }

    @Test func seededRandomTextNeverRaises() throws {
        var (_, random) = seededGenerator("SuggestionTests.seededRandomText")
        let f = try Self.fixture()
        let alphabet = Array("kernlpaicdKÉé\"*-:()ß数🙂 \u{0}\u{1F}\u{10FFFD}'`[]")
        for _ in 0..<500 {
            let text = String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let suggestions = try f.index.suggest(text, limit: Int.random(in: 1...20, using: &random))
            #expect(suggestions.allSatisfy { $0.documents > 0 }, "\(text)")
        }
    }
}
