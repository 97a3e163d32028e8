import Foundation
import GRDB
import Synchronization
import Testing
@testable import Searchlight
@testable import SearchlightHistory
import SearchlightTestSupport

/// The async entry points (`reindexAsync`, `verifyAsync`, `repairAsync`): each returns what
/// its synchronous form returns, from a thread of its own, and cancelling the calling task
/// stops a long rebuild between the chunks it commits.
@Suite struct IndexerAsyncEntryPointTests {
    /// A built index of `count` notes.
    static func fixture(notes count: Int, configuration: Indexer.Configuration = .init()) throws -> Fixture {
        let f = try Fixture(configuration: configuration)
        try f.db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO notes(id, title, body) SELECT i, 'note ' || i, 'body ' || i FROM n;
            """)
        try f.runIndexer()
        return f
    }

    @Test func reindexAsyncReturnsWhatReindexReturns() async throws {
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 7
        let f = try Self.fixture(notes: 30, configuration: configuration)
        let progress = Mutex<[Indexer.Progress]>([])
        let sync = try f.indexer.reindex()
        let async = try await f.indexer.reindexAsync { step in progress.withLock { $0.append(step) } }
        #expect(async == sync)
        #expect(async.rebuildReason == .requested && async.upserted == 30)
        #expect(progress.withLock { $0.last } == .init(done: 30, total: 30))
        #expect(try f.ids("note").count == 30)
        #expect(try await f.indexer.verifyAsync().isConsistent)
    }

    @Test func reindexAsyncOfIdsAndOfAFilterReturnWhatTheSyncFormsReturn() async throws {
        let f = try Self.fixture(notes: 450) // three chunks of reindexChunkSize (200)
        let ids = (1...450).map { ObjectID.integer(Int64($0)) } + [.integer(9_999)] // one without a row
        let sync = try f.indexer.reindex(ids: ids, entity: "Note")
        let async = try await f.indexer.reindexAsync(ids: ids, entity: "Note")
        #expect(async == sync)
        #expect(async.upserted == 450)
        // Notes declares no attributes: a filter on one is refused alike by both forms.
        let refused = SearchFilter.Attribute("n") == 1
        let syncError = #expect(throws: SearchlightError.self) { try f.indexer.reindex(matching: refused) }
        let asyncError = await #expect(throws: SearchlightError.self) { try await f.indexer.reindexAsync(matching: refused) }
        #expect(asyncError?.code == syncError?.code && asyncError?.message == syncError?.message)

        let items = try ItemsFixture()
        for i in 1...30 { try items.write("INSERT INTO items(id, body, n) VALUES (?, 'item', ?)", [i, i % 3]) }
        try items.indexer.indexPendingChanges()
        let filter = SearchFilter.Attribute("n") == 1
        let syncMatching = try items.indexer.reindex(matching: filter)
        let asyncMatching = try await items.indexer.reindexAsync(matching: filter)
        #expect(asyncMatching == syncMatching)
        #expect(asyncMatching.upserted == 10, "the ten items whose n is 1")
    }

    @Test func verifyAsyncAndRepairAsyncReturnWhatTheSyncFormsReturn() async throws {
        let f = try Self.fixture(notes: 5)
        /// The same damage each time: one document missing, one stale, one extra.
        func damage() throws {
            try f.store.dbPool.write { db in
                let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
                let fts = "searchlight_fts_1_g\(generation)"
                try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = 1")
                try db.execute(sql: "UPDATE \(fts) SET title = 'wrong' WHERE rowid = 2")
                try db.execute(sql: "INSERT INTO \(fts)(rowid, title) VALUES (99, 'ghost')")
            }
        }
        try damage()
        let found = try f.indexer.verify()
        #expect(!found.isConsistent)
        #expect(try await f.indexer.verifyAsync() == found)
        let syncRepair = try f.indexer.repair()
        #expect(syncRepair.repaired && syncRepair.isConsistent)
        try damage()
        let asyncRepair = try await f.indexer.repairAsync()
        #expect(asyncRepair == syncRepair)
        #expect(try await f.indexer.verifyAsync().isConsistent)
        #expect(try f.ids("ghost").isEmpty)
    }

    /// Waits until a document builder holds the work (`reached`), cancels `task`, lets the work
    /// go on (`release`), and returns the error the task ends with.
    static func cancel<T: Sendable>(_ task: Task<T, any Error>, whenHeld reached: DispatchSemaphore,
                                    release: DispatchSemaphore) async throws -> SearchlightError? {
        try await withTimeout(600) { await withCheckedContinuation { c in DispatchQueue.global().async { reached.wait(); c.resume() } } }
        task.cancel()
        release.signal()
        return await #expect(throws: SearchlightError.self) { try await withTimeout(600) { try await task.value } }
    }

    /// Cancelling the task stops the rebuild after the chunk in flight: that chunk commits,
    /// nothing after it, the lease is let go, and the next reindex resumes from there.
    @Test func cancellingTheTaskStopsAReindexBetweenChunks() async throws {
        // The builder holds the rebuild inside its 11th chunk until the test has cancelled the
        // task: the cancellation is certain to land mid-rebuild, however loaded the machine is.
        let armed = Mutex(false), built = Mutex(0)
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 100
        configuration.documentBuilders["Note"] = { row, _ in
            if armed.withLock({ $0 }), built.withLock({ $0 += 1; return $0 }) == 1_050 { reached.signal(); release.wait() }
            return IndexedDocument(["title": row["title"] ?? "", "body": row["body"] ?? ""])
        }
        let f = try Self.fixture(notes: 2_000, configuration: configuration)
        armed.withLock { $0 = true }
        let error = try await Self.cancel(Task { try await f.indexer.reindexAsync() }, whenHeld: reached, release: release)
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        let stopped = try IndexerLifecycleTests.rebuildState(f.store)
        #expect(stopped.after == 1_100, "the chunk in flight committed, and nothing after it")
        #expect(stopped.owner == nil, "the lease is let go")
        armed.withLock { $0 = false }
        let resumed = try await f.indexer.reindexAsync()
        #expect(resumed.upserted == 2_000 - 1_100, "resumed after row 1,100")
        #expect(try SearchIndex(store: f.store).search("note", limit: 0).total == 2_000)
        #expect(try await f.indexer.verifyAsync().isConsistent)
    }

    /// A repair of a damaged index rebuilds it: cancelling the task stops that rebuild between
    /// chunks too, and the next repair resumes it.
    @Test func cancellingTheTaskStopsARepairsRebuildBetweenChunks() async throws {
        let armed = Mutex(false), built = Mutex(0)
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let log = CapturedLog()
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 100
        configuration.logger = log.logger(label: "repairing")
        configuration.documentBuilders["Person"] = { row, db in
            // Only the rebuild's writes count: the repair's verify reads every row through the builder first.
            if armed.withLock({ $0 }), !db.configuration.readonly, built.withLock({ $0 += 1; return $0 }) == 1_050 {
                reached.signal(); release.wait()
            }
            return IndexedDocument(["name": row["name"] ?? ""])
        }
        let f = try Fixture(configuration: configuration)
        try f.db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
            INSERT INTO people(uuid, name) SELECT printf('u%05d', i), 'person ' || i FROM n;
            """)
        try f.runIndexer()
        // Damage: a full-text row of Person (TEXT keys) with no document.
        try await f.store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            try db.execute(sql: "INSERT INTO searchlight_fts_2_g\(generation)(rowid, name) VALUES (99999, 'ghost')")
        }
        #expect(try await !f.indexer.verifyAsync().integrityErrors.isEmpty, "damaged: the repair rebuilds")
        armed.withLock { $0 = true }
        let error = try await Self.cancel(Task { try await f.indexer.repairAsync() }, whenHeld: reached, release: release)
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        let (after, owner) = try await f.store.dbPool.read { db in
            (try IndexState.get(db, .rebuildAfter, as: String.self), try IndexState.get(db, .rebuildOwner, as: String.self))
        }
        #expect(after == "u01100", "the chunk in flight committed, and nothing after it")
        #expect(owner == nil, "the lease is let go")
        armed.withLock { $0 = false }
        let repair = try await f.indexer.repairAsync()
        #expect(repair.repaired && repair.isConsistent)
        #expect(log.messages.contains { $0.hasPrefix("resuming the index from scratch") }, "\(log.messages)")
        #expect(try f.ids("ghost").isEmpty)
        #expect(try SearchIndex(store: f.store).search("person", limit: 0).total == 2_000)
    }
}
