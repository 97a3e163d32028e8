import Dispatch
import Foundation
import Synchronization

/// The one boundary between Swift's cooperative pool and blocking SQLite work.
///
/// The cooperative pool has only as many threads as cores and must never block; a batch holds
/// SQLite's write lock (and waits for it) synchronously. So blocking work runs on a thread that
/// does nothing else meanwhile, and the calling task suspends, without holding a thread, until it
/// ends.
///
/// The threads are kept: a call takes an idle one, or starts one when none is idle (so work that
/// waits, such as a write waiting for a lock, never makes another call wait), and a thread idle
/// for ``WorkerThreads/idleTimeout`` ends. A fleet makes thousands of short calls: a new thread
/// for each (a stack mapped, glibc's per-thread malloc caches filled and dropped) cost more than
/// the work.
package enum DedicatedThread {
    /// Runs `work` on a thread that runs nothing else meanwhile, named `name` while it does, and
    /// suspends until it returns.
    ///
    /// Cancelling the calling task does not interrupt `work`: it makes `shouldStop` return
    /// true, which long work checks between units it commits (batches, rebuild chunks).
    package static func run<T: Sendable, E: Error>(
        name: String,
        _ work: @escaping @Sendable (_ shouldStop: @escaping @Sendable () -> Bool) throws(E) -> T
    ) async throws(E) -> T {
        let cancelled = AtomicFlag()
        let result: Result<T, E> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
                WorkerThreads.shared.run(name: name) {
                    let result = Result { () throws(E) -> T in try work { cancelled.isSet } }
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            cancelled.set()
        }
        return try result.get()
    }
}

extension DedicatedThread {
    /// Takes the value out of `holder` and lets it go on a thread of its own, where its last
    /// reference is dropped: closing a store's SQLite connections is blocking work, as opening
    /// them is, and must not hold a thread of the cooperative pool. (A fleet member's release.)
    package static func letGo<T: Sendable>(takingFrom holder: borrowing Mutex<T?>, name: String) async {
        guard let handoff = holder.withLock({ current -> Handoff<T>? in
            defer { current = nil }
            return current.map(Handoff.init)
        }) else { return }
        await run(name: name) { _ in handoff.value.withLock { $0 = nil } }
    }

    /// A value handed to the thread that drops it.
    private final class Handoff<T: Sendable>: Sendable {
        let value: Mutex<T?>
        init(_ value: T) { self.value = Mutex(value) }
    }
}

/// Long-lived threads for ``DedicatedThread``: as many as calls in flight, kept while they are
/// used.
package final class WorkerThreads: Sendable {
    package static let shared = WorkerThreads()

    /// How long a thread waits for another call before it ends.
    package let idleTimeout: Duration
    /// Idle threads kept at most (more end at once).
    package let maximumIdle: Int

    private final class Worker: Sendable {
        let wake = DispatchSemaphore(value: 0)
        let job = Mutex<(@Sendable () -> Void)?>(nil)
    }

    private struct State {
        /// Idle workers, the most recently used last (it is taken first: the others time out).
        var idle: [Worker] = []
        var threads = 0
        var started = 0
    }

    private let state = Mutex(State())

    package init(idleTimeout: Duration = .seconds(10), maximumIdle: Int = 16) {
        self.idleTimeout = idleTimeout
        self.maximumIdle = max(0, maximumIdle)
    }

    /// Threads alive now, and started since the pool was made.
    package var counts: (alive: Int, started: Int) { state.withLock { ($0.threads, $0.started) } }

    /// Runs `job` on an idle thread, or on a new one.
    package func run(name: String, _ job: @escaping @Sendable () -> Void) {
        let named: @Sendable () -> Void = {
            Thread.current.name = name
            job()
        }
        let worker: Worker? = state.withLock { state in
            if let worker = state.idle.popLast() { return worker }
            state.threads += 1
            state.started += 1
            return nil
        }
        if let worker {
            worker.job.withLock { $0 = named }
            worker.wake.signal()
            return
        }
        let fresh = Worker()
        fresh.job.withLock { $0 = named }
        let thread = Thread { [self] in loop(fresh) }
        thread.name = name
        thread.start()
    }

    private func loop(_ worker: Worker) {
        let timeout = Int(idleTimeout.components.seconds) * 1_000_000_000 + Int(idleTimeout.components.attoseconds / 1_000_000_000)
        while true {
            // Take the job out first, so that what it holds (a store, an indexer) is let go
            // here, on this thread, before the thread parks.
            if let job = worker.job.withLock({ job in defer { job = nil }; return job }) { job() }
            let parked = state.withLock { state in
                guard state.idle.count < maximumIdle else { state.threads -= 1; return false }
                state.idle.append(worker)
                return true
            }
            guard parked else { return }
            if worker.wake.wait(timeout: .now() + .nanoseconds(timeout)) == .success { continue }
            // Timed out: end, unless a call took this worker meanwhile (its signal is coming).
            let ends = state.withLock { state in
                guard let index = state.idle.firstIndex(where: { $0 === worker }) else { return false }
                state.idle.remove(at: index)
                state.threads -= 1
                return true
            }
            if ends { return }
            worker.wake.wait()
        }
    }
}
