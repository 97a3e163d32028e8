import Foundation
import Searchlight
import SearchlightHistory

extension SearchServer {
    /// Where the server listens, who may ask, and how much one request may ask for.
    public struct Configuration: Sendable {
        /// The address to listen on: loopback unless told otherwise; any other address needs
        /// an ``apiKey``.
        public var host = "127.0.0.1"
        /// The port (0: any free port, told by `onRunning`).
        public var port = 7700
        /// When set, every request but `/healthz` must carry `Authorization: Bearer <key>`, or a
        /// tenant token signed with it (``TenantToken``).
        public var apiKey: String?
        /// The one origin that browsers may call the API from (CORS); none when nil.
        public var corsOrigin: String?
        public var limits = Limits()
        /// The search page at `/`.
        public var page = Page()

        public init() {}

        /// Refuses a configuration that would expose the index: a non-loopback address without a key.
        public func validate() throws(SearchlightError) {
            if !Self.isLoopback(host), apiKey == nil {
                throw SearchlightError(.invalidArgument, "refusing to listen on \(UserText.shown(host)) without an API key: give --api-key (or SEARCHLIGHT_API_KEY), or listen on 127.0.0.1")
            }
            if let apiKey, apiKey.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                throw SearchlightError(.invalidArgument, "the API key must not hold white space or control characters")
            }
            if let origin = corsOrigin, origin.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                throw SearchlightError(.invalidArgument, "invalid CORS origin \"\(UserText.shown(origin))\": an origin holds no white space (https://app.example)")
            }
            if let apiKey, apiKey.utf8.count < 32 {
                throw SearchlightError(.invalidArgument, "the API key must be at least 32 bytes long (it also signs tenant tokens with HMAC-SHA256)")
            }
            if !(0...65_535).contains(port) { throw SearchlightError(.invalidArgument, "invalid port \(port)") }
            if !(1...4_096).contains(limits.maximumConcurrentSearches) {
                throw SearchlightError(.invalidArgument, "invalid number of concurrent searches \(limits.maximumConcurrentSearches): from 1 to 4096")
            }
            if page.facets.count > SearchFacet.maximumFacets {
                throw SearchlightError(.invalidArgument, "\(page.facets.count) page facets; at most \(SearchFacet.maximumFacets) are allowed")
            }
            if let empty = page.facets.first(where: { $0.isEmpty || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } }) {
                throw SearchlightError(.invalidArgument, "invalid page facet \"\(UserText.shown(empty))\": name an attribute")
            }
        }

        static func isLoopback(_ host: String) -> Bool {
            host == "localhost" || host == "::1" || host.hasPrefix("127.")
        }
    }

    /// The search page at `/` (``SearchServer``): its title, and the attributes whose values it
    /// offers as filters.
    public struct Page: Sendable {
        /// Whether `/` serves the page (the API alone when false).
        public var isEnabled = true
        public var title = "Search"
        /// Attributes to facet on (each a `facet` of the page's searches, at most
        /// ``Searchlight/SearchFacet/maximumFacets``): their values become links that filter.
        public var facets: [String] = []

        public init() {}
    }

    /// How much one request may ask for. Past ``maximumConcurrentSearches``, a request gets
    /// `503` with `Retry-After` at once rather than a place in a queue.
    public struct Limits: Sendable {
        /// Characters of `q`.
        public var maximumQueryLength = 1_000
        /// Characters of `filter`.
        public var maximumFilterLength = 2_000
        /// The largest `limit`.
        public var maximumLimit = 100
        /// The deepest page: `offset` + `limit`.
        public var maximumDepth = 10_000
        /// Searches, suggestions and status requests running at once.
        public var maximumConcurrentSearches = 16
        /// How long a search may run before the request fails (`503`). Its place among
        /// ``maximumConcurrentSearches`` is held until its work ends.
        public var requestTimeout: Duration = .seconds(10)
        /// Connections open at once; past them, new ones wait in the kernel's backlog.
        public var maximumConnections = 1_000
        /// How long a connection may take to send a whole request head (after opening, or after
        /// its previous response) before it is closed.
        public var requestHeadTimeout: Duration = .seconds(10)

        public init() {}
    }
}
