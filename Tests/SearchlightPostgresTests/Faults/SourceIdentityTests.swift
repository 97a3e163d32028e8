import Foundation
import SearchlightTestSupport
import Testing

/// A source is identified, not assumed: a database restored from an older backup (its tokens go
/// back, then may pass PostgreSQL's checkpoint again with different transactions) and a database
/// copied to a second file (two files, one source id, diverging histories) are detected and
/// resynchronized, never silently skipped or merged.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct SourceIdentityTests {
    /// Writes with one `write` run of `seconds` (the writer's log is appended to).
    func write(_ source: FaultSource, log: String, seconds: Double, seed: UInt64, at path: String? = nil) async throws {
        let result = await source.writer(log: log, seconds: seconds, seed: seed, index: 1, at: path).finish()
        if result.status != 0 { throw FaultFailure("writer exited \(result.status): \(result.stderr.prefix(300))") }
    }

    /// Replaces the database file with `backup` as a restore does: the app and the sink stopped,
    /// the file and its WAL replaced.
    func restore(_ backup: String, over path: String) throws {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let staged = path + ".restoring"
        try? FileManager.default.removeItem(atPath: staged)
        try FileManager.default.copyItem(atPath: backup, toPath: staged)
        guard rename(staged, path) == 0 else { throw FaultFailure("cannot rename \(staged) to \(path): errno \(errno)") }
    }

    @Test func aSourceRestoredFromAnOlderBackupIsResynchronized() async throws {
        let (seed, _) = seededGenerator("aSourceRestoredFromAnOlderBackupIsResynchronized")
        let started = ContinuousClock.now
        let source = try await FaultSource(.notes)
        let postgres = FaultPostgres.fresh("restore")
        let id = try source.sourceID()
        let log = source.directory + "/writer.log"
        var failures: [String] = []
        try await source.catchUp(postgres)
        try await postgres.installAppliedLog()
        try await write(source, log: log, seconds: 0.7, seed: seed)
        try await source.catchUp(postgres)
        // A backup with SQLite's own online backup.
        let backup = source.directory + "/backup.sqlite"
        try await FaultProcess.run("/usr/bin/env", ["sqlite3", path(source), ".timeout 10000", ".backup '\(backup)'"])
        let backupHead = try source.headToken(at: backup)

        for (round, catchUpPastIt) in [false, true].enumerated() {
            // More writes reach PostgreSQL through a following sink, which is then stopped.
            let sink = source.follow(postgres)
            try await write(source, log: log, seconds: 0.7, seed: seed &+ UInt64(10 + round))
            let head = try source.headToken()
            let deadline = ContinuousClock.now + .seconds(600)
            while ContinuousClock.now < deadline, sink.isRunning, (try? await postgres.checkpoint(id)?.token ?? 0) ?? 0 < head {
                try await Task.sleep(for: .milliseconds(50))
            }
            sink.signal(SIGTERM)
            let stopped = await sink.finish(timeout: 60)
            if stopped.status != 0 { failures.append("round \(round): the sink did not exit 0 on SIGTERM: \(stopped.stderr.suffix(500))") }
            guard let before = try await postgres.checkpoint(id), before.token >= head else {
                failures.append("round \(round): the following sink did not reach \(head)")
                break
            }
            // The restore; then the app writes again: a little (the tokens stay behind
            // PostgreSQL's), or until the file's tokens pass PostgreSQL's checkpoint with
            // transactions PostgreSQL never saw.
            try restore(backup, over: source.path)
            #expect(try source.headToken() == backupHead)
            var writes = 0
            repeat {
                try await write(source, log: source.directory + "/after-restore.log", seconds: 0.3, seed: seed &+ UInt64(100 + round * 50 + writes))
                writes += 1
            } while try catchUpPastIt && source.headToken() <= before.token && writes < 100
            let restoredHead = try source.headToken()
            if catchUpPastIt && restoredHead <= before.token { failures.append("round \(round): the restored file never passed \(before.token)") }
            try await source.catchUp(postgres)
            let after = try await postgres.checkpoint(id)
            if (after?.resyncs ?? 0) <= before.resyncs {
                failures.append("round \(round): a restore (head \(before.token) → backup \(backupHead) → \(restoredHead)) was not resynchronized: resyncs \(before.resyncs) → \(after?.resyncs ?? 0)")
            }
            failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10).map { "round \(round): \($0)" }
            print("restore round \(round): PostgreSQL at \(before.token), backup at \(backupHead), restored file written to \(restoredHead); resyncs \(before.resyncs) → \(after?.resyncs ?? 0) (\(after?.reason ?? ""))")
        }
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        print("aSourceRestored: seed \(seed), \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }

    @Test func aSourceCopiedToASecondFileIsNeverSilentlyMerged() async throws {
        let (seed, generator) = seededGenerator("aSourceCopiedToASecondFileIsNeverSilentlyMerged")
        var random = generator
        let started = ContinuousClock.now
        let source = try await FaultSource(.notes)
        let postgres = FaultPostgres.fresh("copy")
        let id = try source.sourceID()
        var failures: [String] = []
        try await source.catchUp(postgres)
        try await postgres.installAppliedLog()
        try await write(source, log: source.directory + "/a.log", seconds: 0.7, seed: seed)
        try await source.catchUp(postgres)
        // cp, as an operator makes a second tenant: the WAL folded in first, nothing writing.
        try await FaultProcess.run("/usr/bin/env", ["sqlite3", source.path, ".timeout 10000", "PRAGMA wal_checkpoint(TRUNCATE);"])
        let copyDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fault-copy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: copyDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: copyDirectory) }
        let copy = copyDirectory + "/copy.sqlite"
        try await FaultProcess.run("/bin/cp", [source.path, copy])
        #expect(try source.sourceID(at: copy) == id)

        var previousResyncs = try await postgres.checkpoint(id)?.resyncs ?? 0
        // The file whose history PostgreSQL holds past the copy: none yet (both share it), then
        // the first one sunk after writing. Sinking the other one from then on is a resync.
        var last: String? = nil
        var switches = 0
        for round in 0..<6 {
            // Both files are written; one of them (chosen at random) is sunk.
            try await write(source, log: source.directory + "/a.log", seconds: 0.3, seed: seed &+ UInt64(10 + round))
            try await write(source, log: copyDirectory + "/b.log", seconds: 0.3, seed: seed &+ UInt64(100 + round), at: copy)
            let (name, path) = random.next() % 2 == 0 ? ("original", source.path) : ("copy", copy)
            try await source.catchUp(postgres, at: path)
            let resyncs = try await postgres.checkpoint(id)?.resyncs ?? 0
            if let last, name != last {
                switches += 1
                if resyncs <= previousResyncs { failures.append("round \(round): sinking the \(name) after the \(last) was not a resync (resyncs \(previousResyncs) → \(resyncs))") }
            }
            failures += try await FaultOracle.differences(source, id: id, postgres: postgres, at: path).prefix(10).map { "round \(round), \(name): \($0)" }
            previousResyncs = resyncs
            last = name
        }
        // Whatever the choices, both files are sunk last once more, each resynchronized.
        for (name, path) in [("copy", copy), ("original", source.path)] {
            let before = try await postgres.checkpoint(id)?.resyncs ?? 0
            try await source.catchUp(postgres, at: path)
            let after = try await postgres.checkpoint(id)?.resyncs ?? 0
            if name != last && after <= before { failures.append("final \(name): not a resync (\(before) → \(after))") }
            failures += try await FaultOracle.differences(source, id: id, postgres: postgres, at: path).prefix(10).map { "final \(name): \($0)" }
            last = name
        }
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        print("aSourceCopied: seed \(seed), \(switches) switches, \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }

    private func path(_ source: FaultSource) -> String { source.path }
}
