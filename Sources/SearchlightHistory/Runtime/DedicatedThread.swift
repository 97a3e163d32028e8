import Foundation
import Synchronization

/// The one boundary between Swift's cooperative pool and blocking SQLite work.
///
/// The cooperative pool has only as many threads as cores and must never block; a batch holds
/// SQLite's write lock (and waits for it) synchronously. So blocking work runs on a thread of
/// its own, and the calling task suspends, without holding a thread, until it ends.
package enum DedicatedThread {
    /// Runs `work` on a new thread named `name` and suspends until it returns.
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
                let thread = Thread {
                    let result = Result { () throws(E) -> T in try work { cancelled.isSet } }
                    continuation.resume(returning: result)
                }
                thread.name = name
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
        return try result.get()
    }
}
