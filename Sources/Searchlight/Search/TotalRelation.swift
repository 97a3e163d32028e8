/// What a search's ``SearchResults/total`` is: the exact number of matches, or a lower bound.
///
/// Counting every match of a common word or a one-letter prefix costs as much as reading
/// them all, so counting stops past ``SearchIndex/Options/maximumCountedMatches`` matches of
/// an entity (Elasticsearch's `track_total_hits`): the entity's count is then that bound, and
/// the relation ``atLeast``. The ranking is not affected: it says itself what it ranked
/// (``SearchResults/rankedMatches``). Encoded as Elasticsearch does, `"eq"` or `"gte"`.
public enum TotalRelation: String, Hashable, Sendable, Codable {
    /// Every match was counted.
    case equal = "eq"
    /// At least this many match: some entity's count stopped at the counting bound.
    case atLeast = "gte"
}
