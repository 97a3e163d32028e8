import Foundation
import GRDB
import SearchlightHistory

/// The typo tier of a search (``TypoTolerance``): the matches that only the query's
/// corrections find, after every exact match.
extension SearchIndex {
    /// The corrections of a query: its terms with the index words near them, and which groups
    /// (the ANDed parts of the query) have some.
    struct TypoPlan {
        var parsed: SearchQuery.Parsed
        var corrections: [SearchCorrection]
        var correctedGroups: [Int]
        var isBounded: Bool
    }

    /// At most this many corrections of one word are searched for (fewest edits first, then the
    /// words most documents hold); results say when a word had more
    /// (``SearchResults/isCorrectionBounded``).
    static let maximumCorrectionsPerWord = 16

    /// The corrections of `query`'s words: the words of 5 letters or more (single words, not
    /// phrases or exclusions), and of 4 into words of 5 that hold them with one more letter,
    /// that the vocabulary lacks, or every such word when the exact query matched nothing
    /// (`exactTotal` 0). nil when nothing is corrected, for raw queries,
    /// and for an index with no vocabulary (trigram or porter, or built before it existed).
    func typoPlan(for query: SearchQuery, exactTotal: Int, in scope: SearchScope, _ db: Database) throws -> TypoPlan? {
        guard !query.isRaw, scope.keepsVocabulary, var parsed = query.parsed(for: scope.text) else { return nil }
        // Made for the first word that may be corrected: most searches have none to check.
        var tokenizer: (any FTS5Tokenizer)?
        var finder: TermNeighbourhood?
        var corrections: [SearchCorrection] = []
        var groups: [Int] = []
        var isBounded = false
        var done: [String: [TermNeighbourhood.Match]] = [:]
        for group in parsed.groups.indices {
            // When the exact query matched, a group of one term matched in some document: its
            // word is in the index, nothing to check (only a word beside an OR may be missing).
            if exactTotal > 0, parsed.groups[group].count == 1 { continue }
            for index in parsed.groups[group].indices {
                let term = parsed.groups[group][index]
                // (Folding keeps or drops letters, never adds a digit: the raw word tells.)
                guard term.words.count == 1, !term.isQuoted, Self.mayCorrect(term.words[0], prefix: term.prefix) else { continue }
                if tokenizer == nil { tokenizer = try db.makeTokenizer(FTS5TokenizerDescriptor(components: scope.text.tokenizerArguments)) }
                // The word as the tokenizer folds it (case, diacritics), as the vocabulary has it.
                let tokens = try tokenizer!.tokenize(query: term.words[0]).filter { !$0.flags.contains(.colocated) }
                guard tokens.count == 1 else { continue }
                let word = tokens[0].token
                guard Self.mayCorrect(word, prefix: term.prefix) else { continue }
                // A word of 4 letters only ever gains one (``TermNeighbourhood/mayHaveLostALetter(_:)``).
                let allowed = TermNeighbourhood.allowedEdits(word)
                let edits = max(allowed, 1)
                let length = allowed == 0 ? word.unicodeScalars.count + 1 : nil
                if finder == nil { finder = try TermNeighbourhood(table: scope.schema.termTable, db) }
                if exactTotal > 0, try finder!.contains(word, prefix: term.prefix) { continue }
                let key = (term.prefix ? "*" : "") + word
                var matches: [TermNeighbourhood.Match]
                if let known = done[key] {
                    matches = known
                } else {
                    // Words as the query's: letters only (no digits, no token characters), no CJK.
                    let found = try finder!.neighbours(of: word, edits: edits, prefix: term.prefix, length: length)
                        .filter { $0.distance > 0 && TermNeighbourhood.isCorrectable($0.term) }
                    isBounded = isBounded || finder!.wasBounded || found.count > Self.maximumCorrectionsPerWord
                    var documents: [String: Int] = [:]
                    for match in found { documents[match.term] = try finder!.documents(match.term, prefix: match.isPrefix) }
                    matches = Array(found.map { match in
                        var match = match
                        match.isLikely = match.distance == 1 && TermNeighbourhood.isLikelyEdit(of: match.term, into: word)
                        return match
                    }.sorted { a, b in
                        if a.distance != b.distance { return a.distance < b.distance }
                        if documents[a.term]! != documents[b.term]! { return documents[a.term]! > documents[b.term]! }
                        return a.term < b.term
                    }.prefix(Self.maximumCorrectionsPerWord))
                    done[key] = matches
                    if !matches.isEmpty {
                        corrections.append(SearchCorrection(word: word + (term.prefix ? "*" : ""), replacements: matches.map {
                            SearchCorrection.Replacement(text: $0.term + ($0.isPrefix ? "*" : ""), typos: $0.distance)
                        }))
                    }
                }
                guard !matches.isEmpty else { continue }
                parsed.groups[group][index].corrections = matches
                if groups.last != group { groups.append(group) }
            }
        }
        guard !groups.isEmpty else { return nil }
        return TypoPlan(parsed: parsed, corrections: corrections, correctedGroups: groups, isBounded: isBounded)
    }

