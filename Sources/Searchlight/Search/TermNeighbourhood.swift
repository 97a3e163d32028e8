import Foundation
import GRDB
import SearchlightHistory

/// Finds the words of the index's vocabulary (``IndexVocabulary``) within a few edits of a
/// word: insertions, deletions, substitutions and transpositions of neighbours (the optimal
/// string alignment distance), counted in characters.
///
/// It walks the vocabulary as a trie, in key order, carrying the edit-distance row of each
/// prefix and leaving a branch as soon as no word below it can be close enough. A node's
/// children are found by seeks in the vocabulary's primary key:
/// ```sql
/// SELECT "term" FROM searchlight_terms_g<N> WHERE "term" >= ? ORDER BY "term" LIMIT 1;
/// ```
/// and once a branch holds few words, they are read at once and walked in memory:
/// ```sql
/// SELECT "term" FROM searchlight_terms_g<N> WHERE "term" >= ? AND "term" < ? ORDER BY "term" LIMIT 257;
/// ```
/// Once a prefix has used up its edits, only the characters that continue the word can follow,
/// and those are sought directly. Every walk is bounded by ``maximumSeeks``.
package struct TermNeighbourhood {
    /// A vocabulary word (or, for a prefix, every word that starts with it) near the word sought.
    package struct Match: Hashable, Sendable {
        package var term: String
        package var distance: Int
        /// The term is a prefix: every word that starts with it matches.
        package var isPrefix: Bool
    }

    /// At most this many seeks (and in-memory walks of a branch) per word: a bound on the cost
    /// of a walk in a vocabulary of any size. (Measured on WordNet: README, typo tolerance.)
    package static let maximumSeeks = 20_000
    /// A branch with at most this many words is read at once and walked in memory.
    static let branchReadLimit = 256

    /// How many edits a word may differ by: 1 from 5 characters, 2 from 9; none for shorter
    /// words and for words with a digit or a character that is no letter (codes, versions,
    /// identifiers) or a CJK character (a one-character edit makes another word).
    package static func allowedEdits(_ word: String) -> Int {
        let scalars = word.unicodeScalars
        guard scalars.allSatisfy({ ($0.properties.isAlphabetic || $0.properties.generalCategory == .nonspacingMark) && !IndexedText.isCJK($0) }) else { return 0 }
        let count = scalars.count
        return count >= 9 ? 2 : count >= 5 ? 1 : 0
    }

    /// The quoted vocabulary table.
    let table: String
    let db: Database
    /// Whether a walk stopped at ``maximumSeeks``.
    package private(set) var wasBounded = false
    private var seeks = 0

    /// A finder over the vocabulary table `table` (unquoted).
    package init(table: String, _ db: Database) {
        self.table = SQLQuoting.identifier(table)
        self.db = db
    }

    /// Whether the vocabulary holds `word` (or, for a prefix, a word that starts with it).
    package func contains(_ word: String, prefix: Bool) throws -> Bool {
        guard let first = try lookUp(atLeast: word) else { return false }
        return prefix ? first.hasPrefix(word) : first == word
    }

    /// The number of documents that hold `term` (0 if none).
    package func documents(_ term: String) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT \"documents\" FROM \(table) WHERE \"term\" = ?"), arguments: [term]) ?? 0
    }

    /// The vocabulary's words within `edits` of `word`, and with `prefix` its prefixes within
    /// `edits` of `word` (the shortest such prefix of each branch: every word below it matches).
    package mutating func neighbours(of word: String, edits: Int, prefix: Bool) throws -> [Match] {
        let query = Array(word.unicodeScalars)
        guard edits > 0, !query.isEmpty else { return [] }
        var walk = Walk(query: query, edits: edits, prefix: prefix)
        seeks = 0
        let root = Array(0...query.count)
        try visit([], row: root, previous: nil, isTerm: false, branch: nil, bestOnPath: .max, &walk)
        return walk.matches
    }

    private struct Walk {
        var query: [Unicode.Scalar]
        var edits: Int
        var prefix: Bool
        var matches: [Match] = []
    }

    /// The words of a branch read into memory, in key order.
    private typealias Branch = ArraySlice<[Unicode.Scalar]>

    /// Visits `node`, whose edit-distance row is `row`. For a prefix, `bestOnPath` is the
    /// fewest edits of a prefix recorded above it: a longer prefix is recorded only with fewer
    /// (`photosynthe*` with 2 edits of `photosinthes`, then `photosynthes*` with 1).
    private mutating func visit(_ node: [Unicode.Scalar], row: [Int], previous: [Int]?, isTerm: Bool,
                                branch: Branch?, bestOnPath: Int, _ walk: inout Walk) throws {
        let n = walk.query.count
        let distance = row[n]
        var bestOnPath = bestOnPath
        if walk.prefix, distance <= walk.edits, distance < bestOnPath, !node.isEmpty {
            walk.matches.append(Match(term: String(String.UnicodeScalarView(node)), distance: distance, isPrefix: true))
            bestOnPath = distance
        }
        if !walk.prefix, isTerm, distance <= walk.edits {
            walk.matches.append(Match(term: String(String.UnicodeScalarView(node)), distance: distance, isPrefix: false))
        }
        guard let minimum = row.min(), minimum <= walk.edits, minimum < bestOnPath else { return }
        guard seeks < Self.maximumSeeks else { wasBounded = true; return }
        // A small branch (below the first three characters): read its words once, then walk them in memory.
        var branch = branch
        if branch == nil, node.count >= 3 {
            let start = String(String.UnicodeScalarView(node))
            seeks += 1
            let terms = try String.fetchAll(db.cachedStatement(sql: """
                SELECT "term" FROM \(table) WHERE "term" >= ? AND "term" < ? ORDER BY "term" LIMIT ?
                """), arguments: [start, start + "\u{10FFFF}", Self.branchReadLimit + 1])
            if terms.count <= Self.branchReadLimit { branch = ArraySlice(terms.map { Array($0.unicodeScalars) }) }
        }
        // The characters that may follow: any, or once the edits are used up, only those that
        // continue the word (a match, or the second half of a transposition).
        var allowed: [Unicode.Scalar]?
        if minimum == walk.edits {
            var characters = Set<Unicode.Scalar>()
            for j in 0..<n where row[j] == walk.edits { characters.insert(walk.query[j]) }
            if let last = node.last, let previous {
                for j in 1..<n where walk.query[j] == last && previous[j - 1] < walk.edits { characters.insert(walk.query[j - 1]) }
            }
            allowed = characters.sorted { $0.value < $1.value }
        }
        func child(_ character: Unicode.Scalar, isTerm: Bool, _ walk: inout Walk) throws {
            var next = [Int](repeating: 0, count: n + 1)
            next[0] = row[0] + 1
            for j in 1...n {
                let cost = walk.query[j - 1] == character ? 0 : 1
                var value = min(row[j] + 1, next[j - 1] + 1, row[j - 1] + cost)
                if j >= 2, let last = node.last, let previous, character == walk.query[j - 2], last == walk.query[j - 1] {
                    value = min(value, previous[j - 2] + 1)
                }
                next[j] = value
            }
            let childBranch = branch.map { Self.children(of: $0, depth: node.count, character: character) }
            try visit(node + [character], row: next, previous: row, isTerm: isTerm, branch: childBranch, bestOnPath: bestOnPath, &walk)
        }
        if let branch {
            // In memory: the distinct next characters of the branch's words.
            var index = branch.startIndex
            while index < branch.endIndex {
                let term = branch[index]
                guard term.count > node.count else { index += 1; continue }
                let character = term[node.count]
                let end = branch[index...].firstIndex { $0.count <= node.count || $0[node.count] != character } ?? branch.endIndex
                if allowed?.contains(character) ?? true {
                    seeks += 1
                    try child(character, isTerm: branch[index...].contains { $0.count == node.count + 1 && $0[node.count] == character }, &walk)
                }
                index = end
            }
            return
        }
        if let allowed {
            for character in allowed {
                let prefix = String(String.UnicodeScalarView(node + [character]))
                guard let first = try firstTerm(atLeast: prefix), first.hasPrefix(prefix) else { continue }
                try child(character, isTerm: first == prefix, &walk)
            }
            return
        }
        // Every child, one seek each: the first word after the previous child's branch.
        var lower = String(String.UnicodeScalarView(node))
        var strictly = false
        while let first = try firstTerm(atLeast: lower, strictly: strictly) {
            strictly = false
            let scalars = Array(first.unicodeScalars)
            guard scalars.count >= node.count, Array(scalars[..<node.count]) == node else { break }
            if scalars.count == node.count { strictly = true; continue } // the node itself is a word
            let character = scalars[node.count]
            try child(character, isTerm: scalars.count == node.count + 1, &walk)
            guard let successor = Self.successor(character) else { break }
            lower = String(String.UnicodeScalarView(node + [successor]))
            if seeks >= Self.maximumSeeks { wasBounded = true; break }
        }
    }

    /// The words of `branch` whose character at `depth` is `character` (they are contiguous).
    private static func children(of branch: Branch, depth: Int, character: Unicode.Scalar) -> Branch {
        guard let start = branch.firstIndex(where: { $0.count > depth && $0[depth] == character }) else { return branch[branch.endIndex...] }
        let end = branch[start...].firstIndex { !($0.count > depth && $0[depth] == character) } ?? branch.endIndex
        return branch[start..<end]
    }

    /// The next Unicode scalar (skipping surrogates), nil after the last.
    static func successor(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        var value = scalar.value + 1
        if value == 0xD800 { value = 0xE000 }
        return Unicode.Scalar(value)
    }

    private mutating func firstTerm(atLeast lower: String, strictly: Bool = false) throws -> String? {
        seeks += 1
        let sql = strictly ? "SELECT \"term\" FROM \(table) WHERE \"term\" > ? ORDER BY \"term\" LIMIT 1"
                           : "SELECT \"term\" FROM \(table) WHERE \"term\" >= ? ORDER BY \"term\" LIMIT 1"
        return try String.fetchOne(db.cachedStatement(sql: sql), arguments: [lower])
    }

    private func lookUp(atLeast lower: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT \"term\" FROM \(table) WHERE \"term\" >= ? ORDER BY \"term\" LIMIT 1"),
                            arguments: [lower])
    }
}
