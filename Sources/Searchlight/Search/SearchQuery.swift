import Foundation
import SearchlightHistory

/// A full-text query, parsed at the boundary like GRDB's `FTS5Pattern`: any user text becomes
/// a safe FTS5 expression (``init(userText:asYouType:columns:)``), while raw FTS5 syntax is
/// passed through (``init(raw:)``) and reported as an error if SQLite rejects it.
///
/// The user-text grammar:
/// - words are ANDed: `kernel panic`
/// - quoted text is a phrase: `"kernel panic"` (a lone quote runs to the end of the text)
/// - `OR` between words (upper case): `hacker OR cracker`
/// - `-word` (or `NOT word`) excludes: `bug -feature`; `AND` is accepted and ignored
/// - a trailing `*`, or `asYouType`, makes the last word a prefix: `kern*`
/// - `field:word` or `field:"a phrase"` searches one field, when `field` is one of `columns`
///   (otherwise `field` is a word like any other: `10:30` and `http://` stay text)
/// - a run of Chinese, Japanese or Korean characters is a phrase of its characters, so it
///   matches where it appears as written, even inside a longer word (``IndexedText``)
/// - punctuation and symbols separate words; a symbol that the tokenizer keeps in tokens
///   (`🙂`, `₽`, a private-use character) is a word of its own, as in indexed text; text
///   without any word yields `nil` (no results, no error; ``SearchIndex`` explains why)
///
/// Every word reaches FTS5 inside a double-quoted string, so no user text can be read as
/// FTS5 syntax. Text is normalized like indexed text (NFKC, `ß` as `ss`).
///
/// ```swift
/// SearchQuery(userText: "hacker OR cracker -ethic")?.expression
/// // ("hacker" OR "cracker") NOT ("ethic")
/// SearchQuery(userText: "CoreData持久化")?.expression
/// // "CoreData 持 久 化"
/// ```
public struct SearchQuery: Hashable, Sendable, CustomStringConvertible {
    /// The FTS5 expression given to `MATCH` (for an index with the default tokenizer, every
    /// field searchable).
    public let expression: String
    /// Whether the expression came from ``init(raw:)``.
    public let isRaw: Bool
    /// What was parsed: the user's text, or the raw expression.
    package let text: String
    package let asYouType: Bool
    package let columns: Set<String>
    /// How many terms of the user text were left out after the first ``maximumTerms``.
    public let droppedTerms: Int

    /// At most this many terms are kept from user text (the rest is ignored).
    public static let maximumTerms = 64

    /// Parses any user text; `nil` when it holds nothing to search for.
    ///
    /// - Parameter columns: the field names that `field:` may name (case does not matter).
    public init?(userText: String, asYouType: Bool = false, columns: Set<String> = []) {
        let parsed = Parsed(userText, asYouType: asYouType, columns: columns, text: .standard)
        guard let expression = parsed.expression(columns: nil) else { return nil }
        self.droppedTerms = parsed.droppedTerms
        self.expression = expression
        self.isRaw = false
        self.text = userText
        self.asYouType = asYouType
        self.columns = columns
    }

