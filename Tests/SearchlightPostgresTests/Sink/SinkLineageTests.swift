import Foundation
import GRDB
import PostgresNIO
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Synchronization
import Testing

/// The lineage check: a crash between the two commits is adopted; restored backups, copies and
/// expired history are detected and resynchronized, never skipped or merged.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct SinkLineageTests {
    struct Crash: Error {}

    func sink(_ store: HistoryStore, _ url: String, source: String? = "s", faults: PostgresSink.Faults = .init()) throws -> PostgresSink {
        var configuration = PostgresSink.Configuration()
        configuration.source = source
        configuration.batchSize = 5
        configuration.faults = faults
        return try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
    }

    func write(_ store: HistoryStore, _ sql: String, times: Int = 1) async throws {
        for _ in 0..<times { try await store.write(author: "app") { db in try db.execute(sql: sql) } }
    }

    func sourceRow(_ url: String, _ source: String) async throws -> (token: Int64, resyncs: Int32, reason: String?) {
        let schema = try SinkOracle.schema(url)
        return try await PostgresTestServer.withClient(url) { client in
            var result: (Int64, Int32, String?) = (0, 0, nil)
            for try await row in try await client.query("SELECT token, resyncs, resync_reason FROM \(unescaped: schema).sources WHERE source = \(source)")
                .decode((Int64, Int32, String?).self) { result = row }
            return result
        }
    }

    @Test func aCrashBetweenThePostgresCommitAndTheSQLiteCheckpointIsAdoptedWithoutAResync() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("crash")
        try await write(store, "INSERT INTO notes(title) VALUES ('a')", times: 3)
        _ = try await sink(store, url).runOnce()
        let before = try store.checkpoint(for: "searchlight.postgres.s")
        try await write(store, "INSERT INTO notes(title, body) VALUES ('b', 'x')", times: 4)
        try await write(store, "DELETE FROM notes WHERE id = 1")
        var faults = PostgresSink.Faults()
        faults.afterPostgresCommit = { _ in throw Crash() }
        await #expect(throws: SearchlightError.self) { _ = try await sink(store, url, faults: faults).runOnce() }
        // PostgreSQL moved on, the local checkpoint did not.
        #expect(try store.checkpoint(for: "searchlight.postgres.s") == before)
        #expect(try await sourceRow(url, "s").token > before!.token.rawValue)

        let report = try await sink(store, url).runOnce()
        #expect(report.adopted == 1)
        #expect(report.resyncs == 0)
        #expect(report.token == (try store.currentToken()))
        #expect(try await sourceRow(url, "s").resyncs == 0)
        #expect(try await SinkOracle.actual(url, source: "s") == SinkOracle.expected(database.path))
    }

    @Test func twoSinksOfOneSourceAtOnceEndEqualToTheRowsAndNoCheckpointGoesBack() async throws {
        let database = try TestDatabase()
        let url = PostgresTestServer.freshURL("two")
        // Two stores on one file, as two processes would have.
        let store = try database.openStore()
        let other = try database.openStore(model: nil)
        let sinks = [try sink(store, url), try sink(other, url)]
        final class Shared: Sendable {
            let done = Atomic(false)
            let observed = Mutex<[Int64]>([])
        }
        let shared = Shared()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for i in 0..<60 {
                    try await store.write(author: "app") { db in
                        try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["n\(i)"])
                        if i % 3 == 0 { try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [i / 2]) }
                        if i % 4 == 0 { try db.execute(sql: "UPDATE notes SET body = ? WHERE id = ?", arguments: ["u\(i)", i / 3]) }
                    }
                }
                shared.done.store(true, ordering: .sequentiallyConsistent)
                return 0
            }
            for sink in sinks {
                group.addTask {
                    var resyncs = 0
                    while !shared.done.load(ordering: .sequentiallyConsistent) { resyncs += try await sink.runOnce().resyncs }
                    return resyncs + (try await sink.runOnce().resyncs)
                }
            }
            group.addTask {
                // The local checkpoint, sampled as the sinks run: it never goes back.
                while !shared.done.load(ordering: .sequentiallyConsistent) {
                    let token = try store.checkpoint(for: "searchlight.postgres.s")?.token.rawValue ?? 0
                    shared.observed.withLock { $0.append(token) }
                    try await Task.sleep(for: .milliseconds(2))
                }
                return 0
            }
            var resyncs = 0
            for try await count in group { resyncs += count }
            #expect(resyncs == 1) // the first sync, by one of them; the other followed it
        }
        let samples = shared.observed.withLock { $0 }
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(try await sourceRow(url, "s").token == (try store.currentToken()).rawValue)
        #expect(try await sourceRow(url, "s").resyncs == 0)
        #expect(try await SinkOracle.actual(url, source: "s") == SinkOracle.expected(database.path))
    }

    /// Two sinks of one file share its checkpoint; one that read it, then was slow (paused,
    /// descheduled) while the other committed two batches (or a snapshot) finds PostgreSQL
    /// further along than the checkpoint it read. That is this file's own history: it follows,
    /// and nothing is resynchronized. (Made directly: the shared checkpoint put back to where
    /// the slow sink read it.)
    @Test func postgresSeveralBatchesAheadOfTheCheckpointReadIsFollowedWithoutAResync() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let other = try database.openStore(model: nil)
        let url = PostgresTestServer.freshURL("ahead")
        let author = "searchlight.postgres.s"
        try await write(store, "INSERT INTO notes(title) VALUES ('a')", times: 3)
        #expect(try await sink(store, url).runOnce().resyncs == 1) // the first sync
        let read = try #require(try store.checkpoint(for: author)).token

        // The other sink commits batches of 5 (three of them) while this one holds `read`.
        try await write(store, "INSERT INTO notes(title, body) VALUES ('b', 'x')", times: 12)
        try await write(store, "DELETE FROM notes WHERE id = 2")
        try await write(store, "UPDATE notes SET body = 'y' WHERE id = 1", times: 2)
        let ahead = try await sink(other, url).runOnce()
        #expect(ahead.batches == 3 && ahead.resyncs == 0)
        try store.saveCheckpoint(read, for: author)
        let report = try await sink(store, url).runOnce()
        #expect(report.resyncs == 0, "PostgreSQL three batches ahead was taken for a divergence")
        #expect(report.adopted == 1)
        #expect(report.token == (try store.currentToken()))
        #expect(try await sourceRow(url, "s").resyncs == 0)

        // A snapshot the other sink committed, whose checkpoint this one did not see saved.
        try await write(store, "INSERT INTO notes(title) VALUES ('c')", times: 2)
        let beforeSnapshot = try #require(try store.checkpoint(for: author)).token
        try await PostgresTestServer.withClient(url) { client in
            // (The model's text changed: the other sink resynchronizes, as after an app upgrade.)
            try await client.query("UPDATE \(unescaped: try SinkOracle.schema(url)).sources SET model = '{}' WHERE source = 's'")
        }
        #expect(try await sink(other, url).runOnce().resyncs == 1)
        try store.saveCheckpoint(beforeSnapshot, for: author)
        let afterSnapshot = try await sink(store, url).runOnce()
        #expect(afterSnapshot.resyncs == 0, "a snapshot of this file's own history was taken for a divergence")
        #expect(afterSnapshot.adopted == 1)
        #expect(try await sourceRow(url, "s").resyncs == 1)
        #expect(try await SinkOracle.actual(url, source: "s") == SinkOracle.expected(database.path))

        // Still told apart: PostgreSQL ahead with a batch that is not this history's.
        try await write(store, "INSERT INTO notes(title) VALUES ('d')", times: 6)
        _ = try await sink(other, url).runOnce()
        let head = try store.currentToken()
        try await PostgresTestServer.withClient(url) { client in
            try await client.query("UPDATE \(unescaped: try SinkOracle.schema(url)).sources SET batch_digest = '0000000000000000' WHERE source = 's'")
        }
        try store.saveCheckpoint(beforeSnapshot, for: author)
        #expect(try await sink(store, url).runOnce().resyncs == 1)
        #expect(try await sourceRow(url, "s").token == head.rawValue)
        #expect(try await SinkOracle.actual(url, source: "s") == SinkOracle.expected(database.path))
    }

    @Test func aDatabaseRestoredFromAnOlderBackupIsDetectedAndResynchronized() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("restore")
        try await write(store, "INSERT INTO notes(title) VALUES ('kept')", times: 3)
        _ = try await sink(store, url).runOnce()
        let backup = try DatabaseQueue(path: database.directory.appendingPathComponent("backup.sqlite").path)
        try store.databaseWriter.backup(to: backup)
        try await write(store, "INSERT INTO notes(title) VALUES ('after the backup')", times: 6)
        try await write(store, "DELETE FROM notes WHERE id = 2")
        _ = try await sink(store, url).runOnce()

        // The old copy put back in place, then written to: its tokens go back and diverge.
        try backup.backup(to: store.databaseWriter)
        try await write(store, "INSERT INTO notes(title) VALUES ('after the restore')", times: 2)
        let report = try await sink(store, url).runOnce()
        #expect(report.resyncs == 1)
        let row = try await sourceRow(url, "s")
        #expect(row.resyncs == 1)
        #expect(row.reason != nil)
        #expect(try await SinkOracle.actual(url, source: "s") == SinkOracle.expected(database.path))
        #expect(try await SinkOracle.actual(url, source: "s").values.contains { $0["title"] == "after the backup" } == false)
    }

    @Test func aCopiedFileWithDivergentWritesIsDetectedAndResynchronizedNeverMerged() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("copy")
        try await write(store, "INSERT INTO notes(title) VALUES ('shared')", times: 3)
        let first = try await sink(store, url, source: nil).runOnce()
        let copyPath = database.directory.appendingPathComponent("copy.sqlite").path
        try store.databaseWriter.backup(to: try DatabaseQueue(path: copyPath))
        let copy = try HistoryStore(path: copyPath)
        #expect(try copy.sourceID() == store.sourceID())

        try await write(store, "INSERT INTO notes(title) VALUES ('only in the original')", times: 2)
        try await write(copy, "INSERT INTO notes(title) VALUES ('only in the copy')", times: 2)
        #expect(try await sink(store, url, source: nil).runOnce().resyncs == 0)
        let copied = try await sink(copy, url, source: nil).runOnce()
        #expect(copied.resyncs == 1)
        #expect(try await SinkOracle.actual(url, source: first.source) == SinkOracle.expected(copyPath))
        // And back: the original is told apart from the copy too.
        #expect(try await sink(store, url, source: nil).runOnce().resyncs == 1)
        #expect(try await SinkOracle.actual(url, source: first.source) == SinkOracle.expected(database.path))
        #expect(try await sourceRow(url, first.source).resyncs == 2)
    }

    @Test func expiredHistoryResynchronizesTheSource() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("expired")
        try await write(store, "INSERT INTO notes(title) VALUES ('a')", times: 2)
        _ = try await sink(store, url).runOnce()
        try await write(store, "INSERT INTO notes(title) VALUES ('b')", times: 4)
        try await write(store, "DELETE FROM notes WHERE id = 1")
        try store.deleteHistory(through: try store.currentToken())
        let report = try await sink(store, url).runOnce()
        #expect(report.resyncs == 1)
        #expect(try await sourceRow(url, "s").reason?.contains("deleted") == true)
        #expect(try await SinkOracle.actual(url, source: "s") == SinkOracle.expected(database.path))
    }
}
