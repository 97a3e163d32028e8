import Foundation
import GRDB
import Testing
import SearchlightTestSupport

/// The consumer contract and the rebuild lease across processes, with kill -9.
@Suite struct ConsumerProcessTests {
    static func stress(_ arguments: [String]) -> CLI.Running { ReliabilityTests.stress(arguments) }

    static func seeded() -> (UInt64, SplitMix) {
        let seed = UInt64(ProcessInfo.processInfo.environment["SEARCHLIGHT_SEED"] ?? "") ?? UInt64.random(in: 1...1_000_000)
        print("seed \(seed) (SEARCHLIGHT_SEED=\(seed) reproduces it)")
        return (seed, SplitMix(seed: seed))
    }

    @Test func anExporterKilledAtRandomInstantsExportsEveryChangeExactlyOnce() throws {
        let (seed, random) = Self.seeded()
        var generator = random
        let (db, model) = try CLI.workspace()
        try CLI.run(["init", "--db", db.path, "--model", model])
        // First run: the exporter resynchronizes (one marker), then follows.
        try Self.stress(["export", "--db", db.path]).finish()
        let writer = Self.stress(["write", "--db", db.path, "--log", db.directory.appendingPathComponent("w.log").path,
                                  "--seconds", "4", "--count", "200", "--seed", "\(seed)"])
        var killed = 0
        while writer.process.isRunning {
            let exporter = Self.stress(["export", "--db", db.path, "--follow"])
            usleep(UInt32(generator.next() % 400_000) + 20_000)
            if exporter.process.isRunning { kill(exporter.process.processIdentifier, SIGKILL); killed += 1 }
            _ = try CLI.finish(exporter)
        }
        #expect(try CLI.finish(writer).status == 0)
        try Self.stress(["export", "--db", db.path]).finish() // catch up
        let queue = try DatabaseQueue(path: db.path)
        let (changes, exported, duplicates, markers) = try queue.read { db in
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
    static func bigWorkspace() throws -> (TestDatabase, String) {
        let (db, model) = try CLI.workspace()
        try db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 30009)
            INSERT INTO notes SELECT i, 'note ' || i, 'lease body' FROM n;
            """)
        try CLI.run(["init", "--db", db.path, "--model", model, "--log-level", "error"])
        return (db, model)
    }

    static func rebuildProgress(_ path: String) throws -> Int64? {
        try DatabaseQueue(path: path).read { try Int64.fetchOne($0, sql: "SELECT value FROM searchlight_index_state WHERE key = 'rebuildAfter'") }
    }

    /// Waits (bounded) until `path` exists.
    static func waitForFile(_ path: String, while running: CLI.Running? = nil) {
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: path), running?.process.isRunning ?? true, Date() < deadline { usleep(5_000) }
    }

    /// Waits (bounded) until the text file at `path` contains `text`.
    static func waitForText(_ text: String, in path: String) -> Bool {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let content = try? String(contentsOfFile: path, encoding: .utf8), content.contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    @Test func aSecondProcessWaitsForTheRebuildUnderWayAndNeverDropsItsTables() throws {
        let (db, _) = try Self.bigWorkspace()
        // The first rebuild holds after 1,000 rows until the test lets it go: the second
        // process surely meets it under way, however loaded the machine is.
        let gate = db.directory.appendingPathComponent("gate").path
        let first = Self.stress(["rebuild", "--db", db.path, "--chunk", "200", "--hold", gate])
        Self.waitForFile(gate + ".held", while: first)
        let log = db.directory.appendingPathComponent("second.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let second = Process()
        second.executableURL = CLI.binary
        second.arguments = ["reindex", "--db", db.path, "--log-level", "notice"]
        second.standardOutput = FileHandle.nullDevice
        second.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try second.run()
        let waited = Self.waitForText("waiting for the rebuild under way", in: log)
        _ = FileManager.default.createFile(atPath: gate, contents: nil) // let the first one finish
        let firstResult = try CLI.finish(first)
        second.waitUntilExit()
        #expect(waited, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(firstResult.status == 0, "\(firstResult.stderr)")
        #expect(second.terminationStatus == 0)
        let status = try CLI.run(["status", "--db", db.path, "--format", "json"])
        #expect(status.stdout.contains("\"documents\" : 30002"), "\(status.stdout)")
        #expect(try CLI.run(["verify", "--db", db.path]).status == 0)
    }

    @Test func aRebuildWhoseProcessWasKilledIsTakenOverAndResumed() throws {
        let (db, _) = try Self.bigWorkspace()
        let gate = db.directory.appendingPathComponent("gate").path
        let first = Self.stress(["rebuild", "--db", db.path, "--chunk", "200", "--lease", "3600", "--hold", gate])
        Self.waitForFile(gate + ".held", while: first)
        kill(first.process.processIdentifier, SIGKILL) // held mid-rebuild: never lets go
        _ = try CLI.finish(first)
        let progress = try #require(try Self.rebuildProgress(db.path), "killed mid-rebuild")
        // Its lease would last an hour, but its process is gone: the next run takes over.
        let next = try CLI.run(["index", "--db", db.path, "--log-level", "notice"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.stderr.contains("resuming"), "\(next.stderr)")
        #expect(progress > 0)
        #expect(try CLI.run(["verify", "--db", db.path]).status == 0)
        #expect(try CLI.run(["search", "--db", db.path, "lease", "--limit", "0", "--format", "json"]).stdout.contains("\"total\" : 30000"))
    }

    @Test func initWhileWatchRunsSwitchesTheWatcherToTheNewModel() throws {
        let db = try TestDatabase(schema: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);")
        let narrow = db.directory.appendingPathComponent("narrow.json").path, wide = db.directory.appendingPathComponent("wide.json").path
        try Data(#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: narrow))
        try Data(#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}, {"column": "body"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: wide))
        try CLI.run(["init", "--db", db.path, "--model", narrow])
        let watch = CLI.start(["watch", "--db", db.path, "--log-level", "notice"])
        defer { if watch.process.isRunning { watch.process.terminate() } }
        try db.shell("INSERT INTO notes VALUES (1, 'one', 'zebra');")
        #expect(try CLI.run(["init", "--db", db.path, "--model", wide]).status == 0)
        try db.shell("INSERT INTO notes VALUES (2, 'two', 'zebra');")
        // The watcher indexes the new row with the new model (bounded wait, not a latency test).
        let deadline = Date().addingTimeInterval(60)
        var total = ""
        while Date() < deadline {
            total = try CLI.run(["search", "--db", db.path, "zebra", "--format", "json"]).stdout
            if total.contains("\"total\" : 2") { break }
            usleep(50_000)
        }
        #expect(total.contains("\"total\" : 2"), "\(total)")
        watch.process.terminate()
        let result = try CLI.finish(watch)
        #expect(result.status == 0)
        // The watcher may do the rebuild itself (if it gets there before init does), but only
        // after it has read the new model: never with the one it started with.
        let lines = result.stderr.split(separator: "\n")
        let reloaded = lines.firstIndex { $0.contains("the installed model changed") }
        let rebuilt = lines.firstIndex { $0.contains("rebuilding the index from scratch: the model") }
        if let rebuilt { #expect(reloaded.map { $0 < rebuilt } == true, "the watcher rebuilt with its stale model: \(result.stderr)") }
        let layout = try DatabaseQueue(path: db.path).read { try String.fetchOne($0, sql: "SELECT value FROM searchlight_index_state WHERE key = 'layout'") }
        #expect(layout?.contains("\"body\"") == true, "the live index holds the new model's field")
        #expect(try CLI.run(["verify", "--db", db.path]).status == 0)
    }
}

extension CLI.Running {
    /// Waits for the process; fails if it did not exit 0.
    func finish() throws {
        let result = try CLI.finish(self)
        if result.status != 0 { throw Shell.Failure(description: "exited \(result.status): \(result.stderr)") }
    }
}
