import Foundation
import GRDB
import SearchlightHistory
import Synchronization

/// Searches the index that an ``Indexer`` maintains.
///
/// ```swift
/// let index = SearchIndex(store: store)
/// let results = try index.search("kernel pan", asYouType: true, entities: ["Note"], limit: 10)
/// for hit in results.hits { print(hit.entity, hit.objectID, hit.title ?? "", hit.snippet) }
/// ```
///
/// Ranking is bm25 with each field's weight; ties are broken by entity name, then by the FTS
/// rowid (the object id for `INTEGER PRIMARY KEY` tables, otherwise the order in which
/// documents entered the index). Each entity has its own FTS5 table; for each
/// one, a search runs:
/// ```sql
/// SELECT count(*) FROM fts WHERE fts MATCH ?;                 -- fts: searchlight_fts_<entity>
/// SELECT rowid, rank FROM fts WHERE fts MATCH ?                 -- rank: bm25 with the field weights
///   ORDER BY rank, rowid LIMIT ?;
/// ```
/// Snippets, titles and object ids come with the ranking query when few rows would compute them
/// (SQLite computes them only for rows that enter the top `LIMIT`); otherwise one more query
/// per entity computes them for the returned page only:
/// ```sql
/// SELECT rowid, snippet(fts, -1, ?, ?, ?, ?), title, highlight(fts, 0, ?, ?) FROM fts
///   WHERE fts MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (SELECT value FROM json_each(?));
/// ```
///
/// Every search is bounded, and its results say when a bound applied (``SearchResults``):
/// counting stops past ``Options/maximumCountedMatches`` matches of an entity
/// (`SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)`, and
/// ``SearchResults/totalRelation`` says so), an entity with more than
/// ``Options/maximumRankedMatches`` matches has only its newest ones ranked (`AND rowid >= ?`,
/// the rowid of the last of them), and a page holds at most
/// ``Options/maximumHits`` hits, also when no limit is given.
public final class SearchIndex: Sendable {
    /// How snippets look, and the bounds of every search.
    public struct Options: Hashable, Sendable {
        public var highlightStart = "["
        public var highlightEnd = "]"
        public var ellipsis = "…"
        /// Tokens per snippet (1 to 64).
        public var snippetTokens = 12
        /// At most this many matches of one entity are ranked (or sorted, with a
        /// ``SearchOrder/column(_:descending:)`` order): those with the highest FTS rowids (for
        /// `INTEGER PRIMARY KEY` tables the highest ids, otherwise the documents that entered the
        /// index last). Ranking costs about a microsecond a match, and a common word or a
        /// one-letter prefix matches most documents of a large table.
        /// ``SearchResults/rankedMatches`` says how many were ranked.
        public var maximumRankedMatches = 15_000
        /// Counting stops past this many matches of one entity: its count is then this bound and
        /// ``SearchResults/totalRelation`` is ``TotalRelation/atLeast`` ("10,000+"). Counting
        /// costs a walk of every match (a one-letter prefix matches most documents); an entity
        /// with fewer matches than ``maximumRankedMatches`` is counted exactly all the same,
        /// since ranking walks them anyway. `Int.max`: always exact.
        public var maximumCountedMatches = 10_000
        /// A page holds at most this many hits, also with no limit (``SearchResults/isTruncated``
        /// says so; an offset gets the rest). Each hit costs a snippet.
        public var maximumHits = 2_000

        public init() {}
    }

    public let store: HistoryStore
    public let options: Options
    /// The entities of the live generation, decoded once per generation (a generation's layout
    /// never changes: a new layout is always a new generation).
    private let cache = Mutex<(generation: Int, layout: IndexLayout)?>(nil)
    /// Whether the index's own table was checked (a database of Searchlight 0.1.0 migrates).
    private let migrated = Mutex(false)

    public init(store: HistoryStore, options: Options = .init()) {
        self.store = store
        self.options = options
    }

