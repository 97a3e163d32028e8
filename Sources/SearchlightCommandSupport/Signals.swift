import Dispatch
import Foundation
import Synchronization

/// Waits for SIGINT or SIGTERM.
package enum Signals {
    /// Returns when SIGINT or SIGTERM arrives, or when the calling task is cancelled.
    package static func waitForTermination() async {
        let waiter = Waiter()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter.set(continuation)
                for signalNumber in [SIGINT, SIGTERM] {
                    signal(signalNumber, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                    source.setEventHandler { waiter.resume() }
                    source.resume()
                    Retained.sources.append(source)
                }
            }
        } onCancel: {
            waiter.resume()
        }
    }

    /// Keeps the signal sources alive for the life of the process.
    /// (Written only here, once per signal, before the source can fire.)
    private enum Retained {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    }

    /// Resumes its continuation once, whichever comes first: a signal or cancellation (which
    /// may come before the continuation is even set).
    private final class Waiter: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Void, Never>?
            var resumed = false
        }
        private let state = Mutex(State())

        func set(_ continuation: CheckedContinuation<Void, Never>) {
            let resumeNow = state.withLock { state in
                if state.resumed { return true }
                state.continuation = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }

        func resume() {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.resumed = true; state.continuation = nil }
                return state.resumed ? nil : state.continuation
            }
            continuation?.resume()
        }
    }
}
