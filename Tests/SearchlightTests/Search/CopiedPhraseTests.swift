import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A phrase copied from a document finds it, and finds what plain FTS5 finds, for random
/// documents that mix scripts (Latin with diacritics, Greek, Cyrillic, CJK, Korean), numbers,
/// symbols, emoji old and new (skin tones, ZWJ sequences, a variation selector), currency
/// signs, private-use characters and punctuation, glued to words or apart. Seeded:
/// `SEARCHLIGHT_SEED` replays a run.
///
/// The oracles are plain FTS5 tables made by plain SQL, with the model's tokenizer
/// (`unicode61 remove_diacritics 2`, so that case and diacritic folding are no difference),
/// and nothing of Searchlight:
/// - **raw**: the documents as they are, queried with the phrase as it is;
/// - **spaced**: the same text with a space on each side of every character that is not a
///   letter, number or mark, and around every CJK character. This is what plain FTS5 would do
///   if it were right about two things: unicode61 (Unicode 6.1 tables) keeps newer emoji,
///   `₽`, newer punctuation and private-use characters in tokens, so `job🙂` is one token that
///   `job` does not find; and a run of CJK text is one token, so no part of it is found.
///
/// The rules, for each phrase `q` copied from document `d` (a run of whole words, or of CJK
/// characters, with what separates them in `d`), searched as `"q"`:
/// 0. When the spaced table finds nothing (`q` holds no token: `😀 ™`), Searchlight finds
///    nothing either; otherwise both find `d`.
/// 1. Without CJK in `q`: Searchlight finds exactly what the spaced table finds, and at least
///    what the raw table finds (plain FTS5 misses words glued to a symbol; it never finds one
///    that Searchlight misses).
/// 2. With CJK in `q`: Searchlight finds a subset of what the spaced table finds.
///    Not equality: Searchlight does not match a phrase across punctuation between CJK
///    characters (`数。据` is not `数据`, nor `数 据`), where the spaced (and the raw) table,
///    which skip punctuation, do. (For the same reason the raw table is no lower bound here.)
@Suite struct CopiedPhraseTests {
    /// One piece of a document: a word (or a single CJK character), or the text between two.
    struct Piece {
        var text: String
        var isWord: Bool
    }

    static let latin = ["ka", "ré", "lo", "mü", "ñe", "ça", "tø", "va", "zi", "på", "ex", "ön", "Ča", "ŁO", "qu"]
    /// (No final sigma: Searchlight folds `ς` to `σ`, plain unicode61 does not.)
    static let greek = ["λό", "γο", "κα", "ρά", "μέ", "νη", "θε", "ΑΘ", "Σο"]
    static let cyrillic = ["при", "вет", "мир", "ёж", "да", "ну", "шко", "ЛА"]
    static let numbers = ["100", "42", "7", "2026"]
    static let cjk = Array("数据库持久化使用备份的データベース")
    static let korean = Array("엔진을시작합니다")
    /// Old emoji (Unicode 6.0–6.1: separators to unicode61) and new ones (tokens), a skin tone,
    /// ZWJ sequences, a variation selector, currency signs, other symbols, private use (BMP and
    /// plane 15), newer punctuation (U+2E3C) and a format character newer than Unicode 6.1.
    static let symbols = ["🙂", "🤔", "🥰", "😀", "👍", "👍🏽", "❤️", "👨‍👩‍👧", "🧑‍💻", "₽", "₿", "€", "$", "¥", "₹",
                          "™", "©", "°", "±", "√", "∞", "\u{E000}", "\u{F8FF}", "\u{F0000}", "\u{2E3C}", "\u{2066}"]
    static let punctuation = [",", ".", ";", ":", "!", "?", "—", "…", "«", "»", "“", "”", "(", ")", "。", "、", "・", "-", "'", "/"]

