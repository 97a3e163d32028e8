import Foundation
import GRDB
import Testing
import SearchlightHistory
import SearchlightTestSupport

/// "Nothing is lost" under kill -9, concurrent load and disk trouble. CI runs reduced forms;
/// the environment variables below select the full ones (see README, "Reliability").
@Suite(.serialized) struct ReliabilityTests {
    static var stress: URL { CLI.binary.deletingLastPathComponent().appendingPathComponent("searchlight-stress") }

    static func stress(_ arguments: [String]) -> CLI.Running {
        CLI.start(arguments, executable: stress)
    }

    static func environment(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }

    /// Every change a writer logged as committed is in history, by that author.
    static func expectHistoryHolds(logs: [String], db: String) throws {
        var logged: [String: Int] = [:]
        for log in logs {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") { logged[String(line), default: 0] += 1 }
        }
        let store = try HistoryStore(path: db)
        var recorded: [String: Int] = [:]
        for transaction in try store.fetchTransactions(.all) where transaction.author?.hasPrefix("writer") == true {
            for change in transaction.changes { recorded["\(change.type) \(change.objectID)", default: 0] += 1 }
        }
        #expect(!logged.isEmpty)
        let lost = logged.filter { recorded[$0.key, default: 0] < $0.value }
        #expect(lost.isEmpty, "changes committed by a writer but missing from history: \(lost.prefix(5))")
    }

    static func expectVerifyClean(_ db: String) async throws {
        let verify = try await CLI.run(["verify", "--db", db, "--format", "json", "--log-level", "error"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect(report?["differences"] as? Int == 0)
    }

    @Test func killingTheWatcherAndTheWriterLosesNothing() async throws {
        let iterations = Self.environment("SEARCHLIGHT_CRASH_ITERATIONS", default: 10)
        let (db, model) = try CLI.workspace()
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        let log = db.directory.appendingPathComponent("writer.log").path
        let (seed, random) = seededGenerator("killingTheWatcherAndTheWriterLosesNothing")
        var generator = random
        var writerKills = 0
        for iteration in 0..<iterations {
            let watch = CLI.start(["watch", "--db", db.path, "--log-level", "error"])
            // A writer to be killed writes until it is: with a run of 1 s, a loaded machine's
            // sleep below outlasted it, and no writer was ever killed (a CI run).
            let killsWriter = iteration % 3 == 0
            let writer = Self.stress(["write", "--db", db.path, "--log", log, "--seconds", killsWriter ? "600" : "1", "--count", "300",
                                      "--seed", "\(seed &+ UInt64(iteration))"])
            try await Task.sleep(for: .microseconds(UInt64.random(in: 100_000...900_000, using: &generator)))
            kill(watch.process.processIdentifier, SIGKILL)
            if killsWriter, writer.process.isRunning {
                kill(writer.process.processIdentifier, SIGKILL)
                writerKills += 1
            }
            _ = try await CLI.finish(watch)
            let written = try await CLI.finish(writer)
            #expect(written.status == 0 || written.status == 9 || writer.process.terminationReason == .uncaughtSignal, "\(written.stderr)")
        }
        #expect(writerKills > 0 || iterations < 3)
        // Restart: the index catches up and equals the source; history holds every change.
        try await Self.expectVerifyClean(db.path)
        try Self.expectHistoryHolds(logs: [log], db: db.path)
    }

    @Test func fourWritersAWatcherAndTwoSearchersNeverSeeBusyAndLoseNothing() async throws {
        let seconds = Self.environment("SEARCHLIGHT_SOAK_SECONDS", default: 6)
        let (db, model) = try CLI.workspace()
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        let watch = CLI.start(["watch", "--db", db.path, "--log-level", "error"])
        let logs = (1...4).map { db.directory.appendingPathComponent("writer-\($0).log").path }
        let writers = (1...4).map { index in
            Self.stress(["write", "--db", db.path, "--log", logs[index - 1], "--seconds", "\(seconds)", "--author", "writer-\(index)",
                         "--first", "\(index * 10_000)", "--count", "400", "--seed", "\(index)"])
        }
        let searchers = (1...2).map { _ in Self.stress(["search", "--db", db.path, "--seconds", "\(seconds)"]) }
        for writer in writers {
            let result = try await CLI.finish(writer)
            #expect(result.status == 0, "a writer saw an error: \(result.stderr.prefix(300))")
            #expect(!result.stderr.contains("locked") && !result.stderr.contains("busy"))
        }
        for searcher in searchers {
            let result = try await CLI.finish(searcher)
            #expect(result.status == 0, "a searcher saw an error: \(result.stderr.prefix(300))")
        }
        watch.process.terminate()
        let watched = try await CLI.finish(watch)
        #expect(watched.status == 0, "\(watched.stderr.prefix(300))")
        try await Self.expectVerifyClean(db.path)
        try Self.expectHistoryHolds(logs: logs, db: db.path)
    }

    @Test func readOnlyFileOrDirectoryIsAClearErrorAtOpen() async throws {
        let (db, model) = try CLI.workspace()
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: db.directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: db.path)
        // Run as nobody: root ignores file permissions.
        func runAsNobody(_ arguments: [String]) async throws -> CLI.Result {
            try await CLI.finish(CLI.start(["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary.path] + arguments,
                                     executable: URL(fileURLWithPath: "/usr/bin/setpriv")))
        }
        var result = try await runAsNobody(["status", "--db", db.path])
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1 && result.stderr.contains("read-only"), "\(result.stderr)")
        // A writable directory but a read-only file.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: db.directory.path)
        result = try await runAsNobody(["index", "--db", db.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("database \(db.path) is read-only"), "\(result.stderr)")
    }

    @Test func corruptDatabaseIsAClearErrorNeverACrash() async throws {
        let (db, model) = try CLI.workspace()
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        try db.shell("WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO notes SELECT i, 'note ' || i, printf('%.*c', 200, 'x') FROM n;")
        #expect(try await CLI.run(["index", "--db", db.path]).status == 0)
        try db.shell("PRAGMA wal_checkpoint(TRUNCATE);")
        // Scribble over the middle of the file, past the schema page.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: db.path))
        let size = try handle.seekToEnd()
        for offset in stride(from: UInt64(8192), to: size, by: 16_384) {
            try handle.seek(toOffset: offset)
            handle.write(Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        }
        try handle.close()
        for arguments in [["verify", "--db", db.path], ["search", "--db", db.path, "note"], ["index", "--db", db.path], ["status", "--db", db.path]] {
            let result = try await CLI.run(arguments + ["--log-level", "critical"])
            #expect(result.status == 1 || result.status == 0, "\(arguments[0]) crashed: \(result.status)")
            if result.status == 1 {
                #expect(result.stderrLines.count == 1, "\(result.stderr)")
            }
        }
        // verify reads everything: it must notice.
        let verify = try await CLI.run(["verify", "--db", db.path, "--log-level", "critical"])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("corrupt") || verify.stdout.contains("integrity") || verify.stdout.contains("differs"), "\(verify.stdout) \(verify.stderr)")
    }
}
