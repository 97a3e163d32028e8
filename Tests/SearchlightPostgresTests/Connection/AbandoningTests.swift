import Foundation
@testable import SearchlightPostgres
import Synchronization
import Testing

/// `abandoning`'s timer ends with the operation: no task is left sleeping for the whole limit
/// after each call (a sink made one per connection lease, each sleeping 12 s).
struct AbandoningTests {
    /// A sleep that waits until it is cancelled (or an hour), and says so.
    final class Timer: Sendable {
        let state = Mutex((started: false, cancelled: false, fired: false))

        func sleep(_ limit: Duration) async {
            state.withLock { $0.started = true }
            try? await Task.sleep(for: .seconds(3_600))
            state.withLock { state in if Task.isCancelled { state.cancelled = true } else { state.fired = true } }
        }
    }

    @Test func theTimerIsCancelledWhenTheOperationEnds() async throws {
        for failing in [false, true] {
            let timer = Timer()
            struct Failure: Error {}
            let result = try? await abandoning(after: .seconds(3_600), timeout: { Failure() }, sleep: timer.sleep) { () async throws -> Int in
                if failing { throw Failure() }
                return 7
            }
            #expect(result == (failing ? nil : 7))
            // Bounded wait for the timer's own task to see its cancellation (not a latency assertion).
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, !timer.state.withLock({ $0.cancelled }) { try await Task.sleep(for: .milliseconds(5)) }
            #expect(timer.state.withLock { $0.cancelled }, "the timer still sleeps after the operation ended (failing: \(failing))")
        }
    }

    @Test func anOperationPastTheLimitIsAbandonedWithTheTimeoutError() async throws {
        struct TimedOut: Error {}
        let gate = AsyncStream<Void>.makeStream()
        await #expect(throws: TimedOut.self) {
            _ = try await abandoning(after: .milliseconds(10), timeout: { TimedOut() }) { () async throws -> Int in
                for await _ in gate.stream {} // never ends by itself
                return 1
            }
        }
        gate.continuation.finish()
    }
}
