import Foundation
import Logging
import Synchronization

/// One database of a ``Fleet``, as the fleet drives it: the indexer of one file, the sink of one
/// source.
public protocol FleetMember: Sendable {
    /// Whether work may be pending: a cheap read (the head token against the checkpoint), made
    /// after each write the fleet notices, before a whole ``step()``.
    func hasPendingWork() async throws(SearchlightError) -> Bool
    /// One turn of work, bounded (a few batches), so that the other members get theirs; returns
    /// whether the member caught up. Blocking SQLite work crosses to a thread of its own here.
    func step() async throws(SearchlightError) -> Bool
    /// Lets go of what the member holds open after it was idle for
    /// ``Fleet/Configuration/releaseIdleAfter``; its next turn opens it again. (Default: nothing.)
    func release() async
    /// Lets the database go: the file was removed, or the member failed and will be opened again.
    func close() async
}

extension FleetMember {
    public func release() async {}
}

/// Follows every database of a ``DatabaseGlob`` in one process: databases that appear are picked
/// up, removed ones dropped; at most ``Configuration/concurrency`` members work at once, in turns
/// (a busy member goes to the back of the queue after each turn, so that it cannot starve the
/// rest); an idle member costs nothing but its open file (one inotify descriptor watches the whole
/// folder; no member is polled).
///
/// A member that cannot be opened or fails (not set up, locked, corrupt, deleted mid-run) gets one
/// log line and is tried again later, with a bounded, jittered backoff; the others go on. When it
/// works again, one line says so.
///
/// ```swift
/// let fleet = Fleet(glob: try DatabaseGlob("tenants/*.sqlite")) { path throws(SearchlightError) in
///     try MyMember(path: path)
/// }
/// let following = Task { await fleet.run() }   // until cancelled
/// ```
public final class Fleet<Member: FleetMember>: Sendable {
    public struct Configuration: Sendable {
        /// Members working at once.
        public var concurrency = 4
        /// How often the folder is rescanned (in case the kernel dropped events), and, without
        /// inotify, how often every member is checked.
        public var fallbackInterval: Duration = .seconds(10)
        /// The first and the longest wait before a failed member is tried again.
        public var minimumRetry: Duration = .milliseconds(500)
        public var maximumRetry: Duration = .seconds(60)
        /// A member idle this long is released (``FleetMember/release()``); nil: never.
        public var releaseIdleAfter: Duration? = .seconds(10)
        public var logger = Logger(label: "searchlight.fleet")
        /// Tests: poll instead of inotify.
        package var usesInotify = true

        public init() {}
    }

    /// A member as ``members()`` reports it.
    public struct MemberStatus: Sendable, Hashable {
        public var path: String
        /// Whether its database is open (it was opened and did not fail since).
        public var isOpen: Bool
        /// The last failure, while the member is failing.
        public var failure: String?
        /// Failures in a row.
        public var failures: Int
    }

    private enum Job { case check, work }

    private struct Slot {
        var member: Member?
        var queued: Job?
        var running = false
        /// A write was noticed while the member was running: check again after its turn.
        var dirty = false
        var removed = false
        var failures = 0
        var failure: String?
        /// When the last write was noticed, and the next recheck's delay (a commit becomes
        /// visible a moment after its WAL write, which is what inotify reports).
        var lastChange: ContinuousClock.Instant?
        var recheck: Duration = .milliseconds(2)
        /// Turns taken: a release scheduled after one is dropped if another came since.
        var turns = 0
        /// Bumped when the slot is made again, so that a retry scheduled for an older slot is ignored.
        var generation = 0
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var queue: [String] = []
        var head = 0
        var idleWorkers: [CheckedContinuation<String?, Never>] = []
        var finished = false
        var generations = 0
    }

    public let glob: DatabaseGlob
    public let configuration: Configuration
    private let open: @Sendable (String) async throws(SearchlightError) -> Member
    private let state = Mutex(State())
    private var logger: Logger { configuration.logger }

    /// - Parameter open: opens the member of a database (called again after a failure).
    public init(glob: DatabaseGlob, configuration: Configuration = .init(),
                open: @escaping @Sendable (String) async throws(SearchlightError) -> Member) {
        self.glob = glob
        self.configuration = configuration
        self.open = open
    }

