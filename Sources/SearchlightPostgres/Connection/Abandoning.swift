import Synchronization

/// Runs `operation` in a task of its own and returns what it returns; but if `isReady()` is
/// still false after `limit` (or the caller is cancelled), throws `timeout()` (or
/// `CancellationError`) **without waiting for it**: the task is cancelled and left to end by
/// itself.
///
/// A task group would wait for its children, and a postgres-nio client whose connections the
/// server terminated can leave a lease or a shutdown that never ends: waiting for it would hang
/// the sink, and SIGTERM with it. Abandoning such a task leaks it, which is the lesser harm.
///
/// `sleep` is the timer's wait (tests observe it): the timer is cancelled as soon as the
/// operation ends, so that no task is left sleeping for `limit` after each call.
func abandoning<T: Sendable>(after limit: Duration, unless isReady: @escaping @Sendable () -> Bool = { false },
                             timeout: @escaping @Sendable () -> any Error,
                             sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) },
                             _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let task = Task { try await operation() }
    let outcome = OnceContinuation<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.set(continuation)
            let timer = Task {
                await sleep(limit)
                guard !Task.isCancelled else { return }
                if !isReady(), outcome.resume(.failure(timeout())) { task.cancel() }
            }
            Task {
                do { outcome.resume(.success(try await task.value)) } catch { outcome.resume(.failure(error)) }
                timer.cancel()
            }
        }
    } onCancel: {
        if outcome.resume(.failure(CancellationError())) { task.cancel() }
    }
}

/// Awaits `task`, but gives up on it (cancelling it and leaving it to end by itself) when
/// `isStalled()` holds at one of the checks every `interval`, or `grace` after the caller is
/// cancelled.
func awaitUnlessStalled<T: Sendable>(_ task: Task<T, any Error>, checkingEvery interval: Duration,
                                     isStalled: @escaping @Sendable () -> Bool, stalled: @escaping @Sendable () -> any Error,
                                     grace: Duration) async throws -> T {
    let outcome = OnceContinuation<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.set(continuation)
            Task {
                do { outcome.resume(.success(try await task.value)) } catch { outcome.resume(.failure(error)) }
            }
            Task {
                while !outcome.isResumed {
                    try? await Task.sleep(for: interval)
                    if isStalled(), outcome.resume(.failure(stalled())) { task.cancel() }
                }
            }
        }
    } onCancel: {
        Task {
            try? await Task.sleep(for: grace)
            if outcome.resume(.failure(CancellationError())) { task.cancel() }
        }
    }
}

/// A step made no progress for `limit`.
struct StepStalled: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "no progress for \(limit): the step was given up, and the session starts over" }
}

/// A continuation resumed once, by whichever comes first; a result that comes before the
/// continuation is set is kept for it.
final class OnceContinuation<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var resumed = false
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    var isResumed: Bool { state.withLock { $0.resumed } }

    /// Resumes with `result` if nothing did before; returns whether this call did.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let (continuation, first) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Bool) in
            guard !state.resumed else { return (nil, false) }
            state.resumed = true
            state.result = result
            defer { state.continuation = nil }
            return (state.continuation, true)
        }
        continuation?.resume(with: result)
        return first
    }
}
