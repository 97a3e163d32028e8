import Synchronization

/// The first of a request's outcomes (its answer, its timeout, its cancellation) resumes it.
final class RequestOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var timer: Task<Void, Never>?
        var work: Task<Void, Never>?
        var cancelled = false
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let cancelled = state.withLock { state in
            state.continuation = continuation
            return state.cancelled
        }
        if cancelled { finish(.failure(CancellationError())) }
    }

    func timer(_ timer: Task<Void, Never>, work: Task<Void, Never>) {
        let done = state.withLock { state in
            (state.timer, state.work) = (timer, work)
            return state.continuation == nil
        }
        if done { timer.cancel() }
    }

    /// Resumes the request unless something else did first; true if this did.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(with: result)
        return true
    }

    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        if finish(.failure(CancellationError())) { work?.cancel() }
    }
}
