import Foundation
import Searchlight
import SearchlightHistory

/// What the HTTP API serves: a search, suggestions and a status, from the local index
/// (``LocalSearchService``) or from PostgreSQL. The server parses and bounds each request
/// (``SearchRequest``), checks who may ask, and writes the answer; a service only answers.
///
/// A service must not block the caller's thread: blocking work (SQLite) crosses to a thread
/// of its own.
public protocol SearchService: Sendable {
    /// One page of results, as JSON (the CLI's `search --format json`), and whether more
    /// matches follow it.
    func search(_ request: SearchRequest) async throws(SearchlightError) -> ServedPage
    /// Completions of the last word of `text` (the CLI's `suggest --format json`).
    func suggest(_ text: String, limit: Int, typos: TypoTolerance) async throws(SearchlightError) -> ServedPage
    /// How fresh the index is (each consumer's or source's lag), as JSON.
    func status() async throws(SearchlightError) -> ServedPage
}

/// A service's answer: its JSON body, and for a search whether a next page exists.
public struct ServedPage: Sendable {
    public var body: any Encodable & Sendable
    /// The offset of the next page, when more ranked matches follow this one.
    public var nextOffset: Int?

    public init(body: any Encodable & Sendable, nextOffset: Int? = nil) {
        self.body = body
        self.nextOffset = nextOffset
    }
}

/// A search as the HTTP API received it, parsed and bounded (``SearchRequest/init(parameters:limits:)``),
/// with the tenant's own filter and sources already applied.
public struct SearchRequest: Sendable, Hashable {
    public var text: String
    public var asYouType = false
    public var typos: TypoTolerance = .on
    public var filter: SearchFilter?
    public var facets: [String] = []
    public var order: SearchOrder = .relevance
    public var entities: Set<String>?
    /// PostgreSQL only: the sources searched (all when nil).
    public var sources: Set<String>?
    public var limit = 20
    public var offset = 0
    /// How matched words are marked in titles and snippets.
    public var highlight: Highlight = .brackets

    public init(text: String) { self.text = text }

    /// The markers around matched words in `titleHighlight` and `snippet`.
    public enum Highlight: String, Sendable, Hashable, CaseIterable {
        /// `[` and `]`, as the CLI prints them: readable, but a document's own brackets look the same.
        case brackets
        /// U+E000 and U+E001, characters of Unicode's private use area that text does not hold,
        /// for a page that turns them into markup (`highlight=private-use`).
        case privateUse = "private-use"

        public var start: String { self == .brackets ? "[" : "\u{E000}" }
        public var end: String { self == .brackets ? "]" : "\u{E001}" }
    }
}