    /// Raw FTS5 syntax (`title: kernel NEAR(panic oops, 5)`); syntax errors surface when the
    /// query runs, as ``SearchlightError`` with code `invalidQuery`. CJK text matches as
    /// written inside double quotes; unquoted, its characters are ANDed.
    public init(raw: String) throws(SearchlightError) {
        if raw.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw SearchlightError(.invalidQuery, "invalid query: the query is empty")
        }
        if raw.contains("\0") {
            throw SearchlightError(.invalidQuery, "invalid query: the query contains a NUL character")
        }
        self.droppedTerms = 0
        self.expression = Self.rawExpression(raw, text: .standard)
        self.isRaw = true
        self.text = raw
        self.asYouType = false
        self.columns = []
    }

    public var description: String { expression }

    /// The expression for an index whose text is prepared by `text`, searching an entity with
    /// these field columns; nil when the query cannot match there (a positive term names a
    /// field the entity lacks).
    package func expression(for text: IndexedText, columns: [String]) -> String? {
        if isRaw { return text == .standard ? expression : Self.rawExpression(self.text, text: text) }
        let parsed = Parsed(self.text, asYouType: asYouType, columns: self.columns, text: text)
        return parsed.expression(columns: Set(columns.map { $0.lowercased() }))
    }

    /// The parsed query, for explanations of a query that matched nothing.
    package func parsed(for text: IndexedText) -> Parsed? {
        isRaw ? nil : Parsed(self.text, asYouType: asYouType, columns: columns, text: text)
    }

    /// Raw text, prepared like documents; the separators between CJK characters become spaces
    /// (a control character is no FTS5 syntax).
    private static func rawExpression(_ raw: String, text: IndexedText) -> String {
        String(String.UnicodeScalarView(text.prepare(raw).unicodeScalars.map { $0 == IndexedText.separator ? " " : $0 }))
    }

    // MARK: - Parsing

    /// User text parsed into terms.
    package struct Parsed {
        package struct Term {
            /// The tokens of the term: more than one make a phrase.
            package var words: [String]
            package var negated = false
            package var prefix = false
            /// The field it is restricted to (lower case), if any.
            package var column: String?
            /// Written in quotes: a phrase, even of one word, matches exactly (no typo tolerance).
            package var isQuoted = false

            /// Index words it also matches, a few edits away (``TypoTolerance``).
            package var corrections: [TermNeighbourhood.Match] = []

            /// The term in FTS5 syntax, with its corrections of at most `typos` edits as
            /// alternatives; nil when it names a field not among `columns`.
            func fts(columns: Set<String>?, typos: Int = .max, likelyOnly: Bool = false) -> String? {
                if let column, let columns, !columns.contains(column) { return nil }
                func phrase(_ words: [String], prefix: Bool) -> String {
                    let phrase = "\"" + words.joined(separator: " ").replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (prefix ? " *" : "")
                    guard let column else { return phrase }
                    return "\"" + column.replacingOccurrences(of: "\"", with: "\"\"") + "\" : " + phrase
                }
                let exact = phrase(words, prefix: prefix)
                let alternatives = corrections.filter { $0.distance <= typos && (!likelyOnly || $0.isLikely) }.map { phrase([$0.term], prefix: $0.isPrefix) }
                return alternatives.isEmpty ? exact : "(" + ([exact] + alternatives).joined(separator: " OR ") + ")"
            }
        }

        enum Token {
            case term(Term)
            case or
        }

        /// Positive terms: OR binds adjacent terms; groups are ANDed.
        package var groups: [[Term]] = []
        package var negatives: [Term] = []
        /// Parts of the text that hold no word (symbols, punctuation): the index cannot match them.
        package var ignored: [String] = []
        /// Terms (and operators) after the first ``SearchQuery/maximumTerms``, left out.
        package var droppedTerms = 0
        /// Whether the text held an operator word (`OR`, `AND`, `NOT`).
        package var hasOperators = false

        /// How the index's tokenizer splits words.
        let rules: IndexedText

        init(_ userText: String, asYouType: Bool, columns: Set<String>, text: IndexedText) {
            rules = text
            let prepared = text.prepare(userText)
            var tokens = tokenize(prepared, columns: Set(columns.map { $0.lowercased() }))
            // Keep a bounded number of terms: very long input must not make a very slow query.
            // (The results say how many were left out: ``SearchResults/droppedTerms``.)
            var terms = 0
            let all = tokens.count
            tokens = tokens.prefix { token in
                if case .term = token { terms += 1 }
                return terms <= SearchQuery.maximumTerms
            }
            droppedTerms = all - tokens.count
            // As-you-type: the last word is a prefix unless the text ends with white space or a quote.
            if asYouType, let last = tokens.indices.last, case var .term(term) = tokens[last],
               let final = prepared.last, !final.isWhitespace, final != "\"" {
                term.prefix = true
                tokens[last] = .term(term)
            }
            var joinNext = false
            for token in tokens {
                switch token {
                case .or:
                    joinNext = !groups.isEmpty
                case let .term(term) where term.negated:
                    negatives.append(term)
                    joinNext = false
                case let .term(term):
                    if joinNext { groups[groups.count - 1].append(term) } else { groups.append([term]) }
                    joinNext = false
                }
            }
        }

        /// The FTS5 expression of group `index` alone, its terms' corrections of at most
        /// `typos` edits included; nil when no term of it can match in an entity with `columns`.
        func groupExpression(_ index: Int, columns: Set<String>?, typos: Int, likelyOnly: Bool = false) -> String? {
            let alternatives = groups[index].compactMap { $0.fts(columns: columns, typos: typos, likelyOnly: likelyOnly) }
            return alternatives.isEmpty ? nil : alternatives.joined(separator: " OR ")
        }

        /// The alternatives each phrase of ``expression(columns:)`` belongs to, in order (FTS5
        /// numbers the phrases of an expression as they appear): a term and its corrections
        /// share one number, each term its own (terms ORed together add up, as bm25 adds them);
        /// the excluded terms' phrases are -1.
        func phraseGroups(columns: Set<String>?) -> [Int] {
            func phrases(_ term: Term) -> Int { term.fts(columns: columns) == nil ? 0 : 1 + term.corrections.count }
            var groups: [Int] = []
            var next = 0
            for term in self.groups.joined() {
                groups += Array(repeating: next, count: phrases(term))
                next += 1
            }
            for term in negatives { groups += Array(repeating: -1, count: phrases(term)) }
            return groups
        }

        /// The FTS5 expression, for an entity with `columns` (nil: every field exists).
        func expression(columns: Set<String>?) -> String? {
            // A term on a field the entity lacks matches nothing there: an OR group keeps its
            // other terms, an AND of it cannot match, and an exclusion of it excludes nothing.
            var positive: [String] = []
            for group in groups {
                let alternatives = group.compactMap { $0.fts(columns: columns) }
                if alternatives.isEmpty { return nil }
                positive.append(alternatives.count == 1 ? alternatives[0] : "(" + alternatives.joined(separator: " OR ") + ")")
            }
            guard !positive.isEmpty else { return nil } // FTS5 cannot match on exclusions alone
            let expression = positive.joined(separator: " AND ")
            let excluded = negatives.compactMap { $0.fts(columns: columns) }
            guard !excluded.isEmpty else { return expression }
            return "(" + expression + ") NOT (" + excluded.joined(separator: " OR ") + ")"
        }

        /// The words of `text` (prepared text): runs of letters, numbers and marks, and each
        /// character that prepared text sets apart (``IndexedText/isolates(_:)``) and the
        /// tokenizer keeps in tokens (`🙂`, `₽`, private use), as a word of its own, just as the
        /// stored text holds it. Everything else separates words, the separators between CJK
        /// characters included (a character the tokenizer drops would make an empty phrase).
        private func words(_ text: Substring) -> [String] {
            var words: [String] = []
            var current = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                if rules.keepsInWord(scalar) {
                    current.append(scalar)
                    continue
                }
                if !current.isEmpty {
                    words.append(String(current))
                    current = .init()
                }
                if rules.isolates(scalar), rules.keepsInToken(scalar) { words.append(String(scalar)) }
            }
            if !current.isEmpty { words.append(String(current)) }
            // A break between CJK text and punctuation belongs inside a phrase (`る。の`), not at
            // its edge (`title:"数据"`, where the quote follows a field name).
            let breakWord = String(IndexedText.breakToken)
            while words.first == breakWord { words.removeFirst() }
            while words.last == breakWord { words.removeLast() }
            return words
        }

        /// `field:` at the start of a chunk, when `field` is a known column: its name and the rest.
        private func columnFilter(_ chunk: Substring, columns: Set<String>) -> (String, Substring)? {
            guard !columns.isEmpty, let colon = chunk.firstIndex(of: ":"), colon > chunk.startIndex else { return nil }
            // (A CJK field name holds the separators that segmentation put between its characters.)
            let name = String(String.UnicodeScalarView(chunk[..<colon].unicodeScalars.filter {
                $0 != IndexedText.separator && $0 != IndexedText.breakToken
            })).lowercased()
            return columns.contains(name) ? (name, chunk[chunk.index(after: colon)...]) : nil
        }

        private mutating func tokenize(_ text: String, columns: Set<String>) -> [Token] {
            var tokens: [Token] = []
            var negateNext = false
            var pendingColumn: (name: String, negated: Bool)?
            var index = text.startIndex
            while index < text.endIndex {
                let character = text[index]
                if character.isWhitespace { index = text.index(after: index); pendingColumn = nil; continue }
                // A phrase, possibly negated: -"…" or "…", possibly after `field:`.
                var negated = negateNext
                var start = index
                if character == "-", text.index(after: index) < text.endIndex, text[text.index(after: index)] == "\"" {
                    negated = true
                    start = text.index(after: index)
                }
                if text[start] == "\"" {
                    let open = text.index(after: start)
                    let close = text[open...].firstIndex(of: "\"") ?? text.endIndex
                    let words = self.words(text[open..<close])
                    if words.isEmpty {
                        if !text[open..<close].allSatisfy(\.isWhitespace) { ignored.append(IndexedText.display(String(text[open..<close]))) }
                    } else {
                        tokens.append(.term(Term(words: words, negated: negated || pendingColumn?.negated == true, column: pendingColumn?.name, isQuoted: true)))
                    }
                    negateNext = false
                    pendingColumn = nil
                    index = close < text.endIndex ? text.index(after: close) : close
                    continue
                }
                pendingColumn = nil
                // A bare chunk up to the next white space or quote.
                let end = text[index...].firstIndex { $0.isWhitespace || $0 == "\"" } ?? text.endIndex
                var chunk = text[index..<end]
                index = end
                switch chunk {
                case "OR": tokens.append(.or); hasOperators = true; continue
                case "AND": hasOperators = true; continue
                case "NOT": negateNext = true; hasOperators = true; continue
                default: break
                }
                if chunk.hasPrefix("-") { negated = true; chunk = chunk.drop { $0 == "-" } }
                var column: String?
                if let (name, rest) = columnFilter(chunk, columns: columns) {
                    if rest.isEmpty, index < text.endIndex, text[index] == "\"" {
                        // `field:"a phrase"`: the phrase that follows is on the field.
                        pendingColumn = (name, negated)
                        negateNext = false
                        continue
                    }
                    column = name
                    chunk = rest
                }
                let prefix = chunk.hasSuffix("*")
                let words = self.words(prefix ? chunk.dropLast() : chunk)
                negateNext = false
                if words.isEmpty {
                    if !chunk.isEmpty { ignored.append(IndexedText.display(String(chunk))) }
                } else {
                    tokens.append(.term(Term(words: words, negated: negated, prefix: prefix, column: column)))
                }
            }
            return tokens
        }
    }
}
