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
/// - **Symbols apart.** With a word tokenizer, every other character that is neither a letter,
///   a number, a mark nor white space (symbols, emoji, punctuation, format and private-use
///   characters) gets a separator (U+001F) on each side: this SQLite's unicode61 keeps some of
///   them in tokens (those assigned after Unicode 6.1: most emoji, `₽`, newer punctuation; and
///   private-use characters), and with separators around it such a character is a token of its
///   own instead of part of its neighbours (`job🙂` holds `job`). A query keeps the same
///   characters as words of their own when the tokenizer does (``keepsInToken(_:)``), so a
///   phrase copied from the text holds the same tokens as the text.
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
    /// ASCII characters the tokenizer spec makes token characters (`tokenchars '.:'`) or
    /// separators (`separators 'x'`): the query parser splits words as the tokenizer does.
    package var tokenCharacters: Set<Unicode.Scalar> = []
    package var separators: Set<Unicode.Scalar> = []
    /// The tokenizer spec, as its words (``keepsInToken(_:)`` asks SQLite with it).
    package var tokenizerArguments: [String]

    /// The separator inserted between CJK characters: a control character, which every
    /// FTS5 tokenizer but trigram treats as a separator, and which real text hardly holds.
    package static let separator: Unicode.Scalar = "\u{1F}"
    /// A token inserted where punctuation or a symbol separates CJK text, so that a phrase does
    /// not match across it (FTS5 skips separators, so `る。の` would otherwise read as `るの`).
    /// A private-use character of plane 16: a token to unicode61, typed by nobody.
    package static let breakToken: Unicode.Scalar = "\u{10FFFD}"

    package init(tokenizer: String, foldsChineseVariants: Bool = false) {
        let arguments = Self.arguments(tokenizer)
        tokenizerArguments = arguments
        segmentsCJK = !arguments.contains { $0.lowercased() == "trigram" }
        self.foldsChineseVariants = foldsChineseVariants
        for (index, argument) in arguments.enumerated().dropLast() {
            switch argument.lowercased() {
            case "tokenchars": tokenCharacters.formUnion(arguments[index + 1].unicodeScalars)
            case "separators": separators.formUnion(arguments[index + 1].unicodeScalars)
            default: break
            }
        }
    }

    /// The words of an FTS5 tokenizer spec: barewords, and strings quoted with `'`, `"` or `` ` ``
    /// (a doubled quote stands for itself) or `[…]`.
    static func arguments(_ spec: String) -> [String] {
        var arguments: [String] = []
        var characters = Array(spec)[...]
        while let first = characters.first {
            if first.isWhitespace { characters.removeFirst(); continue }
            if let close: Character = ["'": "'", "\"": "\"", "`": "`", "[": "]"][first] {
                characters.removeFirst()
                var word = ""
                while let next = characters.popFirst() {
                    if next == close {
                        if close != "]", characters.first == close { word.append(close); characters.removeFirst(); continue }
                        break
                    }
                    word.append(next)
                }
                arguments.append(word)
            } else {
                let word = characters.prefix { !$0.isWhitespace }
                arguments.append(String(word))
                characters = characters.dropFirst(word.count)
            }
        }
        return arguments
    }

    /// Whether the query parser keeps `scalar` in a word: ``isTokenCharacter(_:)``, with the
    /// tokenizer's own `tokenchars` and `separators`.
    package func keepsInWord(_ scalar: Unicode.Scalar) -> Bool {
        // trigram indexes every character: a query keeps punctuation (`example.com`, `10:30`).
        if !segmentsCJK { return !scalar.properties.isWhitespace && scalar != "\"" }
        if separators.contains(scalar) { return false }
        return tokenCharacters.contains(scalar) || Self.isTokenCharacter(scalar)
    }

    /// Whether prepared text puts separators around `scalar` (``prepare(_:)``), with a word
    /// tokenizer: a character beyond ASCII that is no word character and no white space. The
    /// query parser makes it a word of its own where the tokenizer keeps it (``keepsInToken(_:)``).
    package func isolates(_ scalar: Unicode.Scalar) -> Bool {
        segmentsCJK && scalar.value >= 0x80 && !keepsInWord(scalar) && !scalar.properties.isWhitespace
    }

    /// Whether this index's tokenizer makes `scalar` a token, as SQLite itself answers
    /// (``TokenizerProbe``): for the characters that prepared text isolates (``isolates(_:)``).
    package func keepsInToken(_ scalar: Unicode.Scalar) -> Bool {
        TokenizerProbe.keepsInToken(scalar, tokenizer: tokenizerArguments)
    }

    /// The rules of the default tokenizer.
    package static let standard = IndexedText(tokenizer: "unicode61")

    /// Whether `text` is ASCII without NUL, read from its contiguous UTF-8 when it has some
    /// (a native string does): iterating `utf8` cost a few dozen instructions a byte.
    static func isPlainASCII(_ text: String) -> Bool {
        if let plain = text.utf8.withContiguousStorageIfAvailable({ bytes in
            for byte in bytes where byte >= 0x80 || byte == 0 { return false }
            return true
        }) {
            return plain
        }
        return text.utf8.allSatisfy { $0 < 0x80 && $0 != 0 }
    }

    /// Text as the index stores it (and as queries are matched against it).
    package func prepare(_ text: String) -> String {
        // ASCII is already NFC and NFKC, and holds no CJK: most text takes this path. (A NUL
        // would end the text for SQLite: it becomes a space.)
        if Self.isPlainASCII(text) { return text }
        // UTF-8 bytes: appending to them costs less than to a String's scalars.
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + text.utf8.count / 2)
        func append(_ scalar: Unicode.Scalar) {
            if scalar.value < 0x80 { output.append(UInt8(scalar.value)) } else { UTF8.encode(scalar) { output.append($0) } }
        }
        var recompose = false
        // The last token character, whether punctuation or a symbol came since, and whether
        // the last scalar written was a token character.
        var previousIsCJK: Bool?
        var punctuated = false
        var lastWasToken = false
        var normalized = text.precomposedStringWithCanonicalMapping
        if foldsChineseVariants, normalized.unicodeScalars.contains(where: Self.isCJK),
           let simplified = normalized.applyingTransform(StringTransform("Traditional-Simplified"), reverse: false) {
            normalized = simplified
        }
        // What the tokenizer keeps, per character of this text (one look-up of the shared cache).
        var keeps: [Unicode.Scalar: Bool] = [:]
        func keptInToken(_ scalar: Unicode.Scalar) -> Bool {
            if let known = keeps[scalar] { return known }
            let kept = keepsInToken(scalar)
            keeps[scalar] = kept
            return kept
        }
        func emit(_ scalar: Unicode.Scalar) {
            // Classified cheaply first: ASCII, then the common CJK blocks, then the properties.
            let isToken: Bool, isCJK: Bool, isMark: Bool
            if scalar.value < 0x80 {
                isToken = (0x30...0x39).contains(scalar.value) || (0x41...0x5A).contains(scalar.value) || (0x61...0x7A).contains(scalar.value)
                (isCJK, isMark) = (false, false)
            } else if Self.isCommonCJKLetter(scalar) {
                (isToken, isCJK, isMark) = (true, true, false)
            } else {
                if scalar == "ß" || scalar == "ẞ" { emit("s"); emit("s"); return }
                if scalar == "ς" { emit("σ"); return } // final sigma: Σ folds to σ
                isToken = Self.isTokenCharacter(scalar)
                isCJK = Self.isCJK(scalar)
                isMark = isToken && Self.isMark(scalar)
                if !isToken, isolates(scalar) {
                    // A symbol, punctuation, private-use, format or unassigned character, which
                    // this SQLite's unicode61 (Unicode 6.1 tables) may keep in tokens:
                    // separators around it keep it out of the neighbouring words (`job🙂` is
                    // `job`). A query reads it the same way (``isolates(_:)``).
                    if keptInToken(scalar) {
                        // A token (`🙂`): like a word that is not CJK, it ends the punctuation
                        // before it (`数。🙂` breaks before `🙂`, so that a phrase copied from `🙂`
                        // on holds no break), and stands between CJK characters itself.
                        if punctuated, previousIsCJK == true {
                            append(Self.separator)
                            append(Self.breakToken)
                        }
                        previousIsCJK = false
                        punctuated = false
                    } else if previousIsCJK != nil {
                        punctuated = true
                    }
                    append(Self.separator)
                    append(scalar)
                    append(Self.separator)
                    lastWasToken = false
                    return
                }
            }
            guard isToken else {
                if previousIsCJK != nil, scalar.value < 0x80 ? !(scalar == " " || (0x09...0x0D).contains(scalar.value)) : !scalar.properties.isWhitespace {
                    punctuated = true
                }
                append(scalar)
                lastWasToken = false
                return
            }
            if segmentsCJK, let before = previousIsCJK, !isMark, before || isCJK {
                if punctuated {
                    // `る。の` must not match `るの`: a token no query produces keeps them apart.
                    append(Self.separator)
                    append(Self.breakToken)
                    append(Self.separator)
                } else if lastWasToken {
                    append(Self.separator)
                }
            }
            append(scalar)
            if !isMark { previousIsCJK = isCJK }
            punctuated = false
            lastWasToken = true
        }
        for original in normalized.unicodeScalars {
            if original == "\0" { emit(" "); continue }
            // Our break token in the text itself would read as one: it becomes U+FFFD.
            if original == Self.breakToken { emit("\u{FFFD}"); continue }
            // NFKC, for letters and numbers, and for symbols that stand for CJK text (`㍻`,
            // `⼀`, `㈱`); other symbols stay separators (`hacker™` is not `hackerTM`).
            // Scalars that NFKC and case folding keep skip the work (ASCII, Han).
            if original.value >= 0x80, !Self.isCommonCJKLetter(original), original.properties.changesWhenNFKCCaseFolded {
                let compatible = String(original).precomposedStringWithCompatibilityMapping.unicodeScalars
                if Self.isTokenCharacter(original) || compatible.contains(where: Self.isCJK) {
                    if compatible.count != 1 || compatible.first != original { recompose = true }
                    for scalar in compatible { emit(scalar) }
                    continue
                }
            }
            emit(original)
        }
        // Half-width kana and their sound marks, decomposed one by one, compose again.
        let prepared = String(decoding: output, as: UTF8.self)
        return recompose ? prepared.precomposedStringWithCanonicalMapping : prepared
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

    /// Han ideographs, kana letters and Hangul syllables of the main blocks: letters that NFKC
    /// and case folding keep as they are (a fast path; ``isCJK(_:)`` has every block).
    static func isCommonCJKLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x3041...0x3096, 0x30A1...0x30FA, 0xAC00...0xD7A3: true
        default: false
        }
    }

    /// What makes words: letters, numbers and marks (and our ``breakToken``). Private-use
    /// characters, which unicode61 keeps in tokens by default, separate words here: prepared
    /// text puts separators around them, so that `Apple` is found beside one.
    package static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII: letters and digits (the general category says the same, at a higher price).
        if scalar.value < 0x80 {
            let value = scalar.value
            return (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber,
             .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        case .privateUse:
            return scalar == breakToken
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
