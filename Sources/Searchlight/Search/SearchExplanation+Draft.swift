import Foundation

extension SearchExplanation {
    /// The half of explaining user text that matched nothing that does not depend on where the
    /// documents are: which words to correct, which words of a vocabulary may correct them and
    /// which one does, the "did you mean" text, and the explanation. The local index and the
    /// PostgreSQL search both explain with it, each reading its own vocabulary:
    ///
    /// ```swift
    /// let draft = SearchExplanation.Draft(text: "kernal panic", analyzer: analyzer, fold: fold)
    /// var corrections: [String: String] = [:]
    /// for word in draft.words where !vocabulary.contains(word) {
    ///     // The vocabulary's words that begin with one of these, with their documents:
    ///     let candidates = vocabulary.documents(beginningWith: SearchExplanation.Draft.candidatePrefixes(of: word))
    ///     corrections[word] = SearchExplanation.Draft.correction(of: word, among: candidates)
    /// }
    /// // Search the suggestion exactly; keep it only when it matches:
    /// let suggestion = draft.suggestion(corrections)          // "kernel panic"
    /// let explanation = draft.explanation(suggestions: matches ? [suggestion!] : [])
    /// ```
    public struct Draft: Sendable {
        let text: String
        let parsed: SearchQuery.Parsed
        let rules: IndexedText
        let segmentsCJK: Bool
        let fold: @Sendable (String) -> String
        /// The words of the text that a "did you mean" may correct, folded: of 3 letters or
        /// more, letters only (like spelling checkers: no identifiers, versions, codes), not CJK
        /// (any substring of it is a term), not a prefix; none when the tokenizer stems
        /// (porter) or indexes trigrams. Each once, in the order of the text.
        public let words: [String]

        /// - Parameters:
        ///   - columns: the fields `field:` may name (see ``SearchQuery/init(userText:asYouType:columns:)``).
        ///   - analyzer: the searched index's tokenizer rules; nil before anything was indexed.
        ///   - fold: how the vocabulary folds a word (the local index: lower case without
        ///     diacritics, as `unicode61 remove_diacritics`).
        public init(text: String, asYouType: Bool = false, columns: Set<String> = [], analyzer: SearchTextAnalyzer?,
                    fold: @escaping @Sendable (String) -> String = Draft.fold) {
            self.init(text: text, asYouType: asYouType, columns: columns, rules: analyzer?.rules, fold: fold)
        }

        init(text: String, asYouType: Bool, columns: Set<String>, rules: IndexedText?, fold: @escaping @Sendable (String) -> String = Draft.fold) {
            self.text = text
            self.fold = fold
            let rules = rules ?? .standard
            self.rules = rules
            parsed = SearchQuery.Parsed(text, asYouType: asYouType, columns: columns, text: rules)
            segmentsCJK = rules.segmentsCJK
            let corrects = rules.segmentsCJK && rules.tokenizerArguments.first?.lowercased() != "porter"
            var seen = Set<String>()
            words = !corrects ? [] : parsed.groups.joined().filter { !$0.prefix }.flatMap(\.words)
                .filter { $0.count >= 3 && $0.unicodeScalars.allSatisfy { $0.properties.isAlphabetic && !IndexedText.isCJK($0) } }
                .map(fold).filter { seen.insert($0).inserted }
        }

        /// Lower case without diacritics, as unicode61 with `remove_diacritics` folds terms.
        public static func fold(_ word: String) -> String {
            word.lowercased().folding(options: .diacriticInsensitive, locale: nil)
        }

        /// The beginnings of the vocabulary's words that may correct `word`: its first two
        /// letters, or them swapped, or its first and third (`teh`). Reading only these keeps
        /// the look-up narrow.
        public static func candidatePrefixes(of word: String) -> [String] {
            let scalars = Array(word.unicodeScalars)
            guard scalars.count >= 3 else { return [] }
            var prefixes = [String(String.UnicodeScalarView(scalars[0...1]))]
            if scalars[0] != scalars[1] { prefixes.append(String(String.UnicodeScalarView([scalars[1], scalars[0]]))) }
            if scalars[1] != scalars[2] { prefixes.append(String(String.UnicodeScalarView([scalars[0], scalars[2]]))) }
            return prefixes
        }

        /// The edits a correction of `word` may be from it: 1 for words of up to 4 letters, else 2.
        public static func allowedEdits(_ word: String) -> Int { word.count <= 4 ? 1 : 2 }

        /// The correction of `word` among `candidates` (vocabulary words, each with how many
        /// documents hold it, summed over the searched vocabularies): the closest within
        /// ``allowedEdits(_:)`` (optimal string alignment: a swap of neighbours is one edit),
        /// then the one the most documents hold, then the first in binary order; nil if none is
        /// close enough.
        public static func correction(of word: String, among candidates: [String: Int]) -> String? {
            let bound = allowedEdits(word)
            var best: (term: String, distance: Int, documents: Int)?
            for (term, count) in candidates where abs(term.count - word.count) <= bound {
                guard let distance = editDistance(word, term, bound: bound) else { continue }
                if let current = best {
                    let better = distance != current.distance ? distance < current.distance
                        : count != current.documents ? count > current.documents : term < current.term
                    if !better { continue }
                }
                best = (term, distance, count)
            }
            return best?.term
        }

        /// Terms left out after the first ``SearchQuery/maximumTerms``.
        public var droppedTerms: Int { parsed.droppedTerms }

        /// The text with each word whose folded form is a key of `corrections` replaced; nil
        /// when nothing changed. A word is folded as ``words`` are: prepared as the index
        /// prepares text first (`straße` is `strasse`, `ﬁle` is `file`).
        public func suggestion(_ corrections: [String: String]) -> String? {
            guard !corrections.isEmpty else { return nil }
            let analyzer = SearchTextAnalyzer(rules: rules)
            var output = ""
            var word = ""
            func flush() {
                let tokens = analyzer.tokens(word)
                let key = tokens.count == 1 ? fold(tokens[0].text) : fold(word)
                output += corrections[key] ?? word
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
            return output == text ? nil : output
        }

        /// The explanation of the text, with `suggestions` (texts from ``suggestion(_:)`` that
        /// the caller found to match, best first).
        public func explanation(suggestions: [String] = []) -> SearchExplanation {
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
            if !segmentsCJK {
                // trigram: FTS5 matches a term of fewer than 3 characters with nothing.
                let short = parsed.groups.joined().flatMap(\.words).filter { $0.count < 3 }
                if !short.isEmpty {
                    return SearchExplanation(reason: .termTooShort, message: "\(short.map { "\"\($0)\"" }.joined(separator: ", ")) \(short.count == 1 ? "is" : "are") shorter than 3 characters, the shortest term the trigram tokenizer matches", ignored: ignored)
                }
            }
            let hint = (suggestions.isEmpty ? "" : "; did you mean \(suggestions.map { $0.contains("\"") ? $0 : "\"\($0)\"" }.joined(separator: " or "))?") + dropped
            if !ignored.isEmpty {
                return SearchExplanation(reason: .partsIgnored, message: "no match (left out, as they have no letters or digits: \(quotedIgnored))\(hint)", ignored: ignored, suggestions: suggestions)
            }
            return SearchExplanation(reason: .noMatch, message: "no match\(hint)", suggestions: suggestions)
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
}
