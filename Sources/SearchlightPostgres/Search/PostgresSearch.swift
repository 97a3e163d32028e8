import Foundation
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory

/// Searches the documents that sinks keep in PostgreSQL: every source (database), or some of
/// them, with the same safe query language and result shape as the local ``Searchlight/SearchIndex``,
/// plus the source of each hit and counts by source.
///
/// ```swift
/// let endpoint = try PostgresEndpoint(url: "postgres://app@127.0.0.1/search")
/// let results = try await PostgresSearch.withSearch(endpoint: endpoint) { search in
///     try await search.search("kernel pan", asYouType: true, sources: ["tenant-7"], limit: 10)
/// }
/// for hit in results.hits { print(hit.source, hit.entity, hit.objectID, hit.snippet) }
/// ```
///
/// Each source's model (read from `sources.model`) says what its text is: sources whose
/// models share a tokenizer share one compiled query (``PostgresQueryCompiler``), and the
/// searched fields are those of the searched entities. A search is one read-only
/// `REPEATABLE READ` transaction (counts, ranking and snippets see one snapshot, JIT off). For
/// each searched entity (`<match>`: `d.entity = $1 AND d.vector @@ $2::tsquery`, plus the source
/// when not every source is searched, and the CJK check), one pass over its matches up to the
/// counting bound counts them and, below it, ranks the newest 2,000:
/// ```sql
/// WITH m AS MATERIALIZED (SELECT source, object_key, token, vector FROM documents d
///                         WHERE <match> LIMIT 10001),                 -- GIN, or a scan that stops
///      total AS (SELECT count(*) AS n FROM m),
///      ranked AS (SELECT source, object_key, ts_rank('{0.1,0.25,0.5,1}', vector, $3::tsquery, 1) AS score
///                 FROM (SELECT * FROM m WHERE (SELECT n FROM total) < 10001
///                       ORDER BY token DESC, source DESC, object_key DESC LIMIT 2000) d)
/// SELECT * FROM (SELECT …, score FROM ranked ORDER BY score DESC, source, object_key LIMIT $4) page
/// UNION ALL SELECT source, …, count(*) FROM m WHERE … GROUP BY source   -- exact counts by source
/// UNION ALL SELECT …, n FROM total;
/// ```
/// Past the bound (a common word: `totalRelation` `gte`), a probe counts its matches among the
/// entity's 2,000 newest documents, and its newest 2,000 matches are read whichever way reads
/// fewer rows: a backward walk of `documents_newest (entity, token, source, object_key)` (or,
/// for one source, `documents_source_newest`), or GIN and a sort of the matches' keys, whose
/// newest rows are then fetched by `ctid`; the same ranking statement ranks them. Each statement
/// is planned for its own values (postgres-nio's unnamed statements: a generic plan would be the
/// same for `zebra` and `a*`). Then once, the page's snippets:
/// ```sql
/// SELECT …, ts_headline('simple', d.body, $5::tsquery, $6) FROM documents d
///   JOIN unnest($7::text[], $8::text[], $9::text[]) p …;
/// ```
///
/// **Ranking** differs from the local bm25: `ts_rank` weighs each matched lexeme by its
/// field's weight class (`{D, C, B, A} = {0.1, 0.25, 0.5, 1.0}`, ``PostgresDocument/weightClass(_:maximum:)``)
/// and by how often it occurs, but knows nothing of how rare a word is across documents (no
/// IDF: a rare word counts as much as a common one), and divides by `1 + log(length)` of the
/// document (normalization 1) where bm25 compares a document's length with the average.
/// Scores are comparable within one search only. Ties go by entity, source, then object key.
///
/// **Bounds**, as locally: counting stops past ``Options/maximumCountedMatches`` matches of an
/// entity (``PostgresSearchResults/totalRelation``); an entity with more than
/// ``Options/maximumRankedMatches`` matches has only its newest ones ranked (the highest history
/// tokens: the objects changed last in their source; then by source and key, descending); a page holds at most ``Options/maximumHits`` hits.
public struct PostgresSearch: Sendable {
    /// How snippets look, and the bounds of every search (as ``Searchlight/SearchIndex/Options``).
    public struct Options: Hashable, Sendable {
        public var highlightStart = "["
        public var highlightEnd = "]"
        public var ellipsis = "…"
        /// Words per snippet (1 to 64; CJK characters are words: a query with CJK text gets 2.5 times as many).
        public var snippetTokens = 12
        /// At most this many matches of one entity are ranked: those with the highest history
        /// tokens. Fewer than the local index's 15,000: each costs PostgreSQL a heap visit and a
        /// `ts_rank` (microseconds, where the local bm25 costs one), and a common word's newest
        /// matches take a walk of about this many divided by how common it is (Figures.md).
        public var maximumRankedMatches = 2_000
        /// Counting stops past this many matches of one entity (its count is then this bound,
        /// and ``PostgresSearchResults/totalRelation`` is `atLeast`), as locally
        /// (``Searchlight/SearchIndex/Options/maximumCountedMatches``). `Int.max`: always exact.
        public var maximumCountedMatches = 10_000
        /// A page holds at most this many hits, also with no limit.
        public var maximumHits = 2_000
        /// Whether hits carry snippets and highlighted titles (`false`: the snippet is empty and
        /// the highlighted title is the title, and no `ts_headline` runs: ids only, the cheapest search).
        public var snippets = true

        public init() {}
    }

    public let client: PostgresClient
    /// The schema that holds the sink's tables.
    public let schema: String
    public let options: Options
    public let logger: Logger

    /// Searches through `client` (whose `run()` the caller runs), in `schema`.
    public init(client: PostgresClient, schema: String = "searchlight", options: Options = .init(),
                logger: Logger = Logger(label: "searchlight.postgres.search")) {
        self.client = client
        self.schema = schema
        self.options = options
        self.logger = logger
    }

    /// Connects to `endpoint`, runs `body` with a search, and disconnects. A server that cannot
    /// be reached, an unknown database or role, a refused password is told at once, as one
    /// line (`postgresError`), as `searchlight-postgres status` tells it: the first connection
    /// is made directly, within the URL's `connect_timeout`, before `body` runs (a pool would
    /// retry quietly until its circuit breaker trips). What `body` throws is thrown as it is.
    public static func withSearch<T: Sendable>(endpoint: PostgresEndpoint, options: Options = .init(),
                                               logger: Logger = Logger(label: "searchlight.postgres.search"),
                                               _ body: @Sendable (PostgresSearch) async throws -> T) async throws -> T {
        do {
            return try await PostgresSession.with(endpoint, logger: logger, migrate: false, checkSchema: false) { session in
                try await PostgresSchema.checkNotNewer(session)
                do {
                    return try await body(PostgresSearch(client: session.client, schema: endpoint.schema, options: options, logger: logger))
                } catch {
                    throw BodyFailure(error: error)
                }
            }
        } catch {
            if let failure = error.underlyingError as? BodyFailure { throw failure.error }
            throw error
        }
    }

