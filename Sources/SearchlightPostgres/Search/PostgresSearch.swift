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
/// `REPEATABLE READ` transaction (counts, ranking and snippets see one snapshot):
/// ```sql
/// SELECT d.source, d.entity, count(*) FROM documents d              -- exact counts (GIN)
///   WHERE d.entity = ANY($1) AND (d.source = ANY($2) AND d.vector @@ $3::tsquery AND <CJK check>)
///   GROUP BY d.source, d.entity;
/// SELECT source, object_key, score FROM (                         -- per entity with matches
///   SELECT d.source, d.object_key, ts_rank('{0.1,0.25,0.5,1}', d.vector, $4::tsquery, 1) AS score
///   FROM (SELECT * FROM documents d WHERE d.entity = $5 AND <as above>
///         ORDER BY d.token DESC, d.source, d.object_key LIMIT 15000) d   -- only past the cap
/// ) r ORDER BY score DESC, source, object_key LIMIT $6;            -- offset + page size
/// SELECT …, ts_headline('simple', d.body, $7::tsquery, $8) FROM documents d
///   JOIN unnest($9::text[], $10::text[], $11::text[]) p …;           -- the page's snippets
/// ```
///
/// **Ranking** differs from the local bm25: `ts_rank` weighs each matched lexeme by its
/// field's weight class (`{D, C, B, A} = {0.1, 0.25, 0.5, 1.0}`, ``PostgresDocument/weightClass(_:maximum:)``)
/// and by how often it occurs, but knows nothing of how rare a word is across documents (no
/// IDF: a rare word counts as much as a common one), and divides by `1 + log(length)` of the
/// document (normalization 1) where bm25 compares a document's length with the average.
/// Scores are comparable within one search only. Ties go by entity, source, then object key.
///
/// **Bounds**, as locally: an entity with more than ``Options/maximumRankedMatches`` matches
/// has only its newest ones ranked (the highest history tokens: the objects changed last
/// in their source); counts stay exact; a page holds at most ``Options/maximumHits`` hits.
public struct PostgresSearch: Sendable {
    /// How snippets look, and the bounds of every search (as ``Searchlight/SearchIndex/Options``).
    public struct Options: Hashable, Sendable {
        public var highlightStart = "["
        public var highlightEnd = "]"
        public var ellipsis = "…"
        /// Words per snippet (1 to 64; CJK characters are words: a query with CJK text gets 2.5 times as many).
        public var snippetTokens = 12
        /// At most this many matches of one entity are ranked: those with the highest history tokens.
        public var maximumRankedMatches = 15_000
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
    ///
    /// - Parameters:
    ///   - sources: only these sources (all if `nil`); one that PostgreSQL does not hold is an error.
    ///   - entities: only these entities (all if `nil`); one that no searched source declares is an error.
    ///   - limit: at most this many hits (`nil`: no limit); never more than ``Options/maximumHits``.
    ///   - offset: skip this many hits (paging).
    /// - Throws: `invalidArgument`, `unknownEntity`, `notInstalled` (no sink wrote to this schema
    ///   yet), `postgresError` (PostgreSQL failed: the connection, the server; as the sink says).
    public func search(_ text: String, asYouType: Bool = false, sources: Set<String>? = nil, entities: Set<String>? = nil,
                       limit: Int? = 20, offset: Int = 0) async throws(SearchlightError) -> PostgresSearchResults {
        if let limit, limit < 0 { throw SearchlightError(.invalidArgument, "invalid limit \(limit): it must not be negative") }
        if offset < 0 { throw SearchlightError(.invalidArgument, "invalid offset \(offset): it must not be negative") }
        do {
            return try await client.withConnection { connection in
                try await connection.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
                do {
                    let results = try await run(text, asYouType: asYouType, sources: sources, entities: entities,
                                                limit: limit, offset: offset, connection)
                    try await connection.query("COMMIT", logger: logger)
                    return results
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch let error as SearchlightError {
            throw error
        } catch let error as PSQLError {
            if error.serverInfo?[.sqlState] == "42P01" || error.serverInfo?[.sqlState] == "3F000" {
                throw SearchlightError(.notInstalled, "PostgreSQL holds no Searchlight documents in schema \"\(schema)\": run `searchlight-postgres sink` first", underlyingError: error)
            }
            throw SearchlightError(.postgresError, "search on PostgreSQL failed: \(PostgresErrors.describe(error))", underlyingError: error)
        } catch is CancellationError {
            throw SearchlightError(.cancelled, "search on PostgreSQL: cancelled")
        } catch {
            throw SearchlightError(.postgresError, "search on PostgreSQL failed: \(PostgresErrors.describe(error))", underlyingError: error)
        }
    }

    // MARK: - The search

    /// Sources whose models read text alike, searched with one compiled query.
    struct SourceGroup {
        var sources: [String]
        var analyzer: SearchTextAnalyzer
        var compiled: PostgresQueryCompiler.Compiled
    }

    struct Candidate {
        var score: Double
        var source: String
        var entity: String
        var key: String
    }

    private var table: String { PostgresSchema.quoted(schema) + ".documents" }

    private func run(_ text: String, asYouType: Bool, sources names: Set<String>?, entities: Set<String>?,
                     limit: Int?, offset: Int, _ connection: PostgresConnection) async throws -> PostgresSearchResults {
        // Each source's model.
        var binds = SQLBinds()
        var sql = "SELECT source, model::text FROM \(PostgresSchema.quoted(schema)).sources"
        if let names { sql += " WHERE source = ANY(\(binds.add(names.sorted())))" }
        var models: [(String, SearchlightModel)] = []
        for try await (source, json) in try await connection.query(PostgresQuery(unsafeSQL: sql + " ORDER BY source", binds: binds.bindings), logger: logger).decode((String, String).self) {
            models.append((source, try SearchlightModel(jsonData: Data(json.utf8))))
        }
        if let names, let unknown = names.sorted().first(where: { name in !models.contains { $0.0 == name } }) {
            throw SearchlightError(.invalidArgument, "unknown source \"\(unknown)\": PostgreSQL holds no documents of it (\(models.isEmpty && names.count == 1 ? "no sink wrote it yet" : "check the name"))")
        }
        let declared = Set(models.flatMap { $0.1.entities.map(\.name) })
        if let unknown = entities?.sorted().first(where: { !declared.contains($0) }) {
            throw SearchlightError(.unknownEntity, "unknown entity \"\(unknown)\" (the searched sources declare: \(declared.sorted().joined(separator: ", ")))")
        }
        let searched = entities ?? declared
        var results = PostgresSearchResults(total: 0, countsByEntity: Dictionary(uniqueKeysWithValues: searched.map { ($0, 0) }),
                                            countsBySource: Dictionary(uniqueKeysWithValues: models.map { ($0.0, 0) }),
                                            rankedMatches: 0, isTruncated: false, hits: [])
        let columns = Set(models.flatMap { $0.1.entities.filter { searched.contains($0.name) }.flatMap { $0.fields.map(\.column) } })
        guard let query = SearchQuery(userText: text, asYouType: asYouType, columns: columns) else { return results }
        results.droppedTerms = query.droppedTerms

        // One compiled query per kind of text (tokenizer, Chinese variants).
        var groups: [SourceGroup] = []
        let byText = Dictionary(grouping: models) { "\($0.1.tokenizer)\u{0}\($0.1.foldChineseVariants)" }
        for key in byText.keys.sorted() {
            let members = byText[key]!
            let model = members[0].1
            let fields = Set(members.flatMap { $0.1.entities.filter { searched.contains($0.name) }.flatMap { $0.fields.map { $0.column.lowercased() } } })
            let analyzer = SearchTextAnalyzer(model: model)
            guard let structure = query.structure(for: model),
                  let compiled = PostgresQueryCompiler(analyzer: analyzer, fields: fields.sorted()).compile(structure) else { continue }
            groups.append(SourceGroup(sources: members.map(\.0), analyzer: analyzer, compiled: compiled))
        }
        guard !groups.isEmpty, !searched.isEmpty else { return results }

        // Exact counts, through the GIN index.
        binds = SQLBinds()
        let condition = matchCondition(groups, entities: searched.sorted(), &binds)
        var counts: [String: Int] = [:]
        let countSQL = "SELECT d.source, d.entity, count(*) FROM \(table) d WHERE \(condition) GROUP BY d.source, d.entity"
        for try await (source, entity, count) in try await connection.query(PostgresQuery(unsafeSQL: countSQL, binds: binds.bindings), logger: logger).decode((String, String, Int64).self) {
            results.countsBySource[source, default: 0] += Int(count)
            results.countsByEntity[entity, default: 0] += Int(count)
            counts[entity, default: 0] += Int(count)
            results.total += Int(count)
        }
        let cap = max(options.maximumRankedMatches, 1)
        results.rankedMatches = counts.values.reduce(0) { $0 + min($1, cap) }

        // Each entity's best `needed`, of its newest `cap` matches.
        let pageSize = min(limit ?? max(options.maximumHits, 1), max(options.maximumHits, 1))
        let (sum, overflow) = offset.addingReportingOverflow(pageSize)
        let needed = overflow ? Int.max : sum
        var candidates: [Candidate] = []
        if needed > 0 {
            for (entity, count) in counts.sorted(by: { $0.key < $1.key }) where count > 0 {
                binds = SQLBinds()
                let condition = matchCondition(groups, entities: [entity], &binds)
                let rank = groups.count == 1
                    ? rankSQL(groups[0], &binds)
                    : "CASE " + groups.map { "WHEN d.source = ANY(\(binds.add($0.sources))) THEN \(rankSQL($0, &binds))" }.joined(separator: " ") + " END"
                let from = count > cap
                    ? "(SELECT * FROM \(table) d WHERE \(condition) ORDER BY d.token DESC, d.source, d.object_key LIMIT \(binds.add(cap))) d"
                    : "\(table) d WHERE \(condition)"
                let sql = """
                    SELECT r.source, r.object_key, r.score FROM (
                      SELECT d.source, d.object_key, (\(rank))::float8 AS score FROM \(from)
                    ) r ORDER BY r.score DESC, r.source, r.object_key LIMIT \(binds.add(min(needed, Int(Int64.max))))
                    """
                for try await (source, key, score) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger).decode((String, String, Double).self) {
                    candidates.append(Candidate(score: score, source: source, entity: entity, key: key))
                }
            }
        }
        candidates.sort { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.entity != b.entity { return a.entity < b.entity }
            if a.source != b.source { return a.source < b.source }
            return a.key < b.key
        }
        let page = Array(candidates.dropFirst(offset).prefix(pageSize))
        let asked = limit ?? Int.max
        results.isTruncated = asked > pageSize && offset < results.rankedMatches && results.rankedMatches - offset > pageSize
        results.hits = try await hits(page, groups: groups, connection)
        return results
    }

    /// The WHERE condition of the searched entities' matches (`d` is `documents`).
    private func matchCondition(_ groups: [SourceGroup], entities: [String], _ binds: inout SQLBinds) -> String {
        let perGroup = groups.map { group in
            var parts = ["d.source = ANY(\(binds.add(group.sources)))", "d.vector @@ \(binds.add(group.compiled.match))::tsquery"]
            if let recheck = group.compiled.recheck { parts.append(recheck.sql(&binds)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        }
        return "d.entity = ANY(\(binds.add(entities))) AND (" + perGroup.joined(separator: " OR ") + ")"
    }

    private func rankSQL(_ group: SourceGroup, _ binds: inout SQLBinds) -> String {
        "ts_rank('{0.1,0.25,0.5,1.0}'::float4[], d.vector, \(binds.add(group.compiled.rank))::tsquery, 1)"
    }

    /// The page's hits: titles, highlighted titles and snippets (`ts_headline` chooses the
    /// fragment of `body`; the highlighting is ``PostgresHighlighter``'s).
    private func hits(_ page: [Candidate], groups: [SourceGroup], _ connection: PostgresConnection) async throws -> [PostgresSearchHit] {
        guard !page.isEmpty else { return [] }
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
                  let group = groups.first(where: { $0.sources.contains(candidate.source) }) else {
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
            hits.append(PostgresSearchHit(source: candidate.source, entity: candidate.entity, objectID: Self.objectID(key: candidate.key),
                                          title: preparedTitle.map(SearchTextAnalyzer.display), titleHighlight: titleHighlight,
                                          snippet: snippet, score: candidate.score))
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
