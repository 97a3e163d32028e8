import Foundation

/// How text is prepared before FTS5 tokenizes it, for documents and queries alike, so that the
/// index keeps using SQLite's own tokenizers (and every SQLite tool can still open the database).
///
/// - **Normalization.** Letters and numbers are NFKC-normalized: full-width and half-width
///   forms, ligatures (`ﬁ`), circled and superscript digits become their plain forms; `ß` and
///   `ẞ` become `ss`. Symbols and punctuation stay as they are: they separate words.
///   Case folding and diacritics are the tokenizer's (`unicode61 remove_diacritics 2`).
/// - **CJK segmentation.** Chinese, Japanese and Korean are written without spaces between
///   words, and unicode61 would make one token of a whole run of them. With a word tokenizer
///   (unicode61, ascii, porter), a separator (U+001F) goes between every two CJK characters and
///   where CJK meets a letter or digit (`CoreData持久化` → `CoreData␟持␟久␟化`): each CJK
///   character is a token, and a query turns each run of them into a phrase, which matches
///   exactly where the run appears as a substring. Where punctuation separates CJK text, a
///   token of its own (``breakToken``) keeps a phrase from matching across it; white space
///   does not (a line break inside a word). The trigram tokenizer indexes substrings
///   itself, so its text is not segmented.
/// - **Optional Chinese variants folding** (the model's `foldChineseVariants`): traditional
///   characters become simplified ones, in documents and queries alike, through ICU's
///   `Traditional-Simplified` transform (CLDR's mapping, as Foundation ships it).
///
/// ASCII text is returned unchanged, at the cost of one scan.
///
/// Stored text keeps its separators; ``display(_:)`` removes them (snippets and titles).
package struct IndexedText: Hashable, Sendable {
    /// Whether CJK runs are split into one token per character.
    package var segmentsCJK: Bool
    /// Whether traditional Chinese characters fold to simplified ones.
    package var foldsChineseVariants: Bool

    /// The separator inserted between CJK characters: a control character, which every
    /// FTS5 tokenizer but trigram treats as a separator, and which real text hardly holds.
    package static let separator: Unicode.Scalar = "\u{1F}"
    /// A token inserted where punctuation or a symbol separates CJK text, so that a phrase does
    /// not match across it (FTS5 skips separators, so `る。の` would otherwise read as `るの`).
    /// A private-use character of plane 16: a token to unicode61, typed by nobody.
    package static let breakToken: Unicode.Scalar = "\u{10FFFD}"

    package init(tokenizer: String, foldsChineseVariants: Bool = false) {
        let name = tokenizer.split(whereSeparator: \.isWhitespace).first.map { $0.lowercased() } ?? ""
        segmentsCJK = name != "trigram"
        self.foldsChineseVariants = foldsChineseVariants
    }

    /// The rules of the default tokenizer.
    package static let standard = IndexedText(tokenizer: "unicode61")

    /// Text as the index stores it (and as queries are matched against it).
    package func prepare(_ text: String) -> String {
        // ASCII is already NFC and NFKC, and holds no CJK: most text takes this path.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        var output = String.UnicodeScalarView()
        var recompose = false
        // The last token character, and whether punctuation or a symbol came since.
        var previous: Unicode.Scalar?
        var punctuated = false
        var normalized = text.precomposedStringWithCanonicalMapping
        if foldsChineseVariants, normalized.unicodeScalars.contains(where: Self.isCJK),
           let simplified = normalized.applyingTransform(StringTransform("Traditional-Simplified"), reverse: false) {
            normalized = simplified
        }
        for original in normalized.unicodeScalars {
          // NFKC, for letters and numbers only: a symbol stays a separator (`hacker™` is not
          // `hackerTM`). Scalars that NFKC and case folding keep skip the work (Han, ASCII).
          let compatible = original.value >= 0x80 && Self.isTokenCharacter(original) && original.properties.changesWhenNFKCCaseFolded
            ? Array(String(original).precomposedStringWithCompatibilityMapping.unicodeScalars) : [original]
          if compatible.count != 1 || compatible.first != original { recompose = true }
          for scalar in compatible {
            if scalar == "ß" || scalar == "ẞ" {
                output.append(contentsOf: "ss".unicodeScalars)
                previous = "s"
                punctuated = false
                continue
            }
            guard Self.isTokenCharacter(scalar) else {
                if previous != nil, !scalar.properties.isWhitespace { punctuated = true }
                output.append(scalar)
                continue
            }
            if segmentsCJK, let before = previous, !Self.isMark(scalar), Self.isCJK(before) || Self.isCJK(scalar) {
                if punctuated {
                    // `る。の` must not match `るの`: a token no query produces keeps them apart.
                    output.append(Self.separator)
                    output.append(Self.breakToken)
                    output.append(Self.separator)
                } else if output.last.map(Self.isTokenCharacter) ?? false {
                    output.append(Self.separator)
                }
            }
            output.append(scalar)
            previous = scalar
            punctuated = false
          }
        }
        // Half-width kana and their sound marks, decomposed one by one, compose again.
        return recompose ? String(output).precomposedStringWithCanonicalMapping : String(output)
    }

    /// Stored text as people read it: without the separators that segmentation inserted.
    /// `start` and `end` are the highlight markers, so that a highlighted CJK run reads as one.
    package static func display(_ text: String, highlightStart start: String = "", highlightEnd end: String = "") -> String {
        guard text.unicodeScalars.contains(separator) else { return text }
        var text = text
        if !start.isEmpty || !end.isEmpty {
            text = text.replacingOccurrences(of: end + String(separator) + start, with: "")
        }
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != separator && $0 != breakToken }))
    }

    /// Whether `scalar` is written without spaces between words: Han ideographs, kana, Hangul,
    /// Bopomofo, and the CJK iteration marks.
    package static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x11FF,   // Hangul Jamo
             0x2E80...0x2FDF,   // CJK radicals, Kangxi radicals
             0x3005...0x3007,   // 々 〆 〇
             0x3021...0x3029, 0x3038...0x303C, // Hangzhou numerals, iteration marks
             0x3040...0x30FF,   // Hiragana, Katakana
             0x3100...0x312F, 0x3130...0x318F, 0x31A0...0x31BF, 0x31F0...0x31FF, // Bopomofo, Hangul compatibility Jamo, Katakana extensions
             0x3400...0x4DBF,   // CJK extension A
             0x4E00...0x9FFF,   // CJK unified ideographs
             0xA960...0xA97F,   // Hangul Jamo extended A
             0xAC00...0xD7FF,   // Hangul syllables, Jamo extended B
             0xF900...0xFAFF,   // CJK compatibility ideographs
             0xFF66...0xFF9F,   // half-width Katakana
             0xFFA0...0xFFDC,   // half-width Hangul
             0x1B000...0x1B16F, // Kana supplement and extended
             0x20000...0x3134F: // CJK extensions B–G, compatibility supplement
            return true
        default:
            return false
        }
    }

    /// What unicode61 keeps in tokens by default: letters, numbers, private use, and marks.
    package static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse,
             .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }
}
