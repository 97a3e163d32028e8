import Foundation
import Synchronization
import GRDB
import Testing
import SearchlightHistory
import SearchlightTestSupport

@Suite struct CommandTests {
    @Test func initOnAFreshDatabaseInstallsAndIndexes() async throws {
        let (db, model) = try CLI.workspace()
        let result = try await CLI.run(["init", "--db", db.path, "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("2 documents"))
        // Later commands need only --db; init again is idempotent.
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        #expect(try await CLI.run(["search", "--db", db.path, "kernel", "--format", "jsonl"]).stdout.contains("\"id\":1"))
    }

    @Test func searchOutputParsesInEveryFormat() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let jsonl = try await CLI.run(["search", "--db", db.path, "kernel OR hacker", "--format", "jsonl"])
        let hits = try jsonl.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(hits.count == 2)
        for hit in hits { #expect(Set(hit.keys).isSuperset(of: ["entity", "id", "title", "snippet", "score"])) }
        let json = try JSONSerialization.jsonObject(with: Data(try await CLI.run(["search", "--db", db.path, "kernel", "--format", "json"]).stdout.utf8)) as! [String: Any]
        #expect(json["total"] as? Int == 1)
        #expect((json["hits"] as? [[String: Any]])?.first?["title"] as? String == "Kernel panic")
        let csv = try await CLI.run(["search", "--db", db.path, "kernel", "--format", "csv"]).stdout.split(separator: "\n")
        #expect(csv.first == "entity,id,title,snippet,score")
        #expect(csv.count == 2 && csv[1].hasPrefix("Note,1,Kernel panic,"))
        let table = try await CLI.run(["search", "--db", db.path, "kern", "--prefix"])
        #expect(table.stdout.contains("Kernel panic") && table.stdout.contains("1 of 1 matches"))
        // --limit 0 means no limit.
        try db.shell("WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 40) INSERT INTO notes SELECT i, 'bulk note', '' FROM n;")
        try await CLI.run(["index", "--db", db.path])
        #expect(try await CLI.run(["search", "--db", db.path, "bulk", "--format", "jsonl"]).stdout.split(separator: "\n").count == 20)
        #expect(try await CLI.run(["search", "--db", db.path, "bulk", "--format", "jsonl", "--limit", "0"]).stdout.split(separator: "\n").count == 31)
    }

    @Test func searchShowsCountsByEntityAndHighlightedTitles() async throws {
        let db = try TestDatabase()
        try db.shell("""
            INSERT INTO notes(id, title, body) VALUES (1, 'Kernel panic', 'The kernel halted.'), (2, 'Hacker ethic', 'Kernel hackers share.');
            INSERT INTO people(uuid, name) VALUES ('p1', 'Kernel Sanders');
            """)
        let model = db.directory.appendingPathComponent("model.json").path
        try Data("""
            {"entities": [
              {"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title", "weight": 10, "role": "title"}, {"column": "body"}]},
              {"name": "Person", "table": "people", "primaryKey": "uuid", "fields": [{"column": "name", "role": "title"}]}]}
            """.utf8).write(to: URL(fileURLWithPath: model))
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        let output = try await CLI.run(["search", "--db", db.path, "kernel", "--format", "json", "--limit", "2"])
        #expect(output.status == 0, "\(output.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as! [String: Any]
        #expect(json["total"] as? Int == 3)
        #expect(json["countsByEntity"] as? [String: Int] == ["Note": 2, "Person": 1])
        #expect(json["rankedMatches"] as? Int == 3 && json["truncated"] as? Bool == false)
        let hits = try #require(json["hits"] as? [[String: Any]])
        #expect(hits.count == 2)
        #expect(hits.map { $0["titleHighlight"] as? String }.contains("[Kernel] panic"))
        let jsonl = try await CLI.run(["search", "--db", db.path, "sanders", "--format", "jsonl"]).stdout
        #expect(jsonl.contains(#""titleHighlight":"Kernel [Sanders]""#))
        let table = try await CLI.run(["search", "--db", db.path, "kernel", "--limit", "2"]).stdout
        #expect(table.contains("2 of 3 matches (Note 2, Person 1)"), "\(table)")
        #expect(!table.contains("Ranked") && !table.contains("Stopped"), "no bound applied")
    }

    /// `--limit 0` is bounded too, and says so (on stderr for line formats).
    @Test func searchSaysWhenABoundApplied() async throws {
        let (db, model) = try CLI.workspace()
        // Written before init, which builds the index from the table (no history to replay).
        try db.shell("WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 15010) INSERT INTO notes SELECT i, 'bulk note', '' FROM n;")
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let jsonl = try await CLI.run(["search", "--db", db.path, "bulk", "--format", "jsonl", "--limit", "0"])
        #expect(jsonl.stdout.split(separator: "\n").count == 2_000)
        #expect(jsonl.stderr.contains("Ranked the newest 15,000 matches of at least 10,000 (at most 15,000 per entity)."), "\(jsonl.stderr)")
        #expect(jsonl.stderr.contains("Stopped after 2000 hits: --offset 2000 shows more."), "\(jsonl.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try await CLI.run(["search", "--db", db.path, "bulk", "--format", "json", "--limit", "0"]).stdout.utf8)) as! [String: Any]
        #expect(json["total"] as? Int == 10_000 && json["totalRelation"] as? String == "gte")
        #expect(json["rankedMatches"] as? Int == 15_000 && json["truncated"] as? Bool == true)
        let table = try await CLI.run(["search", "--db", db.path, "bulk"]).stdout
        #expect(table.contains("20 of 10,000+ matches (Note 10,000+)"), "\(table)")
        #expect(table.contains("Ranked the newest 15,000 matches of at least 10,000"), "\(table)")
        // Counting every match, on request; an exact count below the bound says "eq".
        let exact = try JSONSerialization.jsonObject(with: Data(try await CLI.run(["search", "--db", db.path, "bulk", "--format", "json", "--count-limit", "0"]).stdout.utf8)) as! [String: Any]
        #expect(exact["total"] as? Int == 15_001 && exact["totalRelation"] as? String == "eq")
        let wide = try await CLI.run(["search", "--db", db.path, "bulk", "--count-limit", "20000"]).stdout
        #expect(wide.contains("20 of 15,001 matches (Note 15,001)"), "\(wide)")
        let few = try JSONSerialization.jsonObject(with: Data(try await CLI.run(["search", "--db", db.path, "kernel", "--format", "json", "--count-limit", "1"]).stdout.utf8)) as! [String: Any]
        // Fewer matches than the ranking cap are all walked by the ranking: counted exactly.
        #expect(few["total"] as? Int == 1 && few["totalRelation"] as? String == "eq", "\(few)")
        let bad = try await CLI.run(["search", "--db", db.path, "bulk", "--count-limit", "-1"])
        #expect(bad.status != 0 && bad.stderr.contains("--count-limit must not be negative"), "\(bad.stderr)")
    }

    @Test func foreignWritesShowUpAfterIndexAndInHistoryWithANullAuthor() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        try db.shell("INSERT INTO notes VALUES (3, 'Foreign words', 'written by sqlite3'); DELETE FROM notes WHERE id = 1;")
        let index = try await CLI.run(["index", "--db", db.path])
        #expect(index.status == 0)
        #expect(index.stdout.contains("1 documents upserted, 1 removed"))
        #expect(try await CLI.run(["search", "--db", db.path, "foreign", "--format", "jsonl"]).stdout.contains("\"id\":3"))
        #expect(try await CLI.run(["search", "--db", db.path, "kernel", "--format", "jsonl"]).stdout.isEmpty)
        let lines = try await CLI.run(["history", "--db", db.path, "--format", "jsonl"]).stdout.split(separator: "\n")
        let transactions = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(transactions.count == 2)
        for transaction in transactions {
            #expect(transaction["author"] is NSNull)
            #expect(transaction["token"] is Int && transaction["timestamp"] is String)
        }
        let changes = transactions.flatMap { $0["changes"] as! [[String: Any]] }
        #expect(changes.map { $0["type"] as? String } == ["insert", "delete"])
        #expect((changes[1]["tombstone"] as? [String: Any])?["title"] as? String == "Kernel panic")
    }

    /// (Freshness is measured by the benchmark, not asserted here: a loaded machine may be slow.)
    @Test func watchPicksUpAnotherProcessAndExitsOnSIGTERM() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let watch = CLI.start(["watch", "--db", db.path])
        defer { if watch.process.isRunning { watch.process.terminate() } }
        // Logged once the indexer has subscribed to commits and begun catching up from its
        // checkpoint: a write from then on is indexed by the catch-up or noticed by the watcher.
        #expect(await watch.waitUntil(stderrContains: "watching \(db.path)"), "\(watch.stderr)")
        try db.shell("INSERT INTO notes VALUES (7, 'Watched write', '');")
        let queue = try DatabaseQueue(path: db.path)
        let deadline = ContinuousClock.now + .seconds(600) // a bound against hangs, not a latency goal
        var found = false
        while ContinuousClock.now < deadline {
            // The watcher's checkpoint reaches the head once the write is indexed.
            let (checkpoint, head) = try await queue.read { db in
                (try Int64.fetchOne(db, sql: "SELECT token FROM searchlight_consumer WHERE author = 'searchlight.indexer'") ?? 0,
                 try Int64.fetchOne(db, sql: "SELECT max(CASE token WHEN 0 THEN id ELSE token END) FROM searchlight_log") ?? 0)
            }
            if head > 0, checkpoint >= head { found = true; break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(found)
        #expect(try await CLI.run(["search", "--db", db.path, "watched", "--format", "jsonl"]).stdout.contains("\"id\":7"))
        watch.process.terminate() // SIGTERM
        let result = try await CLI.finish(watch)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Regression: with the database file replaced (`mv` over it), `watch` went on
    /// following the deleted file in silence. It now exits 1 with one line saying so.
    @Test func watchExitsWithAClearErrorWhenTheDatabaseFileIsReplaced() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let copy = db.directory.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: db.path, toPath: copy)
        let watch = CLI.start(["watch", "--db", db.path])
        // A watchdog: the test fails instead of hanging if watch never exits.
        let watchdog = DispatchWorkItem { if watch.process.isRunning { kill(watch.process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }
        // Wait until it has the database open (its file descriptors say so).
        let fds = "/proc/\(watch.process.processIdentifier)/fd"
        let opened = Date()
        while Date().timeIntervalSince(opened) < 60, !((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains(where: {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == db.path
        }) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(rename(copy, db.path) == 0)
        let result = try await CLI.finish(watch)
        if result.status != 0 {
            #expect(result.status == 1)
            #expect(result.stderrLines.last?.contains("searchlight: error: stopped following: the database file") == true, "\(result.stderr)")
        } else {
            Issue.record("watch exited 0 (\(result.stderr))")
        }
    }

    /// The changes in the complete jsonl lines `history` printed so far, as "type id".
    static func changes(inJSONL output: String) -> [String] {
        output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() // the last piece may be a partial line
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .flatMap { ($0["changes"] as? [[String: Any]]) ?? [] }.map { "\($0["type"]!) \($0["id"]!)" }
    }

    @Test func historyFollowStreamsNewTransactionsAndStopsOnSIGTERM() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        try db.shell("INSERT INTO notes VALUES (3, 'before', '');")
        let follow = CLI.start(["history", "--db", db.path, "--format", "jsonl", "--follow", "--log-level", "error"])
        defer { if follow.process.isRunning { follow.process.terminate() } }
        // The backlog is printed once the feed has subscribed to commits: a readiness signal.
        #expect(await follow.waitUntil { stdout, _ in Self.changes(inJSONL: stdout) == ["insert 3"] }, "\(follow.stdout) \(follow.stderr)")
        try db.shell("INSERT INTO notes VALUES (4, 'after', ''); DELETE FROM notes WHERE id = 3;")
        let expected = ["insert 3", "insert 4", "delete 3"]
        // Bounded wait for the new transaction, then SIGTERM.
        #expect(await follow.waitUntil { stdout, _ in Self.changes(inJSONL: stdout).count >= expected.count }, "\(follow.stdout) \(follow.stderr)")
        follow.process.terminate()
        let result = try await CLI.finish(follow)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("\n"), "whole lines only")
        #expect(Self.changes(inJSONL: result.stdout) == expected, "the backlog, then what committed while following")
    }

    /// Starts `history --follow` on a database with one transaction in its backlog, and waits
    /// (bounded) until the backlog is printed: the feed has then read its starting point and
    /// subscribed to commits.
    static func startFollowing(_ db: TestDatabase) async throws -> CLI.Running {
        try db.shell("INSERT INTO notes VALUES (8, 'backlog', '');")
        let follow = CLI.start(["history", "--db", db.path, "--format", "jsonl", "--follow", "--log-level", "error"])
        #expect(await follow.waitUntil { stdout, _ in Self.changes(inJSONL: stdout) == ["insert 8"] }, "\(follow.stdout) \(follow.stderr)")
        return follow
    }

    @Test func historyFollowExitsNonZeroWithOneLineWhenFollowingFails() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let follow = try await Self.startFollowing(db)
        // A bound, not a latency assertion: the follower must end by itself long before this.
        let watchdog = CLI.Watchdog(follow)
        defer { watchdog.cancel() }
        // A commit whose history cleanup deletes before the follower reads it (as a cleanup with
        // a short maximum duration would): following cannot go on, and must say so.
        let head = try Int64(db.shell("SELECT max(CASE token WHEN 0 THEN id ELSE token END) FROM searchlight_log;").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        try db.shell("""
            BEGIN; INSERT INTO notes VALUES (9, 'lost', '');
            INSERT OR REPLACE INTO searchlight_meta(key, value) VALUES ('purgedThroughToken', \(head + 1)); COMMIT;
            """)
        let result = try await CLI.finish(follow)
        #expect(!watchdog.fired, "the follower ended by itself")
        #expect(result.status == 1, "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("expired"))
        #expect(Self.changes(inJSONL: result.stdout) == ["insert 8"], "the lost transaction is never printed")
    }

    /// An outsider's finding: a follower whose database file was deleted went silent forever
    /// (`watch` ends with one line). It ends with one line too.
    @Test func historyFollowEndsWithOneLineWhenItsFileIsDeleted() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let follow = try await Self.startFollowing(db)
        let watchdog = CLI.Watchdog(follow)
        defer { watchdog.cancel() }
        try FileManager.default.removeItem(atPath: db.path)
        let result = try await CLI.finish(follow)
        #expect(!watchdog.fired, "the follower ended by itself")
        #expect(result.status == 1 && result.stderrLines.count == 1 && result.stderr.contains("replaced or deleted"), "\(result.status) \(result.stderr)")
    }

    /// Found by a black-box attack: the change watcher swallowed read errors, so a follower whose
    /// history table disappeared hung silently, then exited 0 on SIGTERM.
    @Test func historyFollowExitsNonZeroWhenHistoryCannotBeReadAnyMore() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let follow = try await Self.startFollowing(db)
        // A bound, not a latency assertion: the follower must end by itself long before this.
        let watchdog = CLI.Watchdog(follow)
        defer { watchdog.cancel() }
        try db.shell("ALTER TABLE searchlight_log RENAME TO searchlight_log_gone;")
        let result = try await CLI.finish(follow)
        #expect(!watchdog.fired, "the follower ended by itself")
        #expect(result.status == 1, "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("searchlight_log"))
    }

    @Test func reindexShowsNoProgressBarWhenPiped() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let result = try await CLI.run(["reindex", "--db", db.path, "--log-level", "error"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Rebuilt the index: it holds 2 documents (2 written by this run)"), "\(result.stdout)")
        #expect(!result.stderr.contains("Reindexing ["))
    }

    @Test func verifyDetectsADocumentRemovedByHandAndRepairFixesIt() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        #expect(try await CLI.run(["verify", "--db", db.path]).status == 0)
        // notes has an INTEGER PRIMARY KEY: the object id is the full-text rowid.
        try db.shell("DELETE FROM searchlight_fts_1_g1 WHERE rowid = 2;")
        let broken = try await CLI.run(["verify", "--db", db.path, "--format", "json"])
        #expect(broken.status == 1)
        let report = try JSONSerialization.jsonObject(with: Data(broken.stdout.utf8)) as! [String: Any]
        #expect(report["consistent"] as? Bool == false)
        let entity = (report["entities"] as! [[String: Any]])[0]
        #expect(entity["missing"] as? [Int] == [2])
        let repaired = try await CLI.run(["verify", "--db", db.path, "--repair"])
        #expect(repaired.status == 0, "\(repaired.stdout)")
        #expect(try await CLI.run(["verify", "--db", db.path]).status == 0)
        #expect(try await CLI.run(["search", "--db", db.path, "ethic", "--format", "jsonl"]).stdout.contains("\"id\":2"))
    }

    @Test func statusAndCleanupReport() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        try db.shell("INSERT INTO notes VALUES (3, 'x', ''); INSERT INTO notes VALUES (4, 'y', '');")
        let status = try JSONSerialization.jsonObject(with: Data(try await CLI.run(["status", "--db", db.path, "--format", "json"]).stdout.utf8)) as! [String: Any]
        for key in ["headToken", "consumers", "documents", "documentsByEntity", "historyTransactions", "historyChanges"] {
            #expect(status[key] != nil, "missing \(key)")
        }
        let consumer = (status["consumers"] as! [[String: Any]])[0]
        #expect(consumer["author"] as? String == "searchlight.indexer")
        #expect(consumer["lag"] as? Int == 2)
        #expect(consumer["expired"] as? Bool == false)
        let dry = try await CLI.run(["cleanup", "--db", db.path, "--dry-run"])
        #expect(dry.stdout.contains("Nothing to delete") && dry.stdout.contains("searchlight.indexer"))
        try await CLI.run(["index", "--db", db.path])
        #expect(try await CLI.run(["cleanup", "--db", db.path]).stdout.contains("Deleted 2 transactions"))
    }

