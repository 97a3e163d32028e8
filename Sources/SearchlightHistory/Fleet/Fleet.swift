import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One database of a ``Fleet``, as the fleet drives it: the indexer of one file, the sink of one
/// source.
public protocol FleetMember: Sendable {
    /// Whether work may be pending: a cheap read (the head token against the checkpoint), made
    /// after each write the fleet notices, before a whole ``step()``.
    func hasPendingWork() async throws(SearchlightError) -> Bool
    /// Whether work is pending, said for sure: every commit whose write the fleet noticed before
    /// the call is visible to the read (made under the database's write lock, taken without
    /// waiting); nil when it cannot be said so now (the member holds nothing open, or another
    /// writer holds the lock), and the fleet uses ``hasPendingWork()``. A look that found
    /// nothing for sure needs no second one. (Default: nil.)
    func settledPendingWork() async throws(SearchlightError) -> Bool?
    /// One turn of work, bounded (a few batches), so that the other members get theirs; returns
    /// whether the member caught up. Blocking SQLite work crosses to a thread of its own here.
    func step() async throws(SearchlightError) -> Bool
    /// Writes back what the member's connections hold before a release (a WAL checkpoint), so
    /// that the database's file alone holds every commit once the member lets it go. Its own
    /// writes are reported to the fleet, which looks again (``settledPendingWork()``) before
    /// ``release()``. (Default: nothing.)
    func writeBack() async
    /// Lets go of what the member holds open after it was idle for
    /// ``Fleet/Configuration/releaseIdleAfter``; its next turn opens it again. (Default: nothing.)
    func release() async
    /// Lets the database go: the file was removed, or the member failed and will be opened again.
    func close() async
}

extension FleetMember {
    public func release() async {}
    public func writeBack() async {}
    public func settledPendingWork() async throws(SearchlightError) -> Bool? { nil }
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
    /// The most members that work at once, whatever ``Configuration/concurrency`` says: each is a
    /// worker task, and no machine has cores for more.
    public static var maximumConcurrency: Int { 256 }

    public struct Configuration: Sendable {
        /// Members working at once (1 to ``Fleet/maximumConcurrency``; a larger value counts as that).
        public var concurrency = 4
        /// How often the folder is rescanned (in case the kernel dropped events), and, without
        /// inotify, how often every member is checked.
        public var fallbackInterval: Duration = .seconds(10)
        /// The first and the longest wait before a failed member is tried again.
        public var minimumRetry: Duration = .milliseconds(500)
        public var maximumRetry: Duration = .seconds(60)
        /// A member idle this long is released (``FleetMember/release()``); nil: never.
        public var releaseIdleAfter: Duration? = .seconds(10)
        /// Members that may hold their database open at once (each took a turn and was not
        /// released since): past it, the member whose last turn is the oldest is released as soon
        /// as it is idle. It bounds the memory of a fleet whose members all work at once (a first
        /// sync, writes to every tenant): an open member holds SQLite connections and their
        /// caches. nil: no bound.
        public var maximumOpenMembers: Int? = 32
        public var logger = Logger(label: "searchlight.fleet")
        /// Tests: poll instead of inotify.
        package var usesInotify = true
        /// How long after a noticed write a look that found nothing is followed by another. It
        /// was 300 ms, and a look that took longer than that (the machine loaded) ended the
        /// looks while the writer's commit was still to become visible: the write was followed
        /// only at the tenant's next write (a fleet test saw three tenants never indexed). Past
        /// it, one more look comes at the next ``fallbackInterval`` (``Statistics/tickChecks``).
        package var recheckHorizon: Duration = .seconds(5)

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
        /// visible a moment after its WAL write, which is what inotify reports, and a writer
        /// descheduled in between, on a loaded machine, makes that moment long: looks go on,
        /// at doubling intervals of up to a second, for ``Configuration/recheckHorizon`` after the write).
        var lastChange: ContinuousClock.Instant?
        var recheck: Duration = .milliseconds(2)
        /// Turns taken: a release scheduled after one is dropped if another came since.
        var turns = 0
        /// Bumped when the slot is made again, so that a retry scheduled for an older slot is ignored.
        var generation = 0
        /// Whether the member may hold its database open: it took a turn since it was last
        /// released.
        var held = false
        /// When its last turn ended (``State/uses``), for the bound on open members.
        var lastUse = 0
        /// Its last look found nothing without being sure (a commit noticed may become visible
        /// later), and the rechecks after the write ended: the ``State/ticks`` count then. Two
        /// ticks on (a whole ``Configuration/fallbackInterval`` at least), it is looked at once
        /// more.
        var unsureSince: Int?
        /// The queued check is a tick's: if it finds nothing too, the member is left alone.
        var tickCheck = false
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var queue: [String] = []
        var head = 0
        var idleWorkers: [CheckedContinuation<String?, Never>] = []
        var finished = false
        var generations = 0
        /// Ticks of the watcher (``FleetWatcher/Event/tick``) so far.
        var ticks = 0
        /// Turns ended so far: each one's number orders members from least to most recently used.
        var uses = 0
        /// Slots with `held` set.
        var held = 0
        /// (use, path) of each turn that ended, oldest first; an entry whose slot has a later
        /// `lastUse` is stale and skipped.
        var recent: [(use: Int, path: String)] = []
        var recentHead = 0
        var statistics = Statistics()
        /// A trim of the process's memory is scheduled.
        var trimming = false
    }

