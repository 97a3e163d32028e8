import Foundation
import GRDB
import SearchlightHistory

extension SearchIndex {
    /// Completions of the last word of `text`, the most likely first: the index's words that
    /// start with it, by the number of documents that hold them, read from the vocabulary the
    /// indexer keeps (``IndexVocabulary``):
    /// ```sql
    /// SELECT "term", "documents" FROM searchlight_terms_g<N>
    /// WHERE "term" >= ? AND "term" < ? ORDER BY "documents" DESC, "term" LIMIT ?;
    /// ```
    /// Typo-tolerant like search (``TypoTolerance``): when no word starts with a prefix of 5
    /// letters or more, the words that start within 1 edit of it (2 from 9 letters) are
    /// suggested, fewer typos first.
    ///
    /// ```swift
    /// let suggestions = try index.suggest("linux kern")
    /// // [SearchSuggestion(word: "kernel", text: "linux kernel", documents: 212, typos: 0), …]
    /// ```
    ///
    /// Text whose last word has no letters or digits, is CJK, or ends with white space has no
    /// completions (an empty array). An index with no vocabulary (trigram or porter tokenizer)
    /// has none either.
    /// - Throws: `invalidArgument` for a limit below 1; `indexNotBuilt` before the first indexing.
    public func suggest(_ text: String, limit: Int = 10, typos: TypoTolerance = .on) throws(SearchlightError) -> [SearchSuggestion] {
        guard limit >= 1 else { throw SearchlightError(.invalidArgument, "invalid limit \(limit): it must be at least 1") }
        try migrateIfNeeded()
        return try SearchlightError.catching("cannot suggest completions") {
            try store.databaseWriter.read { db -> [SearchSuggestion] in
                guard let (schema, layout) = try liveLayout(db) else { throw try notBuilt(db) }
                guard let (head, typed) = Self.lastWord(of: text, rules: layout.text), layout.keepsVocabulary else { return [] }
                let tokens = try db.makeTokenizer(FTS5TokenizerDescriptor(components: layout.text.tokenizerArguments))
                    .tokenize(query: layout.text.prepare(typed)).filter { !$0.flags.contains(.colocated) }
                guard tokens.count == 1, IndexVocabulary.keeps(tokens[0].token) else { return [] }
                let prefix = tokens[0].token
                var found = try Self.completions(of: prefix, typos: 0, in: schema.termTable, limit: limit, db)
                // Quoted text matches exactly, in search as here: a last word after an odd number
                // of quotes is inside one.
                let isQuoted = head.reduce(0) { $0 + ($1 == "\"" ? 1 : 0) } % 2 == 1
                if found.isEmpty, typos == .on, !isQuoted {
                    var finder = try TermNeighbourhood(table: schema.termTable, db)
                    // One edit first: completions come fewest typos first, so when one edit
                    // gives `limit` of them, none two edits away could make the list.
                    let allowed = TermNeighbourhood.allowedEdits(prefix)
                    var edits = 1
                    while edits <= allowed {
                        found = []
                        // As search corrects: into words of letters only.
                        for match in try finder.neighbours(of: prefix, edits: edits, prefix: true)
                        where match.distance > 0 && TermNeighbourhood.isCorrectable(match.term) {
                            found += try Self.completions(of: match.term, typos: match.distance, in: schema.termTable, limit: limit, db)
                        }
                        found.sort { a, b in
                            a.typos != b.typos ? a.typos < b.typos : a.documents != b.documents ? a.documents > b.documents : a.word < b.word
                        }
                        var seen = Set<String>()
                        found = found.filter { seen.insert($0.word).inserted }
                        if found.count >= limit { break }
                        edits += 1
                    }
                }
                var seen = Set<String>()
                return found.filter { seen.insert($0.word).inserted }.prefix(limit).map { completion in
                    SearchSuggestion(word: completion.word, text: head + completion.word, documents: completion.documents, typos: completion.typos)
                }
            }
        }
    }

    private struct Completion {
        var word: String
        var documents: Int
        var typos: Int
    }

    /// The `limit` words that start with `prefix`, by documents; for a correction (`typos` > 0)
    /// only words of letters (``TermNeighbourhood/isCorrectable(_:)``), as search corrects.
    /// (A count that is no integer, in a damaged vocabulary, reads as 0: `verify` reports it.)
    private static func completions(of prefix: String, typos: Int, in table: String, limit: Int, _ db: Database) throws -> [Completion] {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT "term", "documents" FROM \(SQLQuoting.identifier(table))
            WHERE "term" >= ? AND "term" < ? ORDER BY "documents" DESC, "term"
            """ + (typos == 0 ? " LIMIT ?" : "")), arguments: [prefix, prefix + "\u{10FFFF}"] + (typos == 0 ? [limit] : []))
        var completions: [Completion] = []
        while completions.count < limit, let row = try rows.next() {
            let word = (row[0] as String?) ?? ""
            if typos > 0, !TermNeighbourhood.isCorrectable(word) { continue }
            completions.append(Completion(word: word, documents: Int.fromDatabaseValue(row[1]) ?? 0, typos: typos))
        }
        return completions
    }

    /// The text before the last word, and the last word (the run of characters at the end of the
    /// text that the index's tokenizer keeps in a word, its `tokenchars` included, as search
    /// reads words, after dropping one trailing `*`); nil when the text ends otherwise.
    static func lastWord(of text: String, rules: IndexedText) -> (head: String, word: String)? {
        var text = Substring(text)
        if text.hasSuffix("*") { text = text.dropLast() }
        let scalars = text.unicodeScalars
        var start = scalars.endIndex
        while start > scalars.startIndex {
            let previous = scalars.index(before: start)
            guard rules.keepsInWord(scalars[previous]) else { break }
            start = previous
        }
        guard start < scalars.endIndex else { return nil }
        return (String(scalars[..<start]), String(scalars[start...]))
    }
}
