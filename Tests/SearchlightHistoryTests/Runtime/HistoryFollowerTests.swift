import Dispatch
import Foundation
import GRDB
import Synchronization
import Testing
import SearchlightHistory
import SearchlightTestSupport

/// The consumer runtime: waking, fallback poll, retries with backoff, permanent errors,
/// cancellation, and the two checkpoint kinds.
@Suite struct HistoryFollowerTests {
    // The outbox every consumer of these tests writes: HistoryConsumptionTests' own.
    typealias Outbox = HistoryConsumptionTests

    /// Waits (bounded, never a latency assertion) until `condition` holds.
    static func waitUntil(_ what: String, _ condition: @escaping @Sendable () throws -> Bool) async throws {
        do {
            try await withTimeout(60) { while try !condition() { try await Task.sleep(for: .milliseconds(10)) } }
        } catch let error as TimedOut {
            Issue.record("timed out waiting until \(what)")
            throw error
        }
    }

    static func makeStore(_ db: TestDatabase, log: CapturedLog? = nil, busyTimeout: Duration = .seconds(10)) throws -> HistoryStore {
        var configuration = HistoryStore.Configuration()
        configuration.busyTimeout = busyTimeout
        if let log { configuration.logger = log.logger(label: "test") }
        let store = try HistoryStore(path: db.path, model: TestDatabase.notesModel, configuration: configuration)
        try store.dbPool.write { try $0.execute(sql: Outbox.outbox) }
        try store.resynchronize(as: "exporter") { _, _ in } // it starts at the head
        return store
    }

    /// An exporter that records what each step did.
    final class RecordingExporter: LocalHistoryConsumer {
        let author = "exporter"
        let steps = Mutex<[HistoryStep]>([])

        func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep {
            let step: HistoryStep = switch try store.consumeNextBatch(as: author, HistoryConsumptionTests.export) {
            case .caughtUp: .caughtUp
            case .consumed, .needsResync: .progressed
            }
            steps.withLock { $0.append(step) }
            return step
        }

        var caughtUpCount: Int { steps.withLock { $0.count { $0 == .caughtUp } } }
    }