    /// Each member now, sorted by path.
    public func members() -> [MemberStatus] {
        state.withLock { state in
            state.slots.filter { !$0.value.removed }.map { path, slot in
                MemberStatus(path: path, isOpen: slot.member != nil, failure: slot.failure, failures: slot.failures)
            }.sorted { $0.path < $1.path }
        }
    }

    /// Follows the fleet until the calling task is cancelled; the turns in flight end first, and
    /// every member is closed before it returns.
    public func run() async {
        let watcher = FleetWatcher(glob: glob, fallback: configuration.fallbackInterval, logger: logger,
                                   useInotify: configuration.usesInotify) { [self] events in handle(events) }
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<max(1, configuration.concurrency) { group.addTask { await self.work() } }
            }
        } onCancel: {
            finish()
        }
        watcher.stop()
        let members = state.withLock { state in
            defer { state.slots = [:] }
            return state.slots.values.compactMap(\.member)
        }
        for member in members { await member.close() }
    }

    // MARK: - Events

    private func handle(_ events: [FleetWatcher.Event]) {
        var closing: [Member] = []
        var added = 0, removed = 0
        state.withLock { state in
            guard !state.finished else { return }
            for event in events {
                switch event {
                case let .members(paths):
                    for path in paths where state.slots[path].map({ $0.removed }) ?? true {
                        state.generations += 1
                        state.slots[path] = Slot(generation: state.generations)
                        enqueue(path, .work, &state)
                        added += 1
                    }
                    for (path, slot) in state.slots where !slot.removed && !paths.contains(path) {
                        removed += 1
                        if slot.running {
                            state.slots[path]?.removed = true
                        } else {
                            if let member = slot.member { closing.append(member) }
                            state.slots[path] = nil
                        }
                    }
                case let .changed(path):
                    guard var slot = state.slots[path], !slot.removed else { continue }
                    slot.lastChange = .now
                    slot.recheck = .milliseconds(2)
                    if slot.running { slot.dirty = true }
                    state.slots[path] = slot
                    if !slot.running { enqueue(path, .check, &state) }
                }
            }
        }
        if added > 0 || removed > 0 {
            logger.info("following \(members().count) databases of \(glob)\(added > 0 ? ", \(added) new" : "")\(removed > 0 ? ", \(removed) gone" : "")")
        }
        for member in closing { Task { await member.close() } }
    }

    /// Puts a member at the back of the queue (a `work` job supersedes a `check`), or hands it to
    /// an idle worker.
    private func enqueue(_ path: String, _ job: Job, _ state: inout State) {
        guard var slot = state.slots[path], !slot.removed, !slot.running else { return }
        if let queued = slot.queued {
            if queued == .check, job == .work { slot.queued = .work; state.slots[path] = slot }
            return
        }
        slot.queued = job
        state.slots[path] = slot
        if !state.idleWorkers.isEmpty {
            state.idleWorkers.removeFirst().resume(returning: path)
        } else {
            state.queue.append(path)
        }
    }

    private func enqueue(_ path: String, _ job: Job, after delay: Duration, generation: Int) {
        Task {
            try? await Task.sleep(for: delay)
            state.withLock { state in
                guard !state.finished, state.slots[path]?.generation == generation else { return }
                enqueue(path, job, &state)
            }
        }
    }

    private func finish() {
        let idle = state.withLock { state in
            state.finished = true
            defer { state.idleWorkers = [] }
            return state.idleWorkers
        }
        for worker in idle { worker.resume(returning: nil) }
    }

    /// The next member to work on, or nil once the fleet is finished.
    private func next() async -> String? {
        await withCheckedContinuation { continuation in
            let path: String?? = state.withLock { state in
                if state.finished { return .some(nil) }
                if state.head < state.queue.count {
                    defer {
                        state.head += 1
                        if state.head > 1_024, state.head * 2 > state.queue.count {
                            state.queue.removeFirst(state.head)
                            state.head = 0
                        }
                    }
                    return .some(state.queue[state.head])
                }
                state.idleWorkers.append(continuation)
                return nil
            }
            if let path { continuation.resume(returning: path) }
        }
    }

    // MARK: - Turns

    private func work() async {
        while let path = await next() {
            guard let (job, existing, generation) = state.withLock({ state -> (Job, Member?, Int)? in
                guard var slot = state.slots[path], !slot.removed, let job = slot.queued else { return nil }
                slot.queued = nil
                slot.running = true
                slot.turns += 1
                slot.dirty = false
                state.slots[path] = slot
                return (job, slot.member, slot.generation)
            }) else { continue }
            var member = existing
            do throws(SearchlightError) {
                if member == nil {
                    let opened = try await open(path)
                    member = opened
                    state.withLock { $0.slots[path]?.member = opened }
                }
                guard let member else { continue }
                var pending = job == .work
                if !pending { pending = try await member.hasPendingWork() }
                logger.trace("\(path): \(job == .work ? "turn" : "check")\(pending ? ", working" : ", nothing to do")")
                if pending {
                    let caughtUp = try await member.step()
                    turnEnded(path, generation: generation, caughtUp: caughtUp, progressed: true)
                } else {
                    turnEnded(path, generation: generation, caughtUp: true, progressed: false)
                }
            } catch {
                failed(path, generation: generation, error)
            }
            // A member whose turn never suspended must not hold this thread of the cooperative
            // pool: the other tasks of the process get theirs.
            await Task.yield()
        }
    }

    /// After a turn that worked: the member goes to the back of the queue if it has more to do
    /// (or a write came during its turn); a check that found nothing soon after a write checks
    /// again after a short, doubling delay.
    private func turnEnded(_ path: String, generation: Int, caughtUp: Bool, progressed: Bool) {
        var recovered: String?
        var closing: Member?
        var recheck: Duration?
        var idleAfterTurn: Int?
        state.withLock { state in
            guard var slot = state.slots[path], slot.generation == generation else { return }
            slot.running = false
            if slot.removed {
                closing = slot.member
                state.slots[path] = nil
                return
            }
            if slot.failure != nil { recovered = slot.failure }
            slot.failures = 0
            slot.failure = nil
            if !progressed, let change = slot.lastChange, ContinuousClock.now - change < .milliseconds(300) {
                recheck = slot.recheck
                slot.recheck = min(slot.recheck * 2, .milliseconds(128))
            }
            let again = !caughtUp || slot.dirty
            slot.dirty = false
            state.slots[path] = slot
            if again { enqueue(path, caughtUp ? .check : .work, &state) } else { idleAfterTurn = slot.turns }
        }
        if let closing { Task { await closing.close() } }
        if recovered != nil { logger.notice("\(path): working again") }
        if let recheck { enqueue(path, .check, after: recheck, generation: generation) }
        if let idleAfterTurn, let delay = configuration.releaseIdleAfter { releaseIfIdle(path, generation: generation, turns: idleAfterTurn, after: delay) }
    }

    /// Releases a member that took no turn since `turns` when `delay` has passed.
    private func releaseIfIdle(_ path: String, generation: Int, turns: Int, after delay: Duration) {
        Task {
            try? await Task.sleep(for: delay)
            let member: Member? = state.withLock { state in
                guard !state.finished, let slot = state.slots[path], slot.generation == generation, slot.turns == turns,
                      !slot.running, slot.queued == nil else { return nil }
                return slot.member
            }
            await member?.release()
        }
    }

    /// A failed turn: one log line per distinct failure, the member closed, and another try after
    /// a bounded, jittered backoff.
    private func failed(_ path: String, generation: Int, _ error: SearchlightError) {
        var closing: Member?
        var retry: Duration?
        var log = false
        state.withLock { state in
            guard var slot = state.slots[path], slot.generation == generation else { return }
            slot.running = false
            closing = slot.member
            slot.member = nil
            if slot.removed {
                state.slots[path] = nil
                return
            }
            slot.failures += 1
            log = slot.failure != error.message
            slot.failure = error.message
            state.slots[path] = slot
            retry = Self.backoff(failures: slot.failures, minimum: configuration.minimumRetry, maximum: configuration.maximumRetry)
        }
        if let closing { Task { await closing.close() } }
        guard let retry else { return }
        if log { logger.error("\(path): \(error.message); trying again later, the other databases go on") }
        enqueue(path, .work, after: retry, generation: generation)
    }

    /// `minimum` doubled per failure in a row, up to `maximum`, each wait drawn in its upper half.
    static func backoff(failures: Int, minimum: Duration, maximum: Duration) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return Backoff.delay(failures: failures, minimum: minimum, maximum: maximum, using: &generator)
    }
}