    /// A CJK letter (kana, Han, Hangul syllables; not the punctuation of those blocks, `・`).
    static func isOracleCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3: scalar.properties.isAlphabetic
        default: false
        }
    }

    /// The spaced oracle's text (see the suite's comment).
    static func spaced(_ text: String) -> String {
        var output = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
                if isOracleCJK(scalar) { output.append(" "); output.append(scalar); output.append(" ") } else { output.append(scalar) }
            default:
                output.append(" "); output.append(scalar); output.append(" ")
            }
        }
        return String(output)
    }

    /// A random document, as pieces: words and what separates them.
    static func document(_ random: inout SplitMix) -> [Piece] {
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        // An atom: its words (one per CJK character or symbol), and whether it may be glued to a
        // neighbour (two alphabetic words glued would be one word).
        var atoms: [(words: [String], glues: Bool)] = []
        for _ in 0..<(3 + Int(random.next() % 10)) {
            switch random.next() % 10 {
            case 0, 1: atoms.append(([(0..<(1 + Int(random.next() % 3))).map { _ in pick(latin) }.joined()], false))
            case 2: atoms.append(([(0..<(1 + Int(random.next() % 3))).map { _ in pick(greek) }.joined()], false))
            case 3: atoms.append(([(0..<(1 + Int(random.next() % 2))).map { _ in pick(cyrillic) }.joined()], false))
            case 4: atoms.append(([pick(numbers)], false))
            case 5: atoms.append(((0..<(1 + Int(random.next() % 4))).map { _ in String(pick(cjk)) }, true))
            case 6: atoms.append(((0..<(1 + Int(random.next() % 3))).map { _ in String(pick(korean)) }, true))
            default: atoms.append(([pick(symbols)], true))
            }
        }
        var pieces: [Piece] = []
        for (index, atom) in atoms.enumerated() {
            if index > 0 {
                let separator: String
                if atom.glues || atoms[index - 1].glues, chance(30) {
                    separator = ""
                } else {
                    switch random.next() % 10 {
                    case 0, 1: separator = pick(punctuation) + " "
                    case 2: separator = " " + pick(punctuation)
                    case 3: separator = pick(punctuation)
                    case 4: separator = "\n"
                    default: separator = " "
                    }
                }
                pieces.append(Piece(text: separator, isWord: false))
            }
            for (position, word) in atom.words.enumerated() {
                if position > 0 { pieces.append(Piece(text: "", isWord: false)) }
                pieces.append(Piece(text: word, isWord: true))
            }
        }
        return pieces
    }

    @Test func everyPhraseCopiedFromADocumentFindsItAndWhatPlainFTS5Finds() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SEARCHLIGHT_SEED"] ?? "") ?? UInt64.random(in: 1...1_000_000)
        print("CopiedPhraseTests: seed \(seed) (SEARCHLIGHT_SEED replays it)")
        var random = SplitMix(seed: seed)
        let documents = (0..<150).map { _ in Self.document(&random) }
        let texts = documents.map { $0.map(\.text).joined() }

        #expect(TestDatabase.notesModel.tokenizer == "unicode61 remove_diacritics 2", "the oracles use the model's tokenizer")
        let f = try Fixture()
        for (offset, text) in texts.enumerated() { try f.insertNote(offset + 1, title: "", body: text) }
        try f.runIndexer()
        let plain = try DatabaseQueue()
        try plain.write { db in
            try db.execute(sql: """
                CREATE VIRTUAL TABLE raw USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
                CREATE VIRTUAL TABLE spaced USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
                """)
            for (offset, text) in texts.enumerated() {
                try db.execute(sql: "INSERT INTO raw(rowid, body) VALUES (?, ?)", arguments: [offset + 1, text])
                try db.execute(sql: "INSERT INTO spaced(rowid, body) VALUES (?, ?)", arguments: [offset + 1, Self.spaced(text)])
            }
        }
        func plainIDs(_ table: String, _ phrase: String) throws -> Set<Int64> {
            try plain.read { db in
                Set(try Int64.fetchAll(db, sql: "SELECT rowid FROM \(table) WHERE \(table) MATCH ?",
                                       arguments: ["\"" + phrase.replacingOccurrences(of: "\"", with: "\"\"") + "\""]))
            }
        }

        var phrases = 0, withCJK = 0, noToken = 0, strictlyMoreThanRaw = 0
        for (offset, pieces) in documents.enumerated() {
            let id = Int64(offset + 1)
            let words = pieces.indices.filter { pieces[$0].isWord }
            for attempt in 0..<3 {
                // A run of consecutive words, with what separates them; the whole text once.
                let first = attempt == 0 ? 0 : Int(random.next() % UInt64(words.count))
                let last = attempt == 0 ? words.count - 1 : min(words.count - 1, first + Int(random.next() % 5))
                let phrase = pieces[words[first]...words[last]].map(\.text).joined()
                let context = "phrase \(phrase.debugDescription) of document \(id) \(texts[offset].debugDescription) (seed \(seed))"
                let ours = Set(try f.index.search("\"" + phrase + "\"", limit: nil).hits.compactMap { hit -> Int64? in
                    if case let .integer(value) = hit.objectID { value } else { nil }
                })
                let raw = try plainIDs("raw", phrase)
                let spaced = try plainIDs("spaced", Self.spaced(phrase))
                phrases += 1
                if spaced.isEmpty {
                    // No token at all (`™ ,`, `😀`): plain FTS5 finds nothing, and neither do we.
                    noToken += 1
                    #expect(ours.isEmpty, "ours \(ours.sorted()) for a phrase of no token: \(context)")
                    continue
                }
                #expect(spaced.contains(id), "the oracle finds the document: \(context)")
                #expect(ours.contains(id), "\(context)")
                if phrase.unicodeScalars.contains(where: Self.isOracleCJK) {
                    withCJK += 1
                    #expect(ours.isSubset(of: spaced), "found beyond the spaced oracle: \(ours.subtracting(spaced).sorted()), \(context)")
                } else {
                    #expect(ours == spaced, "ours \(ours.sorted()), spaced oracle \(spaced.sorted()): \(context)")
                    #expect(raw.isSubset(of: ours), "plain FTS5 found more: \(raw.subtracting(ours).sorted()), \(context)")
                    if raw.count < ours.count { strictlyMoreThanRaw += 1 }
                }
            }
        }
        print("CopiedPhraseTests: \(phrases) phrases (\(withCJK) with CJK, \(noToken) of no token) over \(documents.count) documents; \(strictlyMoreThanRaw) found more than plain FTS5 did")
    }
}
