import Foundation
import GRDB
import Synchronization
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

@Suite struct MaintenanceTests {
    @Test func verifyDetectsMissingStaleAndExtraAndRepairFixesThem() throws {
        let f = try Fixture()
        for i in 1...5 { try f.insertNote(i, title: "note \(i)") }
        try f.runIndexer()
        #expect(try f.indexer.verify().isConsistent)
        // Damage the index behind the indexer's back. notes has an INTEGER PRIMARY KEY: object
        // ids are the full-text rowids.
        try f.store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            let fts = "searchlight_fts_1_g\(generation)"
            try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = 1")                        // 1: missing
            try db.execute(sql: "UPDATE \(fts) SET title = 'wrong' WHERE rowid = 2")         // 2: stale
            try db.execute(sql: "INSERT INTO \(fts)(rowid, title) VALUES (99, 'ghost')")     // 99: extra
        }
        let report = try f.indexer.verify()
        #expect(!report.isConsistent)
        let notes = try #require(report.entities.first { $0.entity == "Note" })
        #expect(notes.missing == [.integer(1)])
        #expect(notes.stale == [.integer(2)])
        #expect(notes.extra == [.integer(99)])
        try f.indexer.repair()
        #expect(try f.indexer.verify().isConsistent)
        #expect(try f.ids("ghost").isEmpty)
        #expect(try f.ids("note", entities: ["Note"]).count == 5)
    }

    @Test func verifyAndRepairThroughTheDocumentMapOfTextKeys() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for name in ["ada", "grace", "edsger"] { try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: ["u-" + name, name]) }
        }
        try f.runIndexer()
        try f.store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            let documents = "searchlight_document_g\(generation)", fts = "searchlight_fts_2_g\(generation)"
            let ada = try Int64.fetchOne(db, sql: "SELECT id FROM \(documents) WHERE object_id = 'u-ada'")!
            try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = ?", arguments: [ada])       // ada: indexed without text
            let grace = try Int64.fetchOne(db, sql: "SELECT id FROM \(documents) WHERE object_id = 'u-grace'")!
            try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = ?", arguments: [grace])
            try db.execute(sql: "DELETE FROM \(documents) WHERE id = ?", arguments: [grace]) // grace: missing
            try db.execute(sql: "INSERT INTO \(documents)(entity_id, object_id) VALUES (2, 'u-ghost')")
            try db.execute(sql: "INSERT INTO \(fts)(rowid, name) VALUES (last_insert_rowid(), 'ghost')") // extra
        }
        let people = try #require(try f.indexer.verify().entities.first { $0.entity == "Person" })
        #expect(people.stale == [.text("u-ada")])
        #expect(people.missing == [.text("u-grace")])
        #expect(people.extra == [.text("u-ghost")])
        try f.indexer.repair()
        #expect(try f.indexer.verify().isConsistent)
        #expect(try f.ids("ada OR grace OR edsger", entities: ["Person"]).count == 3)
        #expect(try f.ids("ghost").isEmpty)
    }

    @Test func verifyLeavesPendingChangesOut() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "indexed")
        try f.runIndexer()
        try f.insertNote(2, title: "not yet")
        let report = try f.indexer.verify()
        #expect(report.isConsistent)
        #expect(report.pending == 1)
    }

    @Test func reindexReportsProgressAndKeepsEverything() throws {
        let f = try Fixture()
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 7
        let indexer = try Indexer(store: f.store, configuration: configuration)
        for i in 1...30 { try f.insertNote(i, title: "entry \(i)") }
        try indexer.indexPendingChanges()
        let seen = Mutex<[Indexer.Progress]>([])
        try indexer.reindex { progress in seen.withLock { $0.append(progress) } }
        let progress = seen.withLock { $0 }
        #expect(progress.first == .init(done: 0, total: 30))
        #expect(progress.last == .init(done: 30, total: 30))
        #expect(try f.ids("entry").count == 30)
        #expect(try indexer.verify().isConsistent)
    }

    @Test func searchesKeepAnsweringDuringAReindexAndLaterChangesAreApplied() async throws {
        let f = try Fixture()
        try await f.store.write(author: "app") { db in
            for i in 1...3_000 { try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'searchable')", arguments: [i]) }
        }
        try f.runIndexer()
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 200
        let indexer = try Indexer(store: f.store, configuration: configuration)
        let stop = Mutex(false)
        let index = f.index
        let searcher = Task.detached { () -> (searches: Int, failures: Int) in
            var searches = 0, failures = 0
            while !stop.withLock({ $0 }) {
                do {
                    if try index.search("searchable", limit: 1).total < 3_000 { failures += 1 }
                } catch { failures += 1 }
                searches += 1
            }
            return (searches, failures)
        }
        let store = f.store
        let writer = Task.detached {
            for i in 1...20 {
                try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'searchable during')", arguments: [10_000 + i]) }
            }
        }
        try indexer.reindex()
        try await writer.value
        stop.withLock { $0 = true }
        let (searches, failures) = await searcher.value
        #expect(searches > 0)
        #expect(failures == 0, "every search during the rebuild succeeded with the full result")
        try indexer.indexPendingChanges()
        #expect(try f.ids("during").count == 20, "changes made during the rebuild are applied")
        #expect(try indexer.verify().isConsistent)
    }
}
