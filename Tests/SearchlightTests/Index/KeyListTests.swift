import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Chunks of ids are bound to cached `IN (…)` statements padded to a size class: a handful of
/// statements serve every chunk size, and the padding matches nothing.
struct KeyListTests {
    @Test func sizesFallIntoAHandfulOfClasses() {
        #expect(KeyList.sizeClass(1) == 1)
        #expect(KeyList.sizeClass(3) == 4)
        #expect(KeyList.sizeClass(257) == 500)
        #expect(KeyList.sizeClass(500) == 500)
        #expect(Set((1...500).map(KeyList.sizeClass)).count == 10)
    }

    @Test func placeholdersAreGRDBs() {
        #expect((1...500).allSatisfy { KeyList.placeholders($0) == databaseQuestionMarks(count: $0) })
    }

    @Test func thePaddingMatchesNothing() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(k PRIMARY KEY, v)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 'one'), ('two', 'two'), (x'03', 'three'), (4, 'four')")
            let list = KeyList([.integer(1), .text("two"), .blob(Data([3]))], after: ["x"])
            #expect(list.placeholders == "?,?,?,?")
            let found = try String.fetchAll(db.cachedStatement(sql: "SELECT v FROM t WHERE ? = 'x' AND k IN (\(list.placeholders)) ORDER BY v"),
                                            arguments: list.arguments)
            #expect(found == ["one", "three", "two"])
        }
    }
}