    /// Whether a query word may be corrected: one of 5 letters or more (``TermNeighbourhood/allowedEdits(_:)``),
    /// or, unless it is a prefix, one of 4 that may have lost a letter.
    static func mayCorrect(_ word: String, prefix: Bool) -> Bool {
        TermNeighbourhood.allowedEdits(word) > 0 || (!prefix && TermNeighbourhood.mayHaveLostALetter(word))
    }

    /// Ranks the matches of the corrected query that the exact query (`exact`) did not find:
    /// for each entity, `(tolerant) NOT (exact)`, ordered by typos, then rank. A match's typos
    /// are, for each corrected group, 0 if it holds the group's exact words, else 1 if it holds a
    /// correction one edit away, else 2:
    /// ```sql
    /// SELECT fts.rowid, rank,
    ///   CASE WHEN fts.rowid IN (SELECT rowid FROM fts WHERE fts MATCH '"kernal"') THEN 0
    ///        WHEN fts.rowid IN (SELECT rowid FROM fts WHERE fts MATCH '"kernal" OR "kernel"') THEN 1
    ///        ELSE 2 END AS searchlight_typos
    /// FROM fts WHERE fts MATCH '(("kernal" OR "kernel" OR "kennel")) NOT ("kernal")'
    /// ORDER BY searchlight_typos, rank, fts.rowid LIMIT ?;
    /// ```
    func rankTypos(_ plan: TypoPlan, exact: Ranking, in scope: SearchScope, needed: Int, order: SearchOrder, _ db: Database) throws -> Ranking {
        var tier = Ranking()
        try AlternativesRank.register(db)
        for entity in scope.entities where !entity.isSuspended {
            let columns = Set(entity.fieldColumns.map { $0.lowercased() })
            guard let tolerant = plan.parsed.expression(columns: columns) else { continue }
            let exactExpression = exact.expressions[entity.id]
            guard tolerant != exactExpression else { continue }
            let expression = exactExpression.map { "(\(tolerant)) NOT (\($0))" } ?? tolerant
            tier.expressions[entity.id] = tolerant
            let fts = scope.fts(entity)
            var parts: [String] = []
            var arguments: StatementArguments = []
            for group in plan.correctedGroups {
                let corrections = plan.parsed.groups[group].flatMap(\.corrections)
                let exactGroup = plan.parsed.groupExpression(group, columns: columns, typos: 0)
                let oneEdit = plan.parsed.groupExpression(group, columns: columns, typos: 1)
                let has = (one: corrections.contains { $0.distance == 1 }, two: corrections.contains { $0.distance == 2 })
                guard let exactGroup, let oneEdit else { continue }
                let holds = "\(fts).rowid IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?)"
                switch has {
                case (true, true):
                    parts.append("CASE WHEN \(holds) THEN 0 WHEN \(holds) THEN 1 ELSE 2 END")
                    arguments += [exactGroup, oneEdit]
                case (true, false):
                    parts.append("CASE WHEN \(holds) THEN 0 ELSE 1 END")
                    arguments += [exactGroup]
                case (false, _):
                    parts.append("CASE WHEN \(holds) THEN 0 ELSE 2 END")
                    arguments += [exactGroup]
                }
            }
            // Within a typo count, the matches of likely corrections first (``TermNeighbourhood/isLikelyEdit(of:into:)``).
            var unlikely: [String] = []
            for group in plan.correctedGroups {
                let corrections = plan.parsed.groups[group].flatMap(\.corrections)
                guard corrections.contains(where: \.isLikely), corrections.contains(where: { !$0.isLikely }),
                      let likely = plan.parsed.groupExpression(group, columns: columns, typos: 1, likelyOnly: true) else { continue }
                unlikely.append("CASE WHEN \(fts).rowid IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?) THEN 0 ELSE 1 END")
                arguments += [likely]
            }
            // A word's corrections are alternatives: a match scores the best it holds (``AlternativesRank``).
            let groups = plan.parsed.phraseGroups(columns: columns).map(String.init).joined(separator: ",")
            let weights = entity.weights.map { String($0) }.joined(separator: ", ")
            let typos = TypoOrder(typos: parts.isEmpty ? "1" : "(" + parts.joined(separator: " + ") + ")",
                                  unlikely: unlikely.isEmpty ? "0" : "(" + unlikely.joined(separator: " + ") + ")", arguments: arguments,
                                  rank: "\(AlternativesRank.name)(\(fts), ?" + (weights.isEmpty ? "" : ", " + weights) + ")", rankArguments: [groups])
            let matches = try rankMatches(of: entity, expression: expression, in: scope, needed: needed, order: order,
                                          sortKey: exact.sortKeys[entity.id], typos: typos, db)
            tier.counts[entity.entity.name] = matches.count
            tier.total += matches.count
            tier.ranked += matches.ranked
            tier.isTotalExact = tier.isTotalExact && matches.isCountExact
            tier.candidates += matches.candidates
        }
        return tier
    }
}

extension TermNeighbourhood {
    /// The number of documents that hold `term`, or for a prefix the most that hold one word
    /// starting with it.
    func documents(_ term: String, prefix: Bool) throws -> Int {
        guard prefix else { return try documents(term) }
        return try Int.fetchOne(db.cachedStatement(sql: "SELECT max(\"documents\") FROM \(table) WHERE \"term\" >= ? AND \"term\" < ?"),
                                arguments: [term, term + "\u{10FFFF}"]) ?? 0
    }
}
