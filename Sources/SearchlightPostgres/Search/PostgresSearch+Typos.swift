import Foundation
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory

/// The typo tier of a search on PostgreSQL (``Searchlight/TypoTolerance``), as locally: after
/// every exact match, the matches only the corrections find, fewer typos first, then (with a
/// sort column) its value, then the matches of likely corrections, then score. The words
/// corrected and their corrections are chosen by the local rules (``Searchlight/TypoTolerance``)
/// from PostgreSQL's vocabulary (``PostgresNeighbourhood``): the same words as locally.
extension PostgresSearch {
    /// The corrections of one source group's query.
    struct TypoPlan {
        var corrections: [SearchCorrection] = []
        var isBounded = false
        /// Each group's terms with their corrections ORed in.
        var tolerant: SearchQuery.Structure
        /// The groups with corrections, and for each: the group as typed, with its corrections
        /// of 1 edit, and with its likely ones (nil when all or none are).
        var corrected: [(exact: SearchQuery.Structure, oneEdit: SearchQuery.Structure?, hasTwo: Bool, likely: SearchQuery.Structure?)] = []
    }

    /// The corrections of `structure`'s words for the vocabulary of `sources` (all when nil):
    /// nil when no word is corrected. With an exact match (`exactTotal` > 0), only the words
    /// the vocabulary lacks, and never a group of one term (it matched).
    func typoPlan(_ structure: SearchQuery.Structure, sources: [String]?, exactTotal: Int, _ connection: PostgresConnection) async throws -> TypoPlan? {
        var plan = TypoPlan(tolerant: structure)
        var finder = PostgresNeighbourhood(schema: schema, sources: sources, connection: connection, logger: logger)
        var done: [String: [(term: String, distance: Int, isPrefix: Bool, isLikely: Bool)]] = [:]
        for (g, group) in structure.groups.enumerated() {
            if exactTotal > 0, group.count == 1 { continue }
            var extra: [SearchQuery.Term] = []
            var oneEdit: [SearchQuery.Term] = []
            var likely: [SearchQuery.Term] = []
            var hasOne = false, hasTwo = false, hasLikely = false, hasUnlikely = false
            for term in group {
                guard term.words.count == 1, !term.isQuoted, TypoTolerance.mayCorrect(term.words[0], prefix: term.isPrefix) else { continue }
                let word = PostgresDocument.fold(term.words[0])
                guard TypoTolerance.mayCorrect(word, prefix: term.isPrefix) else { continue }
                let allowed = TypoTolerance.allowedEdits(word)
                let edits = max(allowed, 1)
                let length = allowed == 0 ? word.unicodeScalars.count + 1 : nil
                if exactTotal > 0, try await finder.contains(word, prefix: term.isPrefix) { continue }
                let key = (term.isPrefix ? "*" : "") + word
                var matches: [(term: String, distance: Int, isPrefix: Bool, isLikely: Bool)]
                if let known = done[key] {
                    matches = known
                } else {
                    let found = try await finder.neighbours(of: word, edits: edits, prefix: term.isPrefix, length: length)
                        .filter { $0.distance > 0 && TypoTolerance.isCorrectable($0.term) }
                    plan.isBounded = plan.isBounded || finder.wasBounded || found.count > TypoTolerance.maximumCorrectionsPerWord
                    let documents = try await finder.documents(found.map { ($0.term, $0.isPrefix) })
                    func count(_ match: PostgresNeighbourhood.Match) -> Int { documents[(match.isPrefix ? "*" : "") + match.term] ?? 0 }
                    matches = found.sorted { a, b in
                        if a.distance != b.distance { return a.distance < b.distance }
                        if count(a) != count(b) { return count(a) > count(b) }
                        return a.term < b.term
                    }.prefix(TypoTolerance.maximumCorrectionsPerWord).map {
                        ($0.term, $0.distance, $0.isPrefix, $0.distance == 1 && TypoTolerance.isLikelyEdit(of: $0.term, into: word))
                    }
                    done[key] = matches
                    if !matches.isEmpty {
                        plan.corrections.append(SearchCorrection(word: word + (term.isPrefix ? "*" : ""), replacements: matches.map {
                            SearchCorrection.Replacement(text: $0.term + ($0.isPrefix ? "*" : ""), typos: $0.distance)
                        }))
                    }
                }
                for match in matches {
                    let corrected = SearchQuery.Term(words: [match.term], isPrefix: match.isPrefix, field: term.field, isQuoted: true)
                    extra.append(corrected)
                    if match.distance == 1 { oneEdit.append(corrected); hasOne = true } else { hasTwo = true }
                    if match.isLikely { likely.append(corrected); hasLikely = true } else { hasUnlikely = true }
                }
            }
            guard !extra.isEmpty else { continue }
            plan.tolerant.groups[g] += extra
            func only(_ terms: [SearchQuery.Term]) -> SearchQuery.Structure { SearchQuery.Structure(groups: [group + terms], exclusions: [], droppedTerms: 0) }
            plan.corrected.append((only([]), hasOne ? only(oneEdit) : nil, hasTwo, hasLikely && hasUnlikely ? only(likely) : nil))
        }
        return plan.corrected.isEmpty ? nil : plan
    }

