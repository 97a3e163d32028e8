import Foundation
import Testing
@testable import Searchlight
import SearchlightTestSupport

/// The batch's word counts (``TermTally``), against a plain dictionary of byte arrays.
@Suite struct TermTallyTests {
    /// The changes a tally reports, in its order.
    static func changes(_ tally: borrowing TermTally) -> [([UInt8], Int)] {
        var changes: [([UInt8], Int)] = []
        tally.forEachChange { term, delta in changes.append((Array(term), delta)) }
        return changes
    }

    @Test func randomWordsAreCountedOnceADocumentAndReportedInByteOrder() throws {
        var (seed, random) = seededGenerator("TermTallyTests.randomWords")
        // Short and long words, shared 8-byte prefixes, NUL bytes, UTF-8, and enough distinct
        // words to grow every store of the table several times.
        var pool: [[UInt8]] = [[0x61], [0x61, 0x00], [0x61, 0x00, 0x62], Array("abcdefgh".utf8), Array("abcdefghi".utf8),
                               Array("abcdefgh\u{0}".utf8), Array("café".utf8), Array("数据库".utf8)]
        for _ in 0..<5_000 {
            pool.append((0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        var tally = TermTally()
        for round in 0..<3 {
            var oracle: [[UInt8]: Int] = [:]
            for _ in 0..<400 {
                let sign = Bool.random(using: &random) ? 1 : -1
                tally.startDocument(sign: sign)
                var seen = Set<[UInt8]>()
                for _ in 0..<Int.random(in: 0...60, using: &random) {
                    let word = pool.randomElement(using: &random)!
                    word.withUnsafeBytes { tally.add($0) }
                    if seen.insert(word).inserted { oracle[word, default: 0] += sign }
                }
            }
            let expected = oracle.filter { $0.value != 0 }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            let got = Self.changes(tally)
            // The first difference, not two arrays of thousands of words.
            let mismatch = zip(got, expected).enumerated().first { $0.element.0.0 != $0.element.1.key || $0.element.0.1 != $0.element.1.value }?.offset
            #expect(got.count == expected.count && mismatch == nil,
                    "seed \(seed), round \(round): \(got.count) changes against \(expected.count), first difference at \(mismatch.map(String.init) ?? "none")")
            tally.removeAll()
            #expect(tally.count == 0)
            #expect(Self.changes(tally).isEmpty)
        }
    }

    @Test func aWordAddedAndRemovedInOneBatchIsNoChange() {
        var tally = TermTally()
        let word = Array("kernel".utf8)
        tally.startDocument(sign: 1)
        word.withUnsafeBytes { tally.add($0) }
        tally.startDocument(sign: -1)
        word.withUnsafeBytes { tally.add($0) }
        word.withUnsafeBytes { tally.add($0) }
        #expect(tally.count == 1)
        #expect(Self.changes(tally).isEmpty)
    }
}
