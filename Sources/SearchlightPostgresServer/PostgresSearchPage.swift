import Foundation
import Searchlight
import SearchlightHistory
import SearchlightPostgres

/// A page of results of a search on PostgreSQL as scripts read it: the local page's fields with
/// counts by source and each hit's source (`searchlight-postgres search --format json`, and the
/// body of `GET /v1/search` of `searchlight-postgres serve`).
public struct PostgresSearchPage: Encodable, Sendable {
    /// A hit as scripts read it: the local fields, and the source.
    public struct Hit: Encodable, Sendable {
        public var hit: PostgresSearchHit

        public init(_ hit: PostgresSearchHit) { self.hit = hit }

        public func encode(to encoder: any Encoder) throws {
            enum Key: String, CodingKey { case source, entity, id, title, titleHighlight, snippet, score, typos }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(hit.source, forKey: .source)
            try container.encode(hit.entity, forKey: .entity)
            try container.encode(hit.objectID, forKey: .id)
            try container.encode(hit.title, forKey: .title) // null when the entity has no title
            try container.encode(hit.titleHighlight, forKey: .titleHighlight)
            try container.encode(hit.snippet, forKey: .snippet)
            try container.encode(hit.score, forKey: .score)
            try container.encode(hit.typos, forKey: .typos)
        }
    }

    public var results: PostgresSearchResults

    public init(_ results: PostgresSearchResults) { self.results = results }

    public func encode(to encoder: any Encoder) throws {
        enum Key: String, CodingKey { case total, totalRelation, countsByEntity, countsBySource, rankedMatches, truncated, droppedTerms, hits, explanation, corrections, correctionBounded, facets }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(results.total, forKey: .total)
        try container.encode(results.totalRelation, forKey: .totalRelation) // "eq", or "gte": the counts are lower bounds
        try container.encode(results.countsByEntity, forKey: .countsByEntity)
        try container.encode(results.countsBySource, forKey: .countsBySource)
        try container.encode(results.rankedMatches, forKey: .rankedMatches)
        try container.encode(results.isTruncated, forKey: .truncated)
        try container.encode(results.droppedTerms, forKey: .droppedTerms)
        try container.encode(results.hits.map(Hit.init), forKey: .hits)
        try container.encode(results.explanation, forKey: .explanation) // null when something matched
        try container.encode(results.corrections, forKey: .corrections) // [] when every hit is exact
        try container.encode(results.isCorrectionBounded, forKey: .correctionBounded)
        try container.encodeIfPresent(results.facets, forKey: .facets) // only with facets asked for
    }
}