    /// An entity's typo tier: its count (bounded as the exact one's), counts by source, and
    /// its best `needed` matches of the newest ranked ones.
    struct Tier {
        var total = 0
        var isCountExact = true
        var bySource: [String: Int] = [:]
        var ranking = Ranking()
    }

    /// Ranks the matches of the corrected query (`tolerant`) that the exact one (`exact`) did
    /// not find, for `entity`: ordered by typos (for each corrected group, 0 when a match holds
    /// it as typed, 1 when it holds a correction of one edit, else 2), the sort column if any,
    /// then how many of its corrected groups hold no likely correction, then score.
    ///
    /// ```sql
    /// SELECT d.source, count(*) FROM (SELECT d.source FROM documents d WHERE <tolerant> AND NOT (<exact>) LIMIT 10001) d GROUP BY d.source;
    /// WITH ranked AS (SELECT …, (CASE WHEN d.vector @@ $exact THEN 0 WHEN d.vector @@ $oneEdit THEN 1 ELSE 2 END) AS typos, …
    ///                 FROM documents d WHERE d.ctid = ANY(ARRAY(SELECT d.ctid FROM documents d WHERE <tier> ORDER BY <newest> LIMIT 2000)))
    /// SELECT … FROM ranked r ORDER BY r.typos, r.unlikely, r.score DESC, r.source, r.object_key LIMIT $needed;
    /// ```
    func rankTypos(_ tolerant: [SourceGroup], plans: [TypoPlan], exact: [SourceGroup], entity: String, needed: Int, everySource: Bool,
                   _ refinements: Refinements, _ connection: PostgresConnection) async throws -> Tier {
        let countLimit = max(options.maximumCountedMatches, 1), cap = max(options.maximumRankedMatches, 1)
        let oneSource = !everySource && exact.flatMap(\.sources).count == 1
        var binds = SQLBinds()
        func condition(_ binds: inout SQLBinds) -> String {
            "(" + matchCondition(tolerant, entity: entity, everySource: everySource && tolerant.count == exact.count, refinements, &binds)
                + ") AND NOT (" + matchCondition(exact, entity: entity, everySource: everySource, refinements, &binds) + ")"
        }
        var tier = Tier()
        let limit = countLimit == Int.max ? "" : " LIMIT \(binds.add(countLimit + 1))"
        let countSQL = "SELECT d.source, count(*) FROM (SELECT d.source FROM \(table) d WHERE \(condition(&binds))\(limit)) d GROUP BY d.source"
        for try await (source, count) in try await connection.query(PostgresQuery(unsafeSQL: countSQL, binds: binds.bindings), logger: logger)
            .decode((String, Int64).self) {
            tier.bySource[source, default: 0] += Int(count)
            tier.total += Int(count)
        }
        guard tier.total > 0 else { return tier }
        if tier.total > countLimit {
            tier.isCountExact = false
            tier.total = countLimit
            tier.bySource = [:] // counted among the ranked ones below
        }
        binds = SQLBinds()
        let score = needed == 0 ? "0" : scoreSQL(tolerant, entity: entity, refinements, &binds)
        let sortKey = sortKeySQL(entity: entity, refinements, &binds)
        let typos = typoSQL(tolerant, plans: plans, single: everySource && tolerant.count == 1, &binds)
        let sortOrder = Self.sortOrder(refinements.order)
        let sql = """
            WITH ranked AS (SELECT d.source, d.object_key, (\(score))::float8 AS score, \(sortKey) AS sk,
                                   (\(typos.typos))::int AS typos, (\(typos.unlikely))::int AS unlikely
                            FROM \(table) d WHERE d.ctid = ANY(ARRAY(
                                SELECT d.ctid FROM \(table) d WHERE \(condition(&binds)) ORDER BY \(Self.newestOrder(oneSource: oneSource)) LIMIT \(binds.add(cap)))))
            SELECT * FROM (SELECT r.source, r.object_key, r.score, r.typos, r.unlikely, r.sk->>0, r.sk->>1, r.sk->>2, NULL::int8 FROM ranked r
                           ORDER BY r.typos, \(sortOrder) r.unlikely, r.score DESC, r.source, \(Self.keyOrder) LIMIT \(binds.add(min(needed, Int(Int64.max))))) page
            UNION ALL SELECT r.source, NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*) FROM ranked r GROUP BY r.source
            """
        var ranked = 0
        // Counted in full (at most 10,000): read them all through GIN and sort their keys. The
        // planner's other choice, a walk of the newest documents until 2,000 match, misjudges
        // an OR of corrections (`matterial` at 941,272 documents: 5,808 matches, estimated
        // 15,429; the walk read 322,717 rows in 985 ms, GIN and a sort 92 ms).
        if tier.isCountExact { try await connection.query("SET LOCAL enable_indexscan = off", logger: logger) }
        for try await (source, key, score, typos, unlikely, kind, first, second, count) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((String, String?, Double?, Int32?, Int32?, String?, String?, String?, Int64?).self) {
            if let key, let score {
                var candidate = Candidate(sortKey: PostgresAttributes.value(class: kind, first: first, second: second),
                                          score: score, source: source, entity: entity, key: key)
                candidate.typos = Int(typos ?? 1)
                candidate.unlikely = Int(unlikely ?? 0)
                tier.ranking.candidates.append(candidate)
            } else if let count {
                ranked += Int(count)
                if !tier.isCountExact { tier.bySource[source, default: 0] += Int(count) }
            }
        }
        if tier.isCountExact { try await connection.query("SET LOCAL enable_indexscan = on", logger: logger) }
        tier.ranking.ranked = ranked
        return tier
    }

