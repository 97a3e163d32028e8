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
    /// Hits are ordered by ``typos`` first.
    public var score: Double
    /// How many typos the hit needed (``TypoTolerance``): 0 for an exact match, otherwise the
    /// sum, over the query's corrected words, of the edits to the closest word it holds.
    public var typos = 0
}

/// A page of search results.
///
/// Every search is bounded (``SearchIndex/Options``), and says when a bound changed its answer:
/// ``total`` and ``countsByEntity`` count every match unless ``totalRelation`` is
/// ``TotalRelation/atLeast`` (an entity's count stopped at
/// ``SearchIndex/Options/maximumCountedMatches``: it and the total are lower bounds),
/// ``isRankingCapped`` says an entity had more matches than
/// ``SearchIndex/Options/maximumRankedMatches`` (only its newest ones were ranked: ``rankedMatches``
/// of them), and ``isTruncated`` is set when the page was cut at
/// ``SearchIndex/Options/maximumHits`` (no limit, or a larger one, was asked for).
public struct SearchResults: Hashable, Sendable, Codable {
    /// How many objects match in all (across the requested entities): exactly, or at least
    /// (``totalRelation``).
    public var total: Int
    /// How many objects match in each requested entity (entities with no match count 0); an
    /// entity with more than ``SearchIndex/Options/maximumCountedMatches`` counts that bound.
    public var countsByEntity: [String: Int]
    /// Whether ``total`` and ``countsByEntity`` are exact, or lower bounds.
    public var totalRelation: TotalRelation = .equal
    /// How many matches were ranked, hits being the best of those: ``total`` unless an entity
    /// had more than ``SearchIndex/Options/maximumRankedMatches`` matches.
    public var rankedMatches: Int
    /// The page stopped at ``SearchIndex/Options/maximumHits`` while more ranked hits followed
    /// (ask for them with an offset).
    public var isTruncated: Bool
    /// The requested page, best first.
    public var hits: [SearchHit]
    /// How many terms of the user text were left out (beyond ``SearchQuery/maximumTerms``).
    public var droppedTerms = 0
    /// Why nothing matched, for user text that matched nothing (nil otherwise).
    public var explanation: SearchExplanation? = nil
    /// The query words that matched other words of the index (``TypoTolerance``), when some
    /// matches needed them: empty when every match is exact.
    public var corrections: [SearchCorrection] = []
    /// The typo corrections of some word were bounded: its walk of the vocabulary stopped at
    /// ``TermNeighbourhood``'s bound on work, or it had more close words than are searched for
    /// (``SearchIndex/maximumCorrectionsPerWord``, the closest and most frequent kept). Some
    /// words close to the query, and their matches, may be missing.
    public var isCorrectionBounded = false
    /// The counts of the requested facets' values among all the matches, in the order asked
    /// (nil when no facet was asked for).
    public var facets: [SearchFacet]? = nil

    /// Whether some matches may have been left out of the ranking: ``rankedMatches`` <
    /// ``total``, or the total is a lower bound (more may match than were ranked).
    public var isRankingCapped: Bool { rankedMatches < total || totalRelation == .atLeast }

    public init(total: Int, countsByEntity: [String: Int] = [:], rankedMatches: Int? = nil, isTruncated: Bool = false, hits: [SearchHit]) {
        self.total = total
        self.countsByEntity = countsByEntity
        self.rankedMatches = rankedMatches ?? total
        self.isTruncated = isTruncated
        self.hits = hits
    }

    public static let empty = SearchResults(total: 0, hits: [])
}
