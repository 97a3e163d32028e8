import Foundation
import GRDB
import GRDBSQLite
import Testing
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A fleet member lets its database go without writing it: the fleet's watcher takes every write
/// to a member's file for a commit to look at, and a release that wrote (SQLite's checkpoint
/// when its last connection closes) cost a check of a member just closed, once per release.
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

    @Test func aReleaseWritesNeitherTheDatabaseNorItsWAL() async throws {
        let db = try indexedDatabase()
        let member = try IndexFleetMember(path: db.path)
        #expect(try await member.hasPendingWork())
        #expect(try await member.step())
        // The first turn made the index's tables: the schema changed since the first check,
        // which one more turn looks at.
        if try await member.hasPendingWork() { #expect(try await member.step()) }
        #expect(try await !member.hasPendingWork())
        let before = files(db.path)
        #expect(before[1] != nil && !(before[1]!.isEmpty), "the turn's commits are in the WAL")
        await member.release()
        #expect(files(db.path) == before, "the release wrote the database or its WAL")

        // What the release kept is read again by the next check and turn.
        _ = try db.shell("INSERT INTO notes(id, title) VALUES (3, 'after the release');")
        #expect(try await member.hasPendingWork())
        #expect(try await member.step())
        let store = try HistoryStore(path: db.path)
        #expect(try SearchIndex(store: store).search("release", limit: 5).total == 1)
        await member.close()
    }

    /// The control: with SQLite's default, dropping the same store does write (so that the test
    /// above can fail).
    @Test func withSQLitesDefaultTheLastCloseCheckpoints() throws {
        let db = try indexedDatabase()
        do {
            let store = try HistoryStore(path: db.path)
            let indexer = try Indexer(store: store)
            _ = try indexer.indexPendingChanges()
            let before = files(db.path)
            #expect(before[1] != nil)
            withExtendedLifetime(indexer) {}
            _ = before
        }
        #expect(files(db.path)[1] == nil, "the last connection to close checkpointed and removed the WAL")
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

    /// A fleet's own work (its turns' commits, its releases) sets off no check: every check it
    /// makes comes at the end of a turn, on the open member, and says for sure. (Before, each
    /// release checkpointed the WAL, and a turn's last writes were often reported after it
    /// ended: each queued a check at the back of the queue, behind the whole first sync.)
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
            try IndexFleetMember(path: path)
        }
        let following = Task { await fleet.run() }
        defer { following.cancel() }

        func caughtUp() throws -> Bool {
            try paths.allSatisfy { path in !(try ConsumerPosition.read(consumer: "searchlight.indexer", at: path).isBehind) }
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while try !caughtUp() || fleet.statistics().openMembers > 0 {
            try #require(ContinuousClock.now < deadline, "the fleet did not catch up and release every member within 120 s: \(fleet.statistics())")
            try await Task.sleep(for: .milliseconds(20))
        }
        let statistics = fleet.statistics()
        print("fleet of 12 after its first sync: \(statistics)")
        #expect(statistics.steps >= 12)
        #expect(statistics.boundReleases > 0, "the bound on open members was reached")
        #expect(statistics.checks == statistics.inlineChecks, "checks set off by the fleet's own work: \(statistics)")
        #expect(statistics.checks == statistics.settledChecks, "checks that could not say for sure: \(statistics)")

        // A foreign write to each of three tenants is followed.
        for i in [1, 5, 9] { _ = try Shell.sqlite3(paths[i], "INSERT INTO notes(id, title) VALUES (\(200 + i), 'later');") }
        while try !caughtUp() {
            try #require(ContinuousClock.now < deadline, "the foreign writes were not indexed within 120 s")
            try await Task.sleep(for: .milliseconds(20))
        }
        following.cancel()
        await following.value
    }
}
