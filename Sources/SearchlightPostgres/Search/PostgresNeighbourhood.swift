import Foundation
import Logging
import PostgresNIO
import Searchlight

/// Finds the words of PostgreSQL's vocabulary (schema version 5, kept by triggers) within a
/// few edits of a word, as the local index finds them in its own: insertions, deletions,
/// substitutions and transpositions of neighbours (the optimal string alignment distance), in
/// characters. The same words and distances as the local walk (both are exact; the tests
/// compare them), found another way: a walk of the vocabulary as a trie, one level at a time,
/// each level's look-ups in one statement (a round trip per level, not per look-up).
///
/// A node of the walk is a prefix with the edit-distance row of the word sought. Its children
/// are found by a skip scan of the vocabulary's key, or, once the node has used up its edits,
/// only the characters that continue the word are looked up (the first word at or after the
/// node and the character: does any word start so, and is it one):
/// ```sql
/// SELECT p.i, (SELECT v.word FROM vocabulary v WHERE v.word >= p.prefix ORDER BY v.word LIMIT 1)
/// FROM unnest($1::text[]) WITH ORDINALITY p(prefix, i);
/// ```
/// Bounded as locally: at most ``maximumLookUps`` look-ups a word (``wasBounded`` says when it stopped).
struct PostgresNeighbourhood {
    struct Match: Hashable, Sendable {
        var term: String
        var distance: Int
        var isPrefix: Bool
    }

    /// At most this many look-ups (a child found or sought) per word, as the local walk's seeks.
    static let maximumLookUps = 20_000

    let schema: String
    /// Only the words of these sources (all when nil).
    let sources: [String]?
    let connection: PostgresConnection
    let logger: Logger
    private(set) var wasBounded = false

    init(schema: String, sources: [String]?, connection: PostgresConnection, logger: Logger) {
        self.schema = schema
        self.sources = sources
        self.connection = connection
        self.logger = logger
    }

    private var table: String { PostgresSchema.quoted(schema) + ".vocabulary" }

    private func sourceCondition(_ binds: inout SQLBinds) -> String {
        guard let sources else { return "" }
        return " AND v.source = ANY(\(binds.add(sources)))"
    }

