import Foundation
import Synchronization
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

/// The fleet's scheduling, with members that only record their turns: fairness (a member that
/// always has more work cannot starve the others), isolation (a member that cannot be opened
/// does not stop the rest), and the glob.
@Suite struct FleetTests {
    /// Records the order of every member's turns.
    final class Journal: Sendable {
        let turns = Mutex<[String]>([])
        func record(_ name: String) { turns.withLock { $0.append(name) } }
    }

    final class FakeMember: FleetMember {
        let name: String
        let journal: Journal
        /// Turns before it catches up (Int.max: never).
        let work: Int
        let done = Mutex(0)
        init(name: String, journal: Journal, work: Int) { self.name = name; self.journal = journal; self.work = work }
        func hasPendingWork() async throws(SearchlightError) -> Bool { done.withLock { $0 } < work }
        func step() async throws(SearchlightError) -> Bool {
            // A real member crosses to a thread of its own; this one only lets others run.
            await Task.yield()
            journal.record(name)
            return done.withLock { $0 += 1; return $0 } >= work
        }
        let releases = Mutex(0)
        func release() async { releases.withLock { $0 += 1 } }
        func close() async {}
    }

    static func folder(_ names: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fleet-unit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in names { FileManager.default.createFile(atPath: directory + "/" + name, contents: Data()) }
        return directory
    }

    /// A member whose turn stops between batches when the fleet ends (as the indexer does).
    final class StoppingMember: FleetMember {
        let started = Mutex(false)
        func hasPendingWork() async throws(SearchlightError) -> Bool { true }
        func step() async throws(SearchlightError) -> Bool {
            started.withLock { $0 = true }
            do { try await Task.sleep(for: .seconds(600)) } catch { throw SearchlightError(.cancelled, "indexing was cancelled") }
            return true
        }
        func close() async {}
    }

