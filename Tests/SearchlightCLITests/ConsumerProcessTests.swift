import Foundation
import GRDB
import Testing
import SearchlightTestSupport

/// The consumer contract and the rebuild lease across processes, with kill -9.
@Suite(.serialized) struct ConsumerProcessTests {
    static func stress(_ arguments: [String]) -> CLI.Running { ReliabilityTests.stress(arguments) }

    @Test func anExporterKilledAtRandomInstantsExportsEveryChangeExactlyOnce() async throws {
        let (seed, random) = seededGenerator("anExporterKilledAtRandomInstantsExportsEveryChangeExactlyOnce")
        var generator = random
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        // First run: the exporter resynchronizes (one marker), then follows.
        try await Self.stress(["export", "--db", db.path]).finish()
        let writer = Self.stress(["write", "--db", db.path, "--log", db.directory.appendingPathComponent("w.log").path,
                                  "--seconds", "4", "--count", "200", "--seed", "\(seed)"])
        var killed = 0
        // At least three kills however slow the machine (a kill after the writer ended still
        // interrupts a catch-up), and kills for as long as the writer runs.
        while writer.process.isRunning || killed < 3 {
            let exporter = Self.stress(["export", "--db", db.path, "--follow"])
            try await Task.sleep(for: .microseconds(generator.next() % 400_000 + 20_000))
            if exporter.process.isRunning { kill(exporter.process.processIdentifier, SIGKILL); killed += 1 }
            _ = try await CLI.finish(exporter)
        }
        #expect(try await CLI.finish(writer).status == 0)
        try await Self.stress(["export", "--db", db.path]).finish() // catch up
        let queue = try DatabaseQueue(path: db.path)
        let (changes, exported, duplicates, markers) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_log WHERE type > 0")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM export_log WHERE change_id IN (SELECT id FROM searchlight_log WHERE type > 0)")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT change_id FROM export_log WHERE change_id IS NOT NULL GROUP BY change_id HAVING count(*) > 1)")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM export_log WHERE type LIKE 'resync%'")!)
        }
        #expect(killed >= 3, "killed \(killed) exporters (seed \(seed))")
        #expect(changes > 100)
        #expect(exported == changes, "every change exported (seed \(seed))")
        #expect(duplicates == 0, "none twice (seed \(seed))")
        #expect(markers == 1, "one resync, at the start")
    }

    /// A workspace whose index needs a slow rebuild: 30,000 rows, rebuilt 200 at a time.
    static func bigWorkspace() async throws -> (TestDatabase, String) {
        let (db, model) = try CLI.workspace()
        try db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 30009)
            INSERT INTO notes SELECT i, 'note ' || i, 'lease body' FROM n;
            """)
        try await CLI.run(["init", "--db", db.path, "--model", model, "--log-level", "error"])
        return (db, model)
    }

    static func rebuildProgress(_ path: String) throws -> Int64? {
        try DatabaseQueue(path: path).read { try Int64.fetchOne($0, sql: "SELECT value FROM searchlight_index_state WHERE key = 'rebuildAfter'") }
    }

    /// Waits (bounded) until `path` exists.
    static func waitForFile(_ path: String, while running: CLI.Running? = nil) async {
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: path), running?.process.isRunning ?? true, Date() < deadline {
            await sleepUncancelled(for: .milliseconds(5))
        }
    }

    @Test func aSecondProcessWaitsForTheRebuildUnderWayAndNeverDropsItsTables() async throws {
        let (db, _) = try await Self.bigWorkspace()
        // The first rebuild holds after 1,000 rows until the test lets it go: the second
        // process surely meets it under way, however loaded the machine is.
        let gate = db.directory.appendingPathComponent("gate").path
        let first = Self.stress(["rebuild", "--db", db.path, "--chunk", "200", "--hold", gate])
        await Self.waitForFile(gate + ".held", while: first)
        let second = CLI.start(["reindex", "--db", db.path, "--log-level", "notice"])
        let waited = await second.waitUntil(stderrContains: "waiting for the rebuild under way")
        _ = FileManager.default.createFile(atPath: gate, contents: nil) // let the first one finish
        let firstResult = try await CLI.finish(first)
        let secondResult = try await CLI.finish(second)
        #expect(waited, "\(secondResult.stderr)")
        #expect(firstResult.status == 0, "\(firstResult.stderr)")
        #expect(secondResult.status == 0, "\(secondResult.stderr)")
        let status = try await CLI.run(["status", "--db", db.path, "--format", "json"])
        #expect(status.stdout.contains("\"documents\" : 30002"), "\(status.stdout)")
        #expect(try await CLI.run(["verify", "--db", db.path]).status == 0)
    }

    @Test func aRebuildWhoseProcessWasKilledIsTakenOverAndResumed() async throws {
        let (db, _) = try await Self.bigWorkspace()
        let gate = db.directory.appendingPathComponent("gate").path
        let first = Self.stress(["rebuild", "--db", db.path, "--chunk", "200", "--lease", "3600", "--hold", gate])
        await Self.waitForFile(gate + ".held", while: first)
        kill(first.process.processIdentifier, SIGKILL) // held mid-rebuild: never lets go
        _ = try await CLI.finish(first)
        let progress = try #require(try Self.rebuildProgress(db.path), "killed mid-rebuild")
        // Its lease would last an hour, but its process is gone: the next run takes over.
        let next = try await CLI.run(["index", "--db", db.path, "--log-level", "notice"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.stderr.contains("resuming"), "\(next.stderr)")
        #expect(progress > 0)
        #expect(try await CLI.run(["verify", "--db", db.path]).status == 0)
        #expect(try await CLI.run(["search", "--db", db.path, "lease", "--limit", "0", "--count-limit", "0", "--format", "json"]).stdout.contains("\"total\" : 30000"))
    }

    @Test func initWhileWatchRunsSwitchesTheWatcherToTheNewModel() async throws {
        let db = try TestDatabase(schema: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);")
        let narrow = db.directory.appendingPathComponent("narrow.json").path, wide = db.directory.appendingPathComponent("wide.json").path
        try Data(#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: narrow))
        try Data(#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}, {"column": "body"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: wide))
        try await CLI.run(["init", "--db", db.path, "--model", narrow])
        let watch = CLI.start(["watch", "--db", db.path, "--log-level", "notice"])
        defer { if watch.process.isRunning { watch.process.terminate() } }
        try db.shell("INSERT INTO notes VALUES (1, 'one', 'zebra');")
        #expect(try await CLI.run(["init", "--db", db.path, "--model", wide]).status == 0)
        try db.shell("INSERT INTO notes VALUES (2, 'two', 'zebra');")
        // The watcher indexes the new row with the new model (bounded wait, not a latency test).
        let deadline = Date().addingTimeInterval(60)
        var total = ""
        while Date() < deadline {
            total = try await CLI.run(["search", "--db", db.path, "zebra", "--format", "json"]).stdout
            if total.contains("\"total\" : 2") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(total.contains("\"total\" : 2"), "\(total)")
        watch.process.terminate()
        let result = try await CLI.finish(watch)
        #expect(result.status == 0)
        // The watcher may do the rebuild itself (if it gets there before init does), but only
        // after it has read the new model: never with the one it started with.
        let lines = result.stderr.split(separator: "\n")
        let reloaded = lines.firstIndex { $0.contains("the installed model changed") }
        let rebuilt = lines.firstIndex { $0.contains("rebuilding the index from scratch: the model") }
        if let rebuilt { #expect(reloaded.map { $0 < rebuilt } == true, "the watcher rebuilt with its stale model: \(result.stderr)") }
        let layout = try await DatabaseQueue(path: db.path).read { try String.fetchOne($0, sql: "SELECT value FROM searchlight_index_state WHERE key = 'layout'") }
        #expect(layout?.contains("\"body\"") == true, "the live index holds the new model's field")
        #expect(try await CLI.run(["verify", "--db", db.path]).status == 0)
    }
}

extension CLI.Running {
    /// Waits for the process (blocking the calling thread); fails if it did not exit 0.
    func finish() throws {
        let result = try CLI.finish(self)
        if result.status != 0 { throw Shell.Failure(description: "exited \(result.status): \(result.stderr)") }
    }

    /// Waits for the process without blocking a thread of the cooperative pool; fails if it did not exit 0.
    func finish() async throws {
        let result = try await CLI.finish(self)
        if result.status != 0 { throw Shell.Failure(description: "exited \(result.status): \(result.stderr)") }
    }
}
