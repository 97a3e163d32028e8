import Foundation
import Testing
import SearchlightTestSupport

@Suite struct SecurityTests {
    static var sources: URL {
        var directory = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("Sources")
    }

    /// Interpolations allowed inside SQL text. Values are always bound; identifiers go through
    /// `SQLQuoting`. By convention these local names hold only fragments built from quoted
    /// identifiers, placeholders and constant SQL.
    static let allowedNames: Set<String> = [
        "fts", "documents", "columns", "key", "table", "title", "join", "condition", "placeholders", "assignments", "idColumn", "joinClause", "orderBy",
        "nextTokenExpression", "CaptureTriggers.nextTokenExpression",
        // A collation name from IndexedAttribute.builtInCollation: BINARY, NOCASE or RTRIM only.
        "collation",
        // An integer constant of the log format (a header row's type).
        "LogRowType.transactionHeader.rawValue",
        // Constant SQL of the log format: where a transaction starts.
        "LogRowType.transactionStart",
        // A unique index's term on an expression, as its CREATE INDEX writes it (the app's schema,
        // as a partial index's condition is), and NEW's columns under their quoted names.
        "expression", "newColumns",
        // PostgreSQL search: fragments of placeholders and constant SQL (ranking, snippet, the
        // table of a bounded ranking).
        "rank", "headline", "from",
        // PostgreSQL search: a match's score (ts_rank with placeholders), the newest-first ORDER BY
        // (constant), conditions and LIMIT clauses of placeholders, the ranked rows' relation.
        "score", "newest", "below", "limit", "scope", "relation",
        // PostgreSQL facets: each entity's branch (constant SQL, the match condition's
        // placeholders), and the grouping key (one of two constant expressions).
        "branches.joined(separator: \" UNION ALL \")", "groupKey",
        // PostgreSQL sort: the sort value (placeholders), the page's ORDER BY (constant).
        "sortKey", "pageOrder", "sortOrder",
        // PostgreSQL typo tier: the source condition of a vocabulary look-up (a placeholder),
        // the tier's condition, typo and unlikely counts (placeholders and constant SQL), the
        // newest-first ORDER BY (constant).
        "sourceCondition(&binds)", "filter", "condition(&binds)", "typos.typos", "typos.unlikely", "Self.newestOrder(oneSource: oneSource)", "Self.keyOrder",
        // A "did you mean": the local fts5vocab table (a quoted identifier), PostgreSQL's
        // vocabulary ranges (conditions of placeholders).
        "vocabulary", "ranges.joined(separator: \" OR \")",
    ]
    /// `binds.add(` returns a PostgreSQL placeholder (`$3`) and binds the value;
    /// `PostgresSchema.quoted(` quotes an identifier.
    static let allowedCalls = ["SQLQuoting.identifier(", "SQLQuoting.literal(", "databaseQuestionMarks(", "binds.add(", "PostgresSchema.quoted("]
    /// What a postgres-nio query may splice in with `\(unescaped: …)`: the schema name quoted
    /// by `PostgresSchema.quoted`, and constant clauses. Any other interpolation in such a query
    /// is bound as a parameter.
    static let allowedUnescaped: Set<String> = ["schema", "lockClause", "table"]

