import Foundation
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
}
