import Foundation
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory

extension PostgresSearch {
    /// Completions of the last word of `text`, the most likely first, as the local
    /// ``Searchlight/SearchIndex/suggest(_:limit:typos:)`` gives them: the words of the
    /// searched sources' vocabulary that start with it, by the number of documents that hold
    /// them (summed over the sources), and with typo tolerance, when none does, the words that
    /// start within 1 edit of a prefix of 5 letters or more (2 from 9), fewer typos first.
    ///
    /// ```sql
    /// SELECT v.word, sum(v.documents) AS n FROM "searchlight".vocabulary v
    /// WHERE v.word >= $1 AND v.word < $1 || U&'\+10FFFF' [AND v.source = ANY($2)]
    /// GROUP BY v.word ORDER BY n DESC, v.word LIMIT $3;
    /// ```
    ///
    /// Text whose last word has no letters or digits, is CJK, or ends with white space has no
    /// completions (an empty array).
    /// - Throws: `invalidArgument` for a limit below 1 or an unknown source; `notInstalled`;
    ///   `postgresError`.
    public func suggest(_ text: String, sources names: Set<String>? = nil, limit: Int = 10,
                        typos: TypoTolerance = .on) async throws(SearchlightError) -> [SearchSuggestion] {
        guard limit >= 1 else { throw SearchlightError(.invalidArgument, "invalid limit \(limit): it must be at least 1") }
        return try await reading("suggest completions") { connection in
            var binds = SQLBinds()
            var sql = "SELECT source, model::text FROM \(PostgresSchema.quoted(schema)).sources"
            if let names { sql += " WHERE source = ANY(\(binds.add(names.sorted())))" }
            var models: [(String, SearchlightModel)] = []
            for try await (source, json) in try await connection.query(PostgresQuery(unsafeSQL: sql + " ORDER BY source", binds: binds.bindings), logger: logger)
                .decode((String, String).self) {
                models.append((source, try SearchlightModel(jsonData: Data(json.utf8))))
            }
            if let names, let unknown = names.sorted().first(where: { name in !models.contains { $0.0 == name } }) {
                throw SearchlightError(.invalidArgument, "unknown source \"\(UserText.shown(unknown))\": PostgreSQL holds no documents of it")
            }
            guard let model = models.first?.1 else { return [] }
            let analyzer = SearchTextAnalyzer(model: model)
            guard let (head, typed) = analyzer.lastWord(of: text) else { return [] }
            let tokens = analyzer.tokens(prepared: analyzer.prepare(typed))
            guard tokens.count == 1, tokens[0].kind == .word else { return [] }
            let prefix = PostgresDocument.fold(tokens[0].text)
            guard SearchTextAnalyzer.isVocabularyWord(prefix) else { return [] }
            let sources = names.map { _ in models.map(\.0) }
            var found = try await completions(of: prefix, typos: 0, sources: sources, limit: limit, connection)
            // Quoted text matches exactly: a last word after an odd number of quotes is inside one.
            let isQuoted = head.reduce(0) { $0 + ($1 == "\"" ? 1 : 0) } % 2 == 1
            if found.isEmpty, typos == .on, !isQuoted {
                var finder = PostgresNeighbourhood(schema: schema, sources: sources, connection: connection, logger: logger)
                let allowed = TypoTolerance.allowedEdits(prefix)
                // One walk with every edit allowed: its matches of fewer edits are those a walk
                // of fewer finds (a path's row minimum never falls), unless a bound cut it short.
                func walk(_ edits: Int) async throws -> [PostgresNeighbourhood.Match] {
                    try await finder.neighbours(of: prefix, edits: edits, prefix: true)
                        .filter { $0.distance > 0 && TypoTolerance.isCorrectable($0.term) }
                }
                let all = try await walk(allowed)
                let isBounded = finder.wasBounded
                var edits = 1
                while edits <= allowed {
                    let matches = edits == allowed ? all : isBounded ? try await walk(edits) : all.filter { $0.distance <= edits }
                    found = try await corrections(of: matches.map { ($0.term, $0.distance) }, sources: sources, limit: limit, connection)
                    found.sort { a, b in
                        a.typos != b.typos ? a.typos < b.typos : a.documents != b.documents ? a.documents > b.documents : a.word < b.word
                    }
                    var seen = Set<String>()
                    found = found.filter { seen.insert($0.word).inserted }
                    if found.count >= limit { break }
                    edits += 1
                }
            }
            var seen = Set<String>()
            return found.filter { seen.insert($0.word).inserted }.prefix(limit).map { completion in
                SearchSuggestion(word: completion.word, text: head + completion.word, documents: completion.documents, typos: completion.typos)
            }
        }
    }

    /// For each correction (a prefix within `typos` edits), the `limit` words of letters that
    /// start with it, by documents, as search corrects, in one statement.
    private func corrections(of prefixes: [(term: String, typos: Int)], sources: [String]?, limit: Int,
                             _ connection: PostgresConnection) async throws -> [SearchSuggestion] {
        guard !prefixes.isEmpty else { return [] }
        var binds = SQLBinds()
        let filter = sources.map { " AND v.source = ANY(\(binds.add($0)))" } ?? ""
        let sql = """
            SELECT p.i, w.word, w.n FROM unnest(\(binds.add(prefixes.map(\.term)))::text[]) WITH ORDINALITY AS p(prefix, i)
            CROSS JOIN LATERAL (SELECT v.word, sum(v.documents)::int8 AS n FROM \(PostgresSchema.quoted(schema)).vocabulary v
                                WHERE v.word >= p.prefix AND v.word < p.prefix || U&'\\+10FFFF'\(filter)
                                GROUP BY v.word ORDER BY n DESC, v.word) w
            ORDER BY p.i, w.n DESC, w.word
            """
        var found: [SearchSuggestion] = []
        var counts: [Int64: Int] = [:]
        for try await (index, word, documents) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((Int64, String, Int64).self) {
            guard counts[index, default: 0] < limit, TypoTolerance.isCorrectable(word) else { continue }
            counts[index, default: 0] += 1
            found.append(SearchSuggestion(word: word, text: "", documents: Int(documents), typos: prefixes[Int(index) - 1].typos))
        }
        return found
    }

    /// The `limit` words that start with `prefix`, by documents; for a correction (`typos` > 0)
    /// only words of letters, as search corrects.
    private func completions(of prefix: String, typos: Int, sources: [String]?, limit: Int,
                             _ connection: PostgresConnection) async throws -> [SearchSuggestion] {
        var binds = SQLBinds()
        var sql = "SELECT v.word, sum(v.documents)::int8 AS n FROM \(PostgresSchema.quoted(schema)).vocabulary v "
            + "WHERE v.word >= \(binds.add(prefix)) AND v.word < \(binds.add(prefix)) || U&'\\+10FFFF'"
        if let sources { sql += " AND v.source = ANY(\(binds.add(sources)))" }
        sql += " GROUP BY v.word ORDER BY n DESC, v.word"
        if typos == 0 { sql += " LIMIT \(binds.add(limit))" }
        var found: [SearchSuggestion] = []
        for try await (word, documents) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((String, Int64).self) {
            guard found.count < limit else { break }
            if typos > 0, !TypoTolerance.isCorrectable(word) { continue }
            found.append(SearchSuggestion(word: word, text: "", documents: Int(documents), typos: typos))
        }
        return found
    }
}