    /// A tier match's typos and unlikely count, as SQL on `d.vector` (and `d.cjk`): for each
    /// corrected group, whether the match holds it as typed, with a correction of one edit, or
    /// only with one of two; and whether it holds a likely correction.
    private func typoSQL(_ tolerant: [SourceGroup], plans: [TypoPlan], single: Bool, _ binds: inout SQLBinds) -> (typos: String, unlikely: String) {
        func holds(_ compiler: PostgresQueryCompiler, _ structure: SearchQuery.Structure, _ binds: inout SQLBinds) -> String {
            guard let compiled = compiler.compile(structure) else { return "false" }
            var parts = ["d.vector @@ \(binds.add(compiled.match))::tsquery"]
            if let recheck = compiled.recheck { parts.append(recheck.sql(&binds)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        }
        var typos: [(sources: [String], sql: String)] = [], unlikely: [(sources: [String], sql: String)] = []
        for (group, plan) in zip(tolerant, plans) {
            var counts: [String] = [], likely: [String] = []
            for corrected in plan.corrected {
                let exact = holds(group.compiler, corrected.exact, &binds)
                if let oneEdit = corrected.oneEdit {
                    let one = holds(group.compiler, oneEdit, &binds)
                    counts.append(corrected.hasTwo ? "CASE WHEN \(exact) THEN 0 WHEN \(one) THEN 1 ELSE 2 END" : "CASE WHEN \(exact) THEN 0 ELSE 1 END")
                } else {
                    counts.append("CASE WHEN \(exact) THEN 0 ELSE 2 END")
                }
                if let structure = corrected.likely { likely.append("CASE WHEN \(holds(group.compiler, structure, &binds)) THEN 0 ELSE 1 END") }
            }
            typos.append((group.sources, counts.isEmpty ? "1" : counts.joined(separator: " + ")))
            unlikely.append((group.sources, likely.isEmpty ? "0" : likely.joined(separator: " + ")))
        }
        func bySource(_ parts: [(sources: [String], sql: String)], _ binds: inout SQLBinds) -> String {
            if single { return parts[0].sql }
            return "CASE " + parts.map { "WHEN d.source = ANY(\(binds.add($0.sources))) THEN \($0.sql)" }.joined(separator: " ") + " END"
        }
        return (bySource(typos, &binds), bySource(unlikely, &binds))
    }
}
