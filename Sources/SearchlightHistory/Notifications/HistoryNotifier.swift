import GRDB
import Logging
import Synchronization

/// Fans new head tokens out to subscribers, and runs the cross-process watcher while anyone
/// listens. Tokens only move forward; a subscriber's buffer keeps the newest one (bursts coalesce).
final class HistoryNotifier: Sendable {
    private struct State {
        var continuations: [Int: AsyncStream<HistoryToken>.Continuation] = [:]
        var nextID = 0
        var lastToken = HistoryToken.zero
        var watcher: ExternalChangeWatcher?
    }

    private let state = Mutex(State())
    private let dbPool: DatabasePool
    private let logger: Logger
    private let fallbackInterval: Duration
    private let fileIdentity: FileIdentity?

    init(dbPool: DatabasePool, logger: Logger, fallbackInterval: Duration, fileIdentity: FileIdentity?) {
        self.dbPool = dbPool
        self.logger = logger
        self.fallbackInterval = fallbackInterval
        self.fileIdentity = fileIdentity
    }

    /// Delivers `token` to every subscriber if it is newer than the last one delivered.
    func publish(_ token: HistoryToken) {
        state.withLock { state in
            guard token > state.lastToken else { return }
            state.lastToken = token
            for continuation in state.continuations.values { continuation.yield(token) }
        }
    }

    /// Wakes every subscriber with the last token (the schema changed, or reading history
    /// failed: let them read, and check or meet the error).
    func wakeAll() {
        state.withLock { state in
            for continuation in state.continuations.values { continuation.yield(state.lastToken) }
        }
    }

    func subscribe() -> AsyncStream<HistoryToken> {
        let (stream, continuation) = AsyncStream<HistoryToken>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id: Int = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            if state.watcher == nil {
                state.watcher = ExternalChangeWatcher(
                    dbPool: dbPool, logger: logger, fallbackInterval: fallbackInterval, fileIdentity: fileIdentity,
                    publish: { [weak self] token in self?.publish(token) },
                    wake: { [weak self] in self?.wakeAll() })
            }
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    private func unsubscribe(_ id: Int) {
        let watcher: ExternalChangeWatcher? = state.withLock { state in
            state.continuations[id] = nil
            guard state.continuations.isEmpty else { return nil }
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.stop()
    }

    deinit {
        state.withLock { state in
            for continuation in state.continuations.values { continuation.finish() }
            state.watcher?.stop()
        }
    }
}