    /// What the fleet did since it started: the evidence for a fleet that works more than its
    /// writes ask for.
    public struct Statistics: Sendable, Hashable {
        /// Turns that worked (``FleetMember/step()``).
        public var steps = 0
        /// Checks (``FleetMember/hasPendingWork()``) and those that found nothing to do.
        public var checks = 0
        public var emptyChecks = 0
        /// Of the checks, those made at the end of a turn or before a release during which a
        /// write was noticed (most often the member's own), while the member was open.
        public var inlineChecks = 0
        /// Of the checks that found nothing, those that could say so for sure
        /// (``FleetMember/settledPendingWork()``): no second look followed them.
        public var settledChecks = 0
        /// Of the checks, those the fallback interval made: a member whose last look found
        /// nothing without being sure, after its rechecks, looked at once more.
        public var tickChecks = 0
        /// Members waiting for that look now.
        public var unsureMembers = 0
        /// Members released: idle for ``Configuration/releaseIdleAfter``, or past
        /// ``Configuration/maximumOpenMembers``.
        public var idleReleases = 0
        public var boundReleases = 0
        /// Failed turns (opening included).
        public var failures = 0
        /// Members that may hold their database open now, and at most so far.
        public var openMembers = 0
        public var peakOpenMembers = 0
    }

    public let glob: DatabaseGlob
    public let configuration: Configuration
    private let open: @Sendable (String) async throws(SearchlightError) -> Member
    private let state = Mutex(State())
    /// The folder's watcher while ``run()`` runs: a turn drains its events before it looks
    /// again (``FleetWatcher/drain()``).
    private let watcher = Mutex<FleetWatcher?>(nil)
    private var logger: Logger { configuration.logger }

    /// - Parameter open: opens the member of a database (called again after a failure).
    public init(glob: DatabaseGlob, configuration: Configuration = .init(),
                open: @escaping @Sendable (String) async throws(SearchlightError) -> Member) {
        self.glob = glob
        self.configuration = configuration
        self.open = open
    }

