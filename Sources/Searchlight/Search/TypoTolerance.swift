/// Whether a search forgives typos (``SearchIndex/search(_:asYouType:entities:limit:offset:order:typos:)``).
///
/// With ``on`` (the default), a query word of 5 or more letters also matches the index's words
/// one edit away, and one of 9 or more letters two edits away (an edit inserts, deletes or
/// substitutes a letter, or swaps two neighbours); as-you-type, the last word also matches as
/// a prefix that far away (`kernl` finds `kernels`). Shorter words, numbers, words with digits
/// and CJK text match exactly.
///
/// A word is corrected when the index holds no such word (no word that starts with it, for a
/// prefix), and every word is when the exact query matches nothing: a query whose words all
/// exist and that matches keeps exactly its exact results. Exact matches always rank above typo
/// matches, and fewer typos above more (``SearchHit/typos``); ``SearchResults/corrections`` says
/// which words were corrected and to what. Phrases (quoted words) and exclusions match exactly.
public enum TypoTolerance: String, Hashable, Sendable, Codable, CaseIterable {
    /// Words the index lacks also match words a few edits away.
    case on
    /// Exact matches only: the results of every Searchlight release before typo tolerance.
    case off
}

/// A query word that matched other words of the index (``TypoTolerance``).
public struct SearchCorrection: Hashable, Sendable, Codable {
    /// A word of the index that the query word matched, with the number of edits between them.
    public struct Replacement: Hashable, Sendable, Codable {
        /// The index's word (as its tokenizer folds it: lower case, no diacritics), or for the
        /// last word of an as-you-type query a prefix, written with a trailing `*`.
        public var text: String
        /// Edits between the query word and this word (1 or 2).
        public var typos: Int

        public init(text: String, typos: Int) {
            self.text = text
            self.typos = typos
        }
    }

    /// The query word, as the index's tokenizer folds it.
    public var word: String
    /// What it matched besides itself, fewest typos first, then the words more documents hold.
    public var replacements: [Replacement]

    public init(word: String, replacements: [Replacement]) {
        self.word = word
        self.replacements = replacements
    }
}

extension TypoTolerance {
    /// At most this many corrections of one word are searched for (fewest edits first, then the
    /// words most documents hold); results say when a word had more.
    public static let maximumCorrectionsPerWord = SearchIndex.maximumCorrectionsPerWord

    /// How many edits a query word (folded: lower case, no diacritics) may differ by: 1 from 5
    /// characters, 2 from 9; none for shorter words, words longer than a vocabulary keeps, and
    /// words with a digit, a character that is no letter, or CJK.
    public static func allowedEdits(_ word: String) -> Int { TermNeighbourhood.allowedEdits(word) }

    /// Whether a query word may be corrected: one of 5 letters or more, or, unless it is a
    /// prefix, one of 4 that may be a word of 5 that lost a letter (it then matches only the
    /// words of 5 that hold it with one more).
    public static func mayCorrect(_ word: String, prefix: Bool) -> Bool { SearchIndex.mayCorrect(word, prefix: prefix) }

    /// Whether a word is one typo tolerance corrects into: letters (and their marks) only, no CJK.
    public static func isCorrectable(_ word: String) -> Bool { TermNeighbourhood.isCorrectable(word) }

    /// Whether `typed` is `word` with one letter left out or two neighbours swapped: the
    /// corrections that rank first within a typo count.
    public static func isLikelyEdit(of word: String, into typed: String) -> Bool { TermNeighbourhood.isLikelyEdit(of: word, into: typed) }
}
