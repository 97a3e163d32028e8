/// Why a search of user text matched nothing, and what might match instead: a query that the
/// tokenizer cannot match says so instead of failing silently.
///
/// ```swift
/// let results = try index.search("kernal")
/// if let explanation = results.explanation {
///     print(explanation.message)          // no match; did you mean "kernel"?
///     print(explanation.suggestions)      // ["kernel"]
/// }
/// ```
public struct SearchExplanation: Hashable, Sendable, Codable {
    /// Why nothing matched.
    public enum Reason: String, Hashable, Sendable, Codable {
        /// The text holds no word: only symbols, punctuation or white space, which the index
        /// does not keep (the tokenizer separates words on them).
        case nothingToSearch
        /// A term is shorter than the tokenizer can match (the trigram tokenizer needs 3 characters).
        case termTooShort
        /// Parts of the query hold no word and were left out; the rest matched nothing.
        case partsIgnored
        /// The words are in no document (``suggestions`` may hold close words that are).
        case noMatch
    }

    public var reason: Reason
    /// One line for people: the reason, and the suggestions if any.
    public var message: String
    /// The parts of the query that were left out (symbols, punctuation).
    public var ignored: [String]
    /// The query with misspelled words replaced by close words of the index's own vocabulary
    /// (edit distance 1 for words of up to 4 letters, 2 for longer ones), best first; each
    /// one matches.
    public var suggestions: [String]

    public init(reason: Reason, message: String, ignored: [String] = [], suggestions: [String] = []) {
        self.reason = reason
        self.message = message
        self.ignored = ignored
        self.suggestions = suggestions
    }
}
