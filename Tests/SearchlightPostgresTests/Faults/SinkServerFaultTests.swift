import Foundation
import SearchlightTestSupport
import Testing

/// The server fails under a following sink while writers commit, on a cluster of the test's own
/// (terminating backends and stopping the server must break no other test):
/// 1. the sink's backend is terminated (`pg_terminate_backend`) while it runs `COMMIT` (a
///    deferred trigger that sleeps a little at commit, installed by the test, makes that window
///    wide enough to hit; a server-side loop terminates what it finds there, at random);
/// 2. PostgreSQL is stopped with `-m immediate` (a crash) and started again, several times.
/// The sink must reconnect and keep following by itself (it is still running, and reaches the
/// source's head), exit 0 on SIGTERM, and after a final `--once` PostgreSQL equals the rows, the
/// writers' logs agree and the applied log is clean.
/// `SEARCHLIGHT_SINK_FAULT_ROUNDS` scales the number of restarts (default 12 → 3 restarts).
@Suite(.enabled(if: PostgresTestServer.canRestart, "no PostgreSQL binaries: set SEARCHLIGHT_POSTGRES_URL, _DATA and _BIN (eval \"$(bash .ci/postgres start)\")"))
struct SinkServerFaultTests {
    @Test func terminatedCommitsAndServerCrashesUnderLoadLoseNothingAndApplyNothingTwice() async throws {
        let restarts = max(2, FaultOracle.environment("SEARCHLIGHT_SINK_FAULT_ROUNDS", default: 12) / 4)
        let (seed, generator) = seededGenerator("terminatedCommitsAndServerCrashesUnderLoadLoseNothingAndApplyNothingTwice")
        var random = generator
        let started = ContinuousClock.now
        let cluster = try await PrivateCluster.start()
        var failures: [String] = []
        do {
            let postgres = FaultPostgres.fresh("server", base: cluster.url, binDirectory: cluster.binDirectory)
            let source = try await FaultSource(.notes)
            let id = try source.sourceID()
            try await source.catchUp(postgres)
            try await postgres.installAppliedLog()
            try await postgres.rows("""
                CREATE FUNCTION \(postgres.s).fault_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(0.005 + random() * 0.03); RETURN NULL; END $$;
                CREATE CONSTRAINT TRIGGER fault_slow_commit AFTER INSERT OR UPDATE ON \(postgres.s).sources
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION \(postgres.s).fault_slow_commit();
                """)
            let logs = (1...2).map { source.directory + "/writer-\($0).log" }
            let sink = source.follow(postgres)
            #expect(await sink.waitUntil(stderrContains: "following source"), "\(sink.stderr.suffix(500))")

            // 1. Backends terminated during COMMIT, while two writers commit.
            var writers = (1...2).map { source.writer(log: logs[$0 - 1], seconds: 4, seed: seed &+ UInt64($0), index: $0) }
            let killer = try await postgres.rows("""
                DO $$
                DECLARE seen integer := 0; terminated integer := 0; r record;
                        deadline timestamptz := clock_timestamp() + interval '4 seconds';
                        -- On a loaded machine the sink may commit only after the writers' 4 s:
                        -- it keeps catching up, and the watch goes on until it ended one commit.
                        longest timestamptz := clock_timestamp() + interval '60 seconds';
                BEGIN
                    PERFORM setseed(\(Double(seed % 1_000_000) / 1_000_000));
                    WHILE clock_timestamp() < deadline OR (terminated = 0 AND clock_timestamp() < longest) LOOP
                        PERFORM pg_stat_clear_snapshot();
                        FOR r IN SELECT pid FROM pg_stat_activity
                                 WHERE pid <> pg_backend_pid() AND datname = current_database()
                                   AND state = 'active' AND query ILIKE 'commit%' LOOP
                            seen := seen + 1;
                            IF random() < 0.5 AND pg_terminate_backend(r.pid) THEN terminated := terminated + 1; END IF;
                        END LOOP;
                        PERFORM pg_sleep(0.001);
                    END LOOP;
                    CREATE TEMPORARY TABLE fault_killer AS SELECT seen, terminated;
                END $$;
                SELECT seen, terminated FROM fault_killer;
                """)
            let terminated = Int(killer.first?[1] ?? "") ?? 0
            print("terminatedCommits: \(killer.first?[0] ?? "?") commits seen, \(terminated) backends terminated during COMMIT")
            #expect(terminated > 0, "the test terminated no backend during COMMIT (seen \(killer.first?[0] ?? "?"))")
            for writer in writers {
                let result = await writer.finish()
                if result.status != 0 { failures.append("a writer exited \(result.status): \(result.stderr.prefix(300))") }
            }
            try await waitUntilCaughtUp(source, id: id, postgres: postgres, sink: sink, failures: &failures, after: "terminations")

            // 2. The server crashes (-m immediate) and comes back, under load.
            writers = (1...2).map { source.writer(log: logs[$0 - 1], seconds: Double(restarts) * 1.5, seed: seed &+ UInt64(10 + $0), index: $0) }
            for _ in 0..<restarts {
                try await Task.sleep(for: .microseconds(200_000 + random.next() % 800_000))
                try await cluster.crash()
                print("terminatedCommitsAndServerCrashes: server stopped -m immediate at \(Date())")
                try await Task.sleep(for: .microseconds(random.next() % 1_000_000))
                try await cluster.restart()
                print("terminatedCommitsAndServerCrashes: server started at \(Date())")
            }
            for writer in writers {
                let result = await writer.finish()
                if result.status != 0 { failures.append("a writer exited \(result.status): \(result.stderr.prefix(300))") }
            }
            try await waitUntilCaughtUp(source, id: id, postgres: postgres, sink: sink, failures: &failures, after: "\(restarts) restarts")
            sink.signal(SIGTERM)
            let stopped = await sink.finish(timeout: 60)
            if stopped.status != 0 || stopped.signalled { failures.append("the sink did not exit 0 on SIGTERM: \(stopped.status) \(stopped.stderr.suffix(500))") }

            let once = try await source.catchUp(postgres)
            #expect(once.contains("caught up at token"), "\(once)")
            failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10)
            let logged = try await FaultOracle.writerLogDifferences(logs: logs, entity: "Note", postgres: postgres, source: id)
            failures += logged.differences.prefix(10)
            let applied = try await postgres.appliedLogProblems()
            failures += applied.problems
            if let sqlite = try source.sqliteCheckpoint(id), let remote = try await postgres.checkpoint(id), sqlite > remote.token {
                failures.append("the SQLite checkpoint \(sqlite) is past PostgreSQL's \(remote.token)")
            }
            print("terminatedCommitsAndServerCrashes: seed \(seed), \(terminated) commits terminated, \(restarts) crashes, \(logged.ids) ids logged, \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
            #expect(logged.ids > 50)
        } catch {
            failures.append("\(error)")
        }
        await cluster.remove()
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }

