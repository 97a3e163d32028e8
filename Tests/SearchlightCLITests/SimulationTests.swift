import Foundation
import GRDB
import Searchlight
import SearchlightHistory
import SearchlightTestSupport
import Testing

/// The randomized, seeded, multi-process simulation (in the manner of Jepsen and
/// of FoundationDB's simulation testing): writer processes hammer four tables (INTEGER, NOCASE
/// TEXT, BLOB and REAL keys, one WITHOUT ROWID; two with a UNIQUE title, which a REPLACE
/// taking another row's title displaces) with every kind of write, while the driver, at
/// random moments, migrates the schema (GRDB `DatabaseMigrator` remakes, `RENAME TO`,
/// `RENAME COLUMN`, `ADD`/`DROP COLUMN`, `DROP TABLE`, tables created again), installs changed
/// models, and runs `index`, `watch`, `reindex`, `verify --repair`, `cleanup` (by hand, and an
/// app's `HistoryCleaner` with each strategy) and a third-party consumer, killing any of them with
/// SIGKILL at random instants. At the end, independent oracles:
/// - the writers' logs: every write they committed through `HistoryStore.write` is in history,
///   or was cleaned up, or a capture gap after it was recorded;
/// - a plain FTS5 table built from the final source rows: for every word ever written,
///   Searchlight's matches equal the oracle's (live rows found, deleted or overwritten text never);
/// - `verify` is clean;
/// - the consumer exported every change still in history exactly once, or resynchronized after
///   it; and it was only ever told that history expired if a maximum duration allowed it.
///
/// `SEARCHLIGHT_SEED` replays a run's choices; `SEARCHLIGHT_SIM_SECONDS` sets its length (the
/// reduced form in `swift test` runs 40 s; the long form is in the README).
@Suite(.serialized) struct SimulationTests {
    static let schema = """
        CREATE TABLE notes(k INTEGER PRIMARY KEY, title TEXT UNIQUE, body TEXT, extra TEXT);
        CREATE TABLE tags(k TEXT PRIMARY KEY COLLATE NOCASE, title TEXT, body TEXT, extra TEXT);
        CREATE TABLE blobs(k BLOB PRIMARY KEY NOT NULL, title TEXT UNIQUE, body TEXT, extra TEXT) WITHOUT ROWID;
        CREATE TABLE reals(k REAL PRIMARY KEY, title TEXT, body TEXT, extra TEXT);
        """
    static let tables = ["notes", "tags", "blobs", "reals"]

    /// The `vocabularyDifferences` of `verify --format json` output, if not null.
    static func vocabularyDifferences(_ json: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        return object["vocabularyDifferences"] as? String
    }
    /// The definition of each table (for remakes and re-creations).
    static let definitions: [String: String] = [
        "notes": "(k INTEGER PRIMARY KEY, title TEXT UNIQUE, body TEXT, extra TEXT)",
        "tags": "(k TEXT PRIMARY KEY COLLATE NOCASE, title TEXT, body TEXT, extra TEXT)",
        "blobs": "(k BLOB PRIMARY KEY NOT NULL, title TEXT UNIQUE, body TEXT, extra TEXT) WITHOUT ROWID",
        "reals": "(k REAL PRIMARY KEY, title TEXT, body TEXT, extra TEXT)",
    ]

    static func model(bodyWeight: Int, maximumDuration: Bool) -> String {
        let entities = SimulationTests.tables.map { table in
            """
            {"name": "\(table.capitalized)", "table": "\(table)", "primaryKey": "k",
             "fields": [{"column": "title", "role": "title"}, {"column": "body", "weight": \(bodyWeight)}], "preserveOnDelete": ["title"]}
            """
        }
        let history = maximumDuration ? #", "history": {"maximumDurationSeconds": 1}"# : ""
        return #"{"entities": [\#(entities.joined(separator: ", "))]\#(history)}"#
    }

    final class Run {
        let db: TestDatabase
        var random: SplitMix
        var trace: [String] = []
        var background: [String: CLI.Running] = [:]
        var migration = 0
        var maximumDurationInstalled = false
        let started = Date()