    @Test func noSQLIsBuiltByInterpolatingValues() throws {
        let keyword = try Regex(#"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|FROM|WHERE|VALUES|MATCH|LIMIT)\b"#)
        var violations: [String] = []
        let files = FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" && $0.lastPathComponent != "SQLQuoting.swift" }
        #expect(files.count > 20)
        for file in files {
            let source = try String(contentsOf: file, encoding: .utf8)
            for literal in Self.stringLiterals(source) where literal.text.contains(keyword) {
                // GRDB SQL literals bind every interpolated value as an argument.
                let context = source[..<literal.start].suffix(80)
                if context.contains("literal:") || context.contains(": SQL") || context.contains("SQL = ") || context.hasSuffix("+= ") && context.contains("SQL") {
                    continue
                }
                // postgres-nio's PostgresQuery literals bind every interpolated value as a parameter,
                // except `\(unescaped: …)`, spliced as text.
                if context.hasSuffix("query(") {
                    for expression in Self.interpolations(literal.text) where expression.hasPrefix("unescaped:") {
                        let name = expression.dropFirst("unescaped:".count).trimmingCharacters(in: .whitespaces)
                        if !Self.allowedUnescaped.contains(name) { violations.append("\(file.lastPathComponent): \\(\(expression))") }
                    }
                    continue
                }
                for expression in Self.interpolations(literal.text) {
                    let allowed = Self.allowedNames.contains(expression) || Self.allowedCalls.contains { expression.hasPrefix($0) }
                    if !allowed { violations.append("\(file.lastPathComponent): \\(\(expression))") }
                }
            }
        }
        #expect(violations.isEmpty, "SQL built by interpolation outside SQLQuoting: \(violations)")
    }

    @Test func theAuditCatchesAnInterpolatedValue() {
        let source = #"let sql = "SELECT * FROM notes WHERE title = '\(userText)'""#
        let literal = Self.stringLiterals(source).first { $0.text.contains("SELECT") }
        #expect(literal.map { Self.interpolations($0.text) } == ["userText"])
    }

    @Test func createdDatabasesFollowTheUmask() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-umask-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("demo.sqlite").path
        let demo = try await CLI.finish(CLI.start(["-c", "umask 027 && exec \"$0\" demo --db \"$1\"", CLI.binary.path, path],
                                            executable: URL(fileURLWithPath: "/bin/sh")))
        #expect(demo.status == 0)
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let mode = (try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)[.posixPermissions] as? Int) ?? 0o777
            #expect(mode & 0o007 == 0, "\(file) has mode \(String(mode, radix: 8)) under umask 027")
        }
    }

    // MARK: - A small lexer for Swift string literals

    struct Literal { var start: String.Index; var text: Substring }

    static func stringLiterals(_ source: String) -> [Literal] {
        var literals: [Literal] = []
        var index = source.startIndex
        while index < source.endIndex {
            let rest = source[index...]
            if rest.hasPrefix("//") { index = rest.firstIndex(of: "\n") ?? source.endIndex; continue }
            let hashes = rest.prefix { $0 == "#" }.count
            let afterHashes = rest.dropFirst(hashes)
            if afterHashes.hasPrefix("\"\"\"") || afterHashes.hasPrefix("\"") {
                let delimiter = afterHashes.hasPrefix("\"\"\"") ? "\"\"\"" : "\""
                let close = delimiter + String(repeating: "#", count: hashes)
                let bodyStart = afterHashes.index(afterHashes.startIndex, offsetBy: delimiter.count)
                var end = bodyStart
                while end < source.endIndex {
                    if source[end...].hasPrefix(close) && (delimiter == "\"\"\"" || source[source.index(before: end)] != "\\" || hashes > 0) { break }
                    end = source.index(after: end)
                }
                literals.append(Literal(start: index, text: source[bodyStart..<end]))
                index = end < source.endIndex ? source.index(end, offsetBy: close.count) : end
                continue
            }
            index = source.index(after: index)
        }
        return literals
    }

    /// The expressions of `\( … )` interpolations, with nested parentheses.
    static func interpolations(_ text: Substring) -> [String] {
        var result: [String] = []
        var index = text.startIndex
        while let range = text[index...].range(of: "\\(") {
            var depth = 1
            var end = range.upperBound
            while end < text.endIndex && depth > 0 {
                if text[end] == "(" { depth += 1 } else if text[end] == ")" { depth -= 1 }
                if depth > 0 { end = text.index(after: end) }
            }
            result.append(String(text[range.upperBound..<end]))
            index = end < text.endIndex ? text.index(after: end) : end
        }
        return result
    }
}