    /// What the caller's body threw, carried through the session unchanged.
    private struct BodyFailure: Error { var error: any Error }

    /// Searches user text with the grammar of ``Searchlight/SearchQuery/init(userText:asYouType:columns:)``:
    /// words, `"phrases"`, `OR`, `-exclusion`, `prefix*`, `field:word`, CJK text as written.
    /// Any text is safe; text with nothing to search for gives no results, not an error.
    /// When nothing matches, ``PostgresSearchResults/explanation`` says why, with "did you
    /// mean" suggestions, as locally (not when a filter is given).
    ///
    /// - Parameters:
    ///   - sources: only these sources (all if `nil`); one that PostgreSQL does not hold is an error.
    ///   - entities: only these entities (all if `nil`); one that no searched source declares is an error.
    ///   - limit: at most this many hits (`nil`: no limit); never more than ``Options/maximumHits``.
    ///   - offset: skip this many hits (paging).
    ///   - order: ``Searchlight/SearchOrder/column(_:descending:)`` sorts by an attribute's
    ///     column, then by relevance, as locally (NULL last either way; across entities, values
    ///     compare as SQLite's BINARY collation does: numbers before text before BLOBs), among
    ///     each entity's ranked matches. PostgreSQL holds only the attributes of the source
    ///     rows: every searched entity must declare an attribute of that column.
    ///   - typos: with ``Searchlight/TypoTolerance/on`` (the default), words the vocabulary
    ///     lacks also match its words a few edits away, after every exact match, as locally
    ///     (``PostgresNeighbourhood`` finds them in PostgreSQL's vocabulary of the searched sources).
    ///   - filter: only documents whose attributes satisfy it, counted, ranked and faceted, with
    ///     the meaning it has locally (``Searchlight/SearchFilter``: each column's affinity and
    ///     collation, as ``PostgresAttributes`` keeps them); an entity that does not declare
    ///     every attribute it names matches nothing, and an attribute no searched entity
    ///     declares is an `invalidFilter` error.
    ///   - facets: attributes whose values to count among all the matches
    ///     (``PostgresSearchResults/facets``), the `facetLimit` most frequent of each, grouped
    ///     and ordered as locally (``Searchlight/SearchFacet``).
    /// - Throws: `invalidArgument`, `invalidFilter`, `unknownEntity`, `notInstalled` (no sink wrote to this schema
    ///   yet), `postgresError` (PostgreSQL failed: the connection, the server; as the sink says).
    public func search(_ text: String, asYouType: Bool = false, sources: Set<String>? = nil, entities: Set<String>? = nil,
                       limit: Int? = 20, offset: Int = 0, order: SearchOrder = .relevance, typos: TypoTolerance = .on, filter: SearchFilter? = nil,
                       facets: [String] = [], facetLimit: Int = 10) async throws(SearchlightError) -> PostgresSearchResults {
        if let limit, limit < 0 { throw SearchlightError(.invalidArgument, "invalid limit \(limit): it must not be negative") }
        if offset < 0 { throw SearchlightError(.invalidArgument, "invalid offset \(offset): it must not be negative") }
        try filter?.validate()
        if facets.count > SearchFacet.maximumFacets {
            throw SearchlightError(.invalidArgument, "\(facets.count) facets; at most \(SearchFacet.maximumFacets) are allowed")
        }
        if !(1...SearchFacet.maximumLimit).contains(facetLimit) {
            throw SearchlightError(.invalidArgument, "invalid facet limit \(facetLimit): it must be between 1 and \(SearchFacet.maximumLimit)")
        }
        let refinements = Refinements(filter: filter, facets: facets, facetLimit: facetLimit, order: order, typos: typos)
        return try await reading("search") { connection in
            var results = try await run(text, asYouType: asYouType, sources: sources, entities: entities,
                                        limit: limit, offset: offset, refinements: refinements, connection)
            if results.total == 0, filter == nil {
                results.explanation = try await explanation(for: text, asYouType: asYouType, sources: sources, entities: entities, connection)
            }
            return results
        }
    }

