import Foundation
import GRDB
import SearchlightHistory

extension SearchIndex {
    /// Why user text matched nothing (``SearchExplanation``), with "did you mean" suggestions
    /// from the index's own vocabulary. For each entity's FTS5 table, a temporary `fts5vocab`
    /// table of the connection lists its terms:
    /// ```sql
    /// CREATE VIRTUAL TABLE IF NOT EXISTS temp."searchlight_vocab_<fts table>" USING fts5vocab(main, '<fts table>', 'row');
    /// SELECT term, doc FROM temp."searchlight_vocab_<fts table>" WHERE term >= ? AND term < ?; -- same first two letters
    /// ```
    func explanation(for text: String, asYouType: Bool, columns: Set<String>, entities names: Set<String>?) throws(SearchlightError) -> SearchExplanation {
        let found = try SearchlightError.catching("cannot explain the search") {
            try store.databaseWriter.read { db -> (IndexLayout?, [String: String])? in
                guard let (schema, layout) = try liveLayout(db) else { return nil }
                let parsed = SearchQuery.Parsed(text, asYouType: asYouType, columns: columns, text: layout.text)
                guard layout.text.segmentsCJK, !layout.tokenizer.lowercased().hasPrefix("porter") else { return (layout, [:]) }
                let tables = layout.entities.filter { !$0.isSuspended && (names?.contains($0.entity.name) ?? true) }.map { schema.ftsTable($0.id) }
                return (layout, try Self.corrections(for: parsed, tables: tables, db))
            }
        }
        // (Before the first build, only text with nothing to search for gets this far.)
        let (layout, corrections) = found ?? (nil, [:])
        let rules = layout?.text ?? .standard
        let parsed = SearchQuery.Parsed(text, asYouType: asYouType, columns: columns, text: rules)
        let ignored = parsed.ignored
        let quotedIgnored = ignored.map { "\"\($0)\"" }.joined(separator: ", ")
        let dropped = parsed.droppedTerms > 0 ? " (only the first \(SearchQuery.maximumTerms) terms were read)" : ""
        if parsed.groups.isEmpty {
            let message: String
            if !ignored.isEmpty {
                message = "nothing to search for: \(quotedIgnored) \(ignored.count == 1 ? "has" : "have") no letters or digits, and the index keeps only words (symbols and punctuation separate them)"
            } else if !parsed.negatives.isEmpty {
                message = "nothing to search for: a query of exclusions alone matches nothing"
            } else if text.split(whereSeparator: \.isWhitespace).isEmpty {
                message = "nothing to search for: the query is empty"
            } else if parsed.hasOperators {
                message = "nothing to search for: OR, AND and NOT in capitals are operators (write them in lower case to search for the words)"
            } else {
                message = "nothing to search for: the query has no words"
            }
            return SearchExplanation(reason: .nothingToSearch, message: message + dropped, ignored: ignored)
        }
        if !rules.segmentsCJK {
            // trigram: FTS5 matches a term of fewer than 3 characters with nothing.
            let short = parsed.groups.joined().flatMap(\.words).filter { $0.count < 3 }
            if !short.isEmpty {
                return SearchExplanation(reason: .termTooShort, message: "\(short.map { "\"\($0)\"" }.joined(separator: ", ")) \(short.count == 1 ? "is" : "are") shorter than 3 characters, the shortest term the trigram tokenizer matches", ignored: ignored)
            }
        }
        var suggestions: [String] = []
        if !corrections.isEmpty {
            let suggestion = Self.replacingWords(in: text, corrections)
            if suggestion != text, try search(suggestion, asYouType: asYouType, entities: names, limit: 0, offset: 0, explains: false).total > 0 {
                suggestions.append(suggestion)
            }
        }
        let hint = (suggestions.isEmpty ? "" : "; did you mean \(suggestions.map { $0.contains("\"") ? $0 : "\"\($0)\"" }.joined(separator: " or "))?") + dropped
        if !ignored.isEmpty {
            return SearchExplanation(reason: .partsIgnored, message: "no match (left out, as they have no letters or digits: \(quotedIgnored))\(hint)", ignored: ignored, suggestions: suggestions)
        }
        return SearchExplanation(reason: .noMatch, message: "no match\(hint)", suggestions: suggestions)
    }

    /// For each word of the query that no document holds, the closest word of the vocabulary
    /// (the same first two letters, or the second or first two swapped; the most documents among the
    /// closest), keyed by the folded word.
    static func corrections(for parsed: SearchQuery.Parsed, tables: [String], _ db: Database) throws -> [String: String] {
        let words = parsed.groups.joined().filter { !$0.prefix }.flatMap(\.words)
            // Words of 3 letters or more; like spelling checkers, not words with digits
            // (identifiers, versions, codes), nor CJK (any substring of it is a term).
            .filter { $0.count >= 3 && $0.unicodeScalars.allSatisfy { $0.properties.isAlphabetic && !IndexedText.isCJK($0) } }
            .map(fold)
        guard !words.isEmpty, !tables.isEmpty else { return [:] }
        var vocabularies: [String] = []
        for table in tables {
            let vocabulary = SQLQuoting.identifier("searchlight_vocab_" + table)
            try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS temp.\(vocabulary) USING fts5vocab(main, \(SQLQuoting.literal(table)), 'row')")
            vocabularies.append("temp.\(vocabulary)")
        }
        var corrections: [String: String] = [:]
        for word in Set(words) {
            var documents: [String: Int] = [:]
            let scalars = Array(word.unicodeScalars)
            let known = try vocabularies.contains { try Int.fetchOne(db, sql: "SELECT doc FROM \($0) WHERE term = ?", arguments: [word]) != nil }
            if known { continue }
            let bound = word.count <= 4 ? 1 : 2
            // Terms that share the first two letters, or have them swapped: fts5vocab reads the
            // whole doclist of every term it lists, so the range must stay narrow.
            var prefixes = [String(String.UnicodeScalarView(scalars[0...1]))]
            if scalars[0] != scalars[1] { prefixes.append(String(String.UnicodeScalarView([scalars[1], scalars[0]]))) }
            if scalars[1] != scalars[2] { prefixes.append(String(String.UnicodeScalarView([scalars[0], scalars[2]]))) } // `teh`
            for vocabulary in vocabularies {
                for prefix in prefixes {
                    guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { continue }
                    let end = String(prefix.unicodeScalars.dropLast()) + String(next)
                    let rows = try Row.fetchCursor(db, sql: "SELECT term, doc FROM \(vocabulary) WHERE term >= ? AND term < ?",
                                                   arguments: [prefix, end])
                    while let row = try rows.next() {
                        let term: String = row[0]
                        if abs(term.count - word.count) <= bound { documents[term, default: 0] += row[1] }
                    }
                }
            }
            var best: (term: String, distance: Int, documents: Int)?
            for (term, count) in documents {
                guard let distance = editDistance(word, term, bound: bound) else { continue }
                if let current = best {
                    let better = distance != current.distance ? distance < current.distance
                        : count != current.documents ? count > current.documents : term < current.term
                    if !better { continue }
                }
                best = (term, distance, count)
            }
            if let best { corrections[word] = best.term }
        }
        return corrections
    }

    /// Lower case without diacritics, as unicode61 with `remove_diacritics` folds terms.
    static func fold(_ word: String) -> String {
        word.lowercased().folding(options: .diacriticInsensitive, locale: nil)
    }

    /// `text` with each word whose folded form is a key of `corrections` replaced.
    static func replacingWords(in text: String, _ corrections: [String: String]) -> String {
        var output = ""
        var word = ""
        func flush() {
            output += corrections[fold(word)] ?? word
            word = ""
        }
        for character in text {
            if character.unicodeScalars.allSatisfy(IndexedText.isTokenCharacter) && !character.unicodeScalars.contains(where: IndexedText.isCJK) {
                word.append(character)
            } else {
                flush()
                output.append(character)
            }
        }
        flush()
        return output
    }

    /// The optimal-string-alignment distance (adjacent transpositions count 1), or nil above `bound`.
    static func editDistance(_ a: String, _ b: String, bound: Int) -> Int? {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if abs(a.count - b.count) > bound { return nil }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            current[0] = i
            var rowMinimum = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > bound { return nil }
            (previous2, previous, current) = (previous, current, previous2)
        }
        let distance = a.isEmpty ? b.count : previous[b.count]
        return distance <= bound ? distance : nil
    }
}
