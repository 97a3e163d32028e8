import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightPostgres
import SearchlightPostgresServer
import SearchlightHistory

/// `searchlight-postgres search`: the local `searchlight search`, across the sources in
/// PostgreSQL (each hit says its source).
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search", abstract: "Search the documents in PostgreSQL, across sources or in some (any text is safe).")

    @Option(help: "The PostgreSQL server: postgres://user@host[:port]/database[?schema=NAME].")
    var postgres: String

    @Argument(parsing: .allUnrecognized,
              help: "What to search for: words, \"phrases\", OR, -excluded, prefix*, field:word. Chinese, Japanese and Korean text matches as written. Words that start with '-' are part of the query.")
    var words: [String] = []

    var query: String { QueryArguments.words(words).joined(separator: " ") }

    @Option(name: .customLong("source"), help: "Only this source (repeat for several).")
    var sources: [String] = []

    @Option(name: .customLong("entity"), help: "Only this entity (repeat for several).")
    var entities: [String] = []

    @Option(parsing: .unconditional, help: "At most this many hits (0: no limit; a page holds at most \(PostgresSearch.Options().maximumHits), and the output says when it stopped there).")
    var limit = 20

    @Option(parsing: .unconditional, help: "Skip this many hits.")
    var offset = 0

    @Flag(help: "Treat the last word as a prefix (as-you-type).")
    var prefix = false

    @Option(help: "Typo tolerance: 'on' (words PostgreSQL's vocabulary lacks also match words 1 edit away from 5 letters, 2 from 9, after every exact match) or 'off' (exact matches only).")
    var typos: TypoTolerance = .on

    @Option(help: "Sort by this column (an attribute's: PostgreSQL holds only those), largest first, then by relevance.")
    var sort: String?

    @Flag(help: "With --sort: smallest first.")
    var ascending = false

    @Option(help: ArgumentHelp("Only documents whose attributes satisfy this condition (as the local search means it).",
                               discussion: #"E.g. 'year >= 2020 AND tag IN ("swift", "go") AND NOT archived = 1': =, !=, <, <=, >, >=, IN (…), IS [NOT] NULL, AND, OR, NOT, parentheses; text in quotes."#))
    var filter: String?

    @Option(name: .customLong("facet"), help: "Count the values of this attribute among all the matches (repeat for several).")
    var facets: [String] = []

    @Option(parsing: .unconditional, help: "With --facet: the most frequent values shown per facet.")
    var facetLimit = 10

    @Option(parsing: .unconditional, help: "Count matches exactly up to this many per entity (0: no bound); past it, the total is a lower bound (\"10000+\"; JSON: \"totalRelation\": \"gte\").")
    var countLimit = PostgresSearch.Options().maximumCountedMatches

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, jsonl, csv
    }

    @Option(help: "Output format.")
    var format: Format = .table

    func validate() throws {
        if QueryArguments.words(words).isEmpty { throw ValidationError("Missing expected argument '<query>'") }
        if let option = QueryArguments.unknownOption(words) { throw ValidationError("Unknown option '\(option)' (a query word that starts with '--' goes after '--')") }
        if limit < 0 { throw ValidationError("--limit must not be negative") }
        if offset < 0 { throw ValidationError("--offset must not be negative") }
        if countLimit < 0 { throw ValidationError("--count-limit must not be negative") }
        if facetLimit < 1 { throw ValidationError("--facet-limit must be at least 1") }
        if ascending && sort == nil { throw ValidationError("--ascending needs --sort") }
    }

    func run() async throws {
        let endpoint = try PostgresEndpoint(url: postgres)
        let (text, asYouType, limit, offset) = (query, prefix, self.limit == 0 ? nil : self.limit, self.offset)
        let (sources, entities) = (self.sources.isEmpty ? nil : Set(self.sources), self.entities.isEmpty ? nil : Set(self.entities))
        var options = PostgresSearch.Options()
        options.maximumCountedMatches = countLimit == 0 ? Int.max : countLimit
        let filter = try self.filter.map { try SearchFilter(parsing: $0) }
        let (facets, facetLimit) = (self.facets, self.facetLimit)
        let order = sort.map { SearchOrder.column($0, descending: !ascending) } ?? .relevance
        let typos = self.typos
        let results = try await PostgresSearch.withSearch(endpoint: endpoint, options: options) { search in
            try await search.search(text, asYouType: asYouType, sources: sources, entities: entities, limit: limit, offset: offset,
                                    order: order, typos: typos, filter: filter, facets: facets, facetLimit: facetLimit)
        }
        switch format {
        case .json:
            Output.machine(try Output.json(PostgresSearchPage(results)))
        case .jsonl:
            for hit in results.hits { Output.machine(try Output.json(PostgresSearchPage.Hit(hit), pretty: false)) }
            bounds(results).map(Output.note)
        case .csv:
            print("source,entity,id,title,snippet,score")
            for hit in results.hits {
                Output.machine([hit.source, hit.entity, hit.objectID.description, hit.title ?? "", hit.snippet, String(hit.score)].map(Output.csvField).joined(separator: ","))
            }
            bounds(results).map(Output.note)
        case .table:
            var rows = [["SCORE", "SOURCE", "ENTITY", "ID", "TITLE", "SNIPPET"]]
            for hit in results.hits {
                rows.append([String(format: "%.4g", hit.score), Output.clip(hit.source, 20), hit.entity, hit.objectID.description,
                             Output.clip(hit.title ?? "", 30), Output.clip(hit.snippet, 80)])
            }
            print(Output.table(rows))
            let atLeast = results.totalRelation == .atLeast
            let byEntity = results.countsByEntity.sorted { $0.key < $1.key }
                .map { "\($0.key) \(Output.count($0.value, atLeast: atLeast && $0.value >= options.maximumCountedMatches))" }.joined(separator: ", ")
            let bySource = results.countsBySource.sorted { $0.key < $1.key }.map { "\($0.key) \(Output.count($0.value))" }.joined(separator: ", ")
            print("\(results.hits.count) of \(Output.count(results.total, atLeast: atLeast)) matches" + (byEntity.isEmpty ? "" : " (\(byEntity))")
                  + (bySource.isEmpty ? "" : atLeast ? "; by source, of those ranked: \(bySource)" : "; by source: \(bySource)"))
            if let explanation = results.explanation { print(explanation.message) }
            if !results.corrections.isEmpty { print(CorrectionLine.text(results.corrections)) }
            for facet in results.facets ?? [] { print(FacetLine.text(facet)) }
            bounds(results).map { print($0) }
        }
    }

    /// What the search's bounds left out, if anything.
    func bounds(_ results: PostgresSearchResults) -> String? {
        var notes: [String] = []
        if results.isRankingCapped {
            let of = results.totalRelation == .atLeast ? "matches of at least \(Output.count(results.total))" : "of \(Output.count(results.total)) matches"
            notes.append("Ranked the newest \(Output.count(results.rankedMatches)) \(of) (at most \(Output.count(PostgresSearch.Options().maximumRankedMatches)) per entity).")
        }
        if results.droppedTerms > 0 {
            notes.append("Searched the first \(SearchQuery.maximumTerms) terms: \(results.droppedTerms) more were left out.")
        }
        if results.isTruncated {
            notes.append("Stopped after \(results.hits.count) hits: --offset \(offset + results.hits.count) shows more.")
        }
        return notes.isEmpty ? nil : notes.joined(separator: " ")
    }
}
extension TypoTolerance: ExpressibleByArgument {}
