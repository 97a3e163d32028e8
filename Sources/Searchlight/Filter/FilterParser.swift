import Foundation
import SearchlightHistory

extension SearchFilter {
    /// Parses a filter:
    ///
    /// ```
    /// filter     := or
    /// or         := and ( OR and )*
    /// and        := not ( AND not )*
    /// not        := NOT not | '(' filter ')' | predicate
    /// predicate  := attribute ( op value | [NOT] IN '(' value ( ',' value )* ')' | IS [NOT] NULL )
    /// op         := = | == | != | <> | < | <= | > | >=
    /// value      := 'text' | "text" | [+|-] number        (a quote inside is doubled: 'it''s')
    /// attribute  := name | `any name`                       (a backtick inside is doubled)
    /// ```
    ///
    /// `NOT` binds tighter than `AND`, which binds tighter than `OR`; keywords are
    /// case-insensitive. A number is an integer (`2020`, `-3`), or a real (`1.5`, `2e3`; an
    /// integer too large for 64 bits too, as SQLite reads it).
    ///
    /// - Throws: ``SearchlightHistory/SearchlightError`` `invalidFilter`, with the 1-based
    ///   character position and what was expected there; also beyond ``maximumTerms``
    ///   comparisons, ``maximumValues`` values, ``maximumDepth`` levels of nesting, or 10,000
    ///   characters. Attribute names are checked when a search uses the filter.
    public init(parsing text: String) throws(SearchlightError) {
        var parser = try FilterParser(text)
        self = try parser.parse()
        try validate()
    }
}

/// The recursive-descent parser of ``SearchFilter/init(parsing:)``, over the tokens of a text.
struct FilterParser {
    enum Token: Equatable {
        case word(String)          // a bare name or keyword
        case quotedName(String)    // `name`
        case string(String)
        case number(AttributeValue)
        case symbol(String)        // = != <> < <= > >= ( ) ,
        case end

        var display: String {
            switch self {
            case let .word(word): "\"\(SearchFilter.shown(word))\""
            case let .quotedName(name): "`\(SearchFilter.shown(name))`"
            case let .string(text): "the text \"\(SearchFilter.shown(text))\""
            case let .number(value): "the number \(value)"
            case let .symbol(symbol): "\"\(symbol)\""
            case .end: "the end of the filter"
            }
        }
    }

    static let maximumLength = 10_000

    private var tokens: [(token: Token, position: Int)] = []
    private var index = 0
    private var depth = 0

