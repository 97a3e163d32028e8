import Foundation
import Searchlight
import SearchlightHistory

/// One object's document as PostgreSQL stores it (a row of `documents`): the field values as
/// read from the source's row, and the `tsvector` built in Swift from the same words the local
/// index reads (``SearchTextAnalyzer``), so that PostgreSQL's own parser never decides what a
/// word is.
///
/// - **Lexemes** are the analyzer's tokens, folded (lower case, diacritics removed), as
///   `unicode61 remove_diacritics 2` folds them, each tagged with its field
///   (``lexeme(_:field:)``: `body\u{1F}kernel`), so that `title:word` is a lexeme of its own
///   and a phrase cannot match across fields. A search for a word in any field ORs the word's
///   lexemes of the searched fields; the GIN index keeps one posting list per field and word,
///   so this costs about what one untagged list would.
/// - **CJK**: each character is a lexeme, and so is each pair of neighbouring characters
///   (`文件系统` gives `文 件 系 统 文件 件系 系统`). A query's CJK run matches by its pairs (every
///   pair must be there), then its exact text is checked in ``cjkText`` (PostgreSQL's positions
///   stop at 16,383 and 256 per lexeme, so a phrase of single characters cannot be relied on in
///   long pages).
/// - **Weights** (tsvector labels, as `setweight` gives them): a field's model weight relative
///   to the entity's largest, `≥ 0.75` → A, `≥ 0.35` → B, `≥ 0.15` → C, otherwise D
///   (``weightClass(_:maximum:)``); search ranks with `{D, C, B, A} = {0.1, 0.25, 0.5, 1}`.
/// - **Positions** run through the fields in model order, with a gap between fields and at a
///   CJK break, so a phrase matches neither across fields nor across punctuation in CJK text.
/// - **CJK text** (``cjkText``): each field that holds CJK text is one line,
///   `\u{1E}<field>\u{1F} <tokens> ` (``cjkLine(field:tokens:)``): its folded tokens, CJK
///   characters written together, every other neighbouring pair of tokens (words, CJK runs,
///   breaks as `\u{1D}`) apart by one space. A query term that holds CJK text is checked
///   there as written (`CoreData持久化` as ` coredata 持久化`), anywhere in a line, or in its
///   field's line for `field:`.
public struct PostgresDocument: Hashable, Sendable {
    public var source: String
    public var entity: String
    public var objectID: ObjectID
    /// The history token of the last change applied to it (the snapshot's token after a resync).
    public var token: Int64
    /// The title field's value (display text), if the entity has a title field.
    public var title: String?
    /// Every field's value as read, by column.
    public var fields: [String: String]
    /// The fields other than the title that hold text, prepared and joined by newlines: the text
    /// snippets come from.
    public var body: String
    /// The `tsvector` literal.
    public var vector: String
    /// The folded tokens of each field that holds CJK text, one line per field
    /// (``cjkLine(field:tokens:)``): the text a query term with CJK text is checked in.
    public var cjkText: String
    /// The attribute values as the source row stores them, by attribute name, and how each
    /// compares (its column's affinity and collation): the `attributes` column
    /// (``PostgresAttributes``).
    public var attributes: [String: AttributeValue] = [:]
    public var attributeComparisons: [String: AttributeComparison] = [:]

    /// The numbers the entity's ranking hints read (``Searchlight/DocumentReader/rankingInputs(entity:attributes:in:)``),
    /// in the model's order: the `boosts` column.
    public var rankingInputs: [Double?] = []

    /// The `boosts` column, a JSON array (nil when the entity has no hint). An infinity is
    /// written as the largest double of its sign, as the local boost takes it.
    var boostsJSON: String? {
        guard !rankingInputs.isEmpty else { return nil }
        return "[" + rankingInputs.map { input in
            guard let input, !input.isNaN else { return "null" }
            return "\(min(max(input, -Double.greatestFiniteMagnitude), Double.greatestFiniteMagnitude))"
        }.joined(separator: ",") + "]"
    }

    /// The `attributes` column: nil when the entity has none.
    var attributesJSON: String? { PostgresAttributes.encode(attributes, comparisons: attributeComparisons) }

    /// The key column's value: the object id, with its storage class (`i:42`, `t:abc`, `r:8.5`,
    /// `b:0A1B`); an integral REAL is the integer key SQLite makes it.
    public var objectKey: String { Self.key(objectID) }

