import Foundation
import SearchlightTestSupport
import Testing

/// kill -9 of a following sink at random instants (starting, catching up, following) while
/// writer processes commit: after a final `--once`, PostgreSQL's documents equal the rows, the
/// writers' logs agree, no batch was applied twice, and the SQLite checkpoint never passed
/// PostgreSQL's. `SEARCHLIGHT_SINK_FAULT_ROUNDS` sets the number of kills (default 12);
/// `SEARCHLIGHT_SEED` replays a run's choices.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct SinkKillTests {
    @Test func killingTheSinkAtRandomInstantsWhileWritersRunAppliesEveryChangeOnce() async throws {
        let rounds = FaultOracle.environment("SEARCHLIGHT_SINK_FAULT_ROUNDS", default: 12)
        let (seed, generator) = seededGenerator("killingTheSinkAtRandomInstantsWhileWritersRunAppliesEveryChangeOnce")
        var random = generator
        let started = ContinuousClock.now
        let source = try await FaultSource(.notes)
        let postgres = FaultPostgres.fresh("kill")
        let id = try source.sourceID()
        try await source.catchUp(postgres)
        try await postgres.installAppliedLog()

        // Two writers, each on ids of its own, started again whenever one ends, for every round.
        let logs = (1...2).map { source.directory + "/writer-\($0).log" }
        var writers: [FaultProcess?] = [nil, nil]
        var writerRuns = 0
        var failures: [String] = []
        func keepWriting() async {
            for index in writers.indices where writers[index]?.isRunning != true {
                if let done = writers[index] {
                    let result = await done.finish()
                    if result.status != 0 { failures.append("writer \(index + 1) exited \(result.status): \(result.stderr.prefix(300))") }
                }
                writerRuns += 1
                writers[index] = source.writer(log: logs[index], seconds: 1.5, seed: seed &+ UInt64(writerRuns), index: index + 1)
            }
        }

        var killedWhileFollowing = 0, killedBeforeReady = 0
        for round in 0..<rounds {
            await keepWriting()
            let sink = source.follow(postgres)
            let waitsForReadiness = random.next() % 3 != 0
            if waitsForReadiness {
                let ready = await sink.waitUntil(stderrContains: "following source")
                if !ready { failures.append("round \(round): the sink never said it was following: \(sink.stderr.suffix(500))") }
            }
            try await Task.sleep(for: .microseconds(random.next() % 400_000))
            let wasRunning = sink.isRunning
            sink.signal(SIGKILL)
            let result = await sink.finish()
            if !wasRunning { failures.append("round \(round): the following sink exited by itself (\(result.status)): \(result.stderr.suffix(500))") }
            if waitsForReadiness { killedWhileFollowing += 1 } else { killedBeforeReady += 1 }
            // Nothing runs the sink now: its SQLite checkpoint is saved after PostgreSQL's commit.
            let sqlite = try source.sqliteCheckpoint(id)
            let remote = try await postgres.checkpoint(id)?.token
            if let sqlite, remote == nil || sqlite > remote! {
                failures.append("round \(round): the SQLite checkpoint \(sqlite) is past PostgreSQL's \(remote.map { "\($0)" } ?? "none")")
            }
        }
        for index in writers.indices {
            if let writer = writers[index] {
                let result = await writer.finish()
                if result.status != 0 { failures.append("writer \(index + 1) exited \(result.status): \(result.stderr.prefix(300))") }
            }
        }

        let once = try await source.catchUp(postgres)
        #expect(once.contains("caught up at token"), "\(once)")
        failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10)
        let logged = try await FaultOracle.writerLogDifferences(logs: logs, entity: "Note", postgres: postgres, source: id)
        failures += logged.differences.prefix(10)
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        let sqlite = try source.sqliteCheckpoint(id), remote = try await postgres.checkpoint(id)
        if let sqlite, sqlite > remote?.token ?? 0 { failures.append("at the end the SQLite checkpoint \(sqlite) is past PostgreSQL's \(remote?.token ?? 0)") }
        if remote?.token != (try source.headToken()) { failures.append("after --once PostgreSQL's checkpoint \(remote?.token ?? 0) is not the head \(try source.headToken())") }
        print("killingTheSink: seed \(seed), \(rounds) rounds (\(killedWhileFollowing) killed while following, \(killedBeforeReady) at random instants from the start), \(writerRuns) writer runs, \(logged.ids) ids logged, \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
        #expect(logged.ids > 50, "the writers wrote enough to check")
        #expect(applied.batches > 0)
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }
}
