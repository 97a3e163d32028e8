import SearchlightHistory

extension SearchQuery {
    /// A term of user text: one word, or a phrase of several, possibly a prefix or on one field.
    public struct Term: Hashable, Sendable {
        /// The words, as ``SearchTextAnalyzer/tokens(_:)`` splits prepared text: a run of CJK
        /// characters is one word per character (``SearchTextAnalyzer/kind(of:)`` tells), and a
        /// phrase copied across CJK punctuation holds a break.
        public var words: [String]
        /// Whether the last word is a prefix (`kern*`, or the last word as you type).
        public var isPrefix: Bool
        /// The field it is restricted to (a model column, lower case), if any.
        public var field: String?
        /// Written in quotes: it matches exactly (typo tolerance leaves it).
        public var isQuoted: Bool

        public init(words: [String], isPrefix: Bool = false, field: String? = nil, isQuoted: Bool = false) {
            self.words = words
            self.isPrefix = isPrefix
            self.field = field
            self.isQuoted = isQuoted
        }
    }

    /// User text parsed into terms, for search back ends other than FTS5 (the PostgreSQL sink
    /// compiles it into a `tsquery`): every group must match (a group matches when one of its
    /// terms does: `OR`), and no exclusion may.
    ///
    /// ```swift
    /// let query = SearchQuery(userText: "hacker OR cracker -ethic")!
    /// query.structure(for: model)
    /// // groups: [[hacker, cracker]], exclusions: [ethic]
    /// ```
    public struct Structure: Hashable, Sendable {
        public var groups: [[Term]]
        public var exclusions: [Term]
        /// Terms left out after the first ``SearchQuery/maximumTerms``.
        public var droppedTerms: Int

        public init(groups: [[Term]], exclusions: [Term], droppedTerms: Int = 0) {
            self.groups = groups
            self.exclusions = exclusions
            self.droppedTerms = droppedTerms
        }
    }

    /// The parsed user text, for an index of `model` (its tokenizer decides what a word is);
    /// `nil` for a raw query, or when nothing is left to search for.
    public func structure(for model: SearchlightModel) -> Structure? {
        guard let parsed = parsed(for: IndexedText(tokenizer: model.tokenizer, foldsChineseVariants: model.foldChineseVariants)),
              !parsed.groups.isEmpty else { return nil }
        func term(_ term: Parsed.Term) -> Term { Term(words: term.words, isPrefix: term.prefix, field: term.column, isQuoted: term.isQuoted) }
        return Structure(groups: parsed.groups.map { $0.map(term) }, exclusions: parsed.negatives.map(term),
                         droppedTerms: parsed.droppedTerms)
    }
}