    /// Runs `body` in one read-only `REPEATABLE READ` transaction with JIT off, and says in one
    /// line what went wrong (`doing`: "search").
    func reading<T: Sendable>(_ doing: String, _ body: @Sendable (PostgresConnection) async throws -> T) async throws(SearchlightError) -> T {
        do {
            return try await client.withConnection { connection in
                try await connection.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
                do {
                    // A search is short: compiling it (JIT) would cost more than it saves. (work_mem
                    // stays the server's: 32 MB kept a common prefix's GIN bitmap exact, which made
                    // its count pass slower at 10 million documents, 460-565 ms against 285-300.)
                    try await connection.query("SET LOCAL jit = off", logger: logger)
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch let error as SearchlightError {
            throw error
        } catch let error as PSQLError {
            if error.serverInfo?[.sqlState] == "42P01" || error.serverInfo?[.sqlState] == "3F000" {
                throw SearchlightError(.notInstalled, "PostgreSQL holds no Searchlight documents in schema \(PostgresSchema.shown(schema)): run `searchlight-postgres sink` first", underlyingError: error)
            }
            throw SearchlightError(.postgresError, "\(doing) on PostgreSQL failed: \(PostgresErrors.describe(error))", underlyingError: error)
        } catch is CancellationError {
            throw SearchlightError(.cancelled, "\(doing) on PostgreSQL: cancelled")
        } catch {
            throw SearchlightError(.postgresError, "\(doing) on PostgreSQL failed: \(PostgresErrors.describe(error))", underlyingError: error)
        }
    }

    // MARK: - The search

    /// Sources whose models read text alike, searched with one compiled query.
    struct SourceGroup {
        var sources: [String]
        var analyzer: SearchTextAnalyzer
        var compiled: PostgresQueryCompiler.Compiled
        /// The query as this group's model parses it, and its compiler.
        var structure: SearchQuery.Structure
        var compiler: PostgresQueryCompiler
    }

    /// A search's filter and facets, and how each source's attributes compare (source →
    /// entity → attribute key → comparison; an entity's declared attributes only).
    struct Refinements {
        var filter: SearchFilter?
        var facets: [String]
        var facetLimit: Int
        var order: SearchOrder = .relevance
        var typos: TypoTolerance = .on
        /// With a sort column: the key of its attribute, by entity and source.
        var sortKeys: [String: [String: String]] = [:]
        var comparisons: [String: [String: [String: AttributeComparison]]] = [:]
        /// Each source's ranking hints, by entity (entities with hints only).
        var hints: [String: [String: [SearchlightModel.RankingHint]]] = [:]
        /// Now, in unix seconds: what a date hint's age is counted from.
        var now = Date().timeIntervalSince1970
    }

    struct Candidate {
        /// Typos of a match of the typo tier (0: exact), and how many of its corrected words
        /// hold no likely correction.
        var typos = 0
        var unlikely = 0
        /// The value sorted on, with a sort column.
        var sortKey: AttributeValue = .null
        var score: Double
        var source: String
        var entity: String
        var key: String
    }

    var table: String { PostgresSchema.quoted(schema) + ".documents" }

    func run(_ text: String, asYouType: Bool, sources names: Set<String>?, entities: Set<String>?,
                     limit: Int?, offset: Int, refinements: Refinements, _ connection: PostgresConnection) async throws -> PostgresSearchResults {
        // Each source's model, and how its attributes compare.
        var refinements = refinements
        var binds = SQLBinds()
        var sql = "SELECT source, model::text, attributes::text FROM \(PostgresSchema.quoted(schema)).sources"
        if let names { sql += " WHERE source = ANY(\(binds.add(names.sorted())))" }
        var models: [(String, SearchlightModel)] = []
        for try await (source, json, attributes) in try await connection.query(PostgresQuery(unsafeSQL: sql + " ORDER BY source", binds: binds.bindings), logger: logger).decode((String, String, String?).self) {
            let model = try SearchlightModel(jsonData: Data(json.utf8))
            models.append((source, model))
            let stored = attributes.flatMap { try? JSONDecoder().decode([String: [String: AttributeComparison]].self, from: Data($0.utf8)) } ?? [:]
            for entity in model.entities where !entity.ranking.isEmpty { refinements.hints[source, default: [:]][entity.name] = entity.ranking }
            for entity in model.entities where !entity.attributes.isEmpty {
                // (A source not written again since schema version 6 has no values: all NULL.)
                for attribute in entity.attributes {
                    refinements.comparisons[source, default: [:]][entity.name, default: [:]][PostgresAttributes.key(attribute.name)] =
                        stored[entity.name]?[attribute.name] ?? AttributeComparison()
                }
            }
        }
        if let names, let unknown = names.sorted().first(where: { name in !models.contains { $0.0 == name } }) {
            throw SearchlightError(.invalidArgument, "unknown source \"\(unknown)\": PostgreSQL holds no documents of it (\(models.isEmpty && names.count == 1 ? "no sink wrote it yet" : "check the name"))")
        }
        let declared = Set(models.flatMap { $0.1.entities.map(\.name) })
        if let unknown = entities?.sorted().first(where: { !declared.contains($0) }) {
            throw SearchlightError(.unknownEntity, "unknown entity \"\(unknown)\" (the searched sources declare: \(declared.sorted().joined(separator: ", ")))")
        }
        var searched = entities ?? declared
        var results = PostgresSearchResults(total: 0, countsByEntity: Dictionary(uniqueKeysWithValues: searched.map { ($0, 0) }),
                                            countsBySource: Dictionary(uniqueKeysWithValues: models.map { ($0.0, 0) }),
                                            rankedMatches: 0, isTruncated: false, hits: [])
        // The attributes the searched entities declare, as first declared: filters and facets name them.
        var attributeNames: [String] = []
        for (_, model) in models {
            for entity in model.entities where searched.contains(entity.name) {
                for attribute in entity.attributes where !attributeNames.contains(where: { PostgresAttributes.key($0) == PostgresAttributes.key(attribute.name) }) {
                    attributeNames.append(attribute.name)
                }
            }
        }
        func unknownAttribute(_ name: String) -> String {
            let declared = attributeNames.map { UserText.shown($0) }
            return "unknown attribute \"\(UserText.shown(name))\" (\(declared.isEmpty ? "the searched entities declare no attributes" : "declared: " + declared.joined(separator: ", ")))"
        }
        for name in refinements.filter?.attributes ?? [] where !attributeNames.contains(where: { PostgresAttributes.key($0) == PostgresAttributes.key(name) }) {
            throw SearchlightError(.invalidFilter, "invalid filter: \(unknownAttribute(name))")
        }
        for name in refinements.facets where !attributeNames.contains(where: { PostgresAttributes.key($0) == PostgresAttributes.key(name) }) {
            throw SearchlightError(.invalidArgument, "invalid facet: \(unknownAttribute(name))")
        }
        if case let .column(column, _) = refinements.order {
            for (source, model) in models {
                for entity in model.entities where searched.contains(entity.name) {
                    guard let attribute = entity.attributes.first(where: { $0.column.caseInsensitiveCompare(column) == .orderedSame }) else {
                        throw SearchlightError(.invalidArgument, "cannot sort by \"\(UserText.shown(column))\": entity \(entity.name) of source \(UserText.shown(source)) has no attribute of that column (PostgreSQL sorts by attributes: declare it in the model's attributes, or search only the entities that have it)")
                    }
                    refinements.sortKeys[entity.name, default: [:]][source] = PostgresAttributes.key(attribute.name)
                }
            }
        }
        let facetNames = refinements.facets.map { name in attributeNames.first { PostgresAttributes.key($0) == PostgresAttributes.key(name) } ?? name }
        if !facetNames.isEmpty { results.facets = facetNames.map { SearchFacet(attribute: $0, buckets: []) } }
        let columns = Set(models.flatMap { $0.1.entities.filter { searched.contains($0.name) }.flatMap { $0.fields.map(\.column) } })
        guard let query = SearchQuery(userText: text, asYouType: asYouType, columns: columns) else {
            // Nothing to search for: no entity was searched (as locally).
            results.countsByEntity = [:]
            results.droppedTerms = SearchExplanation.Draft(text: text, asYouType: asYouType, columns: columns, analyzer: nil).droppedTerms
            return results
        }
        results.droppedTerms = query.droppedTerms

        // One compiled query per kind of text (tokenizer, Chinese variants).
        var groups: [SourceGroup] = []
        let byText = Dictionary(grouping: models) { "\($0.1.tokenizer)\u{0}\($0.1.foldChineseVariants)" }
        for key in byText.keys.sorted() {
            let members = byText[key]!
            let model = members[0].1
            let fields = Set(members.flatMap { $0.1.entities.filter { searched.contains($0.name) }.flatMap { $0.fields.map { $0.column.lowercased() } } })
            let analyzer = SearchTextAnalyzer(model: model)
            let compiler = PostgresQueryCompiler(analyzer: analyzer, fields: fields.sorted())
            guard let structure = query.structure(for: model), let compiled = compiler.compile(structure) else { continue }
            groups.append(SourceGroup(sources: members.map(\.0), analyzer: analyzer, compiled: compiled, structure: structure, compiler: compiler))
        }
        guard !groups.isEmpty, !searched.isEmpty else {
            results.countsByEntity = [:]
            return results
        }
        // An entity is not searched (nor counted) when a term of every alternative of a group
        // names a field it lacks: nothing of it can match there, as locally.
        for entity in searched {
            let fields = Set(models.flatMap { $0.1.entities.filter { $0.name == entity }.flatMap { $0.fields.map { $0.column.lowercased() } } })
            if groups[0].structure.groups.contains(where: { group in group.allSatisfy { term in term.field.map { !fields.contains($0) } ?? false } }) {
                results.countsByEntity[entity] = nil
            }
        }
        searched = searched.filter { results.countsByEntity[$0] != nil }
        guard !searched.isEmpty else { return results }

        // Searching every source with one compiled query: no source condition at all.
        let everySource = names == nil && groups.count == 1 && groups[0].sources.count == models.count
        let cap = max(options.maximumRankedMatches, 1)
        let countLimit = max(options.maximumCountedMatches, 1)
        let pageSize = min(limit ?? max(options.maximumHits, 1), max(options.maximumHits, 1))
        let (sum, overflow) = offset.addingReportingOverflow(pageSize)
        let needed = overflow ? Int.max : sum
        var candidates: [Candidate] = []
        var isTotalExact = true
        for entity in searched.sorted() {
            // One pass over the matches, up to the counting bound (GIN for rare words, a scan
            // that stops early for common ones: the planner chooses): below it, they are counted
            // exactly and the newest `cap` of them ranked, in the same statement.
            let bound = countLimit >= cap ? (countLimit == Int.max ? nil : countLimit + 1) : cap
            binds = SQLBinds()
            var condition = matchCondition(groups, entity: entity, everySource: everySource, refinements, &binds)
            let oneSource = !everySource && groups.flatMap(\.sources).count == 1
            // A short prefix may match a good part of the documents: a probe first, and if it
            // says the count will reach the bound, the count walks the documents and stops
            // there instead of building the prefix's GIN bitmap over the whole table first
            // (`c…` in one source of 85 at 10 million documents: 996 ms through the bitmap, 74 by
            // a walk of the source's documents).
            var early: (probe: (documents: Int, matches: Int), documents: Double)?
            var walksCount = false
            if let bound, Self.mayBeCommon(groups) {
                let probe = try await probe(groups, entity: entity, everySource: everySource, oneSource: oneSource, refinements, connection)
                let sources = groups.flatMap(\.sources)
                let documents = try await estimatedDocuments(sources: everySource ? models.count : sources.count, of: models.count, connection)
                early = (probe, documents)
                let density = Double(max(probe.matches, 1)) / Double(max(probe.documents, 1))
                walksCount = density * documents >= Double(bound) && Double(bound) / density * Self.walkRowCost <= density * documents * Self.indexRowCost
            }
            var ranking = Ranking()
            var counted: [String: Int] = [:]
            var total = 0
            let score = needed == 0 ? "0" : scoreSQL(groups, entity: entity, refinements, &binds)
            let sortKey = sortKeySQL(entity: entity, refinements, &binds)
            let pageOrder = Self.pageOrder(refinements.order)
            let below = bound.map { "(SELECT n FROM total) < \(binds.add($0))" } ?? "true"
            let limit = bound.map { " LIMIT \(binds.add($0))" } ?? ""
            let newest = Self.newestOrder(oneSource: oneSource)
            let sql = """
                WITH m AS MATERIALIZED (SELECT d.source, d.object_key, d.token, d.vector, d.boosts, d.attributes FROM \(table) d WHERE \(condition)\(limit)),
                total AS (SELECT count(*) AS n FROM m),
                ranked AS (SELECT d.source, d.object_key, (\(score))::float8 AS score, \(sortKey) AS sk
                           FROM (SELECT * FROM m d WHERE \(below) ORDER BY \(newest) LIMIT \(binds.add(cap))) d)
                SELECT * FROM (SELECT r.source, r.object_key, r.score, NULL::int8, r.sk->>0, r.sk->>1, r.sk->>2 FROM ranked r
                               ORDER BY \(pageOrder) LIMIT \(binds.add(min(needed, Int(Int64.max))))) page
                UNION ALL SELECT m.source, NULL, NULL, count(*), NULL, NULL, NULL FROM m WHERE \(below) GROUP BY m.source
                UNION ALL SELECT NULL, NULL, NULL, n, NULL, NULL, NULL FROM total
                """
            if walksCount { try await connection.query("SET LOCAL enable_bitmapscan = off", logger: logger) }
            for try await (source, key, score, matches, kind, first, second) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
                .decode((String?, String?, Double?, Int64?, String?, String?, String?).self) {
                if let source, let key, let score {
                    ranking.candidates.append(Candidate(sortKey: PostgresAttributes.value(class: kind, first: first, second: second),
                                                        score: score, source: source, entity: entity, key: key))
                } else if let source, let matches {
                    counted[source, default: 0] += Int(matches)
                } else if let matches {
                    total = Int(matches)
                }
            }
            if walksCount { try await connection.query("SET LOCAL enable_bitmapscan = on", logger: logger) }
            let isCountExact = bound.map { total < $0 } ?? true
            if isCountExact {
                ranking.ranked = min(total, cap)
            } else {
                // Past the bound: a common word. Its newest `cap` matches, by a walk of the
                // entity's newest documents or through GIN and a sort, whichever reads fewer
                // rows: how common the word is among the newest documents (a probe) says.
                let sources = groups.flatMap(\.sources)
                var scope: String
                // (A short prefix was probed before the count: its probe and estimate are reused.)
                let probe: (documents: Int, matches: Int), documents: Double
                if let early {
                    (probe, documents) = early
                } else {
                    probe = try await self.probe(groups, entity: entity, everySource: everySource, oneSource: oneSource, refinements, connection)
                    documents = try await estimatedDocuments(sources: everySource ? models.count : sources.count, of: models.count, connection)
                }
                let density = Double(max(probe.matches, 1)) / Double(max(probe.documents, 1))
                let walkRows = Double(cap) / density
                if walkRows * Self.walkRowCost <= density * documents * Self.indexRowCost {
                    binds = SQLBinds()
                    scope = scopeCondition(entity: entity, sources: everySource ? nil : sources, &binds)
                    condition = matchCondition(groups, entity: entity, everySource: everySource, refinements, &binds)
                    let budget = Int(min(walkRows * 4 + Double(Self.probeSize), Double(Int.max / 2)))
                    let walk = """
                        (SELECT d.source, d.object_key, d.vector, d.boosts, d.attributes FROM (
                           SELECT d.source, d.object_key, d.token, d.entity, d.vector, d.cjk, d.attributes, d.boosts FROM \(table) d WHERE \(scope)
                           ORDER BY \(newest) LIMIT \(binds.add(budget))) d
                         WHERE \(condition) ORDER BY \(newest) LIMIT \(binds.add(cap))) d
                        """
                    // A walk of most of one source's documents is still a walk: sorting them all
                    // instead (the planner's choice for a LIMIT near the source's size) read and
                    // sorted 117,659 vectors of one source of eight (about 0.5 s).
                    try await connection.query("SET LOCAL enable_sort = off", logger: logger)
                    ranking = try await rank(groups, relation: walk, needed: needed, entity: entity, refinements, &binds, connection)
                    try await connection.query("SET LOCAL enable_sort = on", logger: logger)
                } else {
                    ranking = Ranking()
                }
                if ranking.ranked < cap {
                    // Through GIN: the matches' keys sorted, then the newest `cap` rows by ctid.
                    binds = SQLBinds()
                    condition = matchCondition(groups, entity: entity, everySource: everySource, refinements, &binds)
                    let relation = """
                        (SELECT d.source, d.object_key, d.vector, d.boosts, d.attributes FROM \(table) d WHERE d.ctid = ANY(ARRAY(
                           SELECT d.ctid FROM \(table) d WHERE \(condition) ORDER BY \(newest) LIMIT \(binds.add(cap))))) d
                        """
                    ranking = try await rank(groups, relation: relation, needed: needed, entity: entity, refinements, &binds, connection)
                }
                isTotalExact = false
            }
            candidates += ranking.candidates
            for (source, n) in isCountExact ? counted : ranking.bySource { results.countsBySource[source, default: 0] += n }
            results.countsByEntity[entity] = isCountExact ? total : countLimit
            results.total += isCountExact ? total : countLimit
            results.rankedMatches += ranking.ranked
        }
        // The typo tier: after every exact match, those only the corrections find.
        var corrected = groups
        if refinements.typos == .on {
            var tolerant: [SourceGroup] = []
            var plans: [TypoPlan] = []
            for group in groups {
                guard let plan = try await typoPlan(group.structure, sources: everySource ? nil : group.sources, exactTotal: results.total, connection),
                      let compiled = group.compiler.compile(plan.tolerant) else { continue }
                var copy = group
                copy.compiled = compiled
                tolerant.append(copy)
                plans.append(plan)
                results.corrections += plan.corrections
                results.isCorrectionBounded = results.isCorrectionBounded || plan.isBounded
            }
            var tierTotal = 0
            for entity in searched.sorted() where !tolerant.isEmpty {
                let tier = try await rankTypos(tolerant, plans: plans, exact: groups, entity: entity, needed: needed, everySource: everySource,
                                               refinements, connection)
                tierTotal += tier.total
                candidates += tier.ranking.candidates
                for (source, n) in tier.bySource { results.countsBySource[source, default: 0] += n }
                results.countsByEntity[entity, default: 0] += tier.total
                results.total += tier.total
                results.rankedMatches += tier.ranking.ranked
                isTotalExact = isTotalExact && tier.isCountExact
            }
            if tierTotal > 0 {
                corrected = groups.map { group in tolerant.first { $0.sources == group.sources } ?? group }
            } else {
                results.corrections = []
            }
        }
        results.totalRelation = isTotalExact ? .equal : .atLeast
        candidates.sort { a, b in
            if a.typos != b.typos { return a.typos < b.typos }
            if case let .column(_, descending) = refinements.order,
               let first = PostgresAttributes.precedes(a.sortKey, b.sortKey, descending: descending) { return first }
            if a.unlikely != b.unlikely { return a.unlikely < b.unlikely }
            if a.score != b.score { return a.score > b.score }
            if a.entity != b.entity { return a.entity < b.entity }
            if a.source != b.source { return a.source < b.source }
            return Self.keyPrecedes(a.key, b.key)
        }
        let page = Array(candidates.dropFirst(offset).prefix(pageSize))
        let asked = limit ?? Int.max
        results.isTruncated = asked > pageSize && offset < results.rankedMatches && results.rankedMatches - offset > pageSize
        results.hits = try await hits(page, groups: groups, corrected: corrected, connection)
        if !facetNames.isEmpty {
            // All the matches: with a typo tier, those of the corrected query.
            let matched = searched.filter { (results.countsByEntity[$0] ?? 0) > 0 }.sorted()
            results.facets = try await facetCounts(facetNames, groups: corrected, entities: matched, everySource: everySource, refinements, connection)
        }
        return results
    }

    /// Counts the values of each facet among all the matches (the filter applied) of the
    /// entities that have matches, grouped as the attribute's column compares them (its
    /// collation, or BINARY when the sources' columns disagree), most frequent first, then by
    /// value, as locally (``Searchlight/SearchFacet``), in one statement per facet:
    ///
    /// ```sql
    /// WITH m AS (SELECT d.attributes->'tag' AS v FROM documents d WHERE <match of Note> UNION ALL …),
    ///      g AS (SELECT coalesce((v->>0)::int, 0) AS c, <the number> AS num, <the collation key> AS k, v->>0 AS p0, … FROM m)
    /// SELECT (array_agg(p0 ORDER BY o))[1], …, count(*), count(*) OVER () FROM g
    /// GROUP BY c, num, k ORDER BY count(*) DESC, c, num, min(o) LIMIT $n;   -- o: the smallest spelling
    /// ```
    private func facetCounts(_ names: [String], groups: [SourceGroup], entities: [String], everySource: Bool,
                             _ refinements: Refinements, _ connection: PostgresConnection) async throws -> [SearchFacet] {
        var facets: [SearchFacet] = []
        let sources = groups.flatMap(\.sources)
        for name in names {
            let key = PostgresAttributes.key(name)
            var binds = SQLBinds()
            var branches: [String] = []
            var collations = Set<AttributeComparison.Collation>()
            for entity in entities {
                let declaring = sources.filter { refinements.comparisons[$0]?[entity]?[key] != nil }
                guard !declaring.isEmpty else { continue }
                for source in declaring { collations.insert(refinements.comparisons[source]?[entity]?[key]?.collation ?? .binary) }
                var branch = "SELECT d.attributes->\(binds.add(key)) AS v FROM \(table) d WHERE "
                    + matchCondition(groups, entity: entity, everySource: everySource, refinements, &binds)
                if declaring.count < sources.count { branch += " AND d.source = ANY(\(binds.add(declaring)))" }
                branches.append(branch)
            }
            guard !branches.isEmpty else {
                facets.append(SearchFacet(attribute: name, buckets: []))
                continue
            }
            // Text and BLOBs group by the collation's key, or (columns that disagree) by their bytes.
            let groupKey = collations.count == 1 ? "v->>1" : "coalesce(v->>2, v->>1)"
            let sql = """
                WITH m AS (\(branches.joined(separator: " UNION ALL "))),
                g AS (SELECT coalesce((v->>0)::int, 0) AS c, CASE WHEN v->>0 = '1' THEN (v->1)::numeric END AS num,
                             CASE WHEN v->>0 <> '1' THEN \(groupKey) END COLLATE "C" AS k, v->>0 AS p0, v->>1 AS p1, v->>2 AS p2,
                             (CASE WHEN v->>0 = '1' THEN coalesce(v->>2, '') ELSE coalesce(v->>2, v->>1) END) COLLATE "C" AS o FROM m)
                SELECT (array_agg(p0 ORDER BY o))[1], (array_agg(p1 ORDER BY o))[1], (array_agg(p2 ORDER BY o))[1],
                       count(*), count(*) OVER ()
                FROM g GROUP BY c, num, k ORDER BY count(*) DESC, c, num, min(o) LIMIT \(binds.add(refinements.facetLimit))
                """
            var buckets: [SearchFacet.Bucket] = []
            var distinct = 0
            for try await (kind, first, second, count, groups) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
                .decode((String?, String?, String?, Int64, Int64).self) {
                buckets.append(.init(value: PostgresAttributes.value(class: kind, first: first, second: second), count: Int(count)))
                distinct = Int(groups)
            }
            facets.append(SearchFacet(attribute: name, buckets: buckets, distinctValues: distinct))
        }
        return facets
    }

    /// Newest first: the order of `documents_newest` backwards, or for one source (the same
    /// order) that of `documents_source_newest`.
    static func newestOrder(oneSource: Bool) -> String {
        oneSource ? "d.token DESC, d.object_key COLLATE \"C\" DESC" : "d.token DESC, d.source COLLATE \"C\" DESC, d.object_key COLLATE \"C\" DESC"
    }

    /// The newest documents a probe reads to see how common a word is among them.
    static let probeSize = 2_000

    /// How many of the entity's newest ``probeSize`` documents in scope match: how common
    /// the query is, which decides how its matches are read.
    private func probe(_ groups: [SourceGroup], entity: String, everySource: Bool, oneSource: Bool, _ refinements: Refinements,
                       _ connection: PostgresConnection) async throws -> (documents: Int, matches: Int) {
        var binds = SQLBinds()
        let sources = groups.flatMap(\.sources)
        let scope = scopeCondition(entity: entity, sources: everySource ? nil : sources, &binds)
        let condition = matchCondition(groups, entity: entity, everySource: everySource, refinements, &binds)
        let newestDocuments = "SELECT d.source, d.object_key, d.token, d.entity, d.vector, d.cjk, d.attributes FROM \(table) d WHERE \(scope) ORDER BY \(Self.newestOrder(oneSource: oneSource))"
        let probeSQL = "SELECT count(*), count(*) FILTER (WHERE \(condition)) FROM (\(newestDocuments) LIMIT \(binds.add(Self.probeSize))) d"
        var probe = (documents: 0, matches: 0)
        for try await (documents, matches) in try await connection.query(PostgresQuery(unsafeSQL: probeSQL, binds: binds.bindings), logger: logger).decode((Int64, Int64).self) {
            probe = (Int(documents), Int(matches))
        }
        return probe
    }

    /// Whether a query may match a good part of the documents: a prefix of 3 letters or fewer.
    static func mayBeCommon(_ groups: [SourceGroup]) -> Bool {
        groups.contains { $0.structure.groups.joined().contains { $0.isPrefix && ($0.words.last?.count ?? 0) <= 3 } }
    }
    /// What reading a row costs, relatively: in a walk of a btree (newest first, the heap
    /// mostly in order), and through GIN (a bitmap, then the heap, then a sort of the keys).
    /// Measured at 941,272 documents: about 1.2 and 3 µs.
    static let walkRowCost = 1.0, indexRowCost = 2.5

    /// About how many documents `sources` of the `of` sources hold (the planner's count of
    /// the table's rows, shared evenly: it only chooses between two ways of reading).
    private func estimatedDocuments(sources: Int, of all: Int, _ connection: PostgresConnection) async throws -> Double {
        var rows = 0.0
        var binds = SQLBinds()
        let sql = "SELECT greatest(reltuples, 0)::float8 FROM pg_class WHERE oid = to_regclass(\(binds.add(table)))"
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger).decode(Double.self) { rows = value }
        return rows * Double(max(sources, 1)) / Double(max(all, 1))
    }

    /// An entity's ranked matches: the best `needed`, and how many each source has.
    struct Ranking {
        var candidates: [Candidate] = []
        var bySource: [String: Int] = [:]
        var ranked = 0
    }

    /// Ranks the rows of `relation` (`d`: source, object_key, vector, boosts): the best `needed` by
    /// score, and the rows by source, in one statement.
    private func rank(_ groups: [SourceGroup], relation: String, needed: Int, entity: String, _ refinements: Refinements, _ binds: inout SQLBinds,
                      _ connection: PostgresConnection) async throws -> Ranking {
        let score = needed == 0 ? "0" : scoreSQL(groups, entity: entity, refinements, &binds)
        let sortKey = sortKeySQL(entity: entity, refinements, &binds)
        let pageOrder = Self.pageOrder(refinements.order)
        let sql = """
            WITH ranked AS (SELECT d.source, d.object_key, (\(score))::float8 AS score, \(sortKey) AS sk FROM \(relation))
            SELECT * FROM (SELECT r.source, r.object_key, r.score, NULL::int8, r.sk->>0, r.sk->>1, r.sk->>2 FROM ranked r
                           ORDER BY \(pageOrder) LIMIT \(binds.add(min(needed, Int(Int64.max))))) page
            UNION ALL SELECT r.source, NULL, NULL, count(*), NULL, NULL, NULL FROM ranked r GROUP BY r.source
            """
        var ranking = Ranking()
        for try await (source, key, score, matches, kind, first, second) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((String, String?, Double?, Int64?, String?, String?, String?).self) {
            if let key, let score {
                ranking.candidates.append(Candidate(sortKey: PostgresAttributes.value(class: kind, first: first, second: second),
                                                    score: score, source: source, entity: entity, key: key))
            } else if let matches {
                ranking.bySource[source, default: 0] += Int(matches)
                ranking.ranked += Int(matches)
            }
        }
        return ranking
    }

    /// The documents a walk reads (`d` is `documents`): the entity's, of `sources` (all if nil),
    /// one source as an equality so that `documents_source_newest` serves it.
    private func scopeCondition(entity: String, sources: [String]?, _ binds: inout SQLBinds) -> String {
        var scope = "d.entity = \(binds.add(entity))"
        if let sources {
            scope += sources.count == 1 ? " AND d.source = \(binds.add(sources[0]))" : " AND d.source = ANY(\(binds.add(sources)))"
        }
        return scope
    }

    /// The WHERE condition of an entity's matches (`d` is `documents`): with `everySource`
    /// (one group holds every source) no source condition, and one source as an equality, so
    /// that the planner may walk `(entity, token)` or `(source, entity, token)`.
    func matchCondition(_ groups: [SourceGroup], entity: String, everySource: Bool, _ refinements: Refinements,
                                _ binds: inout SQLBinds) -> String {
        let perGroup = groups.map { group in
            var parts: [String] = []
            if !everySource {
                parts.append(group.sources.count == 1 ? "d.source = \(binds.add(group.sources[0]))" : "d.source = ANY(\(binds.add(group.sources)))")
            }
            parts.append("d.vector @@ \(binds.add(group.compiled.match))::tsquery")
            if let recheck = group.compiled.recheck { parts.append(recheck.sql(&binds)) }
            if let filter = refinements.filter { parts.append(filterCondition(filter, sources: group.sources, entity: entity, refinements, &binds)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        }
        return "d.entity = \(binds.add(entity)) AND (" + perGroup.joined(separator: " OR ") + ")"
    }

    /// `filter` on the documents of `entity` in `sources`: one condition for the sources whose
    /// attributes compare alike (the usual case: one), else one per kind, by source. `false`
    /// where the entity does not declare an attribute the filter names.
    private func filterCondition(_ filter: SearchFilter, sources: [String], entity: String, _ refinements: Refinements,
                                 _ binds: inout SQLBinds) -> String {
        let kinds = Dictionary(grouping: sources) { refinements.comparisons[$0]?[entity] ?? [:] }
        if kinds.count == 1 { return PostgresAttributes.condition(filter, comparisons: kinds.first!.key, &binds) ?? "false" }
        return "(" + kinds.sorted { $0.value[0] < $1.value[0] }.map { comparisons, members in
            let condition = PostgresAttributes.condition(filter, comparisons: comparisons, &binds) ?? "false"
            return "(d.source = ANY(\(binds.add(members))) AND \(condition))"
        }.joined(separator: " OR ") + ")"
    }

    /// The value a match is sorted on (`d.attributes`' element of the sort column's attribute),
    /// or NULL without a sort column.
    func sortKeySQL(entity: String, _ refinements: Refinements, _ binds: inout SQLBinds) -> String {
        guard let keys = refinements.sortKeys[entity], !keys.isEmpty else { return "NULL::jsonb" }
        let bySource = Dictionary(grouping: keys.keys.sorted()) { keys[$0]! }
        if bySource.count == 1 { return "d.attributes->\(binds.add(bySource.first!.key))" }
        return "CASE " + bySource.sorted { $0.key < $1.key }.map { key, sources in
            "WHEN d.source = ANY(\(binds.add(sources))) THEN d.attributes->\(binds.add(key))"
        }.joined(separator: " ") + " END"
    }

    /// The order of object keys among ties: integer keys by their value (as the local search
    /// breaks ties by rowid), before other keys, which go by their text.
    static let keyOrder = "(CASE WHEN r.object_key LIKE 'i:%' THEN substr(r.object_key, 3)::numeric END), r.object_key"

    /// Whether object key `a` comes before `b` among ties (``keyOrder``).
    static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        let x = a.hasPrefix("i:") ? Int64(a.dropFirst(2)) : nil, y = b.hasPrefix("i:") ? Int64(b.dropFirst(2)) : nil
        switch (x, y) {
        case let (x?, y?): return x != y ? x < y : a < b
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return a < b
        }
    }

    /// The order of an entity's page: by the sort column's value (NULL last, then SQLite's
    /// order of classes and, within one, of numbers and bytes), then by score; constant SQL.
    static func pageOrder(_ order: SearchOrder) -> String {
        sortOrder(order) + "r.score DESC, r.source, \(Self.keyOrder)"
    }

    /// The sort column's part of a page's ORDER BY (empty without one), a comma after it.
    static func sortOrder(_ order: SearchOrder) -> String {
        guard case let .column(_, descending) = order else { return "" }
        let direction = descending ? " DESC" : ""
        return "r.sk IS NULL, (r.sk->>0)::int\(direction), CASE WHEN r.sk->>0 = '1' THEN (r.sk->1)::numeric END\(direction), "
            + "(CASE WHEN r.sk->>0 <> '1' THEN coalesce(r.sk->>2, r.sk->>1) END) COLLATE \"C\"\(direction), "
    }

    /// A match's score (`d`: its source and vector), by its source's compiled query, times
    /// `1 + Σ weight × boost` of its source's ranking hints for `entity`, as locally
    /// (``SearchlightHistory/SearchlightModel/RankingHint``; ``boostSQL(_:)``).
    func scoreSQL(_ groups: [SourceGroup], entity: String, _ refinements: Refinements, _ binds: inout SQLBinds) -> String {
        func score(_ group: SourceGroup) -> String {
            let rank = rankSQL(group, &binds)
            let kinds = Dictionary(grouping: group.sources) { refinements.hints[$0]?[entity] ?? [] }
            if kinds.count == 1 { return boostSQL(kinds.first!.key, now: refinements.now, &binds).map { "\(rank) * \($0)" } ?? rank }
            return "\(rank) * CASE " + kinds.sorted { $0.value[0] < $1.value[0] }.map { hints, members in
                "WHEN d.source = ANY(\(binds.add(members))) THEN \(boostSQL(hints, now: refinements.now, &binds) ?? "1")"
            }.joined(separator: " ") + " END"
        }
        return groups.count == 1
            ? score(groups[0])
            : "CASE " + groups.map { "WHEN d.source = ANY(\(binds.add($0.sources))) THEN \(score($0))" }.joined(separator: " ") + " END"
    }

    /// `(1 + Σ weight × boost)` of `hints`, each reading its number in `d.boosts` (what the
    /// sink computed with SQLite: a date as unix seconds): `ln(1 + max(0, value))` for a
    /// number, `0.5 ^ (max(0, now - value) / 86400 / halfLifeDays)` for a date, 0 for none. A
    /// date so old that its boost is below every double is 0 (PostgreSQL's `power` would
    /// report the underflow).
    private func boostSQL(_ hints: [SearchlightModel.RankingHint], now: Double, _ binds: inout SQLBinds) -> String? {
        guard !hints.isEmpty else { return nil }
        let terms = hints.enumerated().map { index, hint -> String in
            let value = "(d.boosts->>\(binds.add(index))::int)::float8"
            let weight = "\(binds.add(String(hint.weight)))::float8"
            // (`greatest` skips a NULL: a value that is none must be tested first.)
            guard let days = hint.halfLifeDays else { return "\(weight) * CASE WHEN \(value) IS NULL THEN 0 ELSE ln(1 + greatest(0, \(value))) END" }
            // (A date beyond ±10^300 is as far as 10^300: the boost is the same, and the subtraction cannot overflow.)
            let date = "greatest(-1e300::float8, least(1e300::float8, \(value)))"
            let halvings = "(greatest(0, \(binds.add(String(now)))::float8 - \(date)) / 86400 / \(binds.add(String(days)))::float8)"
            return "\(weight) * CASE WHEN \(value) IS NULL OR \(halvings) > 1100 THEN 0 ELSE power(0.5, \(halvings)) END"
        }
        return "(1 + " + terms.joined(separator: " + ") + ")"
    }

    private func rankSQL(_ group: SourceGroup, _ binds: inout SQLBinds) -> String {
        "ts_rank('{0.1,0.25,0.5,1.0}'::float4[], d.vector, \(binds.add(group.compiled.rank))::tsquery, 1)"
    }

    /// The page's hits: titles, highlighted titles and snippets (`ts_headline` chooses the
    /// fragment of `body`; the highlighting is ``PostgresHighlighter``'s).
    private func hits(_ page: [Candidate], groups exact: [SourceGroup], corrected: [SourceGroup], _ connection: PostgresConnection) async throws -> [PostgresSearchHit] {
        guard !page.isEmpty else { return [] }
        // The fragment is chosen with the corrected query's words (those of the typo tier's hits too).
        let groups = corrected
        var binds = SQLBinds()
        var headline = "''"
        if options.snippets {
            let query = groups.count == 1
                ? "\(binds.add(headlineQuery(groups[0])))::tsquery"
                : "CASE " + groups.map { "WHEN d.source = ANY(\(binds.add($0.sources))) THEN \(binds.add(headlineQuery($0)))::tsquery" }.joined(separator: " ") + " END"
            let cjk = groups.contains { !$0.compiled.highlights.cjkRuns.isEmpty }
            let words = min(max(options.snippetTokens, 1), 64) * (cjk ? 5 : 2) / 2
            let settings = "MaxFragments=1, MaxWords=\(max(words, 2)), MinWords=\(max(words / 2, 1)), ShortWord=0, StartSel=\u{2}, StopSel=\u{3}, FragmentDelimiter=\u{4}"
            headline = "ts_headline('simple', d.body, \(query), \(binds.add(settings)))"
        }
        let sql = """
            SELECT d.source, d.entity, d.object_key, d.title,
                   \(headline), left(d.body, 64), right(d.body, 64)
            FROM \(table) d JOIN unnest(\(binds.add(page.map(\.source))), \(binds.add(page.map(\.entity))), \(binds.add(page.map(\.key)))) AS p(source, entity, object_key)
              ON d.source = p.source AND d.entity = p.entity AND d.object_key = p.object_key
            """
        struct Row { var title: String?; var headline: String; var start: String; var end: String }
        var rows: [String: Row] = [:]
        for try await (source, entity, key, title, headline, start, end) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((String, String, String, String?, String, String, String).self) {
            rows[source + "\u{0}" + entity + "\u{0}" + key] = Row(title: title, headline: headline, start: start, end: end)
        }
        var hits: [PostgresSearchHit] = []
        for candidate in page {
            // (One snapshot: the ranking's rows are all there.)
            guard let row = rows[candidate.source + "\u{0}" + candidate.entity + "\u{0}" + candidate.key],
                  let group = (candidate.typos > 0 ? corrected : exact).first(where: { $0.sources.contains(candidate.source) }) else {
                throw SearchlightError(.postgresError, "PostgreSQL lost document \(candidate.key) of \(candidate.entity) in \(candidate.source) during a search")
            }
            let highlighter = PostgresHighlighter(analyzer: group.analyzer, start: options.highlightStart, end: options.highlightEnd)
            let terms = group.compiled.highlights
            let preparedTitle = row.title.map(group.analyzer.prepare)
            let titleHighlight = preparedTitle.map { options.snippets ? highlighter.highlight($0, terms) : SearchTextAnalyzer.display($0) }
            var snippet: String
            if !options.snippets {
                snippet = ""
            } else if row.start.isEmpty {
                snippet = titleHighlight ?? ""
            } else {
                let fragment = String(String.UnicodeScalarView(row.headline.unicodeScalars.filter { $0 != "\u{2}" && $0 != "\u{3}" }))
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                snippet = highlighter.highlight(fragment, terms)
                if !Self.sameEdge(fragment, row.start, atStart: true) { snippet = options.ellipsis + snippet }
                if !Self.sameEdge(fragment, row.end, atStart: false) { snippet += options.ellipsis }
            }
            var hit = PostgresSearchHit(source: candidate.source, entity: candidate.entity, objectID: Self.objectID(key: candidate.key),
                                        title: preparedTitle.map(SearchTextAnalyzer.display), titleHighlight: titleHighlight,
                                        snippet: snippet, score: candidate.score)
            hit.typos = candidate.typos
            hits.append(hit)
        }
        return hits
    }

    private func headlineQuery(_ group: SourceGroup) -> String {
        group.compiled.headline.isEmpty ? PostgresQueryCompiler.quoted("\u{1F}", prefix: false) : group.compiled.headline
    }

    /// Whether `fragment` starts (ends) where the text whose first (last) characters are `edge` does.
    static func sameEdge(_ fragment: String, _ edge: String, atStart: Bool) -> Bool {
        func trimmed(_ text: String) -> [Unicode.Scalar] {
            Array(text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars)
        }
        let a = trimmed(fragment), b = trimmed(edge)
        let count = min(a.count, b.count)
        return atStart ? a.prefix(count).elementsEqual(b.prefix(count)) : a.suffix(count).elementsEqual(b.suffix(count))
    }

    /// The object id that ``PostgresDocument/key(_:)`` wrote.
    static func objectID(key: String) -> ObjectID {
        let value = String(key.dropFirst(2))
        switch key.prefix(2) {
        case "i:": if let integer = Int64(value) { return .integer(integer) }
        case "r:": if let real = Double(value) { return .real(real) }
        case "b:": if let bytes = hexBytes(value) { return .blob(Data(bytes)) }
        // A text key with a NUL: its UTF-8 in hex (PostgreSQL's text holds no NUL).
        case "T:": if let bytes = hexBytes(value) { return .text(String(decoding: bytes, as: UTF8.self)) }
        default: break
        }
        return .text(value)
    }

    /// The bytes of upper- or lower-case hex digits, two per byte; nil if `text` is not that.
    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
