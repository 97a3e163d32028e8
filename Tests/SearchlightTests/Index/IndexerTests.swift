import Foundation
import GRDB
import Testing
@testable import Searchlight
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct IndexerTests {
    @Test func writesThroughTheAPIBecomeSearchableAndUnsearchable() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "Kernel panic", body: "the system halted")
        try f.runIndexer()
        #expect(try f.ids("kernel") == [.integer(1)])
        try f.store.write(author: "app") { try $0.execute(sql: "UPDATE notes SET title = 'Kernel oops' WHERE id = 1") }
        try f.runIndexer()
        #expect(try f.ids("panic").isEmpty, "an update that removes a word removes the match")
        #expect(try f.ids("oops") == [.integer(1)])
        try f.store.write(author: "app") { try $0.execute(sql: "DELETE FROM notes WHERE id = 1") }
        try f.runIndexer()
        #expect(try f.ids("kernel").isEmpty, "a deleted document never matches again")
    }

    @Test func rawSQLAndAnotherProcessAreFollowedToo() throws {
        let f = try Fixture()
        try f.store.dbPool.write { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'frobnicate')") }
        try f.db.shell("INSERT INTO notes(id, title) VALUES (2, 'grovel'); INSERT INTO people(uuid, name) VALUES ('u-1', 'Grace Hopper');")
        try f.runIndexer()
        #expect(try f.ids("frobnicate") == [.integer(1)])
        #expect(try f.ids("grovel") == [.integer(2)])
        #expect(try f.ids("hopper", entities: ["Person"]) == [.text("u-1")])
        try f.db.shell("UPDATE notes SET title = 'twiddle' WHERE id = 2; DELETE FROM notes WHERE id = 1; DELETE FROM people;")
        try f.runIndexer()
        #expect(try f.ids("frobnicate").isEmpty)
        #expect(try f.ids("grovel").isEmpty)
        #expect(try f.ids("twiddle") == [.integer(2)])
        #expect(try f.ids("hopper").isEmpty)
    }

    @Test func firstStartWithExistingDataRebuilds() throws {
        let f = try Fixture(seed: "INSERT INTO notes(id, title) VALUES (1, 'preexisting'), (2, 'also preexisting');")
        let summary = try f.runIndexer()
        #expect(summary.rebuildReason != nil)
        #expect(try f.ids("preexisting") == [.integer(1), .integer(2)])
        // The rebuilt index then follows history.
        try f.db.shell("DELETE FROM notes WHERE id = 2;")
        #expect(try f.runIndexer().rebuildReason == nil)
        #expect(try f.ids("preexisting") == [.integer(1)])
    }

    @Test func onlyChangesToIndexedFieldsReindex() throws {
        let db = try TestDatabase(schema: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, views INTEGER);")
        // `views` is tracked (history records its updates) but not indexed.
        let model = try SearchlightModel(entities: [SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id", fields: [SearchlightModel.Field(column: "title")], trackedColumns: ["views"])])
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try db.shell("INSERT INTO notes VALUES (1, 'counted', 0);")
        try indexer.indexPendingChanges()
        try db.shell("UPDATE notes SET views = views + 1;")
        let summary = try indexer.indexPendingChanges()
        #expect(summary.changes == 1)
        #expect(summary.upserted == 0, "a change to a column that is not indexed does not reindex")
        #expect(summary.token == (try store.currentToken()))
    }

    @Test func aFailingBatchCommitsNeitherIndexWritesNorCheckpoint() throws {
        struct Boom: Error {}
        var configuration = Indexer.Configuration()
        configuration.documentBuilders["Note"] = { row, _ in
            let title: String = row["title"] ?? ""
            if title == "explode" { throw Boom() }
            return IndexedDocument(["title": title])
        }
        let f = try Fixture(configuration: configuration)
        try f.runIndexer()
        let before = try f.indexer.indexedToken()
        try f.store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'harmless'), (2, 'explode')")
        }
        #expect(throws: (any Error).self) { try f.runIndexer() }
        #expect(try f.indexer.indexedToken() == before, "the checkpoint did not move")
        #expect(try f.ids("harmless").isEmpty, "the batch's index writes rolled back")
        try f.store.write(author: "app") { try $0.execute(sql: "UPDATE notes SET title = 'defused' WHERE id = 2") }
        try f.runIndexer()
        #expect(try f.ids("harmless") == [.integer(1)])
        #expect(try f.indexer.verify().isConsistent)
    }

    @Test func documentBuilderComputesTextOrExcludes() throws {
        var configuration = Indexer.Configuration()
        configuration.documentBuilders["Note"] = { row, _ in
            let tags: String? = row["tags"]
            guard tags != "private" else { return nil }
            let body: String = row["body"] ?? ""
            return IndexedDocument(["title": row["title"] ?? "", "body": body.replacingOccurrences(of: "<b>", with: "")])
        }
        let f = try Fixture(configuration: configuration)
        try f.insertNote(1, title: "public", body: "<b>bold</b>")
        try f.insertNote(2, title: "secret", tags: "private")
        try f.runIndexer()
        #expect(try f.ids("bold") == [.integer(1)])
        #expect(try f.ids("secret").isEmpty)
        try f.store.write(author: "app") { try $0.execute(sql: "UPDATE notes SET tags = 'private' WHERE id = 1") }
        try f.runIndexer()
        #expect(try f.ids("public").isEmpty, "an object the builder now excludes leaves the index")
        #expect(try f.indexer.verify().isConsistent)
    }

    @Test func aModelChangeToWeightsForcesARebuild() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "alpha")
        try f.runIndexer()
        var model = TestDatabase.notesModel
        model.entities[0].fields[0].weight = 2
        let store = try f.db.openStore(model: model)
        let summary = try Indexer(store: store).indexPendingChanges()
        #expect(summary.rebuildReason == .modelChanged)
        #expect(summary.rebuildReason?.description.contains("changed") == true)
        #expect(try SearchIndex(store: store).search("alpha", limit: nil).total == 1)
    }

    @Test func cleanupWaitsForTheIndexer() throws {
        let f = try Fixture()
        try f.runIndexer()
        try f.insertNote(1, title: "unprocessed")
        let cleaner = HistoryCleaner(store: f.store, configuration: .init())
        #expect(try cleaner.clean().deleted.transactions == 0, "the indexer has not processed it")
        try f.runIndexer()
        #expect(try cleaner.clean().deleted.transactions == 1)
        #expect(try f.ids("unprocessed") == [.integer(1)])
    }

    @Test func expiredHistoryMakesTheIndexerRebuildAndEndEqualToTheSource() throws {
        let clock = TestClock()
        let db = try TestDatabase()
        let store = try db.openStore(clock: clock.function)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        for i in 1...5 {
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'lagging')", arguments: [i]) }
            clock.advance(3600)
        }
        try store.write(author: "app") { try $0.execute(sql: "DELETE FROM notes WHERE id = 1") }
        let report = try HistoryCleaner(store: store, configuration: .init(maximumDuration: .seconds(1800))).clean()
        #expect(report.plan.expiringConsumers == ["searchlight.indexer"])
        let summary = try indexer.indexPendingChanges()
        guard case .historyExpired? = summary.rebuildReason else {
            Issue.record("expected a rebuild for expired history, got \(String(describing: summary.rebuildReason))")
            return
        }
        #expect(summary.rebuildReason?.description.contains("deleted by cleanup") == true)
        #expect(try SearchIndex(store: store).search("lagging", limit: nil).hits.map(\.objectID).sorted() == (2...5).map { .integer(Int64($0)) })
        #expect(try indexer.verify().isConsistent)
    }

    @Test func composedAndDecomposedTextMatch() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "cafe\u{301} cre\u{300}me")   // decomposed
        try f.insertNote(2, title: "na\u{EF}ve")                 // composed
        try f.runIndexer()
        #expect(try f.ids("caf\u{E9}") == [.integer(1)])          // composed query
        #expect(try f.ids("nai\u{308}ve") == [.integer(2)])       // decomposed query
        #expect(try f.ids("creme") == [.integer(1)], "diacritics fold as the tokenizer says")
        #expect(try f.ids("CAFE") == [.integer(1)], "case folds")
    }

    @Test func startedIndexerFollowsAnotherProcessAndPublishesUpdates() async throws {
        let f = try Fixture()
        let updates = f.indexer.updates()
        f.indexer.start()
        #expect(f.indexer.isIndexing)
        try f.db.shell("INSERT INTO notes(id, title) VALUES (1, 'telepathy');")
        let head = try f.store.currentToken()
        var reached = HistoryToken.zero
        for await update in updates {
            reached = update.token
            if reached >= head { break }
        }
        #expect(reached >= head)
        #expect(try f.ids("telepathy") == [.integer(1)])
        try f.db.shell("INSERT INTO notes(id, title) VALUES (2, 'telekinesis');")
        try await f.indexer.waitUntilCaughtUp()
        #expect(try f.ids("telekinesis") == [.integer(2)])
        await f.indexer.stop()
        #expect(!f.indexer.isIndexing)
    }

    @Test func reindexSelectedIds() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "original")
        try f.runIndexer()
        // A change the indexer cannot see: history is bypassed by dropping the triggers' effect.
        try f.store.dbPool.write { db in
            try db.execute(sql: "UPDATE notes SET title = 'silently changed' WHERE id = 1")
            try db.execute(sql: "DELETE FROM searchlight_log WHERE type > 0 AND id = (SELECT max(id) FROM searchlight_log)")
        }
        try f.runIndexer()
        #expect(try f.ids("silently").isEmpty)
        try f.indexer.reindex(ids: [.integer(1)], entity: "Note")
        #expect(try f.ids("silently") == [.integer(1)])
        #expect(throws: SearchlightError.self) { try f.indexer.reindex(ids: [.integer(1)], entity: "Nope") }
    }
}
