import Foundation
import PostgresNIO
import Searchlight
import SearchlightHistory

/// User text compiled for the documents of one model (``PostgresDocument``): a `tsquery` the
/// GIN index answers, and an exact check of the terms that hold CJK text.
///
/// - A word is its field-tagged lexeme in any searched field (`'title\u{1F}kernel' |
///   'body\u{1F}kernel'`), or in the one field `title:` names; a prefix is `'…':*`.
/// - A phrase of words is a `<->` phrase in one field (PostgreSQL's positions end at 16,383: a
///   phrase further into a long document is not found). A phrase of more than
///   ``phraseChunk`` words matches as consecutive phrases of that many words.
/// - A term with CJK text needs all its lexemes in one field (its words, each pair of
///   neighbouring CJK characters, a lone character), and then its text as written in the
///   document's ``PostgresDocument/cjkText`` (`strpos`; a regular expression on its field's
///   line for `field:`).
/// - Groups are ANDed, a group's terms ORed; an exclusion without CJK is `!` in the `tsquery`,
///   one with CJK a `NOT (…)` of its check.
///
/// Every lexeme reaches PostgreSQL quoted inside a `tsquery` literal, and every literal as a
/// bind parameter: no user text is ever SQL or `tsquery` syntax.
struct PostgresQueryCompiler {
    /// What a document must satisfy beyond the GIN `tsquery`: SQL over `d.vector` and `d.cjk`.
    indirect enum Condition: Hashable {
        case tsquery(String)
        case contains(String)
        case matches(String)
        case and([Condition])
        case or([Condition])
        case not(Condition)

        func sql(_ binds: inout SQLBinds) -> String {
            switch self {
            case let .tsquery(query): "d.vector @@ \(binds.add(query))::tsquery"
            case let .contains(text): "strpos(d.cjk, \(binds.add(text))) > 0"
            case let .matches(pattern): "d.cjk ~ \(binds.add(pattern))"
            case let .and(parts): "(" + parts.map { $0.sql(&binds) }.joined(separator: " AND ") + ")"
            case let .or(parts): "(" + parts.map { $0.sql(&binds) }.joined(separator: " OR ") + ")"
            case let .not(part): "NOT " + part.sql(&binds)
            }
        }
    }

    /// The query, compiled.
    struct Compiled: Hashable {
        /// For the GIN index (`d.vector @@ match`).
        var match: String
        /// The positive terms only: ranking.
        var rank: String
        /// The exact check of terms with CJK text, if any.
        var recheck: Condition?
        /// Untagged lexemes of every positive word and CJK character, ORed: `ts_headline`
        /// chooses the snippet's fragment with them.
        var headline: String
        /// What highlighting marks (``PostgresHighlighter``).
        var highlights: PostgresHighlighter.Terms
    }

    /// A phrase of more words than this matches as consecutive phrases of this many.
    static let phraseChunk = 32
    /// PostgreSQL's longest lexeme, in bytes.
    static let maximumLexemeBytes = 2_047

    let analyzer: SearchTextAnalyzer
    /// The searched fields (lower case): a word without `field:` is looked for in each.
    let fields: [String]

    /// `nil` when nothing can match (every alternative of a group is a term no document holds).
    func compile(_ structure: SearchQuery.Structure) -> Compiled? {
        guard !fields.isEmpty else { return nil }
        var groups: [String] = []
        var checks: [Condition] = []
        var highlights = PostgresHighlighter.Terms()
        var headline: [String] = []
        for group in structure.groups {
            let terms = group.compactMap(compile)
            guard !terms.isEmpty else { return nil }
            groups.append(terms.count == 1 ? terms[0].query : "(" + terms.map(\.query).joined(separator: " | ") + ")")
            if terms.contains(where: { $0.check != nil }) {
                checks.append(.or(terms.map { term in
                    term.check.map { .and([.tsquery(term.query), $0]) } ?? .tsquery(term.query)
                }))
            }
            for term in group { collectHighlights(term, into: &highlights, headline: &headline) }
        }
        let positive = groups.joined(separator: " & ")
        var match = positive
        for exclusion in structure.exclusions {
            guard let term = compile(exclusion) else { continue } // no document holds it: nothing to exclude
            if let check = term.check {
                checks.append(.not(.and([.tsquery(term.query), check])))
            } else {
                match += " & !" + term.query
            }
        }
        var unique: [String] = []
        for lexeme in headline where !unique.contains(lexeme) { unique.append(lexeme) }
        return Compiled(match: match, rank: positive,
                        recheck: checks.isEmpty ? nil : (checks.count == 1 ? checks[0] : .and(checks)),
                        headline: unique.joined(separator: " | "), highlights: highlights)
    }