    /// Whether the vocabulary holds `word` (or, for a prefix, a word that starts with it).
    func contains(_ word: String, prefix: Bool) async throws -> Bool {
        var binds = SQLBinds()
        let sql = "SELECT v.word FROM \(table) v WHERE v.word >= \(binds.add(word))\(sourceCondition(&binds)) ORDER BY v.word LIMIT 1"
        for try await first in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger).decode(String.self) {
            return prefix ? first.hasPrefix(word) : first == word
        }
        return false
    }

    /// The vocabulary's words that begin with one of `prefixes`, each with the number of
    /// documents that hold it (summed over the sources): a "did you mean"'s candidates
    /// (``Searchlight/SearchExplanation/Draft``).
    func documents(beginningWith prefixes: [String]) async throws -> [String: Int] {
        var binds = SQLBinds()
        var ranges: [String] = []
        for prefix in prefixes {
            guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { continue }
            let end = String(prefix.unicodeScalars.dropLast()) + String(next)
            ranges.append("(v.word >= \(binds.add(prefix)) AND v.word < \(binds.add(end)))")
        }
        guard !ranges.isEmpty else { return [:] }
        let sql = """
            SELECT v.word, sum(v.documents) FROM \(table) v WHERE (\(ranges.joined(separator: " OR ")))\(sourceCondition(&binds))
            GROUP BY v.word
            """
        var counts: [String: Int] = [:]
        for try await (word, count) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((String, Int64).self) {
            counts[word] = Int(count)
        }
        return counts
    }

    /// The number of documents that hold each term (summed over the sources), or for a
    /// prefix the most that hold one word starting with it.
    func documents(_ terms: [(term: String, isPrefix: Bool)]) async throws -> [String: Int] {
        guard !terms.isEmpty else { return [:] }
        var binds = SQLBinds()
        let words = terms.map(\.term), prefixes = terms.map { $0.isPrefix ? "t" : "f" }
        let sql = """
            SELECT p.word, p.prefix, (SELECT max(n) FROM (SELECT sum(v.documents) AS n FROM \(table) v
                WHERE v.word >= p.word AND v.word <= (CASE WHEN p.prefix = 't' THEN p.word || U&'\\+10FFFF' ELSE p.word END)\(sourceCondition(&binds))
                GROUP BY v.word) x)
            FROM unnest(\(binds.add(words))::text[], \(binds.add(prefixes))::text[]) AS p(word, prefix)
            """
        var counts: [String: Int] = [:]
        for try await (word, prefix, count) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((String, String, Int64?).self) {
            counts[(prefix == "t" ? "*" : "") + word] = Int(count ?? 0)
        }
        return counts
    }

    /// A node: a prefix of vocabulary words, its row and its parent's, and once its branch
    /// was read into memory, the branch's words.
    private struct Node {
        var scalars: [UInt32]
        var row: [Int]
        var parentRow: [Int]
        var isTerm: Bool
        var bestOnPath: Int
        var branch: ArraySlice<[UInt32]>?
    }

    /// A branch with at most this many words (below the first two characters, where any
    /// character may still follow) is read at once and walked in memory, as locally.
    static let branchReadLimit = 256

    /// The vocabulary's words within `edits` of `word`, and with `prefix` its prefixes within
    /// `edits` (the shortest of each branch, and a longer one only with fewer edits); with
    /// `length`, only words of that many characters.
    mutating func neighbours(of word: String, edits: Int, prefix: Bool, length: Int? = nil) async throws -> [Match] {
        let query = word.unicodeScalars.map(\.value)
        let n = query.count
        guard edits > 0, n > 0, n <= SearchTextAnalyzer.maximumVocabularyWordBytes + edits else { return [] }
        var matches: [Match] = []
        var lookUps = 0
        var frontier = [Node(scalars: [], row: Array(0...n), parentRow: [], isTerm: false, bestOnPath: .max, branch: nil)]
        while !frontier.isEmpty {
            // What each node needs: every child, or only the characters that continue the word
            // (`allowed`); from memory when its branch was read.
            var allowed: [[UInt32]?] = Array(repeating: nil, count: frontier.count)
            var expand: [Int] = []
            for (index, node) in frontier.enumerated() {
                let depth = node.scalars.count
                let distance = node.row[n]
                var best = node.bestOnPath
                if prefix, distance <= edits, distance < best, depth > 0 {
                    matches.append(Match(term: Self.text(node.scalars), distance: distance, isPrefix: true))
                    best = distance
                }
                if !prefix, node.isTerm, distance <= edits, length.map({ $0 == depth }) ?? true {
                    matches.append(Match(term: Self.text(node.scalars), distance: distance, isPrefix: false))
                }
                frontier[index].bestOnPath = best
                if let length, depth >= length { continue }
                let minimum = node.row.min()!
                guard minimum <= edits, minimum < best else { continue }
                if minimum == edits {
                    var characters: [UInt32] = []
                    for j in 0..<n where node.row[j] == edits && !characters.contains(query[j]) { characters.append(query[j]) }
                    if depth >= 1 {
                        let last = node.scalars[depth - 1]
                        for j in 1..<max(n, 1) where query[j] == last && node.parentRow[j - 1] < edits && !characters.contains(query[j - 1]) {
                            characters.append(query[j - 1])
                        }
                    }
                    allowed[index] = characters.sorted()
                }
                expand.append(index)
            }
            guard !expand.isEmpty else { break }
            guard lookUps < Self.maximumLookUps else {
                wasBounded = true
                break
            }
            // Branches below the first two characters, where any character may follow: read
            // the small ones into memory.
            let reads = expand.filter { frontier[$0].branch == nil && allowed[$0] == nil && frontier[$0].scalars.count >= 2 }
            if !reads.isEmpty {
                lookUps += reads.count
                let branches = try await branchWords(of: reads.map { Self.text(frontier[$0].scalars) })
                for (node, words) in zip(reads, branches) {
                    if let words { frontier[node].branch = ArraySlice(words.map { $0.unicodeScalars.map(\.value) }) }
                }
            }
            var children: [(node: Int, character: UInt32, isTerm: Bool, branch: ArraySlice<[UInt32]>?)] = []
            let probes: [(node: Int, character: UInt32)] = []
            var completions: [(node: Int, word: [UInt32])] = []
            var enumerate: [Int] = []
            for index in expand {
                let node = frontier[index], depth = node.scalars.count
                if let branch = node.branch {
                    // In memory: the words of each child are contiguous, its own word (if any) first.
                    var at = branch.startIndex
                    while at < branch.endIndex {
                        guard branch[at].count > depth else { at += 1; continue }
                        let character = branch[at][depth]
                        var end = at + 1
                        while end < branch.endIndex, branch[end].count > depth, branch[end][depth] == character { end += 1 }
                        if allowed[index]?.contains(character) ?? true {
                            lookUps += 1
                            children.append((index, character, branch[at].count == depth + 1, branch[at..<end]))
                        }
                        at = end
                    }
                } else if allowed[index] != nil {
                    // Its edits used up: the rest of a word must be the rest of the one sought,
                    // from where the node's row reaches the edits, or (a transposition at the
                    // node's last character) the character before it and then the rest. Those
                    // few strings are looked up at once, whole.
                    var candidates: [[UInt32]] = []
                    for j in 0...n where node.row[j] == edits { candidates.append(node.scalars + query[j...]) }
                    if depth >= 1 {
                        let last = node.scalars[depth - 1]
                        for j in 1..<max(n, 1) where query[j] == last && node.parentRow[j - 1] < edits {
                            candidates.append(node.scalars + [query[j - 1]] + query[(j + 1)...])
                        }
                    }
                    for candidate in Set(candidates) where candidate.count > depth {
                        if let length, candidate.count != length { continue }
                        completions.append((index, candidate))
                    }
                } else {
                    enumerate.append(index)
                }
            }
            if !probes.isEmpty {
                let prefixes = probes.map { Self.text(frontier[$0.node].scalars + [$0.character]) }
                lookUps += prefixes.count
                let firsts = try await firstWords(atLeast: prefixes)
                for (probe, (sought, first)) in zip(probes, zip(prefixes, firsts)) {
                    guard let first, first.hasPrefix(sought) else { continue }
                    children.append((probe.node, probe.character, first == sought, nil))
                }
            }
            if !completions.isEmpty {
                let texts = completions.map { Self.text($0.word) }
                lookUps += texts.count
                // Whole words are looked up at once (`= ANY`); a prefix needs a seek each.
                let held = prefix ? [] : try await words(in: texts)
                let firsts = prefix ? try await firstWords(atLeast: texts) : []
                var found: [(node: Int, word: [UInt32], distance: Int)] = []
                for (offset, (completion, text)) in zip(completions, texts).enumerated() {
                    if prefix {
                        guard let first = firsts[offset], first.hasPrefix(text) else { continue }
                    } else {
                        guard held.contains(text) else { continue }
                    }
                    let distance = Self.distance(completion.word, query)
                    guard distance <= edits else { continue }
                    found.append((completion.node, completion.word, distance))
                }
                for item in found {
                    // A prefix is recorded once per branch: not below another found from the same node.
                    if prefix, found.contains(where: { $0.node == item.node && $0.word.count < item.word.count && item.word.starts(with: $0.word) }) { continue }
                    matches.append(Match(term: Self.text(item.word), distance: item.distance, isPrefix: prefix))
                }
            }
            if !enumerate.isEmpty {
                let found = try await childWords(of: enumerate.map { Self.text(frontier[$0].scalars) })
                lookUps += found.reduce(0) { $0 + $1.count } + enumerate.count
                for (node, words) in zip(enumerate, found) {
                    let depth = frontier[node].scalars.count
                    for first in words {
                        let scalars = first.unicodeScalars.map(\.value)
                        guard scalars.count > depth else { continue }
                        children.append((node, scalars[depth], scalars.count == depth + 1, nil))
                    }
                }
            }
            var next: [Node] = []
            next.reserveCapacity(children.count)
            for (index, character, isTerm, branch) in children {
                let node = frontier[index]
                let depth = node.scalars.count
                var row = [Int](repeating: 0, count: n + 1)
                row[0] = node.row[0] + 1
                for j in 1...n {
                    let cost = query[j - 1] == character ? 0 : 1
                    var value = min(node.row[j] + 1, row[j - 1] + 1, node.row[j - 1] + cost)
                    if j >= 2, depth >= 1, character == query[j - 2], node.scalars[depth - 1] == query[j - 1] {
                        value = min(value, node.parentRow[j - 2] + 1)
                    }
                    row[j] = value
                }
                next.append(Node(scalars: node.scalars + [character], row: row, parentRow: node.row, isTerm: isTerm,
                                 bestOnPath: node.bestOnPath, branch: branch))
            }
            frontier = next
        }
        return matches
    }

    /// The words of each branch (those that start with the prefix, the prefix itself
    /// included), in key order, when it holds at most ``branchReadLimit`` of them; nil for a
    /// larger one (only whether there is one more is read, not sent).
    private func branchWords(of prefixes: [String]) async throws -> [[String]?] {
        var binds = SQLBinds()
        let filter = sourceCondition(&binds)
        let sql = """
            SELECT p.i, CASE WHEN cardinality(a.words) <= \(binds.add(Self.branchReadLimit)) THEN a.words END
            FROM unnest(\(binds.add(prefixes))::text[]) WITH ORDINALITY AS p(prefix, i)
            CROSS JOIN LATERAL (SELECT ARRAY(SELECT DISTINCT v.word FROM \(table) v
                                             WHERE v.word >= p.prefix AND v.word < p.prefix || U&'\\+10FFFF'\(filter)
                                             ORDER BY v.word LIMIT \(binds.add(Self.branchReadLimit + 1))) AS words) a
            """
        var result = [[String]?](repeating: nil, count: prefixes.count)
        for try await (index, words) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((Int64, [String]?).self) { result[Int(index) - 1] = words }
        return result
    }

    /// Which of `words` the vocabulary holds, in one index scan.
    private func words(in words: [String]) async throws -> Set<String> {
        var binds = SQLBinds()
        let sql = "SELECT DISTINCT v.word FROM \(table) v WHERE v.word = ANY(\(binds.add(words))::text[])\(sourceCondition(&binds))"
        var held = Set<String>()
        for try await word in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger).decode(String.self) {
            held.insert(word)
        }
        return held
    }

    /// The first word at or after each of `prefixes` (nil past the last), in one statement.
    private func firstWords(atLeast prefixes: [String]) async throws -> [String?] {
        var binds = SQLBinds()
        let sql = """
            SELECT p.i, (SELECT v.word FROM \(table) v WHERE v.word >= p.prefix\(sourceCondition(&binds)) ORDER BY v.word LIMIT 1)
            FROM unnest(\(binds.add(prefixes))::text[]) WITH ORDINALITY AS p(prefix, i)
            """
        var result = [String?](repeating: nil, count: prefixes.count)
        for try await (index, word) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((Int64, String?).self) { result[Int(index) - 1] = word }
        return result
    }

    /// For each prefix, the first word of each of its children (the words that start with the
    /// prefix and one more character, the shortest first: the child itself when it is a
    /// word), by a skip scan: from each child, the next starts at the prefix and the
    /// character's successor.
    private func childWords(of prefixes: [String]) async throws -> [[String]] {
        var binds = SQLBinds()
        let filter = sourceCondition(&binds)
        let sql = """
            SELECT p.i, s.w FROM unnest(\(binds.add(prefixes))::text[]) WITH ORDINALITY AS p(prefix, i)
            CROSS JOIN LATERAL (
                WITH RECURSIVE s(w) AS (
                    (SELECT v.word FROM \(table) v WHERE v.word > p.prefix AND v.word < p.prefix || U&'\\+10FFFF'\(filter) ORDER BY v.word LIMIT 1)
                    UNION ALL
                    SELECT (SELECT v.word FROM \(table) v
                            WHERE v.word >= left(s.w, char_length(p.prefix)) || chr(CASE ascii(substr(s.w, char_length(p.prefix) + 1, 1))
                                                                                     WHEN 55295 THEN 57344 ELSE ascii(substr(s.w, char_length(p.prefix) + 1, 1)) + 1 END)
                              AND v.word < p.prefix || U&'\\+10FFFF'\(filter) ORDER BY v.word LIMIT 1)
                    FROM s WHERE s.w IS NOT NULL AND ascii(substr(s.w, char_length(p.prefix) + 1, 1)) < 1114111
                ) SELECT s.w FROM s WHERE s.w IS NOT NULL) s
            """
        var result = [[String]](repeating: [], count: prefixes.count)
        for try await (index, word) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: logger)
            .decode((Int64, String).self) { result[Int(index) - 1].append(word) }
        return result
    }

    /// The optimal string alignment distance between two words.
    static func distance(_ a: [UInt32], _ b: [UInt32]) -> Int {
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                var value = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, rows[i - 2][j - 2] + 1) }
                rows[i][j] = value
            }
        }
        return rows[a.count][b.count]
    }

    static func text(_ scalars: [UInt32]) -> String {
        var text = String.UnicodeScalarView()
        for value in scalars { if let scalar = Unicode.Scalar(value) { text.append(scalar) } }
        return String(text)
    }
}
