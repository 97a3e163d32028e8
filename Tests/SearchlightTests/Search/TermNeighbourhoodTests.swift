import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightTestSupport

/// The vocabulary walk (``TermNeighbourhood``) against a brute force: every word of a seeded
/// random vocabulary compared with the query by its own edit distance, computed here.
@Suite struct TermNeighbourhoodTests {
    /// The optimal string alignment distance (insert, delete, substitute, swap two neighbours),
    /// the textbook table: the oracle shares no code with the walk.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }

    /// A vocabulary dense enough that branches both fit and overflow the in-memory read, with
    /// words that are prefixes of others and characters of 2 and 3 UTF-8 bytes.
    static func vocabulary(_ random: inout SplitMix) throws -> (DatabaseQueue, [String]) {
        let alphabet = Array("abcdeéßn数")
        var words = Set<String>()
        while words.count < 3_000 {
            let length = Int.random(in: 1...9, using: &random)
            // Skewed toward the first letters, so that some branches hold hundreds of words.
            words.insert(String((0..<length).map { _ in alphabet[min(Int.random(in: 0..<alphabet.count, using: &random), Int.random(in: 0..<alphabet.count, using: &random))] }))
        }
        let db = try DatabaseQueue()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE terms(term TEXT PRIMARY KEY NOT NULL, documents INTEGER NOT NULL) WITHOUT ROWID")
            for word in words { try db.execute(sql: "INSERT INTO terms VALUES (?, 1)", arguments: [word]) }
        }
        return (db, words.sorted())
    }

    static func query(_ random: inout SplitMix, from words: [String]) -> String {
        let alphabet = Array("abcdeéßn数x")
        var word = Array(words.randomElement(using: &random)!)
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let position = Int.random(in: 0...word.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: word.insert(alphabet.randomElement(using: &random)!, at: position)
            case 1 where position < word.count: word.remove(at: position)
            case 2 where position < word.count: word[position] = alphabet.randomElement(using: &random)!
            case 3 where position + 1 < word.count: word.swapAt(position, position + 1)
            default: break
            }
        }
        return word.isEmpty ? "a" : String(word)
    }

    @Test func theWalkFindsExactlyTheWordsWithinTheEdits() throws {
        var (seed, random) = seededGenerator("TermNeighbourhoodTests.words")
        let (db, words) = try Self.vocabulary(&random)
        try db.read { db in
            var finder = try TermNeighbourhood(table: "terms", db)
            for round in 0..<150 {
                let query = Self.query(&random, from: words)
                let edits = Int.random(in: 1...2, using: &random)
                let length: Int? = round % 5 == 0 ? query.count + 1 : nil
                let found = try finder.neighbours(of: query, edits: edits, prefix: false, length: length)
                var expected: [String: Int] = [:]
                for word in words where length.map({ word.count == $0 }) ?? true {
                    let d = Self.distance(Array(word), Array(query))
                    if d <= edits { expected[word] = d }
                }
                #expect(Dictionary(uniqueKeysWithValues: found.map { ($0.term, $0.distance) }) == expected,
                        "seed \(seed): \(query), \(edits) edits, length \(length.map(String.init) ?? "any")")
                #expect(found.allSatisfy { !$0.isPrefix } && !finder.wasBounded)
            }
        }
    }

    @Test func theWalkFindsThePrefixesWithinTheEditsOfEveryWord() throws {
        var (seed, random) = seededGenerator("TermNeighbourhoodTests.prefixes")
        let (db, words) = try Self.vocabulary(&random)
        try db.read { db in
            var finder = try TermNeighbourhood(table: "terms", db)
            for _ in 0..<40 {
                let query = Self.query(&random, from: words)
                let edits = Int.random(in: 1...2, using: &random)
                let found = try finder.neighbours(of: query, edits: edits, prefix: true)
                #expect(found.allSatisfy(\.isPrefix) && !finder.wasBounded)
                // Each word: the fewest edits of any of its prefixes, and of the prefixes found.
                for word in words {
                    let characters = Array(word)
                    let best = (1...characters.count).map { Self.distance(Array(characters[..<$0]), Array(query)) }.min()!
                    let matched = found.filter { word.hasPrefix($0.term) }.map(\.distance).min()
                    #expect(matched == (best <= edits ? best : nil), "seed \(seed): \(query), \(edits) edits, word \(word)")
                    if matched != (best <= edits ? best : nil) { return }
                }
                for match in found {
                    #expect(words.contains { $0.hasPrefix(match.term) }, "\(match.term) starts a word")
                    #expect(Self.distance(Array(match.term), Array(query)) == match.distance, "\(match.term)")
                }
            }
        }
    }
}
