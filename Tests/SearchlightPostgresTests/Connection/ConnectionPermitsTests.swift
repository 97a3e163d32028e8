import Synchronization
import Testing
@testable import SearchlightPostgres
import SearchlightTestSupport

/// The permits of a shared pool: never more holders than permits, waiters served in order, a
/// cancelled waiter leaves the queue (no PostgreSQL needed).
@Suite struct ConnectionPermitsTests {
    final class Counts: Sendable {
        let state = Mutex((active: 0, most: 0, done: 0))
        let order = Mutex<[Int]>([])
    }

    @Test func neverMoreHoldersThanPermits() async throws {
        let permits = ConnectionPermits(count: 2)
        let counts = Counts()
        // A bound against a hang, not a latency: in a full suite on 2 cores the cooperative pool
        // can be held by other tests for a minute (it failed once in CI at 60 s).
        try await withTimeout(600) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        try await permits.acquire()
                        counts.state.withLock { $0.active += 1; $0.most = max($0.most, $0.active) }
                        for _ in 0..<5 { await Task.yield() }
                        counts.state.withLock { $0.active -= 1; $0.done += 1 }
                        permits.release()
                    }
                }
                try await group.waitForAll()
            }
        }
        let (active, most, done) = counts.state.withLock { $0 }
        #expect(active == 0 && done == 12 && most >= 1 && most <= 2, "most \(most)")
    }

    @Test func aCancelledWaiterLeavesTheQueueAndOthersAreServedInOrder() async throws {
        let permits = ConnectionPermits(count: 1)
        try await permits.acquire()
        let cancelled = Task { try await permits.acquire() }
        let counts = Counts()
        // Waiters queue behind the holder; the first one is cancelled while it waits.
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        let first = Task { try await permits.acquire(); counts.order.withLock { $0.append(1) }; permits.release() }
        try await withTimeout(30) { while !permits.hasWaiters { await Task.yield() } }
        let second = Task { try await permits.acquire(); counts.order.withLock { $0.append(2) }; permits.release() }
        try await withTimeout(30) { while permits.waiterCount < 2 { await Task.yield() } }
        permits.release()
        try await withTimeout(30) { try await first.value; try await second.value }
        #expect(counts.order.withLock { $0 } == [1, 2])
    }
}
