import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightHistory

struct SuggestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggest", abstract: "Complete the last word of a query from the index's words, the most frequent first.")

    @OptionGroup var options: StoreOptions

    @Argument(parsing: .allUnrecognized, help: "The text typed so far; its last word is completed.")
    var words: [String] = []

    @Option(parsing: .unconditional, help: "At most this many completions (1 to 1000).")
    var limit = 10

    @Option(help: "Typo tolerance: 'on' (when no word starts with a prefix of 5 letters or more, words that start 1 edit away, 2 from 9 letters) or 'off'.")
    var typos: TypoTolerance = .on

    /// How `suggest` prints completions.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
    }

    @Option(help: "Output format.")
    var format: Format = .table

    func validate() throws {
        if QueryArguments.words(words).isEmpty { throw ValidationError("Missing expected argument '<text>'") }
        if let option = QueryArguments.unknownOption(words) { throw ValidationError("Unknown option '\(option)' (a word that starts with '--' goes after '--')") }
        if !(1...1000).contains(limit) { throw ValidationError("--limit must be between 1 and 1000") }
    }

    func run() throws {
        let store = try options.openStore(readOnly: true)
        let suggestions = try SearchIndex(store: store).suggest(QueryArguments.words(words).joined(separator: " "), limit: limit, typos: typos)
        switch format {
        case .json:
            Output.machine(try Output.json(suggestions))
        case .table:
            var rows = [["WORD", "DOCUMENTS", "TYPOS", "TEXT"]]
            for suggestion in suggestions {
                rows.append([suggestion.word, String(suggestion.documents), String(suggestion.typos), Output.clip(suggestion.text, 60)])
            }
            print(Output.table(rows))
            if suggestions.isEmpty { print("No completions.") }
        }
    }
}
