import Synchronization

/// At most `count` holders at once, served in the order they asked: the connections of a
/// shared ``PostgresPool``. A sink takes a permit before it asks the client for a connection, so
/// that the client always has one to give: its wait (bounded by the connect timeout) then means
/// that the server does not answer, never that other sinks hold every connection; the wait for
/// a permit itself has no bound but the sinks ahead in the queue.
final class ConnectionPermits: Sendable {
    private struct State {
        var available: Int
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var next = 0
    }
    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(available: count))
    }

    /// Waits for a permit; throws `CancellationError` if the task is cancelled while it waits.
    func acquire() async throws {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let granted = state.withLock { state -> Bool? in
                    if state.available > 0, state.waiters.isEmpty {
                        state.available -= 1
                        return true
                    }
                    // Cancelled before it queued: the cancellation handler found nothing to remove.
                    if Task.isCancelled { return nil }
                    state.waiters.append((id, continuation))
                    return false
                }
                switch granted {
                case true?: continuation.resume()
                case nil: continuation.resume(throwing: CancellationError())
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Gives a permit back: to the first waiter, if any.
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume()
    }

    /// Tasks waiting for a permit now (tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }
    var hasWaiters: Bool { waiterCount > 0 }
}
