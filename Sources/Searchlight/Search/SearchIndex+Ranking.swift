import Foundation
import GRDB
import SearchlightHistory

/// The ranking pass of a search: each entity's matches are counted, and the best ones (by bm25,
/// or by a source column) kept, newest first when there are too many to rank.
extension SearchIndex {
    /// What one search reads: the live generation's tables, its text settings, the entities
    /// searched, and how many tokens a snippet holds.
    struct SearchScope {
        var schema: IndexSchema
        var text: IndexedText
        var entities: [IndexedEntity]
        var snippetTokens: Int
        /// Whether the generation keeps a vocabulary (the typo tier needs it).
        var keepsVocabulary = false
        /// The attribute condition of the search, if any (``restriction(_:)``).
        var filter: SearchFilter? = nil
        /// The time recency hints are measured from, in unix seconds.
        var now: Double = Date().timeIntervalSince1970

        /// The quoted document map table.
        var documents: String { SQLQuoting.identifier(schema.documentTable) }
        /// The quoted FTS5 table of `entity`.
        func fts(_ entity: IndexedEntity) -> String { SQLQuoting.identifier(schema.ftsTable(entity.id)) }
        /// What the filter does to `entity`'s matches (``SearchIndex/restriction(_:entity:schema:fts:)``).
        func restriction(_ entity: IndexedEntity) -> Restriction {
            SearchIndex.restriction(filter, entity: entity, schema: schema, fts: fts(entity))
        }
    }

    /// A match the ranking pass keeps, with its hit once its snippet is computed.
    struct Candidate {
        var score: Double
        var entity: IndexedEntity
        var rowid: Int64
        /// The value sorted on (``SearchOrder/column(_:descending:)``).
        var sortKey: DatabaseValue = .null
        /// Typos of a match of the typo tier (``TypoTolerance``); 0 for an exact match.
        var typos = 0
        /// Of a match of the typo tier, how many of its corrected words hold none of the
        /// likely corrections (``TermNeighbourhood/isLikelyEdit(of:into:)``).
        var unlikely = 0
        var hit: SearchHit?
    }

    /// What the ranking pass found: the candidates in order, each entity's query expression
    /// (the snippets pass reuses it), exact counts, and how many matches were ranked.
    struct Ranking {
        var candidates: [Candidate] = []
        var expressions: [Int64: String] = [:]
        var total = 0
        var ranked = 0
        var counts: [String: Int] = [:]
        /// Whether every entity's count is exact (``Options/maximumCountedMatches``).
        var isTotalExact = true
        /// The SQL of each entity's sort column value (``SearchOrder/column(_:descending:)``).
        var sortKeys: [Int64: String] = [:]
    }

    /// Below this many snippets expected from the ranking query (see ``inlinesSnippets``),
    /// snippets come with it; above, a second pass computes them for the returned page only.
    static let inlineSnippetLimit = 200

    /// How many tokens of snippet work one more walk of a match is worth. A snippet reads its
    /// document's text through the tokenizer (FTS5 looks for sentence breaks in the whole
    /// column); the second pass decodes each match's position lists once more.
    static let tokensPerWalkedMatch = 8.0

    /// Whether the ranking query itself should compute snippets and titles. SQLite's
    /// `ORDER BY … LIMIT n` keeps the best `n` rows seen so far and computes a row's other
    /// columns only when it enters them: about `n × (1 + ln(matches / n))` rows when scores
    /// are in no particular rowid order, and every row when `n` ≥ matches. The second pass costs
    /// one more walk of the matches (one more prefix expansion) plus the page's snippets; the
    /// snippets the inline path computes beyond the page cost their documents' length
    /// (`averageTokens`, from FTS5's own totals): long documents (man pages) take the second pass
    /// even for a few hundred matches, short ones (glosses) the inline path.
    static func inlinesSnippets(matches: Int, needed: Int, averageTokens: Double?) -> Bool {
        guard matches > needed else { return true } // every match is on the page
        let expected = Double(needed) * (1 + log(Double(matches) / Double(needed)))
        if matches > inlineSnippetLimit, expected > Double(inlineSnippetLimit) { return false }
        guard let averageTokens else { return true }
        return (expected - Double(needed)) * averageTokens <= Double(matches) * tokensPerWalkedMatch
    }