    @Test(arguments: [
        (["search", "--db", "/nonexistent/nothing.sqlite", "x"], "no database"),
        (["search", "--db", "DB", "x", "--entity", "Nope"], "unknown entity"),
        (["search", "--db", "DB", "--raw", "kernel AND ("], "syntax error"),
        (["status", "--db", "NOTDB"], "not an SQLite database"),
        (["init", "--db", "DB", "--model", "BADMODEL"], "invalid model"),
        (["init", "--db", "DB", "--model", "BADTABLE"], "no table named"),
    ])
    func errorsGiveExitOneAndOneLine(arguments: [String], message: String) async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let notDB = db.directory.appendingPathComponent("not.sqlite").path
        try Data(String(repeating: "not a database ", count: 20).utf8).write(to: URL(fileURLWithPath: notDB))
        let badModel = db.directory.appendingPathComponent("bad.json").path
        try Data(#"{"entities": [{"name": "Note", "table": "notes"}]}"#.utf8).write(to: URL(fileURLWithPath: badModel))
        let badTable = db.directory.appendingPathComponent("badtable.json").path
        try Data(#"{"entities": [{"name": "Ghost", "table": "ghosts", "primaryKey": "id"}]}"#.utf8).write(to: URL(fileURLWithPath: badTable))
        let resolved = arguments.map { ["DB": db.path, "NOTDB": notDB, "BADMODEL": badModel, "BADTABLE": badTable][$0] ?? $0 }
        let result = try await CLI.run(resolved)
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack"))
    }

    @Test func usageErrorsExitTwo() async throws {
        #expect(try await CLI.run(["search"]).status == 2)
        #expect(try await CLI.run(["frobnicate"]).status == 2)
        #expect(try await CLI.run(["search", "--db", "x", "q", "--format", "xml"]).status == 2)
        let help = try await CLI.run(["search", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE"))
        #expect(try await CLI.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == SearchlightVersion.current)
    }

    @Test func demoRunsWithNoSetup() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-demo-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CLI.run(["demo", "--db", directory.appendingPathComponent("demo.sqlite").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Indexed 2307 documents"))
        #expect(result.stdout.contains("search searchl*: 0 → 1 matches"))
        #expect(result.stdout.contains("the index equals the source"))
    }
}
