import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightPostgres
import SearchlightHistory

/// `searchlight-postgres suggest`: the local `searchlight suggest`, from the vocabulary of the
/// sources in PostgreSQL.
struct SuggestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggest", abstract: "Complete the last word of a query from the words of the documents in PostgreSQL, the most frequent first.")

    @Option(help: "The PostgreSQL server: postgres://user@host[:port]/database[?schema=NAME].")
    var postgres: String

    @Argument(parsing: .allUnrecognized, help: "The text typed so far; its last word is completed.")
    var words: [String] = []

    @Option(name: .customLong("source"), help: "Only the words of this source (repeat for several).")
    var sources: [String] = []

    @Option(parsing: .unconditional, help: "At most this many completions (1 to 1000).")
    var limit = 10

    @Option(help: "Typo tolerance: 'on' (when no word starts with a prefix of 5 letters or more, words that start 1 edit away, 2 from 9 letters) or 'off'.")
    var typos: TypoTolerance = .on

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

    func run() async throws {
        let endpoint = try PostgresEndpoint(url: postgres)
        let (text, limit, typos) = (QueryArguments.words(words).joined(separator: " "), self.limit, self.typos)
        let sources = self.sources.isEmpty ? nil : Set(self.sources)
        let suggestions = try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            try await search.suggest(text, sources: sources, limit: limit, typos: typos)
        }
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
