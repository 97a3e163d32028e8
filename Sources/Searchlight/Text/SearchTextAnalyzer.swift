import Foundation
import SearchlightHistory

/// Text as a model's index reads it, for search back ends other than the local FTS5 index
/// (the PostgreSQL sink ships documents prepared exactly as the local index prepares them, and
/// splits them into the same words, so that both indexes agree on what a word is).
///
/// ```swift
/// let analyzer = SearchTextAnalyzer(model: store.model)
/// analyzer.tokens("CoreData持久化。文件").map(\.text)
/// // ["CoreData", "持", "久", "化", "\u{10FFFD}", "文", "件"]   (a break where punctuation was)
/// analyzer.tokens("CoreData持久化").map(\.kind) // [.word, .cjk, .cjk, .cjk]
/// ```
public struct SearchTextAnalyzer: Hashable, Sendable {
    /// What a token is.
    public enum TokenKind: Hashable, Sendable {
        /// A word of letters, numbers and marks (or a symbol the tokenizer keeps as a token).
        case word
        /// One Chinese, Japanese or Korean character: a run of them is matched as a phrase.
        case cjk
        /// Punctuation separated CJK text here: a phrase must not match across it.
        case `break`
    }

    /// A word of prepared text.
    public struct Token: Hashable, Sendable {
        public var text: String
        public var kind: TokenKind
        public init(text: String, kind: TokenKind) { self.text = text; self.kind = kind }
    }

    let rules: IndexedText

    /// The analyzer of `model`'s index (its tokenizer and `foldChineseVariants`).
    public init(model: SearchlightModel) {
        rules = IndexedText(tokenizer: model.tokenizer, foldsChineseVariants: model.foldChineseVariants)
    }

    init(rules: IndexedText) { self.rules = rules }

    /// Text as the index stores it: normalized, CJK characters set apart (see
    /// [How search reads text](https://github.com/searchlight/docs/SearchText.md)).
    public func prepare(_ text: String) -> String { rules.prepare(text) }

    /// The text before the last word, and the last word: the run of characters at the end of
    /// the text that the tokenizer keeps in a word (after dropping one trailing `*`), as
    /// suggestions complete it; nil when the text ends otherwise (white space, punctuation).
    public func lastWord(of text: String) -> (head: String, word: String)? { SearchIndex.lastWord(of: text, rules: rules) }

    /// The tokens of `text` after ``prepare(_:)``, in order: the words a query can match.
    /// Case and diacritics are left as they are (the tokenizer folds them).
    public func tokens(_ text: String) -> [Token] { tokens(prepared: prepare(text)) }

    /// The tokens of text that is already prepared.
    public func tokens(prepared text: String) -> [Token] {
        var tokens: [Token] = []
        var current = String.UnicodeScalarView()
        func flush() {
            guard let first = current.first else { return }
            tokens.append(Token(text: String(current), kind: kind(of: first)))
            current = .init()
        }
        for scalar in text.unicodeScalars {
            if scalar == IndexedText.breakToken {
                flush()
                tokens.append(Token(text: String(scalar), kind: .break))
            } else if rules.keepsInWord(scalar) {
                current.append(scalar)
            } else {
                flush()
                if rules.isolates(scalar), rules.keepsInToken(scalar) { tokens.append(Token(text: String(scalar), kind: .word)) }
            }
        }
        flush()
        return tokens
    }

    /// Whether a folded word belongs in a vocabulary, as the local index's keeps it (typo
    /// tolerance and suggestions read it): at most ``maximumVocabularyWordBytes`` bytes of UTF-8,
    /// no CJK character (a character is a word of its own there, and one edit makes another word).
    public static func isVocabularyWord(_ word: some StringProtocol) -> Bool { IndexVocabulary.keeps(word) }

    /// The longest word, in bytes of UTF-8, a vocabulary keeps.
    public static let maximumVocabularyWordBytes = IndexVocabulary.maximumTermBytes

    /// The kind of a token that the query parser or ``tokens(_:)`` produced.
    public func kind(of word: String) -> TokenKind {
        guard let first = word.unicodeScalars.first else { return .word }
        if word.unicodeScalars.count == 1, first == IndexedText.breakToken { return .break }
        return kind(of: first)
    }

    private func kind(of first: Unicode.Scalar) -> TokenKind {
        rules.segmentsCJK && IndexedText.isCJK(first) ? .cjk : .word
    }

    /// Prepared text as people read it (without the separators preparation inserted).
    public static func display(_ prepared: String) -> String { IndexedText.display(prepared) }
}
