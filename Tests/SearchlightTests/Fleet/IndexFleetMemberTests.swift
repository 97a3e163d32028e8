import Foundation
import GRDB
import GRDBSQLite
import Testing
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A fleet member: its checks (a cheap one, and one that says for sure), and what it leaves in
/// the file when it lets its database go.
@Suite struct IndexFleetMemberTests {
    /// The database and its WAL, byte for byte (nil: no such file).
    private func files(_ path: String) -> [Data?] {
        [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
    }

    /// One indexed database whose last connection is the one `body` drops.
    private func indexedDatabase() throws -> TestDatabase {
        let db = try TestDatabase()
        do {
            let store = try db.openStore()
            _ = try Indexer(store: store)
        }
        _ = try db.shell("INSERT INTO notes(id, title) VALUES (1, 'kept'), (2, 'also kept');")
        return db
    }

    /// The database's file alone, copied elsewhere (as an operator's `cp`, or a move of the file
    /// without its -wal): the notes it holds, and the index's checkpoint in it.
    private func copyAlone(_ path: String) throws -> (notes: Int, indexed: Int) {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("alone-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) } }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let out = try Shell.sqlite3(copy, "SELECT count(*) FROM notes; SELECT coalesce((SELECT token FROM searchlight_consumer WHERE author = 'searchlight.indexer'), -1);")
        let numbers = out.split(separator: "\n").compactMap { Int($0) }
        return (numbers[0], numbers[1])
    }

    /// An outsider found that a released tenant's last commits stayed in its -wal only (the
    /// member's connections did not checkpoint when they closed): a copy or a move of the file
    /// lost them, and a file moved in under its name had the stale WAL replayed over it. A
    /// member writes the WAL back before it lets the database go.
    @Test func aReleasedDatabasesFileAloneHoldsEveryCommit() async throws {
        let db = try indexedDatabase()
        let member = try IndexFleetMember(path: db.path)
        #expect(try await member.step())
        if try await member.hasPendingWork() { #expect(try await member.step()) }
        // The app commits while the member holds the database open: its close is not the last,
        // so its commits stay in the WAL.
        _ = try db.shell("INSERT INTO notes(id, title) VALUES (3, 'app'), (4, 'app'), (5, 'app');")
        #expect(try await member.step())
        let head = try ConsumerPosition.read(consumer: "searchlight.indexer", at: db.path).head.rawValue
        #expect(try copyAlone(db.path).notes < 5, "the app's commits are still in the WAL only (else this test proves nothing)")

        await member.writeBack()
        let written = try copyAlone(db.path)
        #expect(written.notes == 5 && written.indexed == Int(head), "after the write-back: \(written), head \(head)")
        await member.release()
        let released = try copyAlone(db.path)
        #expect(released.notes == 5 && released.indexed == Int(head), "after the release: \(released), head \(head)")
        let wal = FileManager.default.contents(atPath: db.path + "-wal")
        #expect(wal == nil || wal!.isEmpty, "a -wal of \(wal?.count ?? 0) bytes is left to be replayed over a file moved in under this name")
        await member.close()
    }

    @Test func aCheckOfAnOpenMemberSeesAnotherProcesssCommit() async throws {
        let db = try indexedDatabase()
        let member = try IndexFleetMember(path: db.path)
        #expect(try await member.step())
        if try await member.hasPendingWork() { #expect(try await member.step()) }
        for round in 0..<3 {
            #expect(try await !member.hasPendingWork())
            _ = try db.shell("INSERT INTO notes(id, title) VALUES (\(10 + round), 'round \(round)');")
            #expect(try await member.hasPendingWork(), "round \(round)")
            #expect(try await member.step())
        }
        await member.close()
    }

    @Test func aSettledCheckSaysForSureOrNothing() async throws {
        let db = try indexedDatabase()
        let member = try IndexFleetMember(path: db.path)
        #expect(try await member.settledPendingWork() == nil, "nothing open: it cannot say")
        #expect(try await member.step())
        if try await member.settledPendingWork() == true { #expect(try await member.step()) }
        #expect(try await member.settledPendingWork() == false)
        _ = try db.shell("INSERT INTO notes(id, title) VALUES (20, 'settled');")
        #expect(try await member.settledPendingWork() == true)
        #expect(try await member.step())

        // Another connection holds the write lock: the member cannot say for sure, and does not
        // wait for it.
        // (A raw connection: GRDB does not let a transaction outlive an access.)
        var other: OpaquePointer?
        try #require(sqlite3_open_v2(db.path, &other, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(other) }
        try #require(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        #expect(try await member.settledPendingWork() == nil)
        try #require(sqlite3_exec(other, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        #expect(try await member.settledPendingWork() == false)
        await member.close()
    }

    /// A fleet's own work (its turns' commits, its releases' checkpoints) sets off no check of a
    /// closed member: every check it makes comes at the end of a turn or before a release, on
    /// the open member, and says for sure. (Before, each release's checkpoint on close and a
    /// turn's writes reported after it ended queued a check at the back of the queue, behind the
    /// whole first sync.) And once released, each file alone holds every commit.
    @Test func aFleetsOwnWorkSetsOffNoCheck() async throws {
        let base = try indexedDatabase()
        let folder = base.directory.appendingPathComponent("fleet").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let paths = (0..<12).map { "\(folder)/tenant-\($0).sqlite" }
        for (i, path) in paths.enumerated() {
            try FileManager.default.copyItem(atPath: base.path, toPath: path)
            _ = try Shell.sqlite3(path, "INSERT INTO notes(id, title) VALUES (\(100 + i), 'tenant \(i)');")
        }
        var configuration = Fleet<IndexFleetMember>.Configuration()
        configuration.concurrency = 2
        configuration.maximumOpenMembers = 3
        configuration.releaseIdleAfter = .seconds(1)
        let fleet = Fleet(glob: try DatabaseGlob("\(folder)/*.sqlite"), configuration: configuration) { path throws(SearchlightError) in
            try await IndexFleetMember.open(path: path)
        }
        let following = Task { await fleet.run() }
        defer { following.cancel() }

        func caughtUp() throws -> Bool {
            try paths.allSatisfy { path in !(try ConsumerPosition.read(consumer: "searchlight.indexer", at: path).isBehind) }
        }
        // Readiness from the fleet's own counters (a connection of the test's, open at the
        // moment of a release, would keep its checkpoint from completing): every member took its
        // turn (one batch each) and was released.
        let deadline = ContinuousClock.now + .seconds(600)
        while fleet.statistics().steps < paths.count || fleet.statistics().openMembers > 0 {
            try #require(ContinuousClock.now < deadline, "the fleet did not catch up and release every member within 600 s: \(fleet.statistics())")
            try await Task.sleep(for: .milliseconds(20))
        }
        let statistics = fleet.statistics()
        print("fleet of 12 after its first sync: \(statistics)")
        #expect(try caughtUp())
        #expect(statistics.steps >= 12)
        // (Releases past the bound happen when turns come faster than the idle release: on a
        // quiet machine 9 of 12; under a loaded suite none. Either way each release is checked.)
        #expect(statistics.boundReleases + statistics.idleReleases >= paths.count)
        #expect(statistics.checks == statistics.inlineChecks, "checks set off by the fleet's own work: \(statistics)")
        #expect(statistics.checks == statistics.settledChecks, "checks that could not say for sure: \(statistics)")
        for path in paths {
            let head = try ConsumerPosition.read(consumer: "searchlight.indexer", at: path).head.rawValue
            let alone = try copyAlone(path)
            #expect(alone.notes == 3 && alone.indexed == Int(head), "\(path) alone: \(alone), head \(head)")
        }

        // A foreign write to each of three tenants is followed.
        for i in [1, 5, 9] { _ = try Shell.sqlite3(paths[i], "INSERT INTO notes(id, title) VALUES (\(200 + i), 'later');") }
        // Stops 38 and 39 saw these writes never followed in 2 of about 6 loaded full runs: a
        // look that found nothing, its rechecks too, then nothing until the tenant's next write.
        // A member left unsure is now looked at again a fallback interval later
        // (FleetTests.aCommitVisibleOnlyPastTheRecheckHorizonIsFollowedAtTheNextTick).
        let followDeadline = ContinuousClock.now + .seconds(600)
        while !(try caughtUp()) {
            try #require(ContinuousClock.now < followDeadline, "the foreign writes were not indexed within 600 s: \(fleet.statistics())")
            try await Task.sleep(for: .milliseconds(20))
        }
        print("fleet of 12 after the foreign writes: \(fleet.statistics())")
        following.cancel()
        await following.value
    }
}