    /// The average number of tokens of a document of `fts` (all columns), from the totals
    /// FTS5 keeps for bm25: the record of rowid 1 in its `_data` table holds the number of rows
    /// and each column's token count, as SQLite varints. nil when it cannot be read.
    static func averageTokens(fts table: String, _ db: Database) throws -> Double? {
        guard let record = try Data.fetchOne(db.cachedStatement(sql: "SELECT block FROM \(SQLQuoting.identifier(table + "_data")) WHERE id = 1")) else {
            return nil
        }
        var values: [UInt64] = []
        var index = record.startIndex
        while index < record.endIndex {
            // A SQLite varint: 7 bits a byte, high bit set on all but the last, at most 9 bytes
            // (the ninth gives all 8 of its bits).
            var value: UInt64 = 0
            var length = 0
            while true {
                guard index < record.endIndex else { return nil }
                let byte = record[index]
                index += 1
                length += 1
                if length == 9 { value = (value << 8) | UInt64(byte); break }
                value = (value << 7) | UInt64(byte & 0x7f)
                if byte & 0x80 == 0 { break }
            }
            values.append(value)
        }
        guard values.count >= 2, values[0] > 0 else { return nil }
        return Double(values.dropFirst().reduce(0, &+)) / Double(values[0])
    }

    /// Counts each entity's matches and keeps its best `needed` (at most
    /// ``Options/maximumRankedMatches`` of its newest matches are ranked), merged in order.
    func rank(_ query: SearchQuery, in scope: SearchScope, needed: Int, order: SearchOrder, _ db: Database) throws -> Ranking {
        // The sort column, checked in every searched entity's table first.
        var sortKeys: [Int64: String] = [:]
        if case let .column(column, _) = order {
            for entity in scope.entities where !entity.isSuspended {
                sortKeys[entity.id] = try Self.sortKey(entity, column: column, fts: scope.fts(entity), documents: scope.documents, db)
            }
        }
        // The query is parsed once for this index's text; each entity gets its expression
        // (kept for the snippets' pass).
        let parsed = query.parsed(for: scope.text)
        var expressions: [Int64: String] = [:]
        var total = 0, ranked = 0
        var isTotalExact = true
        var counts: [String: Int] = [:]
        var candidates: [Candidate] = []
        var columnErrors: [DatabaseError] = []
        for entity in scope.entities {
            // nil: a term names a field this entity lacks, so nothing of it can match.
            let entityExpression = if let parsed { parsed.expression(columns: Set(entity.fieldColumns.map { $0.lowercased() })) }
                                   else { query.expression(for: scope.text, columns: entity.fieldColumns) } // raw
            guard let expression = entityExpression else { continue }
            // A filter on attributes this entity lacks (SearchIndex+Filtering.swift).
            if scope.restriction(entity).matchesNothing { counts[entity.entity.name] = 0; continue }
            expressions[entity.id] = expression
            let matches: Matches
            do {
                matches = try rankMatches(of: entity, expression: expression, in: scope, needed: needed, order: order,
                                          sortKey: sortKeys[entity.id], db)
            } catch let error as DatabaseError where (error.message ?? "").hasPrefix("no such column") {
                // A raw column filter restricts the search to the entities that have the column.
                columnErrors.append(error)
                counts[entity.entity.name] = 0
                continue
            }
            counts[entity.entity.name] = matches.count
            total += matches.count
            ranked += matches.ranked
            isTotalExact = isTotalExact && matches.isCountExact
            candidates += matches.candidates
        }
        if let error = columnErrors.first, columnErrors.count == scope.entities.count { throw error }
        Self.sort(&candidates, order: order)
        return Ranking(candidates: candidates, expressions: expressions, total: total, ranked: ranked, counts: counts,
                       isTotalExact: isTotalExact, sortKeys: sortKeys)
    }

    /// Orders candidates: fewer typos first (exact matches before typo matches, whatever the
    /// order), then by the sort column if any, better rank, entity name and rowid.
    static func sort(_ candidates: inout [Candidate], order: SearchOrder) {
        candidates.sort { a, b in
            if a.typos != b.typos { return a.typos < b.typos }
            if case let .column(_, descending) = order, let first = SearchOrder.precedes(a.sortKey, b.sortKey, descending: descending) {
                return first
            }
            if a.unlikely != b.unlikely { return a.unlikely < b.unlikely }
            if a.score != b.score { return a.score < b.score }
            if a.entity.entity.name != b.entity.entity.name { return a.entity.entity.name < b.entity.entity.name }
            return a.rowid < b.rowid
        }
    }

    /// How the typo tier orders its matches (``rankTypos(_:exact:in:needed:order:_:)``): SQL
    /// of a match's typo count, and of how many of its corrected words hold no likely correction.
    struct TypoOrder {
        var typos: String
        var unlikely: String
        var arguments: StatementArguments
        /// What ranks the tier in place of FTS5's `rank` (``AlternativesRank``), with its arguments.
        var rank: String
        var rankArguments: StatementArguments
    }

    /// One entity's matches of an expression: their count (exact, or the counting bound), how
    /// many were ranked, and the best `needed` of them.
    struct Matches {
        var count = 0
        var isCountExact = true
        var ranked = 0
        var candidates: [Candidate] = []
    }

