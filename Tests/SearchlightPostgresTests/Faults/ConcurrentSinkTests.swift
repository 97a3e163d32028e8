import Foundation
import SearchlightTestSupport
import Testing

/// Sinks at the same time: two for one source (the compare-and-set lets one win each batch;
/// the other follows), and eight sources into one server.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct ConcurrentSinkTests {
    @Test func twoSinksForOneSourceNeverApplyABatchTwice() async throws {
        let (seed, generator) = seededGenerator("twoSinksForOneSourceNeverApplyABatchTwice")
        var random = generator
        let started = ContinuousClock.now
        let source = try await FaultSource(.notes)
        let postgres = FaultPostgres.fresh("twosinks")
        let id = try source.sourceID()
        try await source.catchUp(postgres)
        try await postgres.installAppliedLog()
        var failures: [String] = []
        let logs = (1...2).map { source.directory + "/writer-\($0).log" }
        var sinks = [source.follow(postgres), source.follow(postgres)]
        let writers = (1...2).map { source.writer(log: logs[$0 - 1], seconds: 5, seed: seed &+ UInt64($0), index: $0) }
        // While the writers run, one of the two sinks is killed (-9) and started again now and then.
        var restarts = 0
        while writers.contains(where: \.isRunning) {
            try await Task.sleep(for: .microseconds(300_000 + random.next() % 700_000))
            guard writers.contains(where: \.isRunning) else { break }
            let victim = Int(random.next() % 2)
            sinks[victim].signal(SIGKILL)
            _ = await sinks[victim].finish()
            sinks[victim] = source.follow(postgres)
            restarts += 1
        }
        for writer in writers {
            let result = await writer.finish()
            if result.status != 0 { failures.append("a writer exited \(result.status): \(result.stderr.prefix(300))") }
        }
        for sink in sinks {
            if !(await sink.waitUntil(stderrContains: "following source")) { failures.append("a sink never followed: \(sink.stderr.suffix(500))") }
            sink.signal(SIGTERM)
            let result = await sink.finish(timeout: 60)
            if result.status != 0 || result.signalled { failures.append("a sink did not exit 0 on SIGTERM: \(result.status) \(result.stderr.suffix(500))") }
        }
        let once = try await source.catchUp(postgres)
        #expect(once.contains("caught up at token"), "\(once)")
        failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10)
        let logged = try await FaultOracle.writerLogDifferences(logs: logs, entity: "Note", postgres: postgres, source: id)
        failures += logged.differences.prefix(10)
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        print("twoSinksForOneSource: seed \(seed), \(restarts) sink restarts, \(logged.ids) ids, \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }

    /// Two following sinks of one unchanged file, a writer committing all the time, and one
    /// sink paused (SIGSTOP) now and then for 1.5 s, at random: the other commits many batches
    /// meanwhile, so that the paused one wakes up behind PostgreSQL by more than a batch. It
    /// follows: no resync at all (there is no divergence), and PostgreSQL ends equal to the rows.
    @Test func twoSinksOfOneFileOnePausedNeverResynchronize() async throws {
        let (seed, generator) = seededGenerator("twoSinksOfOneFileOnePausedNeverResynchronize")
        var random = generator
        let source = try await FaultSource(.notes)
        let postgres = FaultPostgres.fresh("paused")
        let id = try source.sourceID()
        try await source.catchUp(postgres)
        var failures: [String] = []
        let log = source.directory + "/writer-1.log"
        let sinks = [source.follow(postgres, extra: ["--batch-size", "5"]), source.follow(postgres, extra: ["--batch-size", "5"])]
        for sink in sinks {
            if !(await sink.waitUntil(stderrContains: "following source")) { failures.append("a sink never followed: \(sink.stderr.suffix(500))") }
        }
        let writer = source.writer(log: log, seconds: 6, seed: seed, index: 1)
        var pauses = 0
        while writer.isRunning && pauses < 3 {
            try await Task.sleep(for: .microseconds(200_000 + random.next() % 600_000))
            let paused = sinks[Int(random.next() % 2)]
            paused.signal(SIGSTOP)
            try await Task.sleep(for: .milliseconds(1_500))
            paused.signal(SIGCONT)
            pauses += 1
        }
        let written = await writer.finish()
        if written.status != 0 { failures.append("the writer exited \(written.status): \(written.stderr.prefix(300))") }
        // Both follow to the head (bounded: a guard against hangs, not a latency assertion).
        let head = try source.headToken()
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline, ((try? await postgres.checkpoint(id))?.token ?? 0) < head {
            try await Task.sleep(for: .milliseconds(50))
        }
        for sink in sinks {
            sink.signal(SIGTERM)
            let result = await sink.finish(timeout: 60)
            if result.status != 0 || result.signalled { failures.append("a sink did not exit 0 on SIGTERM: \(result.status) \(result.stderr.suffix(500))") }
            for line in result.stderr.split(separator: "\n") where line.contains("resynchronized") || line.contains("loaded a snapshot") {
                failures.append("a sink resynchronized: \(line)")
            }
        }
        let row = try await postgres.checkpoint(id)
        #expect(row?.token == head, "PostgreSQL at \(row.map { "\($0.token)" } ?? "none"), the head \(head)")
        #expect(row?.resyncs == 0, "\(row.map { "\($0.resyncs) resyncs: \($0.reason)" } ?? "")")
        failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10)
        let logged = try await FaultOracle.writerLogDifferences(logs: [log], entity: "Note", postgres: postgres, source: id)
        failures += logged.differences.prefix(10)
        print("twoSinksOfOneFileOnePaused: seed \(seed), \(pauses) pauses, \(logged.ids) ids, head \(head)")
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }

    @Test func eightSourcesSinkIntoOneServerAtOnce() async throws {
        let (seed, _) = seededGenerator("eightSourcesSinkIntoOneServerAtOnce")
        let started = ContinuousClock.now
        let postgres = FaultPostgres.fresh("eight")
        var sources: [FaultSource] = []
        for _ in 0..<8 { sources.append(try await FaultSource(.notes)) }
        let ids = try sources.map { try $0.sourceID() }
        #expect(Set(ids).count == 8)
        // The first catch-up creates the tables (eight sinks creating them at once is checked below,
        // in a second schema).
        try await sources[0].catchUp(postgres)
        try await postgres.installAppliedLog()
        let racing = FaultPostgres.fresh("eightcreate")
        var failures: [String] = []
        let logs = sources.map { $0.directory + "/writer.log" }
        let sinks = sources.map { $0.follow(postgres) }
        let creators = sources.map { source in
            FaultProcess("searchlight-postgres", ["sink", "--db", source.path, "--postgres", racing.url, "--once"])
        }
        let writers = sources.indices.map { sources[$0].writer(log: logs[$0], seconds: 3, seed: seed &+ UInt64($0), index: 1) }
        for creator in creators {
            let result = await creator.finish()
            if result.status != 0 { failures.append("one of eight sinks creating the tables at once exited \(result.status): \(result.stderr.suffix(500))") }
        }
        for writer in writers {
            let result = await writer.finish()
            if result.status != 0 { failures.append("a writer exited \(result.status): \(result.stderr.prefix(300))") }
        }
        for sink in sinks {
            if !(await sink.waitUntil(stderrContains: "following source")) { failures.append("a sink never followed: \(sink.stderr.suffix(500))") }
            sink.signal(SIGTERM)
            let result = await sink.finish(timeout: 60)
            if result.status != 0 || result.signalled { failures.append("a sink did not exit 0 on SIGTERM: \(result.status) \(result.stderr.suffix(500))") }
        }
        var ids_ = 0
        for (index, source) in sources.enumerated() {
            try await source.catchUp(postgres)
            failures += try await FaultOracle.differences(source, id: ids[index], postgres: postgres).prefix(5).map { "source \(index): \($0)" }
            let logged = try await FaultOracle.writerLogDifferences(logs: [logs[index]], entity: "Note", postgres: postgres, source: ids[index])
            failures += logged.differences.prefix(5).map { "source \(index): \($0)" }
            ids_ += logged.ids
        }
        let count = try await postgres.value("SELECT count(DISTINCT source) FROM \(postgres.s).documents")
        #expect(count == "8")
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        print("eightSources: seed \(seed), \(ids_) ids, \(applied.batches) batches, \(applied.resyncs) resyncs, \(ContinuousClock.now - started)")
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")
    }
}
