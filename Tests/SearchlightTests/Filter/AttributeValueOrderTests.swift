import Foundation
import GRDB
import Testing
@testable import Searchlight

/// ``AttributeValue/binaryOrder(_:)`` orders values as SQLite does: the oracle is SQLite's own
/// `<` and `=` on every pair of a list that holds each storage class, integers beyond 2^53 beside
/// the doubles around them, infinities, and texts that differ in case, trailing space and a NUL.
@Suite struct AttributeValueOrderTests {
    static let values: [AttributeValue] = [
        0, 1, -1, 2, 2.0, 1.5, -0.5, 9_007_199_254_740_992, 9_007_199_254_740_993, .real(9_007_199_254_740_992), .real(9_007_199_254_740_994),
        .integer(.max), .integer(.min), .real(9_223_372_036_854_775_807), .real(-9_223_372_036_854_775_808), .real(.infinity), .real(-.infinity),
        1e300, "", "a", "A", "a ", "ab", "é", "2", .blob(Data()), .blob(Data([0])), .blob(Data([0x61])),
    ]

    @Test func ordersAsSQLiteComparesEveryPair() throws {
        let queue = try DatabaseQueue()
        try queue.read { db in
            for a in Self.values {
                for b in Self.values {
                    let row = try Row.fetchOne(db, sql: "SELECT ? < ?, ? = ?", arguments: [a.databaseValue, b.databaseValue, a.databaseValue, b.databaseValue])!
                    let expected: ComparisonResult = (row[0] as Bool) ? .orderedAscending : (row[1] as Bool) ? .orderedSame : .orderedDescending
                    #expect(a.binaryOrder(b) == expected, "\(a) against \(b)")
                }
            }
            #expect(AttributeValue.null.binaryOrder(1) == nil)
        }
    }
}
