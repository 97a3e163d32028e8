import Foundation
import Searchlight
import SearchlightHistory

/// One object's document as PostgreSQL stores it (a row of `documents`): the field values as
/// read from the source's row, and the `tsvector` built in Swift from the same words the local
/// index reads (``SearchTextAnalyzer``), so that PostgreSQL's own parser never decides what a
/// word is.
///
/// - **Lexemes** are the analyzer's tokens, folded (lower case, diacritics removed), as
///   `unicode61 remove_diacritics 2` folds them.
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
    /// The fields other than the title, prepared and joined by newlines: the text snippets come from.
    public var body: String
    /// The `tsvector` literal.
    public var vector: String
    /// The CJK runs of every field, prepared, one per line: the text a CJK run is checked in.
    public var cjkText: String

    /// The key column's value: the object id, with its storage class (`i:42`, `t:abc`, `r:8.5`,
    /// `b:0A1B`); an integral REAL is the integer key SQLite makes it.
    public var objectKey: String { Self.key(objectID) }

    public static func key(_ id: ObjectID) -> String {
        switch id {
        case let .integer(value): "i:\(value)"
        case let .text(value): "t:\(value)"
        case let .real(value):
            if let integer = Int64(exactly: value) { "i:\(integer)" } else { "r:\(value)" }
        case let .blob(data): "b:" + data.map { String(format: "%02X", $0) }.joined()
        }
    }

    /// The object id as JSON (as the local search's JSON shows it).
    public var objectJSON: String {
        let data = (try? JSONEncoder().encode(objectID)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Builds the document of `values` (by column, as ``DocumentReader`` reads them).
    public init(source: String, entity: SearchlightModel.Entity, objectID: ObjectID, token: Int64,
                values: [String: String], analyzer: SearchTextAnalyzer) {
        self.source = source
        self.entity = entity.name
        self.objectID = objectID
        self.token = token
        let titleColumn = (entity.titleField ?? entity.fields.first)?.column
        title = titleColumn.map { values[$0] ?? "" }
        fields = values
        var builder = VectorBuilder()
        var bodies: [String] = []
        var runs: [String] = []
        let maximum = entity.fields.map(\.weight).max() ?? 1
        for field in entity.fields {
            let prepared = analyzer.prepare(values[field.column] ?? "")
            if field.column != titleColumn { bodies.append(prepared) }
            let label = Self.weightClass(field.weight, maximum: maximum)
            var run = ""
            var previousCJK: String?
            for token in analyzer.tokens(prepared: prepared) {
                switch token.kind {
                case .break:
                    builder.gap()
                    previousCJK = nil
                    if !run.isEmpty { runs.append(run); run = "" }
                case .word:
                    builder.add(Self.fold(token.text), label: label)
                    previousCJK = nil
                    if !run.isEmpty { runs.append(run); run = "" }
                case .cjk:
                    let folded = Self.fold(token.text)
                    let position = builder.add(folded, label: label)
                    if let previousCJK { builder.add(previousCJK + folded, label: label, at: position - 1) }
                    previousCJK = folded
                    run += folded
                }
            }
            if !run.isEmpty { runs.append(run) }
            builder.gap()
        }
        body = bodies.joined(separator: "\n")
        vector = builder.literal()
        cjkText = runs.joined(separator: "\n")
    }

    /// The tsvector label of a field of weight `weight`, when the entity's largest is `maximum`.
    public static func weightClass(_ weight: Double, maximum: Double) -> Character {
        let relative = maximum > 0 ? weight / maximum : 1
        if relative >= 0.75 { return "A" }
        if relative >= 0.35 { return "B" }
        if relative >= 0.15 { return "C" }
        return "D"
    }

    /// A word as a lexeme: lower case, without diacritics (queries fold their words the same way).
    public static func fold(_ word: String) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
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

    private var positions: [String: [(Int, Character)]] = [:]
    private var order: [String] = []
    private var next = 1

    /// Adds `lexeme` at the next position (or at `position`); returns the position used.
    @discardableResult
    mutating func add(_ lexeme: String, label: Character, at position: Int? = nil) -> Int {
        let at = position ?? next
        if position == nil { next += 1 }
        guard !lexeme.isEmpty, lexeme.utf8.count <= Self.maximumLexemeBytes else { return at }
        if positions[lexeme] == nil { order.append(lexeme); positions[lexeme] = [] }
        if positions[lexeme]!.count < Self.maximumPositionsPerLexeme {
            positions[lexeme]!.append((min(max(at, 1), Self.maximumPosition), label))
        }
        return at
    }

    /// Leaves a position empty, so that a phrase does not match across it.
    mutating func gap() { next += 1 }

    func literal() -> String {
        var output = ""
        var bytes = 0
        for lexeme in order {
            let escaped = lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
            var entry = "'" + escaped + "':"
            let list = positions[lexeme]!
            // One position per lexeme once the vector grows large (PostgreSQL's 1 MB limit).
            let kept = bytes > Self.maximumBytes / 2 ? list.prefix(1) : list[...]
            entry += kept.map { "\($0.0)\($0.1)" }.joined(separator: ",")
            bytes += entry.utf8.count
            if bytes > Self.maximumBytes { break }
            if !output.isEmpty { output += " " }
            output += entry
        }
        return output
    }
}
