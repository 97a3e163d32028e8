import Foundation
import SearchlightHistory

/// A full-text query, parsed at the boundary like GRDB's `FTS5Pattern`: any user text becomes
/// a safe FTS5 expression (``init(userText:asYouType:)``), while raw FTS5 syntax is passed
/// through as-is (``init(raw:)``) and reported as an error if SQLite rejects it.
///
/// The user-text grammar:
/// - words are ANDed: `kernel panic`
/// - quoted text is a phrase: `"kernel panic"` (a lone quote runs to the end of the text)
/// - `OR` between words (upper case): `hacker OR cracker`
/// - `-word` (or `NOT word`) excludes: `bug -feature`; `AND` is accepted and ignored
/// - a trailing `*`, or `asYouType`, makes the last word a prefix: `kern*`
/// - punctuation separates words; text without any word yields `nil` (no results, no error)
///
/// Every word reaches FTS5 inside a double-quoted string, so no user text can be read as
/// FTS5 syntax. Text is normalized to NFC, like indexed text.
///
/// ```swift
/// SearchQuery(userText: "hacker OR cracker -ethic")?.expression
/// // ("hacker" OR "cracker") NOT ("ethic")
/// ```
public struct SearchQuery: Hashable, Sendable, CustomStringConvertible {
    /// The FTS5 expression given to `MATCH`.
    public let expression: String
    /// Whether the expression came from ``init(raw:)``.
    public let isRaw: Bool

    /// At most this many terms are kept from user text (the rest is ignored).
    public static let maximumTerms = 64

    /// Parses any user text; `nil` when it holds nothing to search for.
    public init?(userText: String, asYouType: Bool = false) {
        guard let expression = Self.parse(DocumentSource.normalize(userText), asYouType: asYouType) else { return nil }
        self.expression = expression
        self.isRaw = false
    }

    /// Raw FTS5 syntax (`title: kernel NEAR(panic oops, 5)`); syntax errors surface when the
    /// query runs, as ``SearchlightError`` with code `invalidQuery`.
    public init(raw: String) throws(SearchlightError) {
        let text = DocumentSource.normalize(raw)
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw SearchlightError(.invalidQuery, "invalid query: the query is empty")
        }
        if text.contains("\0") {
            throw SearchlightError(.invalidQuery, "invalid query: the query contains a NUL character")
        }
        self.expression = text
        self.isRaw = true
    }

    public var description: String { expression }

    // MARK: - Parsing

    private struct Term {
        var words: [String]
        var negated = false
        var prefix = false

        var fts: String {
            "\"" + words.joined(separator: " ").replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (prefix ? " *" : "")
        }
    }

    private enum Token {
        case term(Term)
        case or
    }

    /// Separators are what unicode61 treats as such: white space, punctuation, controls.
    ///
    /// unicode61 keeps letters, numbers and private-use characters (its default categories
    /// `L* N* Co`) and the marks that combine with them; everything else separates tokens,
    /// symbols included (`©`, `=`, `$`, `+`, `|`, emoji). A symbol kept as a word of its own
    /// would become an empty phrase that matches nothing.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse,
             .nonspacingMark, .spacingMark, .enclosingMark:
            return false
        default:
            return true
        }
    }

    private static func words(_ text: Substring) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isSeparator(scalar) {
                if !current.isEmpty { words.append(String(current)); current = .init() }
            } else {
                current.append(scalar)
            }
        }
        if !current.isEmpty { words.append(String(current)) }
        return words
    }

    private static func tokenize(_ text: String) -> [Token] {
        var tokens: [Token] = []
        var negateNext = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character.isWhitespace { index = text.index(after: index); continue }
            // A phrase, possibly negated: -"…" or "…"
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
                if !words.isEmpty { tokens.append(.term(Term(words: words, negated: negated))) }
                negateNext = false
                index = close < text.endIndex ? text.index(after: close) : close
                continue
            }
            // A bare chunk up to the next white space or quote.
            let end = text[index...].firstIndex { $0.isWhitespace || $0 == "\"" } ?? text.endIndex
            var chunk = text[index..<end]
            index = end
            switch chunk {
            case "OR": tokens.append(.or); continue
            case "AND": continue
            case "NOT": negateNext = true; continue
            default: break
            }
            if chunk.hasPrefix("-") { negated = true; chunk = chunk.drop { $0 == "-" } }
            let prefix = chunk.hasSuffix("*")
            let words = self.words(chunk)
            negateNext = false
            if !words.isEmpty { tokens.append(.term(Term(words: words, negated: negated, prefix: prefix))) }
        }
        return tokens
    }

    private static func parse(_ text: String, asYouType: Bool) -> String? {
        var tokens = tokenize(text)
        // Keep a bounded number of terms: very long input must not make a very slow query.
        var terms = 0
        tokens = tokens.prefix { token in
            if case .term = token { terms += 1 }
            return terms <= maximumTerms
        }
        // As-you-type: the last word is a prefix unless the text ends with white space or a quote.
        if asYouType, let last = tokens.indices.last, case var .term(term) = tokens[last],
           let final = text.last, !final.isWhitespace, final != "\"" {
            term.prefix = true
            tokens[last] = .term(term)
        }
        // Group positive terms: OR binds adjacent terms; groups are ANDed.
        var groups: [[Term]] = []
        var negatives: [Term] = []
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
        guard !groups.isEmpty else { return nil } // FTS5 cannot match on exclusions alone
        let positive = groups.map { group in
            group.count == 1 ? group[0].fts : "(" + group.map(\.fts).joined(separator: " OR ") + ")"
        }.joined(separator: " AND ")
        guard !negatives.isEmpty else { return positive }
        return "(" + positive + ") NOT (" + negatives.map(\.fts).joined(separator: " OR ") + ")"
    }
}
