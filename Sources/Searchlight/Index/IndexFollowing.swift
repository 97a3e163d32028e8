import SearchlightHistory
import Synchronization

/// The task that follows history for a started indexer (``Indexer/start()``): a
/// ``HistoryFollower`` runs it, which owns the waking, the backoff and the thread boundary.
/// This type only holds the task and tells who waits when it has ended.
final class IndexFollowing: Sendable {
    private let ending = Ending()
    private let task: Task<Void, Never>

    /// Starts `body` (the runner) in a task of its own.
    init(_ body: @escaping @Sendable () async -> Void) {
        let ending = self.ending
        task = Task {
            await body()
            ending.finish()
        }
    }

    /// Asks the runner to stop: the step in flight ends (its transaction commits, a rebuild
    /// stops after its chunk in flight), then the runner returns.
    func requestStop() {
        task.cancel()
    }

    /// Asks the runner to stop and returns once it has ended (whether or not the calling task
    /// is cancelled: the batch in flight commits first).
    func stop() async {
        requestStop()
        await task.value
    }

    /// Whether the runner has ended.
    var isFinished: Bool { ending.isFinished }

    /// Returns once the runner has ended (stopped, or ended by itself), or, when `cancellable`,
    /// as soon as the calling task is cancelled (the runner goes on).
    func waitUntilFinished(cancellable: Bool = true) async {
        guard cancellable else { return await task.value }
        await ending.wait()
    }

    /// The end of the runner, which waiters may stop waiting for.
    private final class Ending: Sendable {
        private struct State {
            var finished = false
            var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter = 0
        }
        private let state = Mutex(State())

        var isFinished: Bool { state.withLock { $0.finished } }

        func finish() {
            let waiting: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.finished = true
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for continuation in waiting { continuation.resume() }
        }

        /// Returns once finished, or as soon as the calling task is cancelled.
        func wait() async {
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let done = state.withLock { state in
                        if state.finished || Task.isCancelled { return true }
                        state.waiting[id] = continuation
                        return false
                    }
                    if done { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
