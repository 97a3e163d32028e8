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
/// and once a branch holds few words (asked first: is there a 257th?), they are read at once
/// and walked in memory:
/// ```sql
/// SELECT "term" FROM searchlight_terms_g<N> WHERE "term" >= ? AND "term" < ? ORDER BY "term" LIMIT 1 OFFSET 256;
/// SELECT "term" FROM searchlight_terms_g<N> WHERE "term" >= ? AND "term" < ? ORDER BY "term" LIMIT 256;
/// ```
/// Once a prefix has used up its edits, only the characters that continue the word can follow,
/// and those are sought directly, in order: the word a seek finds also tells which of the next
/// characters no word continues with. Every walk is bounded by ``maximumSeeks``.
package struct TermNeighbourhood {
    /// A vocabulary word (or, for a prefix, every word that starts with it) near the word sought.
    package struct Match: Hashable, Sendable {
        package var term: String
        package var distance: Int
        /// The term is a prefix: every word that starts with it matches.
        package var isPrefix: Bool
        /// One edit that explains the word sought in few ways (``isLikelyEdit(of:into:)``).
        package var isLikely = false
    }

    /// At most this many seeks (and in-memory walks of a branch) per word: a bound on the cost
    /// of a walk in a vocabulary of any size. (Measured on WordNet: README, typo tolerance.)
    package static let maximumSeeks = 20_000
    /// A branch with at most this many words is read at once and walked in memory.
    static let branchReadLimit = 256

    /// How many edits a word may differ by: 1 from 5 characters, 2 from 9; none for shorter
    /// words, for words longer than any the vocabulary keeps, and for words with a digit or a character that is no letter (codes, versions,
    /// identifiers) or a CJK character (a one-character edit makes another word).
    package static func allowedEdits(_ word: String) -> Int {
        // A word longer than the vocabulary keeps (``IndexVocabulary/maximumTermBytes``): whether
        // the index holds it cannot be known there, so it is never taken for a typo.
        guard isCorrectable(word), word.utf8.count <= IndexVocabulary.maximumTermBytes else { return 0 }
        let count = word.unicodeScalars.count
        return count >= 9 ? 2 : count >= 5 ? 1 : 0
    }

    /// Whether `typed` is `word` with one letter left out, or two neighbours swapped: the
    /// edits that explain a typo'd word in one way each. A letter typed in place of another, or
    /// one too many, is one of about 26 letters that could have been typed there, so each such
    /// explanation is about 26 times less likely (a noisy channel in which the four edits are
    /// equally frequent).
    package static func isLikelyEdit(of word: String, into typed: String) -> Bool {
        let a = Array(word.unicodeScalars), b = Array(typed.unicodeScalars)
        if a.count == b.count + 1 {
            var i = 0
            while i < b.count, a[i] == b[i] { i += 1 }
            return a[(i + 1)...] == b[i...]
        }
        guard a.count == b.count else { return false }
        guard let first = a.indices.first(where: { a[$0] != b[$0] }), first + 1 < a.count else { return false }
        return a[first] == b[first + 1] && a[first + 1] == b[first] && a[(first + 2)...] == b[(first + 2)...]
    }

    /// Whether a word of 4 letters may be a word of 5 that lost one: it then matches the
    /// vocabulary's words of 5 characters that hold it with one character added (one insertion,
    /// the only edit that makes a word of 5). The 5 letters of ``allowedEdits(_:)`` count the
    /// word meant, which a deletion leaves 4 letters long.
    package static func mayHaveLostALetter(_ word: String) -> Bool {
        isCorrectable(word) && word.unicodeScalars.count == 4
    }

    /// Letters only (and their marks), none of them CJK: a word typo tolerance corrects, and
    /// the words it corrects into.
    package static func isCorrectable(_ word: String) -> Bool {
        word.unicodeScalars.allSatisfy { ($0.properties.isAlphabetic || $0.properties.generalCategory == .nonspacingMark) && !IndexedText.isCJK($0) }
    }

    /// The quoted vocabulary table.
    let table: String
    let db: Database
    /// Whether a walk stopped at ``maximumSeeks``.
    package private(set) var wasBounded = false
    private var seeks = 0

    private let seek: RawStatement
    private let seekAfter: RawStatement
    private let readBranch: RawStatement
    private let branchExceeds: RawStatement

    /// A finder over the vocabulary table `table` (unquoted).
    package init(table: String, _ db: Database) throws {
        let table = SQLQuoting.identifier(table)
        self.table = table
        self.db = db
        seek = try RawStatement("SELECT \"term\" FROM \(table) WHERE \"term\" >= ? ORDER BY \"term\" LIMIT 1", db)
        seekAfter = try RawStatement("SELECT \"term\" FROM \(table) WHERE \"term\" > ? ORDER BY \"term\" LIMIT 1", db)
        readBranch = try RawStatement("SELECT \"term\" FROM \(table) WHERE \"term\" >= ? AND \"term\" < ? ORDER BY \"term\" LIMIT ?", db)
        branchExceeds = try RawStatement("SELECT \"term\" FROM \(table) WHERE \"term\" >= ? AND \"term\" < ? ORDER BY \"term\" LIMIT 1 OFFSET ?", db)
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
    /// `edits` of `word` (the shortest such prefix of each branch, and a longer one only with
    /// fewer edits: every word below a recorded prefix matches). With `length`, only the words
    /// of that many characters.
    package mutating func neighbours(of word: String, edits: Int, prefix: Bool, length: Int? = nil) throws -> [Match] {
        let query = word.unicodeScalars.map(\.value)
        // (A word much longer than any of the vocabulary's has no neighbour; its rows would not fit.)
        guard edits > 0, !query.isEmpty, query.count <= IndexVocabulary.maximumTermBytes + edits else { return [] }
        var walk = Walk(query: query, edits: edits, prefix: prefix, length: length)
        seeks = 0
        try visit(depth: 0, isTerm: false, first: nil, branch: nil, bestOnPath: .max, &walk)
        return walk.matches
    }

    /// The state of one walk: the word sought, the current node (a prefix, as scalars), the
    /// edit-distance rows of the node and its ancestors (row `d` for the prefix of length `d`),
    /// the branches read into memory, and the matches.
    private struct Walk {
        let query: [UInt32]
        let n: Int
        let edits: Int
        let prefix: Bool
        let length: Int?
        var node: [UInt32] = []
        /// Row `d` is at `d * (n + 1)`: no node deeper than `n + edits` can be close enough.
        var rows: [Int]
        var branches: [[[UInt32]]] = []
        var matches: [Match] = []

        init(query: [UInt32], edits: Int, prefix: Bool, length: Int?) {
            self.query = query
            n = query.count
            self.edits = edits
            self.prefix = prefix
            self.length = length
            rows = [Int](repeating: 0, count: (query.count + 1) * (query.count + edits + 3))
            for j in 0...query.count { rows[j] = j }
        }

        /// The node as UTF-8, kept in step with ``node`` (by ``push(_:)`` and ``pop()``).
        var nodeBytes: [UInt8] = []
        private var byteCounts: [Int] = []

        var nodeText: String { String(decoding: nodeBytes, as: UTF8.self) }

        mutating func push(_ character: UInt32) {
            node.append(character)
            let count = nodeBytes.count
            Self.appendUTF8(character, to: &nodeBytes)
            byteCounts.append(nodeBytes.count - count)
        }

        mutating func pop() {
            node.removeLast()
            nodeBytes.removeLast(byteCounts.removeLast())
        }

        /// The node followed by `character`, as UTF-8.
        func bytes(appending character: UInt32) -> [UInt8] {
            var bytes = nodeBytes
            Self.appendUTF8(character, to: &bytes)
            return bytes
        }

        /// The bytes above every word that starts with the node: the node followed by U+10FFFF.
        var nodeUpperBound: [UInt8] { nodeBytes + [0xF4, 0x8F, 0xBF, 0xBF] }

        static func appendUTF8(_ character: UInt32, to bytes: inout [UInt8]) {
            if character < 0x80 { bytes.append(UInt8(character)); return }
            bytes.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(character)!)!)
        }

        /// Computes the row of the child of the node at `depth` by `character`.
        mutating func computeRow(after depth: Int, character: UInt32) {
            let base = depth * (n + 1), next = base + n + 1
            rows[next] = rows[base] + 1
            for j in 1...n {
                let cost = query[j - 1] == character ? 0 : 1
                var value = min(rows[base + j] + 1, rows[next + j - 1] + 1, rows[base + j - 1] + cost)
                if j >= 2, depth >= 1, character == query[j - 2], node[depth - 1] == query[j - 1] {
                    value = min(value, rows[base - n - 1 + j - 2] + 1)
                }
                rows[next + j] = value
            }
        }
    }

    /// A range of words of a branch read into memory: `words[lower..<upper]` of branch `id`.
    private struct Branch {
        var id: Int
        var lower: Int
        var upper: Int
    }

    /// Visits the node of length `depth` (``Walk/node``, its row computed). For a prefix,
    /// `bestOnPath` is the fewest edits of a prefix recorded above it. `first` is the node's
    /// first word, when a seek above found it.
    private mutating func visit(depth: Int, isTerm: Bool, first: [UInt32]?, branch: Branch?, bestOnPath: Int, _ walk: inout Walk) throws {
        let n = walk.n, base = depth * (n + 1)
        let distance = walk.rows[base + n]
        var bestOnPath = bestOnPath
        if walk.prefix, distance <= walk.edits, distance < bestOnPath, depth > 0 {
            walk.matches.append(Match(term: walk.nodeText, distance: distance, isPrefix: true))
            bestOnPath = distance
        }
        if !walk.prefix, isTerm, distance <= walk.edits, walk.length.map({ $0 == depth }) ?? true {
            walk.matches.append(Match(term: walk.nodeText, distance: distance, isPrefix: false))
        }
        if let length = walk.length, depth >= length { return }
        var minimum = Int.max
        for j in 0...n { minimum = min(minimum, walk.rows[base + j]) }
        guard minimum <= walk.edits, minimum < bestOnPath else { return }
        guard seeks < Self.maximumSeeks else { wasBounded = true; return }
        // A small branch (below the first two characters) where any character may follow:
        // read its words once, then walk them in memory. (Once the edits are used up, the few
        // characters that may follow are sought directly: cheaper than reading the branch.)
        var branch = branch
        if branch == nil, depth >= 2, minimum < walk.edits {
            let start = walk.nodeBytes, end = walk.nodeUpperBound
            seeks += 1
            // (Whether it is small enough is asked first: a word decoded costs more than a step.)
            var isLarge = false
            try branchExceeds.forEachText([.utf8(start), .utf8(end), .integer(Int64(Self.branchReadLimit))]) { _ in
                isLarge = true
                return false
            }
            var terms: [[UInt32]] = []
            if !isLarge {
                try readBranch.forEachText([.utf8(start), .utf8(end), .integer(Int64(Self.branchReadLimit))]) { bytes in
                    terms.append(Self.scalars(bytes))
                    return true
                }
                walk.branches.append(terms)
                branch = Branch(id: walk.branches.count - 1, lower: 0, upper: terms.count)
            }
        }
        // The characters that may follow: any, or once the edits are used up, only those that
        // continue the word (a match, or the second half of a transposition).
        var allowed: [UInt32]?
        if minimum == walk.edits {
            var characters: [UInt32] = []
            for j in 0..<n where walk.rows[base + j] == walk.edits && !characters.contains(walk.query[j]) {
                characters.append(walk.query[j])
            }
            if depth >= 1 {
                let last = walk.node[depth - 1], previous = base - n - 1
                for j in 1..<max(n, 1) where walk.query[j] == last && walk.rows[previous + j - 1] < walk.edits
                    && !characters.contains(walk.query[j - 1]) {
                    characters.append(walk.query[j - 1])
                }
            }
            allowed = characters.sorted()
        }
        func child(_ character: UInt32, isTerm: Bool, first: [UInt32]?, branch: Branch?, _ walk: inout Walk) throws {
            walk.computeRow(after: depth, character: character)
            walk.push(character)
            defer { walk.pop() }
            try visit(depth: depth + 1, isTerm: isTerm, first: first, branch: branch, bestOnPath: bestOnPath, &walk)
        }
        if let branch {
            // In memory: the words of each child are contiguous, its own word (if any) first.
            var index = branch.lower
            while index < branch.upper {
                let word = walk.branches[branch.id][index]
                guard word.count > depth else { index += 1; continue }
                let character = word[depth]
                var end = index + 1
                while end < branch.upper, walk.branches[branch.id][end].count > depth, walk.branches[branch.id][end][depth] == character { end += 1 }
                if allowed?.contains(character) ?? true {
                    seeks += 1
                    try child(character, isTerm: word.count == depth + 1, first: nil, branch: Branch(id: branch.id, lower: index, upper: end), &walk)
                }
                index = end
            }
            return
        }
        if let allowed {
            // `known`: the first word at or after a bound at or below the character sought (in
            // key order, which is scalar order): a seek is needed only when it tells nothing.
            var known = first
            for character in allowed {
                if let word = known {
                    guard word.count >= depth, word[..<depth].elementsEqual(walk.node) else { break } // past the node's words
                    if word.count > depth, word[depth] > character { continue } // no word continues with it
                    if word.count > depth, word[depth] == character {
                        try child(character, isTerm: word.count == depth + 1, first: word, branch: nil, &walk)
                        continue
                    }
                }
                let prefix = walk.bytes(appending: character)
                guard let word = try firstTerm(atLeast: prefix) else { break }
                known = word
                guard word.count > depth, word[..<depth].elementsEqual(walk.node) else { break }
                if word[depth] == character {
                    try child(character, isTerm: word.count == depth + 1, first: word, branch: nil, &walk)
                }
            }
            return
        }
        // Every child, one seek each: the first word after the previous child's branch.
        var lower = walk.nodeBytes
        var strictly = false
        while let scalars = try firstTerm(atLeast: lower, strictly: strictly) {
            strictly = false
            guard scalars.count >= depth, scalars[..<depth].elementsEqual(walk.node) else { break }
            if scalars.count == depth { strictly = true; continue } // the node itself is a word
            let character = scalars[depth]
            try child(character, isTerm: scalars.count == depth + 1, first: scalars, branch: nil, &walk)
            guard let successor = Self.successor(Unicode.Scalar(character)!) else { break }
            lower = walk.bytes(appending: successor.value)
            if seeks >= Self.maximumSeeks { wasBounded = true; break }
        }
    }

    /// The scalars of UTF-8 text (a loop for ASCII, the common case).
    static func scalars(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt32] {
        if bytes.allSatisfy({ $0 < 0x80 }) { return bytes.map { UInt32($0) } }
        return String(decoding: bytes, as: UTF8.self).unicodeScalars.map(\.value)
    }

    /// The next Unicode scalar (skipping surrogates), nil after the last.
    static func successor(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        var value = scalar.value + 1
        if value == 0xD800 { value = 0xE000 }
        return Unicode.Scalar(value)
    }

    /// The first word at or after `lower` (after it, `strictly`), as scalars.
    private mutating func firstTerm(atLeast lower: [UInt8], strictly: Bool = false) throws -> [UInt32]? {
        seeks += 1
        var found: [UInt32]?
        try (strictly ? seekAfter : seek).forEachText([.utf8(lower)]) { bytes in
            found = Self.scalars(bytes)
            return false
        }
        return found
    }

    private func lookUp(atLeast lower: String, strictly: Bool = false) throws -> String? {
        var found: String?
        try (strictly ? seekAfter : seek).forEachText([.text(lower)]) { bytes in
            found = String(decoding: bytes, as: UTF8.self)
            return false
        }
        return found
    }
}