    /// Searches user text with the safe grammar of ``SearchQuery/init(userText:asYouType:columns:)``,
    /// where `field:` may name the fields of the searched entities.
    /// Text with nothing to search for (empty, only punctuation) gives no results, not an error.
    /// When nothing matches, ``SearchResults/explanation`` says why, with "did you mean"
    /// suggestions (not when a filter is given: it may be what excluded the matches).
    ///
    /// - Parameters:
    ///   - typos: with ``TypoTolerance/on`` (the default), words the index lacks also match its
    ///     words a few edits away, after every exact match; ``TypoTolerance/off`` gives exact
    ///     matches only.
    ///   - filter: only documents whose attributes satisfy it (``SearchFilter``), counted,
    ///     ranked and faceted; an entity that does not declare every attribute it names matches
    ///     nothing, and an attribute no searched entity declares is an `invalidFilter` error.
    ///   - facets: attributes whose values to count among all the matches
    ///     (``SearchResults/facets``), the `facetLimit` most frequent of each.
    public func search(_ text: String, asYouType: Bool = false, entities: Set<String>? = nil,
                       limit: Int? = 20, offset: Int = 0, order: SearchOrder = .relevance, typos: TypoTolerance = .on,
                       filter: SearchFilter? = nil, facets: [String] = [], facetLimit: Int = 10) throws(SearchlightError) -> SearchResults {
        try search(text, asYouType: asYouType, entities: entities, limit: limit, offset: offset, order: order, typos: typos, explains: true,
                   filter: filter, facets: facets, facetLimit: facetLimit)
    }

    func search(_ text: String, asYouType: Bool, entities: Set<String>?, limit: Int?, offset: Int,
                order: SearchOrder = .relevance, typos: TypoTolerance = .off, explains: Bool,
                filter: SearchFilter? = nil, facets: [String] = [], facetLimit: Int = 10) throws(SearchlightError) -> SearchResults {
        let columns = Set(store.model.entities.filter { entities?.contains($0.name) ?? true }.flatMap { $0.fields.map(\.column) })
        var results = SearchResults.empty
        if let query = SearchQuery(userText: text, asYouType: asYouType, columns: columns) {
            results = try search(query, entities: entities, limit: limit, offset: offset, order: order, typos: typos,
                                 filter: filter, facets: facets, facetLimit: facetLimit)
            results.droppedTerms = query.droppedTerms
        } else {
            // Nothing to search for is no error, but bad arguments still are.
            try validate(entities: entities, limit: limit, offset: offset)
            try validateRefinements(filter: filter, facets: facets, facetLimit: facetLimit, entities: entities)
            results.facets = facets.isEmpty ? nil : facets.map { SearchFacet(attribute: $0, buckets: []) }
            results.droppedTerms = SearchQuery.Parsed(text, asYouType: asYouType, columns: columns, text: .standard).droppedTerms
        }
        if explains, results.total == 0, filter == nil {
            results.explanation = try explanation(for: text, asYouType: asYouType, columns: columns, entities: entities)
        }
        return results
    }