    @Test func aCaughtUpFollowerWakesOnACommitFromAnotherConnection() async throws {
        let db = try TestDatabase()
        let store = try Self.makeStore(db)
        let exporter = RecordingExporter()
        // No fallback poll within the test's bounds: only a notification can wake it.
        let follower = HistoryFollower(exporter, store: store, pollInterval: .seconds(3600))
        let following = Task { try await follower.run() }
        try await Self.waitUntil("the follower caught up") { exporter.caughtUpCount >= 1 }
        // Another connection, not the store's pool.
        let other = try DatabaseQueue(path: db.path)
        try await other.write { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a')") }
        try await Self.waitUntil("the commit was exported") { try Outbox.outboxRows(store).count == 1 }
        following.cancel()
        try await withTimeout(60) { try await following.value }
        #expect(try Outbox.outboxRows(store) == ["insert Note 1"])
        #expect(exporter.steps.withLock { $0 }.contains(.progressed))
    }

    /// Work that appears without a commit: only the fallback poll finds it.
    final class Flag: Sendable {
        private let state = Mutex((raised: false, steps: 0, sawIt: false))
        func raise() { state.withLock { $0.raised = true } }
        var steps: Int { state.withLock { $0.steps } }
        var sawIt: Bool { state.withLock { $0.sawIt } }
        func step() -> HistoryStep {
            state.withLock { state in
                state.steps += 1
                if state.raised && !state.sawIt { state.sawIt = true; return .progressed }
                return .caughtUp
            }
        }
    }

    struct FlagConsumer: LocalHistoryConsumer {
        let author = "poller"
        let flag: Flag
        func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep { flag.step() }
    }

    @Test func aCaughtUpFollowerStepsAgainOnItsFallbackPoll() async throws {
        let db = try TestDatabase()
        let store = try Self.makeStore(db)
        let flag = Flag()
        let following = Task { try await HistoryFollower(FlagConsumer(flag: flag), store: store, pollInterval: .milliseconds(20)).run() }
        try await Self.waitUntil("the first step ran") { flag.steps >= 1 }
        flag.raise() // no commit, no notification
        try await Self.waitUntil("a polled step saw the work") { flag.sawIt }
        following.cancel()
        try await withTimeout(60) { try await following.value }
    }

    @Test func aWriteLockHeldByAnotherConnectionIsRetriedWithBackoffThenRecovers() async throws {
        let db = try TestDatabase()
        let log = CapturedLog()
        let store = try Self.makeStore(db, log: log, busyTimeout: .milliseconds(20))
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true // the lock is held across accesses
        let holder = try DatabaseQueue(path: db.path, configuration: configuration)
        try await holder.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'held')")
        }
        let following = Task {
            try await store.consume(as: "exporter", resynchronize: { _, _ in }, Outbox.export)
        }
        // Its first step meets the lock (SQLITE_BUSY after 20 ms) and is retried, not fatal.
        try await Self.waitUntil("a busy step was retried") { log.messages.contains { $0.contains("retrying in") } }
        try await holder.writeWithoutTransaction { try $0.execute(sql: "COMMIT") }
        try await Self.waitUntil("the held commit was exported") { try Outbox.outboxRows(store).count == 1 }
        following.cancel()
        try await withTimeout(60) { try await following.value }
        #expect(try Outbox.outboxRows(store) == ["insert Note 1"])
        #expect(log.messages.contains { $0.contains("recovered") })
        #expect(log.messages.contains { $0.contains("retrying in") && $0.contains("locked") })
    }

    enum StubError: Error { case flaky, fatal }

    /// Fails `flaky` twice (its own classification: transient), then `fatal` (permanent).
    final class FailingConsumer: LocalHistoryConsumer {
        let author = "failing"
        let attempts = Mutex(0)
        func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep {
            let attempt = attempts.withLock { $0 += 1; return $0 }
            throw attempt <= 2 ? StubError.flaky : StubError.fatal
        }
        func classify(_ error: any Error) -> HistoryFailure {
            (error as? StubError) == .flaky ? .transient : .permanent
        }
    }

    @Test func theConsumersClassificationDecidesRetryOrEnd() async throws {
        let db = try TestDatabase()
        let log = CapturedLog()
        let store = try Self.makeStore(db)
        let consumer = FailingConsumer()
        let follower = HistoryFollower(consumer, store: store,
                                       backoff: Backoff(minimum: .milliseconds(1), maximum: .milliseconds(4)),
                                       logger: log.logger(label: "test"))
        let error = await #expect(throws: SearchlightError.self) { try await withTimeout(60) { try await follower.run() } }
        #expect(error?.code == .bodyFailed)
        #expect((error?.underlyingError as? StubError) == .fatal)
        #expect(consumer.attempts.withLock { $0 } == 3)
        #expect(log.messages.count { $0.contains("retrying in") } == 2)
    }

    @Test func anErrorFromConsumesBodyEndsItWithNothingSaved() async throws {
        let db = try TestDatabase()
        let store = try Self.makeStore(db)
        try await store.dbPool.write { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a')") }
        let before = try store.checkpoint(for: "exporter")?.token
        let error = await #expect(throws: SearchlightError.self) {
            try await withTimeout(60) {
                try await store.consume(as: "exporter", resynchronize: { _, _ in }) { batch, db in
                    try Outbox.export(batch, db)
                    throw StubError.fatal
                }
            }
        }
        #expect(error?.code == .bodyFailed)
        #expect(try Outbox.outboxRows(store).isEmpty)
        #expect(try store.checkpoint(for: "exporter")?.token == before)
    }

    @Test func cancellationReturnsAfterTheBatchInFlightCommits() async throws {
        let db = try TestDatabase()
        let store = try Self.makeStore(db)
        let inFlight = Mutex(false)
        let release = DispatchSemaphore(value: 0)
        let following = Task {
            try await store.consume(as: "exporter", resynchronize: { _, _ in }) { batch, db in
                try Outbox.export(batch, db)
                inFlight.withLock { $0 = true }
                // On the follower's own thread: blocking here holds no thread of the pool.
                _ = release.wait(timeout: .now() + 60)
            }
        }
        try await store.dbPool.write { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a')") }
        try await Self.waitUntil("a batch is in flight") { inFlight.withLock { $0 } }
        following.cancel()
        release.signal()
        try await withTimeout(60) { try await following.value } // returns normally
        #expect(try Outbox.outboxRows(store) == ["insert Note 1"])
        let head = try store.status().headToken
        #expect(try store.checkpoint(for: "exporter")?.token == head)
    }

    /// Another system with its own checkpoint, moved by compare-and-set with its writes.
    actor Remote {
        var checkpoint: HistoryToken?
        var applied: [String] = []
        var conflictsLeft: Int
        init(conflicts: Int) { conflictsLeft = conflicts }

        struct Conflict: Error {}

        func apply(_ changes: [String], from previous: HistoryToken?, to token: HistoryToken) throws {
            if conflictsLeft > 0 { conflictsLeft -= 1; throw Conflict() } // another writer moved it
            guard checkpoint == previous else { throw Conflict() }
            applied += changes
            checkpoint = token
        }
    }

    struct Mirror: ExternalHistoryConsumer {
        let author = "mirror"
        let remote: Remote

        func externalCheckpoint() async throws -> HistoryToken? { await remote.checkpoint }

        func fetch(after checkpoint: HistoryToken?, from store: HistoryStore) throws -> PendingHistoryBatch<HistoryBatch>? {
            _ = try store.captureStatus()
            let outcome = try store.databaseWriter.read { db in try store.fetchBatch(as: author, after: checkpoint ?? .zero, batchSize: 1, in: db) }
            guard case let .consumed(batch) = outcome else { return nil }
            return PendingHistoryBatch(author: author, previousToken: checkpoint, token: batch.token, payload: batch)
        }

        func apply(_ pending: PendingHistoryBatch<HistoryBatch>) async throws {
            try await remote.apply(pending.payload.changes.map { "\($0.type) \($0.entity) \($0.objectID)" },
                                   from: pending.previousToken, to: pending.token)
        }

        func classify(_ error: any Error) -> HistoryFailure { error is Remote.Conflict ? .transient : HistoryFailure.classify(error) }
    }

    @Test func anExternalConsumerAppliesEachBatchOnceThenConfirmsItLocally() async throws {
        let db = try TestDatabase()
        let store = try Self.makeStore(db)
        try store.registerConsumer("mirror")
        for id in 1...3 {
            try await store.dbPool.write { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'a')", arguments: [id]) }
        }
        let head = try store.status().headToken
        let remote = Remote(conflicts: 2)
        let following = Task {
            try await HistoryFollower(Mirror(remote: remote), store: store,
                                      backoff: Backoff(minimum: .milliseconds(1), maximum: .milliseconds(4))).run()
        }
        try await Self.waitUntil("the local checkpoint is confirmed at the head") { try store.checkpoint(for: "mirror")?.token == head }
        following.cancel()
        try await withTimeout(60) { try await following.value }
        #expect(await remote.applied == ["insert Note 1", "insert Note 2", "insert Note 3"])
        #expect(await remote.checkpoint == head)
    }
}