    public static func key(_ id: ObjectID) -> String {
        switch id {
        case let .integer(value): "i:\(value)"
        // PostgreSQL's text holds no NUL: a text key with one is written as its UTF-8 in hex, under
        // a prefix of its own (`T:`), so that two keys that differ after a NUL stay two documents.
        case let .text(value) where value.utf8.contains(0): "T:" + value.utf8.map { String(format: "%02X", $0) }.joined()
        case let .text(value): "t:\(value)"
        case let .real(value):
            if let integer = Int64(exactly: value) { "i:\(integer)" } else { "r:\(value)" }
        case let .blob(data): "b:" + data.map { String(format: "%02X", $0) }.joined()
        }
    }

    /// The object id as JSON (as the local search's JSON shows it).
    public var objectJSON: String {
        if case let .integer(value) = objectID { return String(value) }
        // jsonb holds no NUL either: for display, a NUL in a text key shows as U+2400 (␀); the
        // key itself is ``objectKey``.
        if case let .text(value) = objectID, value.utf8.contains(0) {
            let shown = ObjectID.text(String(value.unicodeScalars.map { $0 == "\0" ? "\u{2400}" : Character($0) }))
            return String(decoding: (try? JSONEncoder().encode(shown)) ?? Data("null".utf8), as: UTF8.self)
        }
        let data = (try? JSONEncoder().encode(objectID)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Builds the document of `values` (by column, as ``DocumentReader`` reads them).
    public init(source: String, entity: SearchlightModel.Entity, objectID: ObjectID, token: Int64,
                values: [String: String], attributes: [String: AttributeValue] = [:],
                attributeComparisons: [String: AttributeComparison] = [:], analyzer: SearchTextAnalyzer) {
        self.source = source
        self.attributes = attributes
        self.attributeComparisons = attributeComparisons
        self.entity = entity.name
        self.objectID = objectID
        self.token = token
        let titleColumn = (entity.titleField ?? entity.fields.first)?.column
        title = titleColumn.map { values[$0] ?? "" }
        fields = values
        var builder = VectorBuilder()
        var bodies: [String] = []
        var lines: [String] = []
        let maximum = entity.fields.map(\.weight).max() ?? 1
        for field in entity.fields {
            let prepared = analyzer.prepare(values[field.column] ?? "")
            if field.column != titleColumn, !prepared.isEmpty { bodies.append(prepared) }
            let label = Self.weightClass(field.weight, maximum: maximum)
            let column = field.column.lowercased()
            let tokens = analyzer.tokens(prepared: prepared)
            var previousCJK: String?
            for token in tokens {
                switch token.kind {
                case .break:
                    builder.gap()
                    previousCJK = nil
                case .word:
                    builder.add(Self.lexeme(Self.fold(token.text), field: column), label: label)
                    previousCJK = nil
                case .cjk:
                    let folded = Self.fold(token.text)
                    let position = builder.add(Self.lexeme(folded, field: column), label: label)
                    if let previousCJK { builder.add(Self.lexeme(previousCJK + folded, field: column), label: label, at: position - 1) }
                    previousCJK = folded
                }
            }
            if tokens.contains(where: { $0.kind == .cjk }) {
                lines.append(Self.cjkLine(field: column, tokens: tokens.map { ($0.kind == .break ? Self.breakMark : Self.fold($0.text), $0.kind) }))
            }
            builder.gap()
        }
        body = bodies.joined(separator: "\n")
        vector = builder.literal()
        cjkText = lines.joined(separator: "\n")
    }

    /// The tsvector label of a field of weight `weight`, when the entity's largest is `maximum`.
    public static func weightClass(_ weight: Double, maximum: Double) -> Character {
        let relative = maximum > 0 ? weight / maximum : 1
        if relative >= 0.75 { return "A" }
        if relative >= 0.35 { return "B" }
        if relative >= 0.15 { return "C" }
        return "D"
    }

    /// The lexeme of a folded word (or CJK character, or pair) in the field `column` (lower case).
    public static func lexeme(_ folded: String, field column: String) -> String {
        column + "\u{1F}" + folded
    }

    /// What stands for a CJK break in ``cjkText``.
    public static let breakMark = "\u{1D}"

    /// The ``cjkText`` line of a field: `\u{1E}`, the field (``fieldTag(_:)``), `\u{1F}`, then
    /// ``cjkSequence(_:)`` of its folded tokens between spaces.
    public static func cjkLine(field column: String, tokens: [(String, SearchTextAnalyzer.TokenKind)]) -> String {
        "\u{1E}" + fieldTag(column) + "\u{1F} " + cjkSequence(tokens) + " "
    }

    /// Folded tokens as ``cjkText`` writes them: CJK characters together, other neighbours apart
    /// by one space.
    public static func cjkSequence(_ tokens: [(String, SearchTextAnalyzer.TokenKind)]) -> String {
        var text = ""
        var previous: SearchTextAnalyzer.TokenKind?
        for (token, kind) in tokens {
            if let previous, !(previous == .cjk && kind == .cjk) { text += " " }
            text += token
            previous = kind
        }
        return text
    }

    /// A field name as ``cjkText`` lines start with it: ASCII letters, digits and `_` as they
    /// are, every other byte as `%XX` (no CJK text a query looks for can match it).
    public static func fieldTag(_ column: String) -> String {
        var tag = ""
        for byte in column.utf8 {
            if (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || byte == 0x5F {
                tag.append(Character(Unicode.Scalar(byte)))
            } else {
                tag += String(format: "%%%02X", byte)
            }
        }
        return tag
    }

    /// A word as a lexeme: lower case, without diacritics (queries fold their words the same way).
    public static func fold(_ word: String) -> String {
        // ASCII (most words): lower case is all there is to do.
        if word.utf8.allSatisfy({ $0 < 0x80 }) {
            guard word.utf8.contains(where: { (0x41...0x5A).contains($0) }) else { return word }
            return String(decoding: word.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        return word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
    }
}

/// Builds a `tsvector` literal: `'word':1A,5A 'other':2B`.
struct VectorBuilder {
    /// PostgreSQL keeps positions up to 16,383 and 256 of them per lexeme; a lexeme is at most
    /// 2,047 bytes and a tsvector at most 1 MB.
    static let maximumPosition = 16_383
    static let maximumPositionsPerLexeme = 256
    static let maximumLexemeBytes = 2_047
    static let maximumBytes = 900_000

    /// Each lexeme's positions and labels, in the order lexemes first appeared.
    private var entries: [(lexeme: String, positions: [(Int, Character)])] = []
    private var index: [String: Int] = [:]
    private var next = 1

    /// Adds `lexeme` at the next position (or at `position`); returns the position used.
    @discardableResult
    mutating func add(_ lexeme: String, label: Character, at position: Int? = nil) -> Int {
        let at = position ?? next
        if position == nil { next += 1 }
        guard !lexeme.isEmpty, lexeme.utf8.count <= Self.maximumLexemeBytes else { return at }
        let slot: Int
        if let known = index[lexeme] {
            slot = known
        } else {
            slot = entries.count
            index[lexeme] = slot
            entries.append((lexeme, []))
        }
        if entries[slot].positions.count < Self.maximumPositionsPerLexeme {
            entries[slot].positions.append((min(max(at, 1), Self.maximumPosition), label))
        }
        return at
    }

    /// Leaves a position empty, so that a phrase does not match across it.
    mutating func gap() { next += 1 }

    func literal() -> String {
        var output: [UInt8] = []
        output.reserveCapacity(entries.count * 16)
        for (lexeme, positions) in entries {
            let start = output.count
            if !output.isEmpty { output.append(UInt8(ascii: " ")) }
            output.append(UInt8(ascii: "'"))
            for byte in lexeme.utf8 {
                // Inside quotes, a backslash and a quote are escaped by a backslash, a quote also by doubling.
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "'") { output.append(byte) }
                output.append(byte)
            }
            output.append(UInt8(ascii: "'"))
            output.append(UInt8(ascii: ":"))
            // One position per lexeme once the vector grows large (PostgreSQL's 1 MB limit).
            let kept = output.count > Self.maximumBytes / 2 ? positions.prefix(1) : positions[...]
            for (offset, (position, label)) in kept.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                output.append(contentsOf: String(position).utf8)
                output.append(UInt8(label.asciiValue ?? UInt8(ascii: "D")))
            }
            if output.count > Self.maximumBytes {
                output.removeSubrange(start...)
                break
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
