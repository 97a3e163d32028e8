import SearchlightHistory

/// One matching object.
public struct SearchHit: Hashable, Sendable, Codable {
    /// The entity name.
    public var entity: String
    /// The object's primary key.
    public var objectID: ObjectID
    /// The value of the entity's title field (the first field if none has the title role).
    public var title: String?
    /// The title with the matched words between the highlight markers (`nil` when ``title`` is).
    public var titleHighlight: String?
    /// An excerpt around the matches, with the matched words between the highlight markers.
    public var snippet: String
    /// Relevance: higher is better (the negated bm25 rank, with the model's field weights).
    public var score: Double
}

/// A page of search results.
public struct SearchResults: Hashable, Sendable, Codable {
    /// How many objects match in all (across the requested entities).
    public var total: Int
    /// How many objects match in each requested entity (entities with no match count 0).
    public var countsByEntity: [String: Int]
    /// The requested page, best first.
    public var hits: [SearchHit]
    /// Why nothing matched, for user text that matched nothing (nil otherwise).
    public var explanation: SearchExplanation? = nil

    public init(total: Int, countsByEntity: [String: Int] = [:], hits: [SearchHit]) {
        self.total = total
        self.countsByEntity = countsByEntity
        self.hits = hits
    }

    public static let empty = SearchResults(total: 0, hits: [])
}
