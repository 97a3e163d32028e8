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
            try store.databaseWriter.read { db -> (SearchExplanation.Draft, [String: String]) in
                guard let (schema, layout) = try liveLayout(db) else {
                    return (SearchExplanation.Draft(text: text, asYouType: asYouType, columns: columns, rules: nil), [:])
                }
                let draft = SearchExplanation.Draft(text: text, asYouType: asYouType, columns: columns, rules: layout.text)
                let tables = layout.entities.filter { !$0.isSuspended && (names?.contains($0.entity.name) ?? true) }.map { schema.ftsTable($0.id) }
                return (draft, try Self.corrections(of: draft.words, tables: tables, db))
            }
        }
        let (draft, corrections) = found
        var suggestions: [String] = []
        if let suggestion = draft.suggestion(corrections),
           try search(suggestion, asYouType: asYouType, entities: names, limit: 0, offset: 0, explains: false).total > 0 {
            suggestions.append(suggestion)
        }
        return draft.explanation(suggestions: suggestions)
    }

    /// For each of `words` (folded) that no document holds, the closest word of the vocabulary
    /// (``SearchExplanation/Draft/correction(of:among:)`` among the words that begin as
    /// ``SearchExplanation/Draft/candidatePrefixes(of:)`` say), keyed by the word.
    static func corrections(of words: [String], tables: [String], _ db: Database) throws -> [String: String] {
        guard !words.isEmpty, !tables.isEmpty else { return [:] }
        var vocabularies: [String] = []
        for table in tables {
            let vocabulary = SQLQuoting.identifier("searchlight_vocab_" + table)
            try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS temp.\(vocabulary) USING fts5vocab(main, \(SQLQuoting.literal(table)), 'row')")
            vocabularies.append("temp.\(vocabulary)")
        }
        var corrections: [String: String] = [:]
        for word in words {
            var known = false
            for vocabulary in vocabularies where !known {
                known = try Int.fetchOne(db, sql: "SELECT doc FROM \(vocabulary) WHERE term = ?", arguments: [word]) != nil
            }
            if known { continue }
            // fts5vocab reads the whole doclist of every term it lists: the range must stay narrow.
            var documents: [String: Int] = [:]
            for vocabulary in vocabularies {
                for prefix in SearchExplanation.Draft.candidatePrefixes(of: word) {
                    guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { continue }
                    let end = String(prefix.unicodeScalars.dropLast()) + String(next)
                    let rows = try Row.fetchCursor(db, sql: "SELECT term, doc FROM \(vocabulary) WHERE term >= ? AND term < ?",
                                                   arguments: [prefix, end])
                    while let row = try rows.next() {
                        let term: String = row[0]
                        documents[term, default: 0] += row[1]
                    }
                }
            }
            if let best = SearchExplanation.Draft.correction(of: word, among: documents) { corrections[word] = best }
        }
        return corrections
    }
}