    /// Runs a parsed query.
    ///
    /// - Parameters:
    ///   - entities: only these entities (all if `nil`); an unknown name is an error.
    ///   - limit: at most this many hits (`nil`: no limit); a page never holds more than
    ///     ``Options/maximumHits``, and ``SearchResults/isTruncated`` says when that cut it.
    ///   - offset: skip this many hits (paging).
    ///   - typos: whether words the index lacks also match words a few edits away
    ///     (``TypoTolerance``; raw queries always match exactly).
    ///   - filter, facets, facetLimit: see ``search(_:asYouType:entities:limit:offset:order:typos:filter:facets:facetLimit:)``.
    /// - Throws: `invalidQuery` for a raw query SQLite rejects; `unknownEntity`;
    ///   `invalidArgument`; `invalidFilter`; `indexNotBuilt` before the first indexing.
    public func search(_ query: SearchQuery, entities: Set<String>? = nil,
                       limit: Int? = 20, offset: Int = 0, order: SearchOrder = .relevance,
                       typos: TypoTolerance = .on,
                       filter: SearchFilter? = nil, facets: [String] = [], facetLimit: Int = 10) throws(SearchlightError) -> SearchResults {
        try validate(entities: entities, limit: limit, offset: offset)
        try migrateIfNeeded()
        let refinements = Refinements(filter: filter, facets: facets, facetLimit: facetLimit)
        do {
            return try store.databaseWriter.read { db in
                try run(query, entities: entities, limit: limit, offset: offset, order: order, typos: typos, refinements: refinements, db)
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // A table of ours that is gone (an uninstall, here or in another process) is no
            // fault of the query: say that Searchlight is not installed.
            if let notInstalled = try? store.databaseWriter.read({ db in store.uninstall(explaining: error, in: db) }) { throw notInstalled }
            // FTS5 reports bad syntax, unknown columns and the like as plain SQL errors; both the
            // query and SQLite's reason (which quotes the query) are user text.
            let reason = UserText.shown(error.message ?? "\(error)", limit: 200)
            throw SearchlightError(.invalidQuery, "invalid query \"\(UserText.shown(query.isRaw ? query.text : query.expression, limit: 80))\": \(reason)",
                                   underlyingError: error)
        } catch {
            throw SearchlightError(wrapping: error, doing: "search failed")
        }
    }

    func migrateIfNeeded() throws(SearchlightError) {
        guard !migrated.withLock({ $0 }) else { return }
        try SearchlightError.catching("cannot open the index") { try IndexState.migrateIfNeeded(store) }
        migrated.withLock { $0 = true }
    }

    private func validate(entities: Set<String>?, limit: Int?, offset: Int) throws(SearchlightError) {
        if let limit, limit < 0 { throw SearchlightError(.invalidArgument, "invalid limit \(limit): it must not be negative") }
        if offset < 0 { throw SearchlightError(.invalidArgument, "invalid offset \(offset): it must not be negative") }
        if let unknown = entities?.sorted().first(where: { store.model.entity(named: $0) == nil }) {
            throw SearchlightError(.unknownEntity, "unknown entity \"\(UserText.shown(unknown))\" (the model declares: \(store.model.entities.map(\.name).joined(separator: ", ")))")
        }
    }

    /// A search: the ranking pass (``rank(_:in:needed:order:_:)``) finds, counts and orders the
    /// matches of each entity; the snippets pass (``addSnippets(to:in:expressions:_:)``) computes
    /// what the page shows for the hits the ranking query did not.
    private func run(_ query: SearchQuery, entities names: Set<String>?, limit: Int?, offset: Int, order: SearchOrder,
                     typos: TypoTolerance, refinements: Refinements = .init(), _ db: Database) throws -> SearchResults {
        guard let (schema, layout) = try liveLayout(db) else { throw try notBuilt(db) }
        // A CJK character is a token: snippets of CJK text get more of them.
        let tokens = query.text.unicodeScalars.contains(where: IndexedText.isCJK) ? options.snippetTokens * 5 / 2 : options.snippetTokens
        var scope = SearchScope(schema: schema, text: layout.text,
                                entities: layout.entities.filter { names?.contains($0.entity.name) ?? true }, snippetTokens: tokens,
                                keepsVocabulary: layout.keepsVocabulary)
        try refinements.prepare(&scope, db)
        let pageSize = min(limit ?? max(options.maximumHits, 1), max(options.maximumHits, 1))
        // Saturating: a huge offset (paging past the end) must not overflow and crash.
        let (sum, overflow) = offset.addingReportingOverflow(pageSize)
        let needed = overflow ? Int.max : sum
        var ranking = try rank(query, in: scope, needed: needed, order: order, db)
        var typoExpressions: [Int64: String] = [:]
        var corrections: [SearchCorrection] = []
        var isCorrectionBounded = false
        // The typo tier: after every exact match, those only the corrections find.
        if typos == .on, let plan = try typoPlan(for: query, exactTotal: ranking.total, in: scope, db) {
            let tier = try rankTypos(plan, exact: ranking, in: scope, needed: needed, order: order, db)
            if tier.total > 0 {
                corrections = plan.corrections
                typoExpressions = tier.expressions
                ranking.total += tier.total
                ranking.ranked += tier.ranked
                ranking.isTotalExact = ranking.isTotalExact && tier.isTotalExact
                for (entity, count) in tier.counts { ranking.counts[entity, default: 0] += count }
                ranking.candidates += tier.candidates
                Self.sort(&ranking.candidates, order: order)
            }
            isCorrectionBounded = plan.isBounded
        }
        var page = Array(ranking.candidates.dropFirst(offset).prefix(pageSize))
        try addSnippets(to: &page, in: scope, expressions: ranking.expressions, typoExpressions: typoExpressions, db)
        // Cut at maximumHits while more ranked hits follow: say so.
        let asked = limit ?? Int.max
        let isTruncated = asked > pageSize && offset < ranking.ranked && ranking.ranked - offset > pageSize
        var results = SearchResults(total: ranking.total, countsByEntity: ranking.counts, rankedMatches: ranking.ranked,
                                    isTruncated: isTruncated, hits: page.compactMap { candidate in
                                        candidate.hit.map { hit in var hit = hit; hit.typos = candidate.typos; return hit }
                                    })
        results.totalRelation = ranking.isTotalExact ? .equal : .atLeast
        results.corrections = corrections
        results.isCorrectionBounded = isCorrectionBounded
        if !refinements.facets.isEmpty {
            // All the matches: with a typo tier, those of the corrected query.
            var matches = ranking
            for (entity, expression) in typoExpressions { matches.expressions[entity] = expression }
            results.facets = try facets(refinements.facets, limit: refinements.facetLimit, in: scope, ranking: matches, db)
        }
        return results
    }

    /// The SQL that yields a hit's object id: the FTS rowid itself for rowid keys, the
    /// document map otherwise (a subquery, so that only the rows SQLite returns look it up).
    static func objectID(_ entity: IndexedEntity, fts: String, documents: String) -> String {
        entity.usesRowidKeys ? "\(fts).rowid" : "(SELECT d.\"object_id\" FROM \(documents) d WHERE d.\"id\" = \(fts).rowid)"
    }

    /// The live generation and the entities it holds (what it was built for, not the model
    /// installed since), or nil before the first build.
    func liveEntities(_ db: Database) throws -> (IndexSchema, [IndexedEntity])? {
        try liveLayout(db).map { ($0.0, $0.1.entities) }
    }

    /// The live generation and its layout, or nil before the first build.
    /// Why there is no live index: Searchlight was uninstalled (`notInstalled`), the first build
    /// is under way (a live rebuild lease), or nothing built it yet (`indexNotBuilt`).
    func notBuilt(_ db: Database) throws -> SearchlightError {
        try store.checkInstalled(in: db) // no index at all: say so if Searchlight was uninstalled
        if try IndexState.get(db, .rebuildOwner, as: String.self) != nil,
           let expiry = try IndexState.get(db, .rebuildExpiresAt, as: Double.self), expiry > Date().timeIntervalSince1970 {
            return SearchlightError(.indexNotBuilt, "the index is being built for the first time: search again when it is done")
        }
        return SearchlightError(.indexNotBuilt, "the index has not been built yet: run the indexer first")
    }

    func liveLayout(_ db: Database) throws -> (IndexSchema, IndexLayout)? {
        // (migrateIfNeeded made sure the table exists: one point query per search.)
        guard let generation = try IndexState.get(db, .generation, as: Int.self) else { return nil }
        let schema = IndexSchema(generation: generation)
        if let cached = cache.withLock({ $0 }), cached.generation == generation { return (schema, cached.layout) }
        guard let json = try IndexState.get(db, .layout, as: String.self) else { return nil }
        let layout = try IndexLayout(json: json)
        cache.withLock { $0 = (generation, layout) }
        return (schema, layout)
    }
}