    /// An outsider saw `indexing was cancelled; trying again later` logged as an error when
    /// SIGTERM met a turn in flight: the fleet's own end is no failure.
    @Test func aTurnStoppedByTheFleetsEndIsNoFailure() async throws {
        let directory = try Self.folder(["a.db"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = CapturedLog()
        var configuration = Fleet<StoppingMember>.Configuration()
        configuration.logger = log.logger(label: "fleet")
        let member = StoppingMember()
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { _ throws(SearchlightError) in member }
        let following = Task { await fleet.run() }
        // A bound against a hang, not a latency: in a full run every test shares the pool's two
        // threads with hundreds of others, and a turn took over 120 s to start once.
        let deadline = ContinuousClock.now + .seconds(600)
        while !member.started.withLock({ $0 }) {
            try #require(ContinuousClock.now < deadline, "the turn never started")
            try await Task.sleep(for: .milliseconds(5))
        }
        following.cancel()
        await following.value
        #expect(!log.messages.contains { $0.contains("cancelled") }, "\(log.messages)")
        #expect(fleet.statistics().failures == 0)
    }

    @Test func aBusyMemberCannotStarveTheOthers() async throws {
        let directory = try Self.folder(["busy.db", "a.db", "b.db", "c.db"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal()
        var configuration = Fleet<FakeMember>.Configuration()
        configuration.concurrency = 1
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { path throws(SearchlightError) in
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            return FakeMember(name: name, journal: journal, work: name == "busy" ? Int.max : 3)
        }
        let running = Task { await fleet.run() }
        // Each quiet member needs 3 turns; the busy one never catches up.
        try await withTimeout(600) {
            while journal.turns.withLock({ turns in ["a", "b", "c"].contains { name in turns.filter { $0 == name }.count < 3 } }) {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        running.cancel()
        await running.value
        let turns = journal.turns.withLock { $0 }
        // Round robin: by the time every quiet member had its 3 turns, the busy one had at most
        // one turn more than each of them.
        let lastQuiet = turns.lastIndex { $0 != "busy" }!
        let busyTurns = turns[...lastQuiet].filter { $0 == "busy" }.count
        #expect(busyTurns <= 4, "\(turns.prefix(40))")
    }

    @Test func aMemberThatCannotBeOpenedDoesNotStopTheOthers() async throws {
        let directory = try Self.folder(["bad.db", "good.db"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal()
        let attempts = Mutex(0)
        var configuration = Fleet<FakeMember>.Configuration()
        configuration.minimumRetry = .milliseconds(1)
        configuration.maximumRetry = .milliseconds(20)
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { path throws(SearchlightError) in
            if path.hasSuffix("bad.db") {
                let attempt = attempts.withLock { $0 += 1; return $0 }
                if attempt < 5 { throw SearchlightError(.notADatabase, "not a database (attempt \(attempt))") }
            }
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            return FakeMember(name: name, journal: journal, work: 1)
        }
        let running = Task { await fleet.run() }
        try await withTimeout(600) {
            while !journal.turns.withLock({ $0.contains("good") && $0.contains("bad") }) { try await Task.sleep(for: .milliseconds(5)) }
        }
        let members = fleet.members()
        running.cancel()
        await running.value
        #expect(attempts.withLock { $0 } == 5, "tried again after each failure")
        #expect(members.map(\.path).map { URL(fileURLWithPath: $0).lastPathComponent } == ["bad.db", "good.db"])
        #expect(members.allSatisfy { $0.failure == nil && $0.isOpen }, "\(members)")
    }

    /// A member idle for `releaseIdleAfter` is released (its database let go), once; a member
    /// that keeps working is not.
    @Test func anIdleMemberIsReleasedAndABusyOneIsNot() async throws {
        let directory = try Self.folder(["idle.db", "busy.db"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal()
        let members = Mutex<[String: FakeMember]>([:])
        var configuration = Fleet<FakeMember>.Configuration()
        configuration.releaseIdleAfter = .milliseconds(20)
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { path throws(SearchlightError) in
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let member = FakeMember(name: name, journal: journal, work: name == "busy" ? Int.max : 1)
            members.withLock { $0[name] = member }
            return member
        }
        let running = Task { await fleet.run() }
        try await withTimeout(600) {
            while members.withLock({ $0["idle"]?.releases.withLock { $0 } ?? 0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        // The busy member has been working all along, and took turns after the idle one's release.
        let turnsBefore = journal.turns.withLock { $0.filter { $0 == "busy" }.count }
        try await withTimeout(600) {
            while journal.turns.withLock({ $0.filter { $0 == "busy" }.count }) < turnsBefore + 10 { try await Task.sleep(for: .milliseconds(1)) }
        }
        running.cancel()
        await running.value
        #expect(members.withLock { $0["idle"]!.releases.withLock { $0 } } == 1)
        #expect(members.withLock { $0["busy"]!.releases.withLock { $0 } } == 0)
    }

    /// A member that counts how many of its kind are open: a turn opens it, a release closes it.
    final class OpeningMember: FleetMember {
        final class Counter: Sendable {
            let open = Mutex<(now: Int, peak: Int)>((0, 0))
            func change(_ delta: Int) { open.withLock { $0.now += delta; $0.peak = max($0.peak, $0.now) } }
        }
        let counter: Counter
        let work: Int
        let done = Mutex(0)
        let isOpen = Mutex(false)
        init(counter: Counter, work: Int) { self.counter = counter; self.work = work }
        func hasPendingWork() async throws(SearchlightError) -> Bool { done.withLock { $0 } < work }
        func step() async throws(SearchlightError) -> Bool {
            await Task.yield()
            if isOpen.withLock({ open in defer { open = true }; return !open }) { counter.change(1) }
            return done.withLock { $0 += 1; return $0 } >= work
        }
        func release() async {
            if isOpen.withLock({ open in defer { open = false }; return open }) { counter.change(-1) }
        }
        func close() async { await release() }
    }

    /// Past `maximumOpenMembers`, the least recently used member is released after each turn,
    /// even one queued for more work: however many members work at once, no more than the bound
    /// stay open (one more while a turn runs, with one worker), and every member still finishes.
    @Test func theBoundOnOpenMembersHolds() async throws {
        let directory = try Self.folder((0..<20).map { "m\($0).db" })
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = OpeningMember.Counter()
        let members = Mutex<[OpeningMember]>([])
        var configuration = Fleet<OpeningMember>.Configuration()
        configuration.concurrency = 1
        configuration.maximumOpenMembers = 3
        configuration.releaseIdleAfter = nil
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { path throws(SearchlightError) in
            let member = OpeningMember(counter: counter, work: path.hasSuffix("m0.db") || path.hasSuffix("m1.db") ? 50 : 3)
            members.withLock { $0.append(member) }
            return member
        }
        let running = Task { await fleet.run() }
        try await withTimeout(600) {
            while members.withLock({ $0.count < 20 || $0.contains { $0.done.withLock { $0 } < $0.work } }) || fleet.statistics().openMembers > 3
                    || counter.open.withLock({ $0.now }) > 3 {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        let statistics = fleet.statistics()
        let open = counter.open.withLock { $0 }
        running.cancel()
        await running.value
        #expect(open.peak <= 4, "at most the bound and the member in its turn: \(open.peak) were open at once")
        #expect(open.now <= 3 && open.now == statistics.openMembers, "\(open.now) open, \(statistics)")
        #expect(statistics.boundReleases >= 17, "\(statistics)")
        #expect(statistics.peakOpenMembers <= 4, "\(statistics)")
    }

    @Test func theBackoffIsBoundedAndJittered() {
        var seen: Set<Duration> = []
        for failures in 1...40 {
            let delay = Fleet<FakeMember>.backoff(failures: failures, minimum: .milliseconds(100), maximum: .milliseconds(800))
            let ceiling = min(Duration.milliseconds(800), .milliseconds(100) * (1 << min(failures - 1, 30)))
            #expect(delay >= ceiling / 2 && delay <= ceiling, "\(failures): \(delay)")
            seen.insert(delay)
        }
        #expect(seen.count > 10)
    }

    @Test func theGlobMatchesFileNamesInOneFolder() throws {
        let glob = try DatabaseGlob("/data/tenants/*.sqlite")
        #expect(glob.directory == "/data/tenants" && glob.pattern == "*.sqlite")
        #expect(glob.matches(fileName: "a.sqlite") && !glob.matches(fileName: "a.sqlite-wal") && !glob.matches(fileName: ".hidden.sqlite"))
        #expect(!glob.matches(fileName: "a.sqlite-journal") && !glob.matches(fileName: "a.db"))
        for bad in ["", "*/a.sqlite", "tenants/", "a\0b"] {
            let error = #expect(throws: SearchlightError.self) { try DatabaseGlob(bad) }
            #expect(error?.code == .invalidArgument, "\(bad.debugDescription)")
        }
    }

    /// Found by an outsider: a FIFO named like a database blocked a worker in `open` for good;
    /// a link to a member made it a member twice; a folder given without its trailing slash
    /// followed nothing, silently.
    @Test func onlyRegularFilesAreMembersAndEachOnce() throws {
        let directory = try Self.folder(["a.sqlite", "b.sqlite"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(mkfifo(directory + "/fifo.sqlite", 0o600) == 0)
        try FileManager.default.createDirectory(atPath: directory + "/folder.sqlite", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: directory + "/0-link.sqlite", withDestinationPath: directory + "/b.sqlite")
        try FileManager.default.createSymbolicLink(atPath: directory + "/dangling.sqlite", withDestinationPath: directory + "/none")
        let paths = try DatabaseGlob(directory + "/*.sqlite").matchingPaths().map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(paths == ["a.sqlite", "b.sqlite"])
        let error = #expect(throws: SearchlightError.self) { try DatabaseGlob(directory) }
        #expect(error?.message.contains("it names a folder") == true, "\(String(describing: error))")
    }

    /// Found by an outsider: a damaged database whose open writes its WAL was tried again at
    /// every write the folder reported (170 opens a second): a failing member waits for its
    /// backoff, whatever the folder says.
    @Test func aFailingMemberWaitsForItsBackoffWhateverTheFolderSays() async throws {
        let directory = try Self.folder(["bad.db"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let attempts = Mutex<[String: Int]>([:])
        var configuration = Fleet<FakeMember>.Configuration()
        configuration.minimumRetry = .seconds(3600)
        configuration.maximumRetry = .seconds(3600)
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { path throws(SearchlightError) in
            attempts.withLock { $0[path, default: 0] += 1 }
            // What opening a damaged database does before it fails: it writes beside it.
            FileManager.default.createFile(atPath: path + "-wal", contents: Data(repeating: 1, count: 32))
            throw SearchlightError(.databaseError, "database disk image is malformed")
        }
        let running = Task { await fleet.run() }
        try await withTimeout(600) {
            while fleet.members().first?.failures != 1 { try await Task.sleep(for: .milliseconds(5)) }
        }
        // Writes to the member's WAL, as its opens and its app make: none is a retry.
        for _ in 0..<20 {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/bad.db-wal"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([1]))
            try handle.close()
            try await Task.sleep(for: .milliseconds(20))
        }
        // A file created after the writes, once a member, says that the watcher handled every
        // event before it (it reads them in order).
        FileManager.default.createFile(atPath: directory + "/probe.db", contents: Data())
        try await withTimeout(600) {
            while !fleet.members().contains(where: { $0.path.hasSuffix("/probe.db") }) { try await Task.sleep(for: .milliseconds(5)) }
        }
        running.cancel()
        await running.value
        let opens = attempts.withLock { $0[directory + "/bad.db"] ?? 0 }
        #expect(opens == 1, "opened again \(opens - 1) times by writes to its WAL")
    }

    /// A member whose writer's commit becomes visible to the fleet's looks only as its
    /// ``Visibility`` says, after the write the watcher saw.
    final class LateCommitMember: FleetMember {
        enum Visibility {
            /// To looks from that instant on.
            case from(ContinuousClock.Instant)
            /// To a look that comes at least that long after the look before it.
            case toALookAfterAGap(Duration)
        }
        let visibility = Mutex<Visibility?>(nil)
        let lastLook = Mutex<ContinuousClock.Instant?>(nil)
        let looks = Mutex(0)
        let steps = Mutex(0)
        func hasPendingWork() async throws(SearchlightError) -> Bool {
            looks.withLock { $0 += 1 }
            let now = ContinuousClock.now
            let previous = lastLook.withLock { last in defer { last = now }; return last }
            guard steps.withLock({ $0 }) < 2 else { return false }
            switch visibility.withLock({ $0 }) {
            case nil: return false
            case let .from(instant): return now >= instant
            case let .toALookAfterAGap(gap): return previous.map { now - $0 >= gap } ?? false
            }
        }
        func step() async throws(SearchlightError) -> Bool {
            steps.withLock { $0 += 1 }
            return true
        }
        func close() async {}
    }

    /// Runs a fleet of one ``LateCommitMember``; once its first turn ended, sets its visibility
    /// and writes to its file; then waits for the write to be followed (a bound against a miss,
    /// not a latency), recording an issue if it never is. Returns the fleet's statistics.
    static func followALateCommit(_ configure: (inout Fleet<LateCommitMember>.Configuration) -> Void,
                                  visibility: () -> LateCommitMember.Visibility) async throws -> (member: LateCommitMember, statistics: Fleet<LateCommitMember>.Statistics) {
        let directory = try folder(["a.db"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let member = LateCommitMember()
        var configuration = Fleet<LateCommitMember>.Configuration()
        configuration.releaseIdleAfter = nil
        configure(&configuration)
        let fleet = Fleet(glob: try DatabaseGlob(directory + "/*.db"), configuration: configuration) { _ throws(SearchlightError) in member }
        let running = Task { await fleet.run() }
        defer { running.cancel() }
        // Readiness: the member's first turn (a new member works first) has ended.
        try await withTimeout(600) {
            while member.steps.withLock({ $0 }) == 0 || fleet.statistics().steps == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        member.visibility.withLock { $0 = visibility() }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/a.db"))
        try handle.write(contentsOf: Data([1]))
        try handle.close()
        do {
            try await withTimeout(600) { while member.steps.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) } }
        } catch {
            Issue.record("never followed: \(member.looks.withLock { $0 }) looks; \(fleet.statistics())")
        }
        running.cancel()
        await running.value
        return (member, fleet.statistics())
    }

    /// Found in a loaded CI run: a look that found nothing stopped the looks 300 ms after the
    /// write, and a commit that became visible later (its writer descheduled) was not followed
    /// until the tenant's next write. Here it becomes visible 700 ms after the write: without
    /// looks past 300 ms, it never steps again.
    @Test func aCommitVisibleLateAfterItsWriteIsStillFollowed() async throws {
        _ = try await Self.followALateCommit({ _ in }, visibility: { .from(.now + .milliseconds(700)) })
    }

    /// The known bug of stops 38 and 39: in loaded full runs a fleet sometimes never followed a
    /// foreign write (a look that found nothing, and every recheck within the horizon too, then
    /// nothing until the tenant's next write). Here the horizon is 100 ms and the commit is
    /// visible only to a look 250 ms or more after the one before: only the look a fallback
    /// interval (300 ms) after the rechecks ended sees it. Without that look, it never steps again.
    @Test func aCommitVisibleOnlyPastTheRecheckHorizonIsFollowedAtTheNextTick() async throws {
        let (member, statistics) = try await Self.followALateCommit({ configuration in
            configuration.recheckHorizon = .milliseconds(100)
            configuration.fallbackInterval = .milliseconds(300)
        }, visibility: { .toALookAfterAGap(.milliseconds(250)) })
        // (On a loaded machine a recheck may itself come 250 ms after the look before it.)
        print("followed after \(member.looks.withLock { $0 }) looks: \(statistics)")
    }
}