        init(seed: UInt64) throws {
            db = try TestDatabase(schema: SimulationTests.schema)
            random = SplitMix(seed: seed)
        }

        var directory: String { db.directory.path }

        func log(_ line: String) {
            let entry = String(format: "%6.1fs ", Date().timeIntervalSince(started)) + line
            trace.append(entry)
        }

        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func pause(_ range: ClosedRange<UInt32>) async {
            try? await Task.sleep(for: .microseconds(UInt64(range.lowerBound) + random.next() % UInt64(range.upperBound - range.lowerBound + 1)))
        }

        /// Runs `body` in a synchronous context, where GRDB's blocking API is the one called (a short
        /// write of the host app, not a wait).
        func blocking<T>(_ body: () throws -> T) rethrows -> T { try body() }

        /// Runs a command to the end, or kills it with SIGKILL after a random delay.
        func command(_ arguments: [String], killable: Bool = true, executable: URL = CLI.binary) async throws {
            let running = CLI.start(arguments + (executable == CLI.binary ? ["--log-level", "error"] : []), executable: executable)
            var killed = false
            if killable && chance(35) {
                await pause(5_000...400_000)
                if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL); killed = true }
            }
            let result = try await CLI.finish(running)
            log("\(arguments.prefix(1).joined()) \(arguments.dropFirst(3).joined(separator: " ")) → \(killed ? "killed" : "exit \(result.status)")\(result.status != 0 && !killed ? ": " + result.stderr.prefix(300) : "")")
        }

        func toggleBackground(_ name: String, _ arguments: [String], executable: URL = CLI.binary) async {
            if let running = background[name] {
                kill(running.process.processIdentifier, SIGKILL)
                _ = try? await CLI.finish(running)
                background[name] = nil
                log("\(name) killed")
            } else {
                background[name] = CLI.start(arguments + (executable == CLI.binary ? ["--log-level", "error"] : []), executable: executable)
                log("\(name) started")
            }
        }

        /// One migration of the host app, on a random table, with the tools apps use.
        func migrate() async throws {
            migration += 1
            let table = pick(SimulationTests.tables)
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: db.path, configuration: configuration)
            defer { try? queue.close() }
            let kind = random.next() % 6
            switch kind {
            case 0, 1:
                // GRDB's DatabaseMigrator, remaking the table as GRDB documents; the copy also
                // changes rows (what changes while triggers are missing must still be reconciled).
                let drops = random.next() % 4
                var migrator = DatabaseMigrator()
                migrator.registerMigration("remake \(migration)") { db in
                    try db.execute(sql: "CREATE TABLE \"new_\(table)\" \(SimulationTests.definitions[table]!)")
                    try db.execute(sql: """
                        INSERT INTO "new_\(table)"(k, title, body, extra)
                        SELECT k, CASE WHEN length(title) % 3 = 0 THEN title || ' remade' ELSE title END, body, extra FROM "\(table)" WHERE length(coalesce(title, '')) % 4 <> \(drops)
                        """)
                    try db.drop(table: table)
                    try db.rename(table: "new_\(table)", to: table)
                }
                try blocking { try migrator.migrate(queue) }
                log("migrate: remake \(table) with DatabaseMigrator")
            case 2:
                try blocking { try queue.write { try $0.execute(sql: "ALTER TABLE \"\(table)\" RENAME TO \"\(table)_renamed\"") } }
                await pause(0...200_000)
                try blocking { try queue.write { try $0.execute(sql: "ALTER TABLE \"\(table)_renamed\" RENAME TO \"\(table)\"") } }
                log("migrate: rename \(table) away and back")
            case 3:
                try blocking { try queue.write { try $0.execute(sql: "ALTER TABLE \"\(table)\" RENAME COLUMN body TO body_renamed") } }
                await pause(0...200_000)
                try blocking { try queue.write { try $0.execute(sql: "ALTER TABLE \"\(table)\" RENAME COLUMN body_renamed TO body") } }
                log("migrate: rename column \(table).body away and back")
            case 4:
                try blocking { try queue.write { db in
                    try db.execute(sql: "ALTER TABLE \"\(table)\" ADD COLUMN added TEXT")
                    try db.execute(sql: "ALTER TABLE \"\(table)\" DROP COLUMN extra")
                } }
                try blocking { try queue.write { db in
                    try db.execute(sql: "ALTER TABLE \"\(table)\" ADD COLUMN extra TEXT")
                    try db.execute(sql: "ALTER TABLE \"\(table)\" DROP COLUMN added")
                } }
                log("migrate: add and drop columns of \(table)")
            default:
                try blocking { try queue.write { try $0.execute(sql: "DROP TABLE \"\(table)\"") } }
                await pause(0...300_000)
                try blocking { try queue.write { try $0.execute(sql: "CREATE TABLE \"\(table)\" \(SimulationTests.definitions[table]!)") } }
                log("migrate: drop \(table), create it again")
            }
        }

        func initModel() async throws {
            let maximumDuration = chance(20)
            maximumDurationInstalled = maximumDurationInstalled || maximumDuration
            let path = directory + "/model-\(migration)-\(trace.count).json"
            try Data(SimulationTests.model(bodyWeight: chance(50) ? 1 : 2, maximumDuration: maximumDuration).utf8).write(to: URL(fileURLWithPath: path))
            try await command(["init", "--db", db.path, "--model", path], killable: false)
        }
    }

    static var simulationSeconds: Double {
        Double(ProcessInfo.processInfo.environment["SEARCHLIGHT_SIM_SECONDS"] ?? "") ?? 40
    }

    @Test func nothingIsLostUnderRandomConcurrentWritesMigrationsAndKills() async throws {
        let (seed, _) = seededGenerator("nothingIsLostUnderRandomConcurrentWritesMigrationsAndKills")
        let run = try Run(seed: seed)
        run.log("started at \(Date())")
        let seconds = Self.simulationSeconds
        let path = run.db.path
        let modelPath = run.directory + "/model.json"
        try Data(Self.model(bodyWeight: 1, maximumDuration: false).utf8).write(to: URL(fileURLWithPath: modelPath))
        #expect(try await CLI.run(["init", "--db", path, "--model", modelPath]).status == 0)
        try await ReliabilityTests.stress(["export", "--db", path]).finish()

        // Writers run for the whole simulation, each with its own seed.
        let logs = (1...2).map { run.directory + "/writer-\($0).log" }
        let writers = (1...2).map { index in
            ReliabilityTests.stress(["mutate", "--db", path, "--log", logs[index - 1], "--seconds", "\(seconds)",
                                     "--writer", "\(index)", "--seed", "\(seed &+ UInt64(index))"])
        }
        let deadline = Date().addingTimeInterval(seconds)
        var midRunFailures: [String] = []
        while Date() < deadline {
            switch run.random.next() % 100 {
            case 0..<22: try await run.migrate()
            case 22..<30: try await run.initModel()
            case 30..<42: try await run.command(["index", "--db", path])
            case 42..<48: try await run.command(["reindex", "--db", path])
            case 48..<51: try await run.command(["verify", "--db", path, "--repair"])
            case 51..<54:
                // Mid-run, with writers going: verify catches up first, and skips objects with
                // history after its checkpoint; anything else that differs is a lost change.
                let verify = try await CLI.run(["verify", "--db", path, "--format", "json", "--log-level", "error"])
                run.log("verify → exit \(verify.status)")
                if verify.status != 0 { midRunFailures.append("verify at \(run.trace.last ?? ""): \(verify.stdout.prefix(1_000)) \(verify.stderr.prefix(300))") }
                if let differences = SimulationTests.vocabularyDifferences(verify.stdout) {
                    midRunFailures.append("verify at \(run.trace.last ?? ""): the vocabulary differs from FTS5's counts: \(differences)")
                    if let keep = ProcessInfo.processInfo.environment["SEARCHLIGHT_SIM_KEEP"] {
                        _ = try? Shell.sqlite3(path, "VACUUM INTO '\(keep)/drift-\(seed)-\(midRunFailures.count).sqlite'")
                        try? run.trace.joined(separator: "\n").write(toFile: "\(keep)/drift-\(seed)-\(midRunFailures.count).trace", atomically: true, encoding: .utf8)
                    }
                }
            case 54..<64: try await run.command(["cleanup", "--db", path])
            case 64..<76: try await run.command(["export", "--db", path], executable: ReliabilityTests.stress)
            case 76..<84: await run.toggleBackground("watch", ["watch", "--db", path])
            case 84..<88: await run.toggleBackground("watch-2", ["watch", "--db", path])
            case 88..<92:
                // Automatic cleanup, as an app runs it (HistoryCleaner with a strategy).
                await run.toggleBackground("cleaner", ["clean", "--db", path, "--strategy", run.pick(["duration", "notification"])],
                                     executable: ReliabilityTests.stress)
            default: await run.pause(50_000...300_000)
            }
        }
        // Writers stop at the deadline; then the background processes are killed.
        var writerOutput: [String] = []
        for writer in writers {
            let result = try await CLI.finish(writer)
            writerOutput.append(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            if result.status != 0 { midRunFailures.append("a writer met a busy or locked database: \(result.stderr.prefix(500))") }
        }
        for name in Array(run.background.keys) { await run.toggleBackground(name, []) }
        run.log("writers: \(writerOutput.joined(separator: "; "))")

        // Catch up, as any restart would.
        let index = try await CLI.run(["index", "--db", path, "--log-level", "error"])
        #expect(index.status == 0, "\(index.stderr)")
        try await ReliabilityTests.stress(["export", "--db", path]).finish()

        var failures = midRunFailures
        // Oracle 1: verify.
        let verify = try await CLI.run(["verify", "--db", path, "--format", "json"])
        if verify.status != 0 { failures.append("verify: \(verify.stdout.prefix(1_500)) \(verify.stderr.prefix(500))") }
        if let differences = SimulationTests.vocabularyDifferences(verify.stdout) {
            failures.append("verify: the vocabulary differs from FTS5's counts: \(differences)")
        }

        let store = try HistoryStore(path: path)
        let status = try store.healCapture()
        if !status.notCapturing.isEmpty { failures.append("entities not captured at the end: \(status.notCapturing)") }
        let words = try logs.flatMap { try String(contentsOfFile: $0, encoding: .utf8).split(separator: "\n") }
        // Oracle 2: a plain FTS5 table of the final rows; every word written matches the same rows.
        let oracle = try DatabaseQueue()
        try run.blocking { try oracle.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE oracle USING fts5(entity UNINDEXED, k UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2')")
        } }
        try run.blocking { try store.dbPool.read { source in
            for table in SimulationTests.tables {
                let rows = try Row.fetchAll(source, sql: "SELECT k, title, body FROM \"\(table)\" WHERE k IS NOT NULL")
                try oracle.write { db in
                    for row in rows {
                        try db.execute(sql: "INSERT INTO oracle VALUES (?, ?, ?, ?)",
                                       arguments: [table.capitalized, row["k"] as DatabaseValue, row["title"] as DatabaseValue, row["body"] as DatabaseValue])
                    }
                }
            }
        } }
        let search = SearchIndex(store: store)
        var checkedWords = 0, liveWords = 0
        for line in words where line.hasPrefix("word ") {
            let word = String(line.dropFirst(5))
            let expected = try run.blocking { try oracle.read { db in
                try Row.fetchAll(db, sql: "SELECT entity, k FROM oracle WHERE oracle MATCH ?", arguments: ["\"\(word)\""]).map { row in
                    "\(row["entity"] as String) \(ObjectID.fromDatabaseValue(row["k"]).map { "\($0)" } ?? "?")"
                }
            } }
            let found = try search.search(word, limit: nil, typos: .off).hits.map { "\($0.entity) \($0.objectID)" }
            checkedWords += 1
            if !expected.isEmpty { liveWords += 1 }
            if Set(found) != Set(expected) || found.count != expected.count {
                failures.append("search \(word): found \(found.sorted()), the oracle \(expected.sorted())")
            }
        }

        // Oracle 3 and 4: the consumer exported every change exactly once, and every write the
        // writers committed through `HistoryStore.write` reached it, or it resynchronized after
        // (history cleaned up is no excuse: cleanup waits for the consumer, which is required).
        let transactions = try store.fetchTransactions(.all)
        let gaps = transactions.filter { $0.contextName == "searchlight.capture-interrupted" }.map(\.token.rawValue)
        let exported = try run.blocking { try store.dbPool.read { db in
            (try Row.fetchAll(db, sql: "SELECT change_id, count(*) AS n FROM export_log WHERE change_id IS NOT NULL GROUP BY change_id HAVING n > 1").count,
             Set(try Int64.fetchAll(db, sql: "SELECT change_id FROM export_log WHERE change_id IS NOT NULL")),
             Set(try Int64.fetchAll(db, sql: "SELECT DISTINCT token FROM export_log WHERE change_id IS NOT NULL")),
             try Row.fetchAll(db, sql: "SELECT token, type FROM export_log WHERE type LIKE 'resync%'").map { ($0["token"] as Int64, $0["type"] as String) })
        } }
        if exported.0 > 0 { failures.append("\(exported.0) changes were exported more than once") }
        let resyncs = exported.3.filter { $0.1 != "resync noCheckpoint" }.map(\.0)
        var checkedTokens = 0
        for line in words where line.hasPrefix("token ") {
            guard let token = Int64(line.dropFirst(6)) else { continue }
            checkedTokens += 1
            if exported.2.contains(token) || resyncs.contains(where: { $0 >= token }) { continue }
            failures.append("a committed write (token \(token)) never reached the consumer, which never resynchronized after it")
        }
        let lastResync = exported.3.map(\.0).max() ?? 0
        let missed = transactions.flatMap(\.changes).filter { $0.token.rawValue > lastResync && !exported.1.contains($0.changeID) }
        if !missed.isEmpty { failures.append("\(missed.count) changes after the last resync were never exported, e.g. \(missed.prefix(3).map { "\($0.token) \($0.type) \($0.entity) \($0.objectID)" })") }
        // Oracle 5: cleanup expired the consumer only if a maximum duration allowed it.
        let expiries = exported.3.filter { $0.1 == "resync historyExpired" }
        if !expiries.isEmpty && !run.maximumDurationInstalled {
            failures.append("cleanup deleted history the consumer had not processed (\(expiries.count) expiries, no maximum duration)")
        }

        run.log("checked \(checkedWords) words (\(liveWords) live), \(checkedTokens) writer tokens, \(transactions.count) transactions, \(gaps.count) capture gaps, \(exported.3.count) resyncs")
        if ProcessInfo.processInfo.environment["SEARCHLIGHT_SIM_TRACE"] != nil { print(run.trace.joined(separator: "\n")) }
        print("seed \(seed): " + run.trace.suffix(3).joined(separator: " | "))
        if !failures.isEmpty, let keep = ProcessInfo.processInfo.environment["SEARCHLIGHT_SIM_KEEP"] {
            // The database and the writers' logs, for a post-mortem.
            try? FileManager.default.copyItem(atPath: run.directory, toPath: keep + "/simulation-\(seed)")
        }
        if !failures.isEmpty {
            print("SIMULATION FAILED with seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays its choices). Trace:\n" + run.trace.joined(separator: "\n"))
            for failure in failures.prefix(20) { Issue.record("\(failure)") }
        }
        #expect(failures.isEmpty, "seed \(seed): \(failures.count) failures")
        #expect(checkedWords > 100 && liveWords > 10, "the simulation wrote enough to check (\(checkedWords) words, \(liveWords) live)")
    }
}
