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
/// an entity with more than ``Options/maximumRankedMatches`` matches has only its newest
/// ones ranked (`AND rowid >= ?`, the rowid of the last of them), and a page holds at most
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
        /// ``SearchResults/rankedMatches`` says how many were ranked; counts stay exact.
        public var maximumRankedMatches = 15_000
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
    /// suggestions.
    public func search(_ text: String, asYouType: Bool = false, entities: Set<String>? = nil,
                       limit: Int? = 20, offset: Int = 0, order: SearchOrder = .relevance) throws(SearchlightError) -> SearchResults {
        try search(text, asYouType: asYouType, entities: entities, limit: limit, offset: offset, order: order, explains: true)
    }

    func search(_ text: String, asYouType: Bool, entities: Set<String>?, limit: Int?, offset: Int,
                order: SearchOrder = .relevance, explains: Bool) throws(SearchlightError) -> SearchResults {
        let columns = Set(store.model.entities.filter { entities?.contains($0.name) ?? true }.flatMap { $0.fields.map(\.column) })
        var results = SearchResults.empty
        if let query = SearchQuery(userText: text, asYouType: asYouType, columns: columns) {
            results = try search(query, entities: entities, limit: limit, offset: offset, order: order)
            results.droppedTerms = query.droppedTerms
        } else {
            // Nothing to search for is no error, but bad arguments still are.
            try validate(entities: entities, limit: limit, offset: offset)
            results.droppedTerms = SearchQuery.Parsed(text, asYouType: asYouType, columns: columns, text: .standard).droppedTerms
        }
        if explains, results.total == 0 {
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
    /// - Throws: `invalidQuery` for a raw query SQLite rejects; `unknownEntity`;
    ///   `invalidArgument`; `indexNotBuilt` before the first indexing.
    public func search(_ query: SearchQuery, entities: Set<String>? = nil,
                       limit: Int? = 20, offset: Int = 0, order: SearchOrder = .relevance) throws(SearchlightError) -> SearchResults {
        try validate(entities: entities, limit: limit, offset: offset)
        try migrateIfNeeded()
        do {
            return try store.dbPool.read { db in try run(query, entities: entities, limit: limit, offset: offset, order: order, db) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // FTS5 reports bad syntax, unknown columns and the like as plain SQL errors.
            let reason = error.message ?? "\(error)"
            throw SearchlightError(.invalidQuery, "invalid query \"\(query.isRaw ? query.text : query.expression)\": \(reason)", underlyingError: error)
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
            throw SearchlightError(.unknownEntity, "unknown entity \"\(unknown)\" (the model declares: \(store.model.entities.map(\.name).joined(separator: ", ")))")
        }
    }

    private struct Candidate {
        var score: Double
        var entity: IndexedEntity
        var rowid: Int64
        /// The value sorted on (``SearchOrder/column(_:descending:)``).
        var sortKey: DatabaseValue = .null
        var hit: SearchHit?
    }

    /// Below this many snippets expected from the ranking query (see ``inlinesSnippets``),
    /// snippets come with it; above, a second pass computes them for the returned page only.
    static let inlineSnippetLimit = 200

    /// Whether the ranking query itself should compute snippets and titles. SQLite's
    /// `ORDER BY … LIMIT n` keeps the best `n` rows seen so far and computes a row's other
    /// columns only when it enters them: about `n × (1 + ln(matches / n))` rows when scores
    /// are in no particular rowid order, and every row when `n` ≥ matches. The second pass costs
    /// one more walk of the matches (one more prefix expansion) plus the page's snippets.
    static func inlinesSnippets(matches: Int, needed: Int) -> Bool {
        if matches <= inlineSnippetLimit { return true }
        guard needed < matches else { return false }
        let expected = Double(needed) * (1 + log(Double(matches) / Double(needed)))
        return expected <= Double(inlineSnippetLimit)
    }

    private func run(_ query: SearchQuery, entities names: Set<String>?, limit: Int?, offset: Int, order: SearchOrder, _ db: Database) throws -> SearchResults {
        guard let (schema, layout) = try liveLayout(db) else {
            try store.checkInstalled(in: db) // no index at all: say so if Searchlight was uninstalled
            throw SearchlightError(.indexNotBuilt, "the index has not been built yet: run the indexer first")
        }
        let entities = layout.entities.filter { names?.contains($0.entity.name) ?? true }
        let text = layout.text
        let maximumHits = max(options.maximumHits, 1)
        let rankingCap = max(options.maximumRankedMatches, 1)
        let pageSize = min(limit ?? maximumHits, maximumHits)
        // Saturating: a huge offset (paging past the end) must not overflow and crash.
        let (sum, overflow) = offset.addingReportingOverflow(pageSize)
        let needed = overflow ? Int.max : sum
        let documents = SQLQuoting.identifier(schema.documentTable)
        // A CJK character is a token: snippets of CJK text get more of them.
        let tokens = query.text.unicodeScalars.contains(where: IndexedText.isCJK) ? options.snippetTokens * 5 / 2 : options.snippetTokens
        func hitArguments(_ entity: IndexedEntity) -> StatementArguments {
            let markers: StatementArguments = [options.highlightStart, options.highlightEnd]
            return markers + [options.ellipsis, min(max(tokens, 1), 64)] + (entity.titleIndex == nil ? [] : markers)
        }
        // The sort column, checked in every searched entity's table first.
        var sortKeys: [Int64: String] = [:]
        if case let .column(column, _) = order {
            for entity in entities where !entity.isSuspended {
                sortKeys[entity.id] = try Self.sortKey(entity, column: column, fts: SQLQuoting.identifier(schema.ftsTable(entity.id)), documents: documents, db)
            }
        }
        // The query is parsed once for this index's text; each entity gets its expression
        // (kept for the snippets' pass).
        let parsed = query.parsed(for: text)
        var expressions: [Int64: String] = [:]
        var total = 0, ranked = 0
        var counts: [String: Int] = [:]
        var candidates: [Candidate] = []
        var columnErrors: [DatabaseError] = []
        for entity in entities {
            let fts = SQLQuoting.identifier(schema.ftsTable(entity.id))
            // nil: a term names a field this entity lacks, so nothing of it can match.
            let entityExpression = if let parsed { parsed.expression(columns: Set(entity.fieldColumns.map { $0.lowercased() })) }
                                   else { query.expression(for: text, columns: entity.fieldColumns) } // raw
            guard let expression = entityExpression else { continue }
            expressions[entity.id] = expression
            let count: Int
            do {
                count = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM \(fts) WHERE \(fts) MATCH ?"), arguments: [expression]) ?? 0
            } catch let error as DatabaseError where (error.message ?? "").hasPrefix("no such column") {
                // A raw column filter restricts the search to the entities that have the column.
                columnErrors.append(error)
                counts[entity.entity.name] = 0
                continue
            }
            counts[entity.entity.name] = count
            total += count
            ranked += min(count, rankingCap)
            if needed == 0 || count == 0 { continue }
            var sql = "SELECT \(fts).rowid, rank"
            var arguments: StatementArguments = []
            var orderBy = "rank, \(fts).rowid"
            if case let .column(_, descending) = order {
                // Every row's value is needed to sort: snippets wait for the page.
                sql += ", " + sortKeys[entity.id, default: "NULL"] + " AS searchlight_sort_key"
                orderBy = "searchlight_sort_key IS NULL, searchlight_sort_key\(descending ? " DESC" : ""), " + orderBy
            }
            let inline = order == .relevance && Self.inlinesSnippets(matches: min(count, rankingCap), needed: needed)
            if inline {
                sql += ", " + Self.hitColumns(entity, fts: fts, documents: documents)
                arguments += hitArguments(entity)
            }
            sql += " FROM \(fts) WHERE \(fts) MATCH ?"
            arguments += [expression]
            if count > rankingCap {
                // Rank (or sort) the newest matches only (the highest rowids): bm25 costs about a
                // microsecond a match, and a term in half the documents has tens of thousands.
                let lowest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT rowid FROM \(fts) WHERE \(fts) MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?"),
                                                arguments: [expression, rankingCap - 1]) ?? Int64.min
                sql += " AND \(fts).rowid >= ?"
                arguments += [lowest]
            }
            sql += " ORDER BY \(orderBy) LIMIT ?"
            arguments += [needed]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            while let row = try rows.next() {
                var candidate = Candidate(score: row[1], entity: entity, rowid: row[0])
                if order != .relevance { candidate.sortKey = row[2] }
                if inline { candidate.hit = try hit(row, at: 2, entity: entity, score: candidate.score) }
                candidates.append(candidate)
            }
        }
        if let error = columnErrors.first, columnErrors.count == entities.count { throw error }
        candidates.sort { a, b in
            if case let .column(_, descending) = order, let first = SearchOrder.precedes(a.sortKey, b.sortKey, descending: descending) {
                return first
            }
            if a.score != b.score { return a.score < b.score }
            if a.entity.entity.name != b.entity.entity.name { return a.entity.entity.name < b.entity.entity.name }
            return a.rowid < b.rowid
        }
        var page = Array(candidates.dropFirst(offset).prefix(pageSize))
        // Snippets for the rest of the page: one walk of each entity's matches, computing them
        // for the page's rows only. (`rowid IN (…)` beside MATCH would make FTS5 run the whole
        // query again for every id, prefix expansion included; the `+` keeps it a filter.)
        for entity in entities {
            let missing = page.indices.filter { page[$0].hit == nil && page[$0].entity.id == entity.id }
            guard !missing.isEmpty else { continue }
            let fts = SQLQuoting.identifier(schema.ftsTable(entity.id))
            let rowids = missing.map { page[$0].rowid }
            let columns = Self.hitColumns(entity, fts: fts, documents: documents)
            let sql = """
                SELECT \(fts).rowid, \(columns)
                FROM \(fts) WHERE \(fts) MATCH ? AND \(fts).rowid BETWEEN ? AND ?
                AND +\(fts).rowid IN (SELECT value FROM json_each(?))
                """
            let list = "[" + rowids.map(String.init).joined(separator: ",") + "]"
            let rows = try Row.fetchAll(db.cachedStatement(sql: sql),
                                        arguments: hitArguments(entity) + [expressions[entity.id], rowids.min(), rowids.max(), list])
            var byRowid: [Int64: Row] = [:]
            for row in rows { byRowid[row[0]] = row }
            for index in missing {
                guard let row = byRowid[page[index].rowid] else {
                    throw SearchlightError(.databaseError, "the index lost document \(page[index].rowid) during a search")
                }
                page[index].hit = try hit(row, at: 1, entity: entity, score: page[index].score)
            }
        }
        // Cut at maximumHits while more ranked hits follow: say so.
        let asked = limit ?? Int.max
        let isTruncated = asked > pageSize && offset < ranked && ranked - offset > pageSize
        return SearchResults(total: total, countsByEntity: counts, rankedMatches: ranked, isTruncated: isTruncated, hits: page.compactMap(\.hit))
    }

    /// The SQL of an entity's value of a source column, read by key (``SearchOrder``).
    static func sortKey(_ entity: IndexedEntity, column: String, fts: String, documents: String, _ db: Database) throws -> String {
        let table = entity.entity.table
        guard try db.tableExists(table) else {
            throw SearchlightError(.invalidArgument, "cannot sort by \"\(column)\": table \"\(table)\" of entity \(entity.entity.name) is not there (renamed or dropped since the last indexing: run `searchlight index`, or search without sorting)")
        }
        guard let name = try db.columns(in: table).first(where: { $0.name.caseInsensitiveCompare(column) == .orderedSame })?.name else {
            throw SearchlightError(.invalidArgument, "cannot sort by \"\(column)\": table \"\(table)\" of entity \(entity.entity.name) has no such column (search only the entities that have it)")
        }
        let idColumn = objectID(entity, fts: fts, documents: documents)
        return "(SELECT s.\(SQLQuoting.identifier(name)) FROM \(SQLQuoting.identifier(table)) s WHERE s.\(SQLQuoting.identifier(entity.entity.primaryKey)) = \(idColumn))"
    }

    /// The columns of a hit, after the rowid: snippet, title, highlighted title, object id
    /// (arguments: start, end, ellipsis, tokens, and start, end if the entity has a title).
    static func hitColumns(_ entity: IndexedEntity, fts: String, documents: String) -> String {
        let title = entity.titleIndex.map { "\(fts).\(SQLQuoting.identifier(entity.fieldColumns[$0]))" } ?? "NULL"
        let highlight = entity.titleIndex.map { "highlight(\(fts), \($0), ?, ?)" } ?? "NULL"
        return "snippet(\(fts), -1, ?, ?, ?, ?), \(title), \(highlight), \(objectID(entity, fts: fts, documents: documents))"
    }

    /// A hit from the columns of ``hitColumns`` that start at `column`; `score` is the rank. Stored
    /// text is shown as people read it (``IndexedText/display(_:highlightStart:highlightEnd:)``).
    private func hit(_ row: Row, at column: Int, entity: IndexedEntity, score: Double) throws -> SearchHit {
        guard let objectID = ObjectID.fromDatabaseValue(row[column + 3]) else {
            throw SearchlightError(.databaseError, "the index lost a document of \(entity.entity.name) during a search")
        }
        let title: String? = row[column + 1]
        let titleHighlight: String? = row[column + 2]
        let snippet: String = row[column] ?? ""
        return SearchHit(entity: entity.entity.name, objectID: objectID, title: title.map { IndexedText.display($0) },
                         titleHighlight: titleHighlight.map { IndexedText.display($0, highlightStart: options.highlightStart, highlightEnd: options.highlightEnd) },
                         snippet: IndexedText.display(snippet, highlightStart: options.highlightStart, highlightEnd: options.highlightEnd),
                         score: -score)
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
