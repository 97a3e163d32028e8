import Searchlight
import SearchlightHistory

/// One matching object of a search on PostgreSQL: a local ``Searchlight/SearchHit`` and the
/// source (database) it comes from.
public struct PostgresSearchHit: Hashable, Sendable, Codable {
    /// The source id of the database the object lives in.
    public var source: String
    /// The entity name.
    public var entity: String
    /// The object's primary key.
    public var objectID: ObjectID
    /// The value of the entity's title field (the first field if none has the title role).
    public var title: String?
    /// The title with the matched words between the highlight markers (`nil` when ``title`` is).
    public var titleHighlight: String?
    /// An excerpt of the other fields around the matches (`ts_headline`), matched words marked.
    public var snippet: String
    /// Relevance: higher is better (`ts_rank` with the weight classes; see ``PostgresSearch``).
    public var score: Double
    /// Edits between the query and what this hit matched: 0 for an exact match, else 1 or 2
    /// for each corrected word, summed (``Searchlight/TypoTolerance``).
    public var typos = 0

    public init(source: String, entity: String, objectID: ObjectID, title: String?, titleHighlight: String?, snippet: String, score: Double) {
        self.source = source
        self.entity = entity
        self.objectID = objectID
        self.title = title
        self.titleHighlight = titleHighlight
        self.snippet = snippet
        self.score = score
    }
}

/// A page of results of a search on PostgreSQL: the local ``Searchlight/SearchResults``, with
/// counts by source as well.
///
/// ``total``, ``countsByEntity`` and ``countsBySource`` count every match unless
/// ``totalRelation`` is `atLeast`: an entity's count stopped at
/// ``PostgresSearch/Options/maximumCountedMatches``, and they are lower bounds (the counts by
/// source, then, are those of the ranked matches: the newest);
/// ``isRankingCapped`` says an entity had more than
/// ``PostgresSearch/Options/maximumRankedMatches`` matches (only its newest ones were ranked:
/// ``rankedMatches``); ``isTruncated`` says the page stopped at ``PostgresSearch/Options/maximumHits``.
public struct PostgresSearchResults: Hashable, Sendable {
    public var total: Int
    /// Whether ``total`` and the counts are exact, or lower bounds.
    public var totalRelation: TotalRelation = .equal
    /// How many objects match in each searched entity (those without a match count 0), as
    /// locally: empty when there is nothing to search for, and without the entities a `field:`
    /// term rules out (every alternative of a group names a field they lack).
    public var countsByEntity: [String: Int]
    /// How many objects match in each searched source (sources without a match count 0).
    public var countsBySource: [String: Int]
    public var rankedMatches: Int
    public var isTruncated: Bool
    public var hits: [PostgresSearchHit]
    /// How many terms of the user text were left out (beyond ``Searchlight/SearchQuery/maximumTerms``).
    public var droppedTerms: Int
    /// The counts of the facets asked for (nil when none was), among all the matches.
    public var facets: [SearchFacet]? = nil
    /// The query words that also matched words a few edits away, and those words (empty when
    /// every hit is an exact match).
    public var corrections: [SearchCorrection] = []
    /// Why nothing matched, with "did you mean" suggestions, as locally (nil when something
    /// matched, or a filter was given: it may be what excluded the matches).
    public var explanation: SearchExplanation? = nil
    /// Whether a word had more corrections than were searched for (``Searchlight/TypoTolerance/maximumCorrectionsPerWord``).
    public var isCorrectionBounded = false

    /// Whether some matches may have been left out of the ranking: ``rankedMatches`` <
    /// ``total``, or the total is a lower bound.
    public var isRankingCapped: Bool { rankedMatches < total || totalRelation == .atLeast }

    public init(total: Int, countsByEntity: [String: Int], countsBySource: [String: Int], rankedMatches: Int,
                isTruncated: Bool, hits: [PostgresSearchHit], droppedTerms: Int = 0) {
        self.total = total
        self.countsByEntity = countsByEntity
        self.countsBySource = countsBySource
        self.rankedMatches = rankedMatches
        self.isTruncated = isTruncated
        self.hits = hits
        self.droppedTerms = droppedTerms
    }
}
