import Foundation
import NIOPosix
import Searchlight
import SearchlightCommandSupport
import SearchlightHistory

/// The local index as a ``SearchService``: each call runs on NIO's blocking thread pool
/// (SQLite blocks), never on the server's event loops or the cooperative pool.
public struct LocalSearchService: SearchService {
    let store: HistoryStore
    let index: SearchIndex
    /// The same index with ``SearchRequest/Highlight/privateUse`` markers.
    let markedIndex: SearchIndex
    let pool: NIOThreadPool

    /// - Parameter store: a store opened read-only (the server writes nothing).
    public init(store: HistoryStore, options: SearchIndex.Options = .init(), pool: NIOThreadPool = .singleton) {
        self.store = store
        index = SearchIndex(store: store, options: options)
        var marked = options
        (marked.highlightStart, marked.highlightEnd) = (SearchRequest.Highlight.privateUse.start, SearchRequest.Highlight.privateUse.end)
        markedIndex = SearchIndex(store: store, options: marked)
        self.pool = pool
    }

    func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(SearchlightError) -> T) async throws(SearchlightError) -> T {
        do {
            return try await pool.runIfActive { () throws -> T in try body() }
        } catch let error as SearchlightError {
            throw error
        } catch {
            throw SearchlightError(.databaseError, "the search could not run: \(error)")
        }
    }

    public func search(_ request: SearchRequest) async throws(SearchlightError) -> ServedPage {
        if request.sources != nil {
            throw SearchlightError(.invalidArgument, "source is a parameter of searches on PostgreSQL (this server searches one local index)")
        }
        let index = request.highlight == .privateUse ? markedIndex : index
        let results = try await blocking { () throws(SearchlightError) -> SearchResults in
            try index.search(request.text, asYouType: request.asYouType, entities: request.entities, limit: request.limit, offset: request.offset,
                             order: request.order, typos: request.typos, filter: request.filter, facets: request.facets)
        }
        let next = request.offset + results.hits.count
        let more = results.hits.count == request.limit && next < results.rankedMatches
        return ServedPage(body: SearchPage(results), nextOffset: more ? next : nil)
    }

    public func suggest(_ text: String, limit: Int, typos: TypoTolerance) async throws(SearchlightError) -> ServedPage {
        let index = index
        let suggestions = try await blocking { () throws(SearchlightError) -> [SearchSuggestion] in try index.suggest(text, limit: limit, typos: typos) }
        return ServedPage(body: Suggestions(suggestions: suggestions))
    }

    struct Suggestions: Encodable, Sendable {
        var suggestions: [SearchSuggestion]
    }

    /// Each consumer's checkpoint and lag (is the index fresh?), and the documents by entity.
    public func status() async throws(SearchlightError) -> ServedPage {
        let (store, index) = (store, index)
        return try await blocking { () throws(SearchlightError) -> ServedPage in
            let history = try store.status()
            let documents = try index.documentCounts()
            return ServedPage(body: Status(headToken: history.headToken,
                                           consumers: history.consumers.map { .init(author: $0.consumer.author, token: $0.consumer.checkpoint?.token, lag: $0.lag, expired: $0.isExpired) },
                                           documents: documents.values.reduce(0, +), documentsByEntity: documents))
        }
    }

    struct Status: Encodable, Sendable {
        struct Consumer: Encodable, Sendable {
            var author: String
            var token: HistoryToken?
            var lag: Int
            var expired: Bool
        }
        var headToken: HistoryToken
        var consumers: [Consumer]
        var documents: Int
        var documentsByEntity: [String: Int]
    }
}
