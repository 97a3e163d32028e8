import Foundation
import Synchronization
import GRDB
import Testing
@testable import Searchlight
@testable import SearchlightHistory
import SearchlightTestSupport

/// start, stop, waiting, and models installed while the indexer runs.
@Suite struct IndexerLifecycleTests {
    static func rebuildState(_ store: HistoryStore) throws -> (generation: Int?, entity: Int?, after: Int64?, owner: String?) {
        try store.dbPool.read { db in
            (try IndexState.get(db, .generation, as: Int.self), try IndexState.get(db, .rebuildEntity, as: Int.self),
             try IndexState.get(db, .rebuildAfter, as: Int64.self), try IndexState.get(db, .rebuildOwner, as: String.self))
        }
    }

    /// `run()` follows until its task is cancelled, then stops and returns: an app's shutdown
    /// cancels the task and awaits it, and nothing hangs.
    @Test func runFollowsUntilItsTaskIsCancelled() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let indexer = try Indexer(store: store)
        let updates = indexer.updates()
        let following = Task { try await indexer.run() }
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'followed by run');")
        try await withTimeout(600) {
            for await update in updates where try indexer.indexedToken() >= store.currentToken() { _ = update; return }
        }
        #expect(try SearchIndex(store: store).search("followed").hits.count == 1)
        #expect(indexer.isIndexing)
        following.cancel()
        try await withTimeout(600) { try await following.value }
        #expect(!indexer.isIndexing, "run() stopped the indexer on cancellation")
    }

    /// The indexer is a consumer of the runtime: a `HistoryFollower` of its own follows as
    /// `run()` does; it ends following only on failures retrying cannot clear (an uninstall).
    @Test func aHistoryFollowerRunsTheIndexer() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let indexer = try Indexer(store: store)
        let updates = indexer.updates()
        let following = Task { try await HistoryFollower(indexer, store: store, pollInterval: .seconds(60)).run() }
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'followed by the runtime');")
        try await withTimeout(600) {
            for await update in updates where try indexer.indexedToken() >= store.currentToken() { _ = update; return }
        }
        #expect(try SearchIndex(store: store).search("runtime").hits.count == 1)
        #expect(!indexer.isIndexing, "start() was not called")
        following.cancel()
        try await withTimeout(600) { try await following.value }
        #expect(indexer.classify(SearchlightError(.notInstalled, "uninstalled")) == .permanent)
        #expect(indexer.classify(SearchlightError(.bodyFailed, "a builder threw")) == .transient)
    }

    /// Cancelling a task that waits in `waitUntilFollowingEnds()` ends the wait (it used to
    /// hang an app at shutdown); the indexer goes on following until stopped.
    @Test func cancellingAWaitForFollowingToEndEndsTheWait() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let indexer = try Indexer(store: store)
        indexer.start()
        let waiting = Task { () async -> SearchlightError? in
            do throws(SearchlightError) { try await indexer.waitUntilFollowingEnds(); return nil } catch { return error }
        }
        waiting.cancel()
        let error = try await withTimeout(600) { await waiting.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(indexer.isIndexing)
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'still followed');")
        try await indexer.waitUntilCaughtUp(timeout: .seconds(600))
        #expect(try SearchIndex(store: store).search("followed").hits.count == 1)
        await indexer.stop()
    }

    /// A bounded wait for an indexer that cannot catch up (another connection holds the write
    /// lock) ends with `timedOut`, and the indexer catches up once the lock goes.
    @Test func aBoundedWaitEndsWithTimedOut() async throws {
        let db = try TestDatabase()
        // The indexer's batch waits for the lock for as long as the test holds it: with the
        // default 10 s, a loaded machine once let that wait expire within the waiter's window,
        // and the waiter rightly threw the indexer's "database is locked" instead (CI).
        var configuration = HistoryStore.Configuration()
        configuration.busyTimeout = .seconds(600)
        let store = try HistoryStore(path: db.path, model: TestDatabase.notesModel, configuration: configuration)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        indexer.start()
        defer { Task { await indexer.stop() } }
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'late');")
        // Another connection holds the write lock: the indexer's batch waits (and retries).
        let blocker = try DatabaseQueue(path: db.path)
        let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread {
            try? blocker.inTransaction(.immediate) { _ in locked.signal(); release.wait(); return .rollback }
        }.start()
        try await withTimeout(600) { await withCheckedContinuation { c in DispatchQueue.global().async { locked.wait(); c.resume() } } }
        let error = await #expect(throws: SearchlightError.self) { try await indexer.waitUntilCaughtUp(timeout: .milliseconds(200)) }
        #expect(error?.code == .timedOut, "\(error?.message ?? "-")")
        release.signal()
        try await indexer.waitUntilCaughtUp(timeout: .seconds(600))
        #expect(try SearchIndex(store: store).search("late").hits.count == 1)
    }

    @Test func stopMidRebuildReturnsAfterTheChunkInFlightAndTheNextRunResumes() async throws {
        let db = try TestDatabase()
        try db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
            INSERT INTO notes(id, title, body) SELECT i, 'note ' || i, 'body' FROM n;
            """)
        let store = try db.openStore()
        // The builder holds the rebuild inside its 11th chunk until the test has asked to stop:
        // the stop is certain to land mid-rebuild, however loaded the machine is.
        let built = Mutex(0)
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 100
        configuration.documentBuilders["Note"] = { row, _ in
            let count = built.withLock { $0 += 1; return $0 }
            if count == 1_050 { reached.signal(); release.wait() }
            return IndexedDocument(["title": row["title"] ?? "", "body": row["body"] ?? ""])
        }
        let indexer = try Indexer(store: store, configuration: configuration)
        indexer.start()
        try await withTimeout(600) { await withCheckedContinuation { c in DispatchQueue.global().async { reached.wait(); c.resume() } } }
        let stopping = Task { await indexer.stop() }
        while indexer.isIndexing { try await Task.sleep(for: .milliseconds(1)) } // stop() has cancelled the task
        release.signal()
        try await withTimeout(600) { await stopping.value }
        let stopped = try Self.rebuildState(store)
        #expect(stopped.generation == nil, "stopped before the swap")
        #expect(stopped.owner == nil, "the lease is released on stop")
        #expect(stopped.after == 1_100, "the chunk in flight committed, and nothing after it")
        // Another indexer (another process, say) resumes: it copies only what was left.
        let log = CapturedLog()
        var resuming = Indexer.Configuration()
        resuming.logger = log.logger(label: "resuming")
        let summary = try Indexer(store: store, configuration: resuming).indexPendingChanges()
        // The operator reads what the index holds, not only what this run wrote.
        #expect(log.messages.contains { $0.hasPrefix("rebuilt the index: it holds 20000 documents") && $0.contains("wrote 18900") },
                "\(log.messages)")
        #expect(summary.rebuildReason == .notBuilt, "the first build, resumed")
        #expect(summary.upserted == 20000 - 1_100, "resumed after row 1,100")
        var exact = SearchIndex.Options()
        exact.maximumCountedMatches = .max
        #expect(try SearchIndex(store: store, options: exact).search("note", limit: 0).total == 20000)
        #expect(try Indexer(store: store).verify().isConsistent)
    }

    /// Regression: a rebuild that stopped before its first chunk left a NULL cursor, which
    /// read back as `DatabaseValue.null`; the resumed rebuild then copied nothing and swapped
    /// in an empty index (found by the kill -9 crash-recovery test).
    @Test func aRebuildInterruptedBeforeItsFirstChunkResumesFromTheStart() throws {
        struct Refused: Error {}
        let failing = Mutex(false)
        var configuration = Indexer.Configuration()
        configuration.rebuildLease = .zero // expires at once: the next indexer takes over
        configuration.documentBuilders["Note"] = { row, _ in
            if failing.withLock({ $0 }) { throw Refused() }
            return IndexedDocument(["title": row["title"] ?? ""])
        }
        let f = try Fixture(configuration: configuration)
        for i in 1...10 { try f.insertNote(i, title: "note \(i)") }
        try f.runIndexer()
        failing.withLock { $0 = true }
        #expect(throws: SearchlightError.self) { try f.indexer.reindex() } // begun, first chunk rolled back
        failing.withLock { $0 = false }
        let summary = try Indexer(store: f.store).indexPendingChanges()
        #expect(summary.rebuildReason == .interrupted)
        #expect(try f.ids("note").count == 10)
        #expect(try Indexer(store: f.store).verify().isConsistent)
    }

    @Test func waitUntilCaughtUpThrowsTheErrorTheIndexerFailsWith() async throws {
        struct Broken: Error {}
        var configuration = Indexer.Configuration()
        configuration.documentBuilders["Note"] = { row, _ in
            if (row["title"] as String?) == "poison" { throw Broken() }
            return IndexedDocument(["title": row["title"] ?? ""])
        }
        let f = try Fixture(configuration: configuration)
        try f.runIndexer()
        f.indexer.start()
        try f.insertNote(1, title: "poison")
        let error = await #expect(throws: SearchlightError.self) {
            try await withTimeout(60) { try await f.indexer.waitUntilCaughtUp() }
        }
        #expect(error?.code == .bodyFailed, "\(String(describing: error))")
        #expect(error?.underlyingError is Broken)
        await f.indexer.stop()
    }

    @Test func waitUntilCaughtUpEndsWhenTheIndexerStops() async throws {
        // The indexer takes one transaction per batch, and holds the batch of note 1 until the
        // test lets it go: the stop is certain to come before it reaches note 2.
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        var configuration = Indexer.Configuration()
        configuration.batchSize = 1
        configuration.documentBuilders["Note"] = { row, _ in
            if (row["title"] as String?) == "held" { reached.signal(); release.wait() }
            return IndexedDocument(["title": row["title"] ?? ""])
        }
        let f = try Fixture(configuration: configuration)
        try f.runIndexer()
        try f.insertNote(1, title: "held")
        try f.insertNote(2, title: "unreached")
        let target = try f.store.currentToken()
        f.indexer.start()
        try await withTimeout(600) { await withCheckedContinuation { c in DispatchQueue.global().async { reached.wait(); c.resume() } } }
        // A wait for note 2, which the indexer will not reach before it stops.
        let waiting = Task { try await f.indexer.waitUntilCaughtUp() }
        try await withTimeout(600) { while f.indexer.waiterCount == 0 { try await Task.sleep(for: .milliseconds(1)) } }
        let stopping = Task { await f.indexer.stop() }
        while f.indexer.isIndexing { try await Task.sleep(for: .milliseconds(1)) } // stop() was asked
        release.signal() // the batch in flight (note 1) commits; no batch follows
        try await withTimeout(600) { await stopping.value }
        // The wait ends with the stop (a bound against hangs, not a latency goal).
        let error = await #expect(throws: SearchlightError.self) {
            try await withTimeout(60) { try await withTaskCancellationHandler { try await waiting.value } onCancel: { waiting.cancel() } }
        }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(try f.indexer.indexedToken() < target, "it ended by the stop, not by catching up")
        #expect(try f.ids("held") == [.integer(1)])
        #expect(try f.ids("unreached").isEmpty)
    }

    @Test func aRunningIndexerSwitchesToAModelInstalledElsewhere() async throws {
        var narrow = TestDatabase.notesModel
        narrow.entities[0].fields = [SearchlightModel.Field(column: "title", role: .title)]
        let f = try Fixture(model: narrow)
        try f.insertNote(1, title: "first", body: "zebra")
        try f.runIndexer()
        f.indexer.start()
        #expect(try f.ids("zebra").isEmpty, "body is not indexed yet")
        // Another store (as `searchlight init` in another process) installs a wider model.
        _ = try f.db.openStore(model: TestDatabase.notesModel)
        try f.insertNote(2, title: "second", body: "zebra")
        try await withTimeout(60) { try await f.indexer.waitUntilCaughtUp() }
        #expect(try f.ids("zebra") == [.integer(1), .integer(2)], "rebuilt with the new model, not the one it started with")
        #expect(f.store.model == TestDatabase.notesModel)
        await f.indexer.stop()
        #expect(try f.indexer.verify().isConsistent)
    }

    /// An app's cooperative pool has as many threads as cores: catching up (possibly a whole
    /// rebuild) for a waiter runs on a thread of the indexer's own (`DedicatedThread.run`), and
    /// cancelling the waiting task stops it between batches.
    @Test func workForAWaiterRunsOnItsOwnThreadAndStopsWhenTheTaskIsCancelled() async throws {
        let caller = pthread_self()
        let worker = try await DedicatedThread.run(name: "searchlight.indexer") { _ throws(SearchlightError) in pthread_self() }
        #expect(pthread_equal(caller, worker) == 0, "the work ran on the calling thread")

        let started = DispatchSemaphore(value: 0)
        let work = Task {
            try await DedicatedThread.run(name: "searchlight.indexer") { shouldStop throws(SearchlightError) -> Int in
                started.signal()
                var batches = 0
                while !shouldStop() { batches += 1; usleep(1_000) } // stands for batches of work
                return batches
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { started.wait(); continuation.resume() }
        }
        work.cancel()
        let batches = try await withTimeout(60) { try await work.value }
        #expect(batches >= 0, "the work saw the cancellation and returned")
    }

    @Test func waitUntilCaughtUpWithoutStartIndexesEverythingCommittedBefore() async throws {
        let f = try Fixture()
        try f.insertNote(1, title: "first")
        try await withTimeout(60) { try await f.indexer.waitUntilCaughtUp() } // the first build
        try f.insertNote(2, title: "second")
        try await withTimeout(60) { try await f.indexer.waitUntilCaughtUp() } // a batch
        #expect(try f.ids("first") == [.integer(1)])
        #expect(try f.ids("second") == [.integer(2)])
    }

    /// A started indexer that its owner releases without `stop()` must not keep itself, its
    /// thread and its subscription alive for ever.
    @Test func aStartedIndexerReleasedWithoutStopIsFreedAndItsThreadEnds() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        weak var released: Indexer?
        do {
            let indexer = try Indexer(store: store)
            released = indexer
            indexer.start()
            try await withTimeout(60) { try await indexer.waitUntilCaughtUp() }
        }
        // Bounded: the follower thread lets go once the batch in flight ends.
        let deadline = ContinuousClock.now + .seconds(60)
        while released != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil, "the indexer is still alive")
        // With no follower left, nothing indexes a new write any more.
        try db.shell("INSERT INTO notes(id, title) VALUES (9, 'unfollowed');")
        let checkpoint = try #require(try store.checkpoint(for: Indexer.Configuration().author)?.token)
        let head = try store.currentToken()
        #expect(checkpoint < head)
    }
}
