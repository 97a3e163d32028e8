import Foundation
import Searchlight
import SearchlightHistory
import SearchlightPostgres
import SearchlightServer

/// PostgreSQL as a ``SearchlightServer/SearchService``: searches and suggestions through one
/// ``SearchlightPostgres/PostgresSearch`` (its pool of connections; a hot standby's URL serves
/// reads), the status of every source from ``SearchlightPostgres/PostgresStatus``.
public struct PostgresSearchService: SearchService {
    let search: PostgresSearch
    /// The same search with ``SearchlightServer/SearchRequest/Highlight/privateUse`` markers.
    let markedSearch: PostgresSearch
    let endpoint: PostgresEndpoint

    /// - Parameters:
    ///   - search: from ``SearchlightPostgres/PostgresSearch/withSearch(endpoint:options:logger:_:)``,
    ///     alive while the server runs.
    ///   - endpoint: where the status is read.
    public init(search: PostgresSearch, endpoint: PostgresEndpoint) {
        self.search = search
        var marked = search.options
        (marked.highlightStart, marked.highlightEnd) = (SearchRequest.Highlight.privateUse.start, SearchRequest.Highlight.privateUse.end)
        markedSearch = PostgresSearch(client: search.client, schema: search.schema, options: marked, logger: search.logger)
        self.endpoint = endpoint
    }

    public func search(_ request: SearchRequest) async throws(SearchlightError) -> ServedPage {
        let search = request.highlight == .privateUse ? markedSearch : search
        let results = try await search.search(request.text, asYouType: request.asYouType, sources: request.sources, entities: request.entities,
                                              limit: request.limit, offset: request.offset, order: request.order, typos: request.typos,
                                              filter: request.filter, facets: request.facets)
        let next = request.offset + results.hits.count
        let more = results.hits.count == request.limit && next < results.rankedMatches
        return ServedPage(body: PostgresSearchPage(results), nextOffset: more ? next : nil)
    }

    public func suggest(_ text: String, limit: Int, typos: TypoTolerance) async throws(SearchlightError) -> ServedPage {
        ServedPage(body: Suggestions(suggestions: try await search.suggest(text, limit: limit, typos: typos)))
    }

    struct Suggestions: Encodable, Sendable {
        var suggestions: [SearchSuggestion]
    }

    /// Each source's checkpoint and lag (`searchlight-postgres status --format json`).
    public func status() async throws(SearchlightError) -> ServedPage {
        ServedPage(body: Sources(sources: try await PostgresStatus.read(endpoint)))
    }

    struct Sources: Encodable, Sendable {
        var sources: [PostgresSourceStatus]
    }
}
