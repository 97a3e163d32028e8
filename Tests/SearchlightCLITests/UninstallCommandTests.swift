import Foundation
import GRDB
import Synchronization
import Testing
import SearchlightTestSupport

/// `searchlight uninstall`, across processes: the `sqlite3` shell's `.dump` of the app's
/// database is the oracle, and a copy of the database that never had Searchlight, given the
/// same app writes, is what it must equal.
@Suite(.serialized) struct UninstallCommandTests {
    /// A copy of the workspace database as it is now (before `init`), to replay app writes on.
    static func reference(of db: TestDatabase) throws -> TestDatabase {
        let reference = try TestDatabase(schema: "")
        try FileManager.default.removeItem(atPath: reference.path)
        try FileManager.default.copyItem(atPath: db.path, toPath: reference.path)
        return reference
    }

    @Test func withoutYesOnAPipeItRefusesWithOneLineAndChangesNothing() throws {
        let (db, model) = try CLI.workspace()
        try CLI.run(["init", "--db", db.path, "--model", model])
        let installed = try db.dump()
        let result = try CLI.run(["uninstall", "--db", db.path]) // stdin is /dev/null
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--yes"), "\(result.stderr)")
        #expect(try db.dump() == installed)
    }

    @Test func aDatabaseNeverSetUpGetsOneLineAndIsNotChanged() throws {
        let (db, _) = try CLI.workspace()
        let before = try db.dump()
        let result = try CLI.run(["uninstall", "--db", db.path, "--yes"])
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("no Searchlight setup: nothing to uninstall"), "\(result.stderr)")
        #expect(try db.dump() == before)
        let missing = try CLI.run(["uninstall", "--db", db.directory.appendingPathComponent("none.sqlite").path, "--yes"])
        #expect(missing.status == 1 && missing.stderrLines.count == 1, "\(missing.stderr)")
    }

    @Test func uninstallGivesBackTheDumpOfBeforeInitAndInitStartsAgainFromScratch() async throws {
        let (db, model) = try CLI.workspace()
        let before = try db.dump()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        try await CLI.run(["reindex", "--db", db.path, "--log-level", "error"])
        let result = try await CLI.run(["uninstall", "--db", db.path, "--yes", "--log-level", "error"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("uninstalled"))
        #expect(try db.searchlightObjects() == [])
        #expect(try db.dump() == before)
        // Commands other than init now refuse, and create nothing.
        for command in [["index"], ["search", "kernel"], ["status"], ["watch"], ["cleanup"], ["history"]] {
            let refused = try await CLI.run([command[0], "--db", db.path] + command.dropFirst())
            #expect(refused.status == 1 && refused.stderrLines.count == 1, "\(command): \(refused.stderr)")
        }
        #expect(try db.dump() == before)

        try await CLI.run(["init", "--db", db.path, "--model", model])
        try db.shell("INSERT INTO notes VALUES (3, 'Second life', 'set up again');")
        try await CLI.run(["index", "--db", db.path])
        let found = try await CLI.run(["search", "--db", db.path, "second", "--format", "jsonl"])
        #expect(found.status == 0 && found.stdout.contains("\"id\":3"), "\(found.stdout) \(found.stderr)")
        let history = try await CLI.run(["history", "--db", db.path, "--format", "jsonl"])
        #expect(history.stdout.split(separator: "\n").count == 1, "only what happened since the new init: \(history.stdout)")
    }

    /// `watch` runs in one process, `uninstall` in another: watch stops with one line, exits 1,
    /// and the database ends as the app's writes alone would leave it.
    @Test func watchInAnotherProcessStopsWithOneLineAndRecreatesNothing() async throws {
        let (db, model) = try CLI.workspace()
        let reference = try Self.reference(of: db)
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let watch = CLI.start(["watch", "--db", db.path, "--log-level", "error"])
        // A watchdog: the test fails instead of hanging if watch never exits.
        let fired = Mutex(false)
        let watchdog = DispatchWorkItem { if watch.process.isRunning { fired.withLock { $0 = true }; kill(watch.process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer { watchdog.cancel() }

        // Readiness: watch has indexed a write made after it started (its checkpoint reaches it).
        let write = "INSERT INTO notes VALUES (7, 'Watched write', 'seen by watch');"
        try db.shell(write)
        try reference.shell(write)
        var ready = false
        do {
            let queue = try DatabaseQueue(path: db.path)
            defer { try? queue.close() }
            let deadline = Date().addingTimeInterval(120)
            while !ready, watch.process.isRunning, Date() < deadline {
                ready = try await queue.read { db in
                    (try Int64.fetchOne(db, sql: "SELECT token FROM searchlight_consumer WHERE author = 'searchlight.indexer'") ?? 0)
                        >= (try Int64.fetchOne(db, sql: "SELECT max(CASE token WHEN 0 THEN id ELSE token END) FROM searchlight_log") ?? 1)
                }
                if !ready { try await Task.sleep(for: .milliseconds(10)) }
            }
        }
        try #require(ready, "watch followed the write")

        let uninstall = try await CLI.run(["uninstall", "--db", db.path, "--yes", "--log-level", "error"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        let watched = try await CLI.finish(watch)
        #expect(!fired.withLock { $0 }, "watch ended by itself")
        #expect(watched.status == 1, "\(watched.stderr)")
        let errors = watched.stderrLines.filter { $0.hasPrefix("searchlight: error:") }
        #expect(errors.count == 1, "\(watched.stderr)")
        #expect(watched.stderrLines.last?.contains("uninstalled") == true, "\(watched.stderr)")

        // The app writes on; nothing of Searchlight's reappears.
        let after = "UPDATE notes SET body = 'after uninstall' WHERE id = 1; DELETE FROM notes WHERE id = 2;"
        try db.shell(after)
        try reference.shell(after)
        #expect(try db.searchlightObjects() == [])
        #expect(try db.dump() == reference.dump())
    }

    /// An app writes continuously (plain SQL in a `sqlite3` process, one transaction per
    /// statement) while `watch` follows and `uninstall` lands at a random instant: every
    /// statement lands whole, before the uninstall (captured) or after it (not), and the database
    /// ends exactly as the same statements leave a copy that never had Searchlight.
    @Test func anAppWritingDuringTheUninstallEndsAsIfSearchlightNeverWasThere() async throws {
        let (seed, random) = seededGenerator("UninstallCommandTests.anAppWritingDuringTheUninstall")
        var generator = random
        let (db, model) = try CLI.workspace()
        let reference = try Self.reference(of: db)
        // The app's choice of durability: it changes nothing in the file format, and keeps the run short.
        var statements = ["PRAGMA synchronous = OFF;"]
        for step in 0..<6_000 {
            let id = Int(generator.next() % 200) + 1
            switch generator.next() % 4 {
            case 0: statements.append("INSERT OR REPLACE INTO notes VALUES (\(id), 'note \(id)', 'replaced at \(step)');")
            case 1: statements.append("DELETE FROM notes WHERE id = \(id);")
            default: statements.append("INSERT INTO notes VALUES (\(id), 'note \(id)', 'step \(step)') ON CONFLICT(id) DO UPDATE SET body = excluded.body;")
            }
        }
        let script = db.directory.appendingPathComponent("app.sql").path
        try Data(statements.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: script))

        try await CLI.run(["init", "--db", db.path, "--model", model])
        let watch = CLI.start(["watch", "--db", db.path, "--log-level", "error"])
        let watchdog = DispatchWorkItem { if watch.process.isRunning { kill(watch.process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 240, execute: watchdog)
        defer { watchdog.cancel() }
        let head = try Int64(db.shell("SELECT max(CASE token WHEN 0 THEN id ELSE token END) FROM searchlight_log;").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let app = CLI.start(["sqlite3", "-bail", "-cmd", ".timeout 20000", db.path, ".read \(script)"], executable: URL(fileURLWithPath: "/usr/bin/env"))
        // Once the app's first statement is recorded, at a random instant of its run (seeded).
        do {
            let queue = try DatabaseQueue(path: db.path)
            defer { try? queue.close() }
            let deadline = Date().addingTimeInterval(120)
            while try await queue.read({ try Int64.fetchOne($0, sql: "SELECT max(CASE token WHEN 0 THEN id ELSE token END) FROM searchlight_log") ?? 0 }) <= head,
                  app.process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        }
        try await Task.sleep(for: .microseconds(Int(generator.next() % 300_000)))
        let uninstall = try await CLI.run(["uninstall", "--db", db.path, "--yes", "--log-level", "error"])
        print("the uninstall landed \(app.process.isRunning ? "while the app was writing" : "after the app finished") (seed \(seed))")
        let wrote = try await CLI.finish(app)
        let watched = try await CLI.finish(watch)
        #expect(uninstall.status == 0, "\(uninstall.stderr) (seed \(seed))")
        #expect(wrote.status == 0, "the app never failed: \(wrote.stderr) (seed \(seed))")
        #expect(watched.status == 1, "\(watched.stderr) (seed \(seed))")
        #expect(watched.stderrLines.filter { $0.hasPrefix("searchlight: error:") }.count == 1, "\(watched.stderr)")

        let replayed = await Subprocess.start(["sqlite3", "-bail", "-cmd", ".timeout 10000", reference.path, ".read \(script)"],
                                              executable: URL(fileURLWithPath: "/usr/bin/env")).result()
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(try db.searchlightObjects() == [], "seed \(seed)")
        #expect(try db.dump() == reference.dump(), "seed \(seed)")
    }

    /// On a terminal (a pseudo-terminal from util-linux's `script`), it asks: anything but yes
    /// changes nothing.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs /usr/bin/script for a terminal"))
    func onATerminalItAsksAndOnlyYesUninstalls() throws {
        let (db, model) = try CLI.workspace()
        let before = try db.dump()
        try CLI.run(["init", "--db", db.path, "--model", model])
        let installed = try db.dump()
        let command = "'\(CLI.binary.path)' uninstall --db '\(db.path)' --log-level error"
        let declined = Result { try Shell.run("/usr/bin/script", ["-qec", command, "/dev/null"], input: "n\n") }
        #expect(throws: Shell.Failure.self, "declining exits 1") { try declined.get() }
        #expect(try db.dump() == installed)
        let accepted = try Shell.run("/usr/bin/script", ["-qec", command, "/dev/null"], input: "y\n")
        #expect(accepted.contains("[y/N]") && accepted.contains("uninstalled"), "\(accepted)")
        #expect(try db.dump() == before)
    }
}
