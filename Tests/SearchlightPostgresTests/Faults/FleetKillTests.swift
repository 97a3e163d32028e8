import Foundation
import SearchlightTestSupport
import Testing

/// kill -9 of a `sink --dbs` process at random instants while writer processes commit to its
/// databases: after a final `--once` of each, every source's documents equal its rows, the
/// writers' logs agree, no batch was applied twice (the applied log of the whole schema), and
/// no SQLite checkpoint ever passed PostgreSQL's. `SEARCHLIGHT_SINK_FAULT_ROUNDS` sets the
/// number of kills (default 12 → 6); `SEARCHLIGHT_SEED` replays a run's choices.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct FleetKillTests {
    @Test(.timeLimit(.minutes(20))) func killingAFleetAtRandomInstantsWhileWritersRunAppliesEveryChangeOnce() async throws {
        let rounds = max(2, FaultOracle.environment("SEARCHLIGHT_SINK_FAULT_ROUNDS", default: 12) / 2)
        let (seed, generator) = seededGenerator("killingAFleetAtRandomInstantsWhileWritersRunAppliesEveryChangeOnce")
        var random = generator
        let started = ContinuousClock.now
        // Three sources, each set up by `searchlight init` in a folder of its own, moved into one.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fleetkill-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var sources: [(source: FaultSource, path: String, id: String, logs: [String])] = []
        for index in 0..<3 {
            let source = try await FaultSource(.notes)
            let path = folder + "/t\(index).sqlite"
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
                try FileManager.default.moveItem(atPath: source.path + suffix, toPath: path + suffix)
            }
            sources.append((source, path, try source.sourceID(at: path), (1...2).map { folder + "/t\(index)-writer-\($0).log" }))
        }
        let postgres = FaultPostgres.fresh("fleetkill")
        for entry in sources { try await entry.source.catchUp(postgres, at: entry.path) }
        try await postgres.installAppliedLog()

        var failures: [String] = []
        // By source and writer index: one writer at a time per id range (its log is its oracle).
        var writers: [String: FaultProcess] = [:]
        var writerRuns = 0
        for round in 0..<rounds {
            // Writers on a random pick of the sources, each on ids of its own.
            for (index, entry) in sources.enumerated() where random.next() % 3 != 0 {
                let which = Int(random.next() % 2)
                guard writers["\(index)-\(which)"] == nil else { continue }
                writerRuns += 1
                writers["\(index)-\(which)"] = entry.source.writer(log: entry.logs[which], seconds: 1.5, seed: seed &+ UInt64(writerRuns * 10 + index),
                                                                   index: which + 1, at: entry.path)
            }
            let fleet = FaultProcess("searchlight-postgres", ["sink", "--dbs", folder + "/*.sqlite", "--postgres", postgres.url,
                                                              "--connections", "2", "--concurrency", "2"])
            if random.next() % 3 != 0 {
                let ready = await fleet.waitUntil(stderrContains: "following 3 databases")
                if !ready { failures.append("round \(round): the fleet never said it follows: \(fleet.stderr.suffix(500))") }
            }
            try await Task.sleep(for: .microseconds(random.next() % 1_500_000))
            let wasRunning = fleet.isRunning
            fleet.signal(SIGKILL)
            let result = await fleet.finish()
            if !wasRunning { failures.append("round \(round): the fleet exited by itself (\(result.status)): \(result.stderr.suffix(500))") }
            for entry in sources {
                let sqlite = try entry.source.sqliteCheckpoint(entry.id, at: entry.path)
                let remote = try await postgres.checkpoint(entry.id)?.token
                if let sqlite, remote == nil || sqlite > remote! {
                    failures.append("round \(round), \(entry.path): the SQLite checkpoint \(sqlite) is past PostgreSQL's \(remote.map { "\($0)" } ?? "none")")
                }
            }
            // Writers whose time is up are collected (the others write on into the next round).
            for (key, writer) in writers where !writer.isRunning {
                let done = await writer.finish()
                if done.status != 0 { failures.append("a writer exited \(done.status): \(done.stderr.prefix(300))") }
                writers[key] = nil
            }
        }
        for writer in writers.values {
            let done = await writer.finish()
            if done.status != 0 { failures.append("a writer exited \(done.status): \(done.stderr.prefix(300))") }
        }

        var ids = 0
        for entry in sources {
            let once = try await entry.source.catchUp(postgres, at: entry.path)
            if !once.contains("caught up at token") { failures.append("\(entry.path): \(once)") }
            failures += try await FaultOracle.differences(entry.source, id: entry.id, postgres: postgres, at: entry.path).prefix(10)
            let existing = entry.logs.filter { FileManager.default.fileExists(atPath: $0) }
            let logged = try await FaultOracle.writerLogDifferences(logs: existing, entity: "Note", postgres: postgres, source: entry.id)
            failures += logged.differences.prefix(10)
            ids += logged.ids
        }
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        print("killingAFleet: seed \(seed), \(rounds) kills, \(writerRuns) writer runs over 3 sources, \(ids) ids logged, \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
        #expect(ids > 50, "the writers wrote enough to check")
        #expect(applied.batches > 0)
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }
}