    init(_ text: String) throws(SearchlightError) {
        let characters = Array(text)
        if characters.count > Self.maximumLength {
            throw SearchlightError(.invalidFilter, "invalid filter: \(characters.count) characters; at most \(Self.maximumLength) are allowed")
        }
        var i = 0
        func fail(_ message: String, at position: Int) -> SearchlightError {
            SearchlightError(.invalidFilter, "invalid filter at character \(position + 1): \(message)")
        }
        while i < characters.count {
            let c = characters[i]
            let start = i
            if c.isWhitespace { i += 1; continue }
            if c == "'" || c == "\"" || c == "`" {
                var value = ""
                i += 1
                var closed = false
                while i < characters.count {
                    if characters[i] == c {
                        if i + 1 < characters.count, characters[i + 1] == c { value.append(c); i += 2; continue }
                        closed = true
                        i += 1
                        break
                    }
                    value.append(characters[i])
                    i += 1
                }
                if !closed { throw fail("the \(c == "`" ? "name" : "text") opened here has no closing \(c)", at: start) }
                if c == "`" {
                    if value.isEmpty { throw fail("an attribute name between backticks is empty", at: start) }
                    tokens.append((.quotedName(value), start))
                } else {
                    tokens.append((.string(value), start))
                }
                continue
            }
            if c.isNumber && c.isASCII || c == "." || ((c == "-" || c == "+") && i + 1 < characters.count
                                                      && (characters[i + 1].isASCII && characters[i + 1].isNumber || characters[i + 1] == ".")) {
                var literal = String(c)
                i += 1
                while i < characters.count {
                    let d = characters[i]
                    if d.isASCII && (d.isNumber || d == ".") { literal.append(d); i += 1 }
                    else if d == "e" || d == "E", i + 1 < characters.count {
                        literal.append(d); i += 1
                        if characters[i] == "+" || characters[i] == "-" { literal.append(characters[i]); i += 1 }
                    } else { break }
                }
                if i < characters.count, characters[i].isLetter || characters[i] == "_" {
                    throw fail("\"\(SearchFilter.shown(literal + String(characters[i])))\" is not a number (quote text, and put backticks around a name that starts with a digit)", at: start)
                }
                let digits = literal.hasPrefix("+") ? String(literal.dropFirst()) : literal
                if !digits.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let integer = Int64(digits) {
                    tokens.append((.number(.integer(integer)), start))
                } else if let real = Double(digits), real.isFinite,
                          digits.range(of: #"^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil {
                    tokens.append((.number(.real(real)), start))
                } else {
                    throw fail("\"\(literal)\" is not a number", at: start)
                }
                continue
            }
            if c.isLetter || c == "_" {
                var word = ""
                while i < characters.count, characters[i].isLetter || characters[i].isNumber || characters[i] == "_" || characters[i] == "$" {
                    word.append(characters[i]); i += 1
                }
                tokens.append((.word(word), start))
                continue
            }
            let two = i + 1 < characters.count ? String([c, characters[i + 1]]) : ""
            if ["!=", "<>", "<=", ">=", "=="].contains(two) {
                tokens.append((.symbol(two == "<>" ? "!=" : two == "==" ? "=" : two), start))
                i += 2
                continue
            }
            if "=<>(),".contains(c) {
                tokens.append((.symbol(String(c)), start))
                i += 1
                continue
            }
            throw fail("unexpected \"\(SearchFilter.shown(String(c)))\" (expected an attribute, a value, an operator or a parenthesis)", at: start)
        }
        tokens.append((.end, characters.count))
    }

    private var current: Token { tokens[index].token }

    private func fail(_ expected: String) -> SearchlightError {
        let (token, position) = tokens[index]
        return SearchlightError(.invalidFilter, "invalid filter at character \(position + 1): expected \(expected), found \(token.display)")
    }

    private func isKeyword(_ keyword: String) -> Bool {
        if case let .word(word) = current { return word.caseInsensitiveCompare(keyword) == .orderedSame }
        return false
    }

    private mutating func take(_ keyword: String) -> Bool {
        guard isKeyword(keyword) else { return false }
        index += 1
        return true
    }

    private mutating func take(symbol: String) -> Bool {
        guard current == .symbol(symbol) else { return false }
        index += 1
        return true
    }

    mutating func parse() throws(SearchlightError) -> SearchFilter {
        if current == .end { throw fail("a condition such as year >= 2020") }
        let filter = try parseOr()
        guard current == .end else { throw fail("AND, OR or the end of the filter") }
        return filter
    }

    private mutating func nest() throws(SearchlightError) {
        depth += 1
        if depth > SearchFilter.maximumDepth {
            throw SearchlightError(.invalidFilter, "invalid filter at character \(tokens[index].position + 1): nested deeper than \(SearchFilter.maximumDepth) levels")
        }
    }

    private mutating func parseOr() throws(SearchlightError) -> SearchFilter {
        var filter = try parseAnd()
        while take("OR") { filter = .or(filter, try parseAnd()) }
        return filter
    }

    private mutating func parseAnd() throws(SearchlightError) -> SearchFilter {
        var filter = try parseNot()
        while take("AND") { filter = .and(filter, try parseNot()) }
        return filter
    }

    private mutating func parseNot() throws(SearchlightError) -> SearchFilter {
        if take("NOT") {
            try nest()
            defer { depth -= 1 }
            return .not(try parseNot())
        }
        if take(symbol: "(") {
            try nest()
            defer { depth -= 1 }
            let filter = try parseOr()
            guard take(symbol: ")") else { throw fail("\")\" (or AND, OR)") }
            return filter
        }
        return try parsePredicate()
    }

    private mutating func parsePredicate() throws(SearchlightError) -> SearchFilter {
        let name: String
        switch current {
        case let .word(word) where !["AND", "OR", "NOT", "IN", "IS", "NULL"].contains(word.uppercased()):
            name = word
        case let .quotedName(quoted):
            name = quoted
        default:
            throw fail("an attribute name (put backticks around a name that is a keyword: `in`)")
        }
        index += 1
        if take("IS") {
            let negated = take("NOT")
            guard take("NULL") else { throw fail(negated ? "NULL" : "NULL or NOT NULL") }
            return negated ? .not(.isNull(name)) : .isNull(name)
        }
        let negated = take("NOT")
        if take("IN") {
            guard take(symbol: "(") else { throw fail("\"(\" and a list of values") }
            var values = [try parseValue()]
            while take(symbol: ",") {
                values.append(try parseValue())
                if values.count > SearchFilter.maximumValues {
                    throw SearchlightError(.invalidFilter, "invalid filter: more than \(SearchFilter.maximumValues) values in IN (…)")
                }
            }
            guard take(symbol: ")") else { throw fail("\",\" or \")\"") }
            return negated ? .not(.oneOf(name, values)) : .oneOf(name, values)
        }
        if negated { throw fail("IN after NOT (or write NOT before the attribute: NOT \(SearchFilter.shown(name)) = …)") }
        guard case let .symbol(symbol) = current, let comparison = SearchFilter.Comparison(rawValue: symbol) else {
            throw fail("an operator after \(SearchFilter.shown(name)): =, !=, <>, <, <=, >, >=, IN, IS NULL or IS NOT NULL")
        }
        index += 1
        return .compare(name, comparison, try parseValue())
    }

    private mutating func parseValue() throws(SearchlightError) -> AttributeValue {
        switch current {
        case let .string(text): index += 1; return .text(text)
        case let .number(value): index += 1; return value
        case let .word(word) where word.uppercased() == "NULL":
            throw fail("a value (use IS NULL to test for NULL)")
        case .word:
            throw fail("a value: a number, or text in quotes (\"swift\" or 'swift')")
        default:
            throw fail("a value: a number, or text in quotes")
        }
    }
}
