import Foundation
import GRDB
import Testing
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Two TEXT keys that Unicode calls canonically equivalent (`café` composed and decomposed) are
/// two rows to SQLite, which compares bytes: they stay two documents (Swift's `String` equality
/// once merged them when both were in one batch, and a deleted row's words kept matching).
@Suite struct CanonicallyEquivalentKeyTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func objectIDsCompareTextsByteForByte() {
        #expect(ObjectID.text(Self.composed) != ObjectID.text(Self.decomposed))
        #expect(Set([ObjectID.text(Self.composed), .text(Self.decomposed), .text(Self.composed)]).count == 2)
        // SQLite's BINARY order: "cafe" + U+0301 (0x65 …) sorts before "caf" + U+00E9 (0xC3 …).
        #expect(ObjectID.text(Self.decomposed) < ObjectID.text(Self.composed))
    }

    @Test func canonicallyEquivalentKeysInOneBatchStayTwoDocuments() throws {
        let database = try TestDatabase(schema: "CREATE TABLE t(k TEXT PRIMARY KEY, body TEXT)")
        let model = try SearchlightModel(entities: [.init(name: "T", table: "t", primaryKey: "k", fields: [.init(column: "body")])])
        let store = try database.openStore(model: model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        // A foreign writer (the sqlite3 shell): no Swift string handles the keys on the way in.
        try database.shell("INSERT INTO t VALUES (char(99,97,102,233), 'wone'); INSERT INTO t VALUES (char(99,97,102,101,769), 'wtwo');")
        try indexer.indexPendingChanges()
        let index = SearchIndex(store: store)
        func ids(_ word: String) throws -> [ObjectID] { try index.search(word, limit: 10, typos: .off).hits.map(\.objectID) }
        #expect(try ids("wone") == [.text(Self.composed)])
        #expect(try ids("wtwo") == [.text(Self.decomposed)])
        #expect(try indexer.verify().entities.allSatisfy { $0.differences == 0 })

        try database.shell("UPDATE t SET body = 'wthree' WHERE k = char(99,97,102,233); DELETE FROM t WHERE k = char(99,97,102,101,769);")
        try indexer.indexPendingChanges()
        #expect(try ids("wtwo").isEmpty)
        #expect(try ids("wone").isEmpty)
        #expect(try ids("wthree") == [.text(Self.composed)])
        #expect(try indexer.verify().entities.allSatisfy { $0.differences == 0 })
    }
}
