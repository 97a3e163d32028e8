import Synchronization

/// How many requests may run at once: a place is taken or refused at once, never queued.
final class Gate: Sendable {
    let limit: Int
    private let running = Mutex(0)

    init(limit: Int) { self.limit = max(limit, 1) }

    func enter() -> Bool {
        running.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { running.withLock { $0 -= 1 } }
}
