import Foundation
import Searchlight
import SearchlightHistory

/// A page of local search results as scripts read it: `searchlight search --format json`, and
/// the body of the HTTP API's `GET /v1/search` (which adds `tookMs` and `cursor`).
public struct SearchPage: Encodable, Sendable {
    /// A hit as scripts read it.
    public struct Hit: Encodable, Sendable {
        public var hit: SearchHit

        public init(_ hit: SearchHit) { self.hit = hit }

        public func encode(to encoder: any Encoder) throws {
            enum Key: String, CodingKey { case entity, id, title, titleHighlight, snippet, score, typos }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(hit.entity, forKey: .entity)
            try container.encode(hit.objectID, forKey: .id)
            try container.encode(hit.title, forKey: .title) // null when the entity has no title
            try container.encode(hit.titleHighlight, forKey: .titleHighlight)
            try container.encode(hit.snippet, forKey: .snippet)
            try container.encode(hit.score, forKey: .score)
            try container.encode(hit.typos, forKey: .typos)
        }
    }

    public var results: SearchResults

    public init(_ results: SearchResults) { self.results = results }

    public func encode(to encoder: any Encoder) throws {
        enum Key: String, CodingKey { case total, totalRelation, countsByEntity, rankedMatches, truncated, droppedTerms, hits, explanation, corrections, correctionBounded, facets }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(results.total, forKey: .total)
        try container.encode(results.totalRelation, forKey: .totalRelation) // "eq", or "gte": total is a lower bound
        try container.encode(results.countsByEntity, forKey: .countsByEntity)
        try container.encode(results.rankedMatches, forKey: .rankedMatches)
        try container.encode(results.isTruncated, forKey: .truncated)
        try container.encode(results.droppedTerms, forKey: .droppedTerms)
        try container.encode(results.hits.map(Hit.init), forKey: .hits)
        try container.encode(results.explanation, forKey: .explanation) // null when something matched
        try container.encode(results.corrections, forKey: .corrections) // [] when every hit is exact
        try container.encode(results.isCorrectionBounded, forKey: .correctionBounded)
        try container.encodeIfPresent(results.facets, forKey: .facets)    // only with facets asked for
    }
}