    /// A term: its `tsquery` (parenthesized) and, with CJK text, its exact check.
    private func compile(_ term: SearchQuery.Term) -> (query: String, check: Condition?)? {
        let tokens: [(String, SearchTextAnalyzer.TokenKind)] = term.words.compactMap { word in
            let kind = analyzer.kind(of: word)
            if kind == .break { return (PostgresDocument.breakMark, .break) }
            let folded = PostgresDocument.fold(word).replacingOccurrences(of: "\0", with: "")
            return folded.isEmpty ? nil : (folded, kind)
        }
        guard tokens.contains(where: { $0.1 != .break }) else { return nil }
        let fields = term.field.map { [$0] } ?? self.fields
        // A lexeme longer than PostgreSQL keeps is in no document.
        let longest = fields.map(\.utf8.count).max() ?? 0
        if tokens.contains(where: { $0.0.utf8.count + longest + 1 > Self.maximumLexemeBytes }) { return nil }
        let prefix = term.isPrefix && tokens.last?.1 == .word
        if tokens.contains(where: { $0.1 == .cjk }) {
            // Every lexeme in one field: the words, and each CJK run's pairs (a lone character itself).
            var lexemes: [(String, Bool)] = []
            var run: [String] = []
            func flush() {
                if run.count == 1 { lexemes.append((run[0], false)) }
                for index in run.indices.dropFirst() { lexemes.append((run[index - 1] + run[index], false)) }
                run = []
            }
            for (index, (text, kind)) in tokens.enumerated() {
                switch kind {
                case .cjk: run.append(text)
                case .word: flush(); lexemes.append((text, prefix && index == tokens.count - 1))
                case .break: flush()
                }
            }
            flush()
            var seen = Set<String>()
            lexemes = lexemes.filter { seen.insert($0.0 + ($0.1 ? "*" : "")).inserted }
            let perField = fields.map { field in
                "(" + lexemes.map { Self.quoted(PostgresDocument.lexeme($0.0, field: field), prefix: $0.1) }.joined(separator: " & ") + ")"
            }
            var needle = PostgresDocument.cjkSequence(tokens)
            if tokens.first?.1 != .cjk { needle = " " + needle }
            if tokens.last?.1 != .cjk, !prefix { needle += " " }
            let check: Condition = if let field = term.field {
                .matches("(^|\n)\u{1E}" + PostgresDocument.fieldTag(field) + "\u{1F}[^\n]*" + Self.regexEscaped(needle))
            } else {
                .contains(needle)
            }
            return ("(" + perField.joined(separator: " | ") + ")", check)
        }
        // Words: a phrase in one field, in chunks; (lexeme, distance from the one before).
        var chunks: [[(String, Int)]] = [[]]
        var distance = 1
        for (text, kind) in tokens {
            if kind == .break { distance += 1; continue }
            if chunks[chunks.count - 1].count == Self.phraseChunk { chunks.append([]) }
            chunks[chunks.count - 1].append((text, min(distance, 16_384)))
            distance = 1
        }
        let perField = fields.map { field in
            "(" + chunks.enumerated().map { chunkIndex, chunk in
                var phrase = ""
                for (offset, (text, distance)) in chunk.enumerated() {
                    if offset > 0 { phrase += distance == 1 ? " <-> " : " <\(distance)> " }
                    let isLast = chunkIndex == chunks.count - 1 && offset == chunk.count - 1
                    phrase += Self.quoted(PostgresDocument.lexeme(text, field: field), prefix: prefix && isLast)
                }
                return chunk.count > 1 ? "(" + phrase + ")" : phrase
            }.joined(separator: " & ") + ")"
        }
        return ("(" + perField.joined(separator: " | ") + ")", nil)
    }

    private func collectHighlights(_ term: SearchQuery.Term, into terms: inout PostgresHighlighter.Terms, headline: inout [String]) {
        var run: [String] = []
        func flush() { if !run.isEmpty { terms.cjkRuns.insert(run); run = [] } }
        for (index, word) in term.words.enumerated() {
            let kind = analyzer.kind(of: word)
            let folded = PostgresDocument.fold(word).replacingOccurrences(of: "\0", with: "")
            guard kind != .break, !folded.isEmpty, folded.utf8.count <= Self.maximumLexemeBytes else { flush(); continue }
            if kind == .cjk {
                run.append(folded)
                headline.append(Self.quoted(folded, prefix: false))
                continue
            }
            flush()
            let isPrefix = term.isPrefix && index == term.words.count - 1
            if isPrefix { terms.prefixes.insert(folded) } else { terms.words.insert(folded) }
            // ts_headline reads the document with PostgreSQL's `simple` configuration: lower
            // case, diacritics kept.
            for variant in Set([folded, word.lowercased().replacingOccurrences(of: "\0", with: "")]) where variant.utf8.count <= Self.maximumLexemeBytes {
                headline.append(Self.quoted(variant, prefix: isPrefix))
            }
        }
        flush()
    }

    /// A lexeme in a `tsquery` literal: quoted, `'` and `\` escaped.
    static func quoted(_ lexeme: String, prefix: Bool) -> String {
        "'" + lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'" + (prefix ? ":*" : "")
    }

    /// Text as a literal part of a PostgreSQL regular expression: every ASCII character that
    /// is not a letter or digit escaped (`\` before a non-alphanumeric character is that character).
    static func regexEscaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII, !(scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) { escaped.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        return escaped
    }
}

/// Bind parameters of a statement being written: each value once, `$n` in the SQL.
struct SQLBinds {
    var bindings = PostgresBindings()
    private var numbers: [String: Int] = [:]

    /// The placeholder of a text value.
    mutating func add(_ value: String) -> String {
        if let number = numbers[value] { return "$\(number)" }
        bindings.append(value)
        numbers[value] = bindings.count
        return "$\(bindings.count)"
    }

    /// The placeholder of a text array.
    mutating func add(_ values: [String]) -> String {
        bindings.append(values)
        return "$\(bindings.count)"
    }

    /// The placeholder of an integer.
    mutating func add(_ value: Int) -> String {
        bindings.append(Int64(value))
        return "$\(bindings.count)"
    }
}
