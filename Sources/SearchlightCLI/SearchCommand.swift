import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightHistory

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search", abstract: "Search the index (any text is safe; --raw takes FTS5 syntax).")

    @OptionGroup var options: StoreOptions

    @Argument(parsing: .allUnrecognized,
              help: "What to search for: words, \"phrases\", OR, -excluded, prefix*, field:word. Chinese, Japanese and Korean text matches as written. Words that start with '-' are part of the query.")
    var words: [String] = []

    var query: String { QueryArguments.words(words).joined(separator: " ") }

    @Option(name: .customLong("entity"), help: "Only this entity (repeat for several).")
    var entities: [String] = []

    @Option(parsing: .unconditional, help: "At most this many hits (0: no limit; a page holds at most \(SearchIndex.Options().maximumHits), and the output says when it stopped there).")
    var limit = 20

    @Option(parsing: .unconditional, help: "Skip this many hits.")
    var offset = 0

    @Flag(help: "Treat the last word as a prefix (as-you-type).")
    var prefix = false

    @Option(help: "Sort by this column of the entities' tables (newest first for a date), then by relevance.")
    var sort: String?

    @Flag(help: "With --sort: smallest first.")
    var ascending = false

    @Flag(help: "Pass the query to FTS5 as-is.")
    var raw = false

    @Option(help: "Typo tolerance: 'on' (words the index lacks also match words 1 edit away from 5 letters, 2 from 9, after every exact match) or 'off' (exact matches only).")
    var typos: TypoTolerance = .on

    @Option(help: ArgumentHelp("Only documents whose attributes satisfy this condition.",
                               discussion: #"E.g. 'year >= 2020 AND tag IN ("swift", "go") AND NOT archived = 1': =, !=, <, <=, >, >=, IN (…), IS [NOT] NULL, AND, OR, NOT, parentheses; text in quotes."#))
    var filter: String?

    @Option(name: .customLong("facet"), help: "Count the values of this attribute among all the matches (repeat for several).")
    var facets: [String] = []

    @Option(parsing: .unconditional, help: "With --facet: the most frequent values shown per facet.")
    var facetLimit = 10

    @Option(parsing: .unconditional, help: "Count matches exactly up to this many per entity (0: no bound); past it, the total is a lower bound (\"10000+\"; JSON: \"totalRelation\": \"gte\").")
    var countLimit = SearchIndex.Options().maximumCountedMatches

    /// How `search` prints hits.
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
        if ascending && sort == nil { throw ValidationError("--ascending needs --sort") }
        if facetLimit < 1 { throw ValidationError("--facet-limit must be at least 1") }
        if countLimit < 0 { throw ValidationError("--count-limit must not be negative") }
    }

    func run() throws {
        let store = try options.openStore(readOnly: true)
        var indexOptions = SearchIndex.Options()
        indexOptions.maximumCountedMatches = countLimit == 0 ? Int.max : countLimit
        let index = SearchIndex(store: store, options: indexOptions)
        let entitySet = entities.isEmpty ? nil : Set(entities)
        let limit = self.limit == 0 ? nil : self.limit
        let order = sort.map { SearchOrder.column($0, descending: !ascending) } ?? .relevance
        let filter = try self.filter.map { try SearchFilter(parsing: $0) }
        let results = raw
            ? try index.search(try SearchQuery(raw: query), entities: entitySet, limit: limit, offset: offset, order: order,
                               filter: filter, facets: facets, facetLimit: facetLimit)
            : try index.search(query, asYouType: prefix, entities: entitySet, limit: limit, offset: offset, order: order, typos: typos,
                               filter: filter, facets: facets, facetLimit: facetLimit)
        switch format {
        case .json:
            Output.machine(try Output.json(SearchPage(results)))
        case .jsonl:
            for hit in results.hits { Output.machine(try Output.json(SearchPage.Hit(hit), pretty: false)) }
            bounds(results).map(Output.note)
        case .csv:
            print("entity,id,title,snippet,score")
            for hit in results.hits {
                Output.machine([hit.entity, hit.objectID.description, hit.title ?? "", hit.snippet, String(hit.score)].map(Output.csvField).joined(separator: ","))
            }
            bounds(results).map(Output.note)
        case .table:
            var rows = [["SCORE", "ENTITY", "ID", "TITLE", "SNIPPET"]]
            for hit in results.hits {
                rows.append([String(format: "%.4g", hit.score), hit.entity, hit.objectID.description,
                             Output.clip(hit.title ?? "", 30), Output.clip(hit.snippet, 80)])
            }
            print(Output.table(rows))
            let atLeast = results.totalRelation == .atLeast
            let byEntity = results.countsByEntity.sorted { $0.key < $1.key }
                .map { "\($0.key) \(Output.count($0.value, atLeast: atLeast && $0.value >= index.options.maximumCountedMatches))" }.joined(separator: ", ")
            print("\(results.hits.count) of \(Output.count(results.total, atLeast: atLeast)) matches" + (byEntity.isEmpty ? "" : " (\(byEntity))"))
            if let explanation = results.explanation { print(explanation.message) }
            if !results.corrections.isEmpty { print(Self.describe(results.corrections)) }
            for facet in results.facets ?? [] { print(Self.footer(facet)) }
            bounds(results).map { print($0) }
        }
    }

    /// `Typo matches: kernal → kernel, vernal (1 typo).`
    static func describe(_ corrections: [SearchCorrection]) -> String { CorrectionLine.text(corrections) }

    /// A facet as a line: `tag: swift 12, rust 3 (and 4 more values)`.
    static func footer(_ facet: SearchFacet) -> String { FacetLine.text(facet) }

    /// What the search's bounds left out, if anything (a line of its own; on stderr for the
    /// formats that scripts read line by line).
    func bounds(_ results: SearchResults) -> String? {
        var notes: [String] = []
        if results.isRankingCapped {
            let of = results.totalRelation == .atLeast ? "matches of at least \(Output.count(results.total))" : "of \(Output.count(results.total)) matches"
            notes.append("Ranked the newest \(Output.count(results.rankedMatches)) \(of) (at most \(Output.count(SearchIndex.Options().maximumRankedMatches)) per entity).")
        }
        if results.droppedTerms > 0 {
            notes.append("Searched the first \(SearchQuery.maximumTerms) terms: \(results.droppedTerms) more were left out.")
        }
        if results.isCorrectionBounded {
            notes.append("Typo corrections were bounded (a word had more close words than are searched, or its walk of the vocabulary stopped at its bound on work): some words close to the query, and their matches, may be missing.")
        }
        if results.isTruncated {
            notes.append("Stopped after \(results.hits.count) hits: --offset \(offset + results.hits.count) shows more.")
        }
        return notes.isEmpty ? nil : notes.joined(separator: " ")
    }
}

extension TypoTolerance: ExpressibleByArgument {}