    /// Counts one entity's matches of `expression` and keeps its best `needed` (of its newest
    /// ``Options/maximumRankedMatches``). With `typos` (the typo tier, ``TypoPlan``), the
    /// matches are ordered by their typo count first, and snippets always wait for the page.
    func rankMatches(of entity: IndexedEntity, expression: String, in scope: SearchScope, needed: Int, order: SearchOrder,
                     sortKey: String?, typos: TypoOrder? = nil, _ db: Database) throws -> Matches {
        let rankingCap = max(options.maximumRankedMatches, 1)
        let fts = scope.fts(entity)
        // Filters and ranking hints (SearchIndex+Filtering.swift): a join before MATCH, a score.
        let restriction = scope.restriction(entity)
        if restriction.matchesNothing { return Matches() }
        let score = Self.score(entity, schema: scope.schema, fts: fts, now: scope.now, rank: typos?.rank ?? "rank")
        // Counted up to the bound; past it, only whether the ranking cap applies.
        let countLimit = max(options.maximumCountedMatches, 1)
        let match = " FROM \(fts)" + restriction.join + " WHERE \(fts) MATCH ?"
        var count = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1" + match + " LIMIT ?)"),
                                     arguments: restriction.arguments + [expression, countLimit == Int.max ? -1 : countLimit + 1]) ?? 0
        var isCountExact = count <= countLimit
        // The newest `rankingCap` matches only (the highest rowids), when there are more:
        // bm25 costs about a microsecond a match, and a term in half the documents has tens of
        // thousands. The rowid of the last of them bounds the ranking query.
        var lowest: Int64?
        if !isCountExact || count > rankingCap {
            lowest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(fts).rowid" + match + " ORDER BY \(fts).rowid DESC LIMIT 1 OFFSET ?"),
                                        arguments: restriction.arguments + [expression, rankingCap - 1])
            if lowest == nil {
                // Fewer than `rankingCap`: the ranking walks them all, so they are counted.
                count = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*)" + match), arguments: restriction.arguments + [expression]) ?? 0
                isCountExact = true
            }
        }
        if !isCountExact { count = countLimit }
        var matches = Matches(count: count, isCountExact: isCountExact, ranked: lowest == nil ? count : rankingCap)
        if needed == 0 || count == 0 { return matches }
        var sql = "SELECT \(fts).rowid, " + (score.map { "\($0.sql) AS searchlight_score" } ?? typos.map { "\($0.rank) AS searchlight_score" } ?? "rank")
        var arguments: StatementArguments = (typos?.rankArguments ?? []) + (score?.arguments ?? [])
        // Fewer typos first, then the sort column if any, then matches of likely corrections
        // before the others, then rank.
        var orderBy: [String] = typos == nil ? [] : ["searchlight_typos"]
        if case let .column(_, descending) = order {
            // Every row's value is needed to sort: snippets wait for the page.
            sql += ", " + (sortKey ?? "NULL") + " AS searchlight_sort_key"
            orderBy.append("searchlight_sort_key IS NULL, searchlight_sort_key\(descending ? " DESC" : "")")
        }
        if let typos {
            sql += ", " + typos.typos + " AS searchlight_typos, " + typos.unlikely + " AS searchlight_unlikely"
            arguments += typos.arguments
            orderBy.append("searchlight_unlikely")
        }
        orderBy.append((score == nil && typos == nil ? "rank" : "searchlight_score") + ", \(fts).rowid")
        // FTS5's totals are read only when the count alone would put snippets inline and
        // some of them would fall beyond the page.
        let ranked = matches.ranked
        let inline = try order == .relevance && typos == nil && Self.inlinesSnippets(matches: ranked, needed: needed, averageTokens: nil)
            && (ranked <= needed || Self.inlinesSnippets(matches: ranked, needed: needed,
                                                         averageTokens: Self.averageTokens(fts: scope.schema.ftsTable(entity.id), db)))
        if inline {
            sql += ", " + Self.hitColumns(entity, fts: fts, documents: scope.documents)
            arguments += hitArguments(entity, in: scope)
        }
        sql += " FROM \(fts)" + restriction.join + " WHERE \(fts) MATCH ?"
        arguments += restriction.arguments + [expression]
        if let lowest {
            sql += " AND \(fts).rowid >= ?"
            arguments += [lowest]
        }
        sql += " ORDER BY " + orderBy.joined(separator: ", ") + " LIMIT ?"
        arguments += [needed]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        let typosColumn = order == .relevance ? 2 : 3
        while let row = try rows.next() {
            var candidate = Candidate(score: row[1], entity: entity, rowid: row[0])
            if order != .relevance { candidate.sortKey = row[2] }
            if typos != nil { candidate.typos = row[typosColumn]; candidate.unlikely = row[typosColumn + 1] }
            if inline { candidate.hit = try hit(row, at: 2, entity: entity, score: candidate.score) }
            matches.candidates.append(candidate)
        }
        return matches
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
}