    /// What the fleet did so far.
    public func statistics() -> Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.unsureMembers = state.slots.values.count { $0.unsureSince != nil }
            return statistics
        }
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
        self.watcher.withLock { $0 = watcher }
        defer { self.watcher.withLock { $0 = nil } }
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<min(max(1, configuration.concurrency), Self.maximumConcurrency) { group.addTask { await self.work() } }
                if logger.logLevel <= .debug { group.addTask { await self.logStatistics() } }
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

    /// At debug level, what the fleet did, every ``Configuration/fallbackInterval`` it did something.
    private func logStatistics() async {
        var last = Statistics()
        while !Task.isCancelled, !state.withLock({ $0.finished }) {
            try? await Task.sleep(for: configuration.fallbackInterval)
            let now = statistics()
            guard now != last else { continue }
            last = now
            logger.debug("fleet: \(now.steps) turns, \(now.checks) checks (\(now.emptyChecks) found nothing, \(now.inlineChecks) at the end of a turn, \(now.settledChecks) settled), \(now.idleReleases) idle and \(now.boundReleases) bound releases, \(now.failures) failures, \(now.openMembers) open (at most \(now.peakOpenMembers))")
        }
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
                        // A removed slot still in its turn, made again: its turn's end is ignored.
                        if state.slots[path]?.held == true { state.held -= 1 }
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
                            drop(path, &state)
                        }
                    }
                case let .changed(path):
                    // A failing member waits for its backoff, whatever the folder says: opening a
                    // damaged database writes its WAL, and every write would retry it at once.
                    guard var slot = state.slots[path], !slot.removed, slot.failures == 0 else { continue }
                    slot.lastChange = .now
                    slot.recheck = .milliseconds(2)
                    if slot.running { slot.dirty = true }
                    state.slots[path] = slot
                    if !slot.running { enqueue(path, .check, &state) }
                case .tick:
                    state.ticks += 1
                    for (path, slot) in state.slots where (slot.unsureSince.map { state.ticks - $0 >= 2 } ?? false) {
                        guard !slot.running, slot.queued == nil, !slot.removed, slot.failures == 0 else { continue }
                        state.slots[path]?.unsureSince = nil
                        state.slots[path]?.tickCheck = true
                        state.statistics.tickChecks += 1
                        enqueue(path, .check, &state)
                    }
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
        guard var slot = state.slots[path], !slot.removed else { return }
        if slot.running {
            // Working or being released: it checks again once that ends (a recheck scheduled
            // before must not be lost).
            slot.dirty = true
            state.slots[path] = slot
            return
        }
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
            guard let (job, existing, generation, tick) = state.withLock({ state -> (Job, Member?, Int, Bool)? in
                // Running here means being released: the release's end queues it again.
                guard var slot = state.slots[path], !slot.removed, !slot.running, let job = slot.queued else { return nil }
                slot.queued = nil
                slot.running = true
                slot.turns += 1
                slot.dirty = false
                defer { slot.tickCheck = false; state.slots[path] = slot }
                return (job, slot.member, slot.generation, slot.tickCheck)
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
                var lookedInVain = false
                if !pending { (pending, lookedInVain) = try await look(member) }
                logger.trace("\(path): \(job == .work ? "turn" : "check")\(pending ? ", working" : ", nothing to do")")
                if pending {
                    var caughtUp = try await member.step()
                    // The turn's own writes are reported now (the kernel queued their events
                    // before the writes returned), and a write noticed during the turn, most
                    // often the turn's own commit, is looked at now, while the member is open,
                    // instead of at the back of the queue behind every other member's.
                    watcher.withLock { $0 }?.drain()
                    if caughtUp, state.withLock({ state in
                        defer { state.slots[path]?.dirty = false }
                        return state.slots[path]?.dirty == true
                    }) {
                        let (more, inVain) = try await look(member)
                        caughtUp = !more
                        lookedInVain = inVain
                        state.withLock { state in
                            state.statistics.checks += 1
                            state.statistics.inlineChecks += 1
                            if caughtUp { state.statistics.emptyChecks += 1 }
                        }
                    }
                    turnEnded(path, generation: generation, checked: job == .check, caughtUp: caughtUp, progressed: true,
                              lookedInVain: lookedInVain, tick: tick)
                } else {
                    turnEnded(path, generation: generation, checked: true, caughtUp: true, progressed: false, lookedInVain: lookedInVain,
                              tick: tick)
                }
            } catch {
                failed(path, generation: generation, error)
            }
            // Past the bound on open members: the least recently used idle ones let go, here,
            // one at a time (a release and a turn of one member never overlap).
            while let (victim, member, victimGeneration) = state.withLock({ takeLeastRecentlyUsed(&$0) }) {
                await release(victim, member, generation: victimGeneration)
            }
            // A member whose turn never suspended must not hold this thread of the cooperative
            // pool: the other tasks of the process get theirs.
            await Task.yield()
        }
    }

    /// Whether a member has work: for sure if it can say (``FleetMember/settledPendingWork()``),
    /// else from its cheap check; `inVain` when that check found nothing but a commit noticed
    /// may not be visible yet (the fleet looks again shortly).
    private func look(_ member: Member) async throws(SearchlightError) -> (pending: Bool, inVain: Bool) {
        if let settled = try await member.settledPendingWork() {
            if !settled { state.withLock { $0.statistics.settledChecks += 1 } }
            return (settled, false)
        }
        let pending = try await member.hasPendingWork()
        return (pending, !pending)
    }

    /// Removes a slot for good.
    private func drop(_ path: String, _ state: inout State) {
        if state.slots[path]?.held == true { state.held -= 1 }
        state.slots[path] = nil
        state.statistics.openMembers = state.held
    }

    /// The least recently used member that may hold its database, if more than
    /// ``Configuration/maximumOpenMembers`` may and it is idle, marked running (its release is a
    /// turn of its own).
    private func takeLeastRecentlyUsed(_ state: inout State) -> (String, Member, Int)? {
        guard let bound = configuration.maximumOpenMembers else { return nil }
        while state.held > max(0, bound), state.recentHead < state.recent.count {
            let (use, path) = state.recent[state.recentHead]
            state.recentHead += 1
            guard var slot = state.slots[path], slot.held, slot.lastUse == use, !slot.removed else { continue }
            // Running: its turn's end records a newer use. A queued member is released too (its
            // turn opens it again): members that all have more to do must not all stay open.
            guard !slot.running, let member = slot.member else { continue }
            slot.running = true
            slot.held = false
            state.held -= 1
            state.statistics.openMembers = state.held
            state.statistics.boundReleases += 1
            state.slots[path] = slot
            compactRecent(&state)
            return (path, member, slot.generation)
        }
        compactRecent(&state)
        return nil
    }

    /// Forgets the entries of `recent` already passed, and the stale ones once they outnumber
    /// the live ones.
    private func compactRecent(_ state: inout State) {
        if state.recentHead > 1_024, state.recentHead * 2 > state.recent.count {
            state.recent.removeFirst(state.recentHead)
            state.recentHead = 0
        }
        if state.recent.count - state.recentHead > 4 * (state.held + state.slots.count) + 1_024 {
            let live = state.recent[state.recentHead...].filter { entry in state.slots[entry.path].map { $0.held && $0.lastUse == entry.use } ?? false }
            state.recent = Array(live)
            state.recentHead = 0
        }
    }

    /// Records the end of a turn of a member that may now hold its database.
    private func used(_ slot: inout Slot, _ path: String, _ state: inout State) {
        state.uses += 1
        slot.lastUse = state.uses
        if !slot.held {
            slot.held = true
            state.held += 1
            state.statistics.openMembers = state.held
            state.statistics.peakOpenMembers = max(state.statistics.peakOpenMembers, state.held)
        }
        state.recent.append((state.uses, path))
    }

    /// Releases a member marked running for it, then lets it take turns again. The member
    /// writes back first (a checkpoint), and a write noticed meanwhile, most often that one, is
    /// looked at while the member is still open, as at the end of a turn.
    private func release(_ path: String, _ member: Member, generation: Int) async {
        logger.trace("\(path): released")
        await member.writeBack()
        watcher.withLock { $0 }?.drain()
        // The writes noticed so far are taken before the look (as at the end of a turn): one
        // noticed during the look sets `dirty` again, and is looked at after the release. (The
        // flag was cleared after the look, and a foreign write committed just after the look's
        // lock and noticed before the clear was forgotten: a fleet test saw a tenant's write
        // never indexed under load.)
        let noticed = state.withLock { state -> Bool in
            guard let slot = state.slots[path], slot.generation == generation, slot.dirty else { return false }
            state.slots[path]?.dirty = false
            return true
        }
        if noticed {
            let settled = try? await member.settledPendingWork()
            state.withLock { state in
                guard let settled else {
                    // Not said for sure (another writer held the lock): looked at after the release.
                    if state.slots[path]?.generation == generation { state.slots[path]?.dirty = true }
                    return
                }
                state.statistics.checks += 1
                state.statistics.inlineChecks += 1
                if !settled { state.statistics.emptyChecks += 1; state.statistics.settledChecks += 1 }
                guard state.slots[path]?.generation == generation else { return }
                if settled, state.slots[path]?.queued == nil { state.slots[path]?.queued = .work }
            }
        }
        await member.release()
        var closing: Member?
        state.withLock { state in
            guard var slot = state.slots[path], slot.generation == generation else { return }
            slot.running = false
            if slot.removed {
                closing = slot.member
                drop(path, &state)
                return
            }
            // A turn queued before or during the release is queued again (its place in the queue
            // was passed over while it was released).
            let again = slot.queued ?? (slot.dirty ? .check : nil)
            slot.dirty = false
            slot.queued = nil
            state.slots[path] = slot
            if let again { enqueue(path, again, &state) }
        }
        if let closing { await closing.close() }
    }

    /// After a turn that worked: the member goes to the back of the queue if it has more to do
    /// (or a write came during its turn); a check that found nothing soon after a write checks
    /// again after a short, doubling delay.
    /// `lookedInVain`: the turn ended with a check that found nothing (a commit may become
    /// visible a moment after the write that was noticed); past the horizon, unless it was a
    /// `tick`'s check, the member is looked at once more a fallback interval later (a look that
    /// ran past the horizon, or a writer descheduled past it, left a commit unfollowed until the
    /// tenant's next write: a fleet test saw it in 2 of about 6 loaded full runs).
    private func turnEnded(_ path: String, generation: Int, checked: Bool, caughtUp: Bool, progressed: Bool, lookedInVain: Bool,
                           tick: Bool = false) {
        var recovered: String?
        var closing: Member?
        var recheck: Duration?
        var idleAfterTurn: Int?
        state.withLock { state in
            if checked { state.statistics.checks += 1 }
            if !progressed { state.statistics.emptyChecks += 1 } else { state.statistics.steps += 1 }
            guard var slot = state.slots[path], slot.generation == generation else { return }
            slot.running = false
            if slot.removed {
                closing = slot.member
                drop(path, &state)
                return
            }
            // A check that found nothing opened nothing: only a member that worked (or was open
            // already) counts as open.
            if progressed || slot.held { used(&slot, path, &state) }
            if slot.failure != nil { recovered = slot.failure }
            slot.failures = 0
            slot.failure = nil
            slot.unsureSince = nil
            if lookedInVain, let change = slot.lastChange, ContinuousClock.now - change < configuration.recheckHorizon {
                recheck = slot.recheck
                slot.recheck = min(slot.recheck * 2, .seconds(1))
            } else if lookedInVain, !tick {
                slot.unsureSince = state.ticks
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
                guard !state.finished, var slot = state.slots[path], slot.generation == generation, slot.turns == turns,
                      !slot.running, slot.queued == nil, slot.held, let member = slot.member else { return nil }
                slot.running = true
                slot.held = false
                state.held -= 1
                state.statistics.openMembers = state.held
                state.statistics.idleReleases += 1
                state.slots[path] = slot
                return member
            }
            if let member {
                await release(path, member, generation: generation)
                trimMemorySoon()
            }
        }
    }

    /// Hands the memory that released members freed back to the system, a second after a
    /// release (one trim for a burst of them). glibc keeps freed memory in its heaps: without
    /// this, a fleet's RSS stays at its busiest for good, though every member was released.
    private func trimMemorySoon() {
        #if canImport(Glibc)
        guard state.withLock({ state in defer { state.trimming = true }; return !state.trimming && !state.finished }) else { return }
        Task {
            try? await Task.sleep(for: .seconds(1))
            state.withLock { $0.trimming = false }
            await DedicatedThread.run(name: "searchlight.fleet.trim") { _ in _ = Self.mallocTrim?(0) }
        }
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `malloc_trim(3)` (not in the Glibc module: `malloc.h` is not part of it).
    private static var mallocTrim: (@convention(c) (Int) -> Int32)? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }
    #endif

    /// A failed turn: one log line per distinct failure, the member closed, and another try after
    /// a bounded, jittered backoff.
    private func failed(_ path: String, generation: Int, _ error: SearchlightError) {
        var closing: Member?
        var retry: Duration?
        var log = false
        state.withLock { state in
            // A turn the fleet's own end stopped (between batches, its work committed) is no
            // failure: nothing to log, nothing to try again.
            if state.finished, error.code == .cancelled {
                state.slots[path]?.running = false
                return
            }
            state.statistics.failures += 1
            guard var slot = state.slots[path], slot.generation == generation else { return }
            slot.running = false
            closing = slot.member
            slot.member = nil
            if slot.held {
                slot.held = false
                state.held -= 1
                state.statistics.openMembers = state.held
            }
            if slot.removed {
                drop(path, &state)
                return
            }
            slot.failures += 1
            log = slot.failure != error.message
            slot.failure = error.message
            slot.dirty = false
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
