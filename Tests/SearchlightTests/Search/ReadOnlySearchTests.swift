import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Search through a store opened `readOnly` (what `searchlight search` and `suggest` open):
/// it answers while the app holds its write lock, and leaves the database as it was.
@Suite struct ReadOnlySearchTests {
    func readOnlyIndex(_ db: TestDatabase) throws -> SearchIndex {
        var configuration = HistoryStore.Configuration()
        configuration.readOnly = true
        configuration.busyTimeout = .zero // taking the write lock would fail at once
        return SearchIndex(store: try HistoryStore(path: db.path, configuration: configuration))
    }

    func schemaVersion(_ db: TestDatabase) throws -> String { try db.shell("PRAGMA schema_version") }

    @Test func searchAndSuggestWhileTheAppHoldsTheWriteLockChangingNothing() throws {
        let f = try Fixture()
        for (id, title) in [(1, "kernel panic"), (2, "kernel modules"), (3, "dinner")] { try f.insertNote(id, title: title) }
        _ = try f.runIndexer()
        try f.store.databaseWriter.close()
        let before = try schemaVersion(f.db)
        let app = try DatabaseQueue(path: f.db.path)
        try app.writeWithoutTransaction { appDB in
            try appDB.execute(sql: "BEGIN IMMEDIATE; INSERT INTO notes(id, title) VALUES (4, 'kernel of truth')")
            let index = try readOnlyIndex(f.db)
            #expect(Set(try index.search("kernel").hits.map(\.objectID)) == [.integer(1), .integer(2)], "the app's open write is not seen")
            #expect(try index.search("kernal").total == 2, "typo tolerance reads the vocabulary")
            #expect(try index.suggest("ker").first?.word == "kernel")
            #expect(try index.search("xyzzy").explanation != nil, "a zero-hit explanation reads it too")
            try appDB.execute(sql: "COMMIT")
        }
        try app.close()
        #expect(try schemaVersion(f.db) == before)
    }

    @Test func anIndexNeverBuiltSaysSoWithoutBuildingAnything() throws {
        let db = try TestDatabase()
        try db.openStore().databaseWriter.close()
        let before = try db.schemaSnapshot()
        let error = #expect(throws: SearchlightError.self) { try readOnlyIndex(db).search("kernel") }
        #expect(error?.code == .indexNotBuilt, "\(String(describing: error))")
        #expect(try db.schemaSnapshot() == before)
    }
}
