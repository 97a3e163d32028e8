import SearchlightHistory

/// The counts of one attribute's values among all the matches of a search (the filter
/// applied; not only the ranked ones), summed across entities: `SearchResults.facets`.
///
/// Values are grouped as the attribute's column compares them (its collation: a NOCASE column
/// gives one bucket for `Swift` and `swift`, shown as the smallest spelling in byte order,
/// `Swift`; when entities' columns disagree, BINARY). Buckets come most frequent first, then
/// by value; NULL is a value of its own.
public struct SearchFacet: Hashable, Sendable, Codable {
    /// One value and how many matches have it.
    public struct Bucket: Hashable, Sendable, Codable {
        public var value: AttributeValue
        public var count: Int

        public init(value: AttributeValue, count: Int) {
            self.value = value
            self.count = count
        }
    }

    /// The most facets a search may ask for.
    public static let maximumFacets = 16
    /// The largest `facetLimit` (values shown per facet).
    public static let maximumLimit = 1_000

    /// The attribute's name, as the model declares it.
    public var attribute: String
    /// The most frequent values (at most the `facetLimit` of the search).
    public var buckets: [Bucket]
    /// How many distinct values the matches have (more than ``buckets`` holds when the limit cut it).
    public var distinctValues: Int

    public init(attribute: String, buckets: [Bucket], distinctValues: Int? = nil) {
        self.attribute = attribute
        self.buckets = buckets
        self.distinctValues = distinctValues ?? buckets.count
    }
}
