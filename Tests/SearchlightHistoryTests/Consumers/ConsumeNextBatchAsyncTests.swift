import Foundation
import GRDB
import Synchronization
import Testing
import SearchlightHistory
import SearchlightTestSupport

/// `consumeNextBatchAsync`: the batch `consumeNextBatch` would consume, in a write transaction
/// on a thread of its own.
@Suite struct ConsumeNextBatchAsyncTests {
    @Test func itConsumesWhatTheSyncFormConsumesOnAThreadOfItsOwn() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try await store.dbPool.write { try $0.execute(sql: HistoryConsumptionTests.outbox) }
        try store.resynchronize(as: "sync") { _, _ in }
        try store.resynchronize(as: "async") { _, _ in }
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'x'); INSERT INTO notes(id, title) VALUES (2, 'y'); DELETE FROM notes WHERE id = 1;")
        let sync = try store.consumeNextBatch(as: "sync", HistoryConsumptionTests.export)
        let caller = pthread_self()
        let bodyThread = Mutex<pthread_t?>(nil)
        let async = try await store.consumeNextBatchAsync(as: "async") { batch, db in
            bodyThread.withLock { $0 = pthread_self() }
            try HistoryConsumptionTests.export(batch, db)
        }
        guard case let .consumed(syncBatch) = sync, case let .consumed(asyncBatch) = async else {
            Issue.record("expected two batches: \(sync), \(async)"); return
        }
        #expect(asyncBatch.previousToken == syncBatch.previousToken && asyncBatch.token == syncBatch.token)
        #expect(asyncBatch.changes == syncBatch.changes)
        #expect(try store.checkpoint(for: "async")?.token == syncBatch.token, "the checkpoint was saved")
        let rows = try HistoryConsumptionTests.outboxRows(store)
        #expect(rows.count == 6 && Array(rows.prefix(3)) == Array(rows.suffix(3)), "\(rows)")
        let thread = try #require(bodyThread.withLock { $0 })
        #expect(pthread_equal(thread, caller) == 0, "the batch ran on the calling thread")
        #expect(try await store.consumeNextBatchAsync(as: "async", HistoryConsumptionTests.export) == .caughtUp(syncBatch.token))
    }
}
