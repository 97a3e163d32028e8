import Dispatch
import Foundation
import SearchlightHistory
import Synchronization

/// Runs an indexer's follow loop on a thread of its own.
///
/// Indexing is synchronous SQLite work (each batch holds the write lock for its duration), so
/// it runs on a dedicated thread rather than in Swift's cooperative pool, which has only as
/// many threads as cores and must never block. A task listens for commits and wakes the
/// thread; ``stop()`` asks the loop to stop, wakes it, and suspends (without blocking a
/// thread) until the batch or rebuild chunk in flight has committed and the thread has ended.
final class IndexFollower: Sendable {
    private struct State {
        var stopRequested = false
        var finished = false
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let listener: Task<Void, Never>

    /// Starts the thread. `body` runs the loop; it calls `shouldStop` between units of work
    /// and `waitForWork` when idle (true: woken by a commit; false: asked to stop).
    init(commits: AsyncStream<HistoryToken>, name: String,
         body: @escaping @Sendable (_ follower: IndexFollower) -> Void) {
        let wake = self.wake
        listener = Task { for await _ in commits { wake.signal() } }
        let thread = Thread { [self] in
            body(self)
            let waiting: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.finished = true
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for continuation in waiting { continuation.resume() }
        }
        thread.name = name
        thread.start()
    }

    var shouldStop: Bool { state.withLock { $0.stopRequested } }

    /// Waits for the next commit (or `timeout`); returns false once a stop was requested.
    func waitForWork(timeout: Duration? = nil) -> Bool {
        if shouldStop { return false }
        if let timeout {
            _ = wake.wait(timeout: .now() + timeout.seconds)
        } else {
            wake.wait()
        }
        return !shouldStop
    }

    /// Asks the loop to stop at its next check, and wakes it if idle.
    func requestStop() {
        state.withLock { $0.stopRequested = true }
        listener.cancel()
        wake.signal()
    }

    /// Asks the loop to stop and returns once its thread has ended (whether or not the calling
    /// task is cancelled: the batch in flight commits first).
    func stop() async {
        requestStop()
        await waitUntilFinished(cancellable: false)
    }

    /// Whether the loop's thread has ended.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Returns once the loop's thread has ended (stopped, or ended by itself), or, when
    /// `cancellable`, as soon as the calling task is cancelled (the loop goes on).
    func waitUntilFinished(cancellable: Bool = true) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if state.finished || (cancellable && Task.isCancelled) { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            guard cancellable else { return }
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
    }

    /// Runs synchronous indexing work on a thread of its own and suspends (without blocking a
    /// thread) until it ends. Cancelling the calling task makes `shouldStop` true, which the
    /// work checks between batches and rebuild chunks. (The boundary every consumer shares:
    /// ``DedicatedThread``.)
    static func run<T: Sendable>(name: String,
                                 _ work: @escaping @Sendable (_ shouldStop: @escaping @Sendable () -> Bool) throws(SearchlightError) -> T)
        async throws(SearchlightError) -> T
    {
        try await DedicatedThread.run(name: name, work)
    }
}