    /// PostgreSQL crashes (`-m immediate`) and starts again three times, 2 s apart, while a
    /// writer commits: a following sink stays fresh. A write made after the last restart reaches
    /// PostgreSQL within seconds (asserted with a bound of 30 s, half the 60 s after which a
    /// stalled step is given up: a step hung on a connection the server dropped made this take
    /// a minute), and the sink never gave a step up.
    @Test func threeCrashesInARowLeaveAFollowingSinkFreshWithinSeconds() async throws {
        let (seed, _) = seededGenerator("threeCrashesInARowLeaveAFollowingSinkFreshWithinSeconds")
        let cluster = try await PrivateCluster.start()
        var failures: [String] = []
        do {
            let postgres = FaultPostgres.fresh("crashes", base: cluster.url, binDirectory: cluster.binDirectory)
            let source = try await FaultSource(.notes)
            let id = try source.sourceID()
            try await source.catchUp(postgres)
            // Each batch's transaction sleeps a little after it updates the checkpoint row, so
            // that a crash mostly finds one open (the sink then rolls back on a connection that
            // closed: postgres-nio dropped that ROLLBACK, and the step hung until given up).
            try await postgres.rows("""
                CREATE FUNCTION \(postgres.s).fault_slow_batch() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(0.05 + random() * 0.05); RETURN NULL; END $$;
                CREATE TRIGGER fault_slow_batch AFTER UPDATE ON \(postgres.s).sources
                    FOR EACH ROW EXECUTE FUNCTION \(postgres.s).fault_slow_batch();
                """)
            let sink = source.follow(postgres, extra: ["--batch-size", "20"])
            #expect(await sink.waitUntil(stderrContains: "following source"), "\(sink.stderr.suffix(500))")
            let logs = [source.directory + "/writer-1.log", source.directory + "/writer-2.log"]
            let writer = source.writer(log: logs[0], seconds: 7, seed: seed, index: 1)
            for round in 1...3 {
                try await cluster.crash()
                try await cluster.restart()
                print("threeCrashesInARow: server crashed and started again (\(round)) at \(Date())")
                if round < 3 { try await Task.sleep(for: .seconds(2)) }
            }
            let restarted = ContinuousClock.now
            let written = await writer.finish()
            if written.status != 0 { failures.append("the writer exited \(written.status): \(written.stderr.prefix(300))") }
            // A write after the last restart.
            let after = await source.writer(log: logs[1], seconds: 0.3, seed: seed &+ 1, index: 2).finish()
            if after.status != 0 { failures.append("the writer exited \(after.status): \(after.stderr.prefix(300))") }
            let head = try source.headToken()
            let deadline = ContinuousClock.now + .seconds(30)
            var reached = false
            while ContinuousClock.now < deadline, sink.isRunning {
                if let token = try? await postgres.checkpoint(id)?.token, token >= head { reached = true; break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let caughtUp = ContinuousClock.now - restarted
            print("threeCrashesInARow: seed \(seed), the head \(head) reached \(reached ? "" : "NOT ")within \(caughtUp) of the last restart")
            if !reached {
                failures.append("the following sink did not apply a write made after the last restart within 30 s (\(sink.isRunning ? "still running" : "it exited")): \(sink.stderr.suffix(1_500))")
            }
            if sink.stderr.contains("no progress for") { failures.append("a step was given up: \(sink.stderr.suffix(1_500))") }
            sink.signal(SIGTERM)
            let stopped = await sink.finish(timeout: 60)
            if stopped.status != 0 || stopped.signalled { failures.append("the sink did not exit 0 on SIGTERM: \(stopped.status) \(stopped.stderr.suffix(500))") }
            try await source.catchUp(postgres)
            failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10)
        } catch {
            failures.append("\(error)")
        }
        await cluster.remove()
        #expect(failures.isEmpty, "seed \(seed): \(failures.joined(separator: "\n"))")
    }

    /// Waits (bounded: a bound against hangs, not a latency assertion) until the following sink,
    /// left to itself, has applied the source's head; records it if it died or never got there.
    func waitUntilCaughtUp(_ source: FaultSource, id: String, postgres: FaultPostgres, sink: FaultProcess,
                           failures: inout [String], after: String) async throws {
        let head = try source.headToken()
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            if !sink.isRunning {
                failures.append("the following sink exited after \(after): \(sink.stderr.suffix(800))")
                return
            }
            if let token = try? await postgres.checkpoint(id)?.token, token >= head { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        let saved = source.directory + "/../searchlight-fault-sink-\(getpid())-\(Int(Date().timeIntervalSince1970)).log"
        try? Data(sink.stderr.utf8).write(to: URL(fileURLWithPath: saved))
        let remote = try? await postgres.checkpoint(id)?.token
        failures.append("the following sink did not reach the head \(head) within 120 s after \(after) (PostgreSQL's checkpoint: \(remote.map { "\($0)" } ?? "none"); its whole log is in \(URL(fileURLWithPath: saved).standardized.path)): \(sink.stderr.suffix(800))")
    }
}
