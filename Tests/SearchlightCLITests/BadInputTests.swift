import Foundation
import GRDB
import Testing
import SearchlightTestSupport

@Suite struct BadInputTests {
    @Test(arguments: [
        (#"{"entities": ["#, "not valid JSON"),
        (#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": 7}]}"#, "entities[0].primaryKey: expected a string"),
        (#"{"entities": [{"name": "Note", "table": "ghosts", "primaryKey": "id"}]}"#, "no table named \"ghosts\""),
        (#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "titel"}]}]}"#, "\"titel\" is not a column"),
        (#"{"entities": [{"name": "A", "table": "notes", "primaryKey": "id"}, {"name": "A", "table": "other", "primaryKey": "id"}]}"#, "duplicate entity name \"A\""),
        (#"{"entities": [{"name": "Note", "table": "notes"}]}"#, "entities[0].primaryKey is missing"),
        (#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}]}], "tokenizer": "nonesuch"}"#, "tokenizer"),
        (#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id"}], "colour": 1}"#, "unknown key"),
    ])
    func badModelFilesAreRefusedAndInstallNothing(json: String, message: String) async throws {
        let (db, _) = try CLI.workspace()
        try db.shell("CREATE TABLE other(id INTEGER PRIMARY KEY);")
        let before = try db.schemaSnapshot()
        let model = db.directory.appendingPathComponent("bad.json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: model))
        let result = try await CLI.run(["init", "--db", db.path, "--model", model])
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(try db.schemaSnapshot() == before, "nothing may be half-installed")
    }

    /// Regression: a refused command left the file in WAL mode (opening SQLite's pool switches
    /// it): "changes nothing" includes the app's journal mode.
    @Test func refusedCommandsLeaveTheJournalModeAsItWas() async throws {
        let (db, _) = try CLI.workspace()
        func journalMode() throws -> String { try db.shell("PRAGMA journal_mode;").trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(try journalMode() == "delete")
        let missing = db.directory.appendingPathComponent("missing.json").path
        try Data(#"{"entities": [{"name": "Ghost", "table": "ghosts", "primaryKey": "id"}]}"#.utf8).write(to: URL(fileURLWithPath: missing))
        for arguments in [["status"], ["search", "kernel"], ["uninstall", "--yes"], ["init", "--model", missing], ["index"], ["verify"]] {
            let result = try await CLI.run([arguments[0], "--db", db.path] + arguments.dropFirst())
            #expect(result.status == 1 && result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
            #expect(try journalMode() == "delete", "\(arguments) changed the journal mode")
        }
    }

    /// Random bytes, invalid UTF-8 and terminal escapes as queries, plain and raw: the default
    /// mode never fails, raw syntax may be refused with one line that quotes the query escaped
    /// (no `\r`, `\v`, `ESC`, C1 control or line separator reaches the terminal). A fixed set of
    /// seeds (``testSeeds(_:count:)``); `SEARCHLIGHT_RANDOM_SEEDS=K` tries K more.
    static let seeds = testSeeds("randomBytesAndInvalidUTF8QueriesNeverCrashTheCLI", count: 3)

    @Test(arguments: seeds)
    func randomBytesAndInvalidUTF8QueriesNeverCrashTheCLI(seed: UInt64) async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        var generator = SplitMix(seed: seed)
        // Queries as raw bytes through the shell (printf escapes): invalid UTF-8, controls,
        // terminal escapes, FTS5 operators, length.
        var queries: [String] = [#"\377\376"#, #"\300\200"#, #"\355\240\200"#, #"kern\377el"#, #"\"\"\"\\"#, #"\001\002\033[31m"#,
                                 #"\033[31mRED ^ \r\033[2Kgone"#, #"a ^ \013b\034c\035d\036"#, #"x ^ \302\205y\342\200\250z\342\200\256"#]
        if seed == Self.seeds.first {
            queries += [String(repeating: "OR AND NOT ( ) * ^ : ", count: 2_000), String(repeating: "x", count: 100_000)]
        }
        for _ in 0..<10 {
            queries.append((0..<Int.random(in: 1...40, using: &generator)).map { _ in
                String(format: "\\%03o", Int.random(in: 1...255, using: &generator))
            }.joined())
        }
        for query in queries {
            for raw in [false, true] {
                let script = "exec \"$0\" search --db \"$1\" \(raw ? "--raw " : "")\"$(printf \"$2\")\""
                let result = try await CLI.finish(CLI.start(["-c", script, CLI.binary.path, db.path, query], executable: URL(fileURLWithPath: "/bin/sh")))
                if raw {
                    // Raw syntax may be refused, cleanly: one line, nothing that moves the cursor.
                    #expect(result.status == 0 || (result.status == 1 && Self.isOneSafeLine(result.stderr)),
                            "\(query.prefix(40)): \(result.status) \(result.stderr.prefix(200).debugDescription) (seed \(seed))")
                } else {
                    #expect(result.status == 0, "the default mode never fails: \(query.prefix(40)) → \(result.stderr.prefix(200)) (seed \(seed))")
                }
            }
        }
    }

    /// One line ending in `\n`, with no control character (C0, DEL, C1) and no line or
    /// paragraph separator before it.
    static func isOneSafeLine(_ text: String) -> Bool {
        guard text.hasSuffix("\n") else { return false }
        return text.unicodeScalars.dropLast().allSatisfy { scalar in
            !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}")
        }
    }

    /// Errors that quote user text print it escaped: a raw query and an entity name holding a
    /// carriage return and a terminal escape.
    @Test func errorsQuotingUserTextPrintItEscaped() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        for arguments in [["search", "--raw", "kern ^ \r\u{1b}[2Kgone"], ["search", "kernel", "--entity", "No\rte\u{1b}[2K"]] {
            let result = try await CLI.run([arguments[0], "--db", db.path] + arguments.dropFirst())
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(Self.isOneSafeLine(result.stderr), "\(result.stderr.debugDescription)")
            #expect(result.stderr.contains(#"\r"#) && result.stderr.contains(#"\u{1b}[2K"#), "\(result.stderr.debugDescription)")
        }
    }

    /// What an outsider tried: text that starts with dashes, a log level that does not exist,
    /// empty paths, a directory as the model, a path that is not UTF-8. Each gets one line that
    /// says what is wrong (and what is allowed), and nothing is created.
    @Test func badArgumentsAreToldInOneLineThatSaysWhatIsWrong() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let cases: [(arguments: [String], status: Int32, says: String)] = [
            (["search", "--db", db.path, "---flag"], 2, "text that starts with '-' goes after '--'"),
            (["status", "--db", db.path, "--log-level", "bogus"], 2, "trace, debug, info, notice, warning, error, critical"),
            (["init", "--db", db.directory.appendingPathComponent("new.sqlite").path, "--model", ""], 1, "invalid model file path: it is empty"),
            (["init", "--db", db.directory.appendingPathComponent("new.sqlite").path, "--model", db.directory.path], 1, "it is a directory"),
            (["status", "--db", ""], 1, "invalid database path: it is empty"),
            // Negative numbers are values: their range is told, not "missing value".
            (["history", "--db", db.path, "--limit", "-1"], 2, "--limit must not be negative"),
            (["search", "--db", db.path, "kernel", "--facet-limit", "-1"], 2, "--facet-limit must be at least 1"),
        ]
        for (arguments, status, says) in cases {
            let result = try await CLI.run(arguments)
            #expect(result.status == status && result.stderr.contains(says), "\(arguments): \(result.status) \(result.stderr)")
            #expect(Self.isOneSafeLine(result.stderr), "\(result.stderr.debugDescription)")
        }
        #expect(!FileManager.default.fileExists(atPath: db.directory.appendingPathComponent("new.sqlite").path))
        let dashed = try await CLI.run(["search", "--db", db.path, "--", "---flag"])
        #expect(dashed.status == 0, "after '--' the text is a query: \(dashed.stderr)")

        // A file whose name holds a byte that is not UTF-8 (the shell passes it as is).
        let script = #"p="$1/$(printf 'x\377.sqlite')"; cp "$2" "$p" && exec "$3" status --db "$p""#
        let raw = try await CLI.run(["-c", script, "sh", db.directory.path, db.path, CLI.binary.path], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(raw.status == 1 && raw.stderr.contains("is not valid UTF-8"), "\(raw.stderr)")
        #expect(Self.isOneSafeLine(raw.stderr), "\(raw.stderr.debugDescription)")
    }

    /// What a command prints for people (tables, notes, log lines) escapes what could rewrite a
    /// terminal, from the data (a title holding an OSC sequence) or the user (a path holding
    /// `ESC [2K` and `\r`); JSON keeps the data exact.
    @Test func humanOutputAndLogLinesEscapeTerminalControls() async throws {
        let (db, model) = try CLI.workspace()
        let hostile = db.directory.appendingPathComponent("evil\u{1b}[2K\r\u{202e}.sqlite").path
        try FileManager.default.copyItem(atPath: db.path, toPath: hostile)
        #expect(try await CLI.run(["init", "--db", hostile, "--model", model]).status == 0)
        let write = await Subprocess.start(["sqlite3", hostile, "INSERT INTO notes(id, title) VALUES (9, 'evil \u{1b}]0;owned\u{07} title')"],
                                           executable: URL(fileURLWithPath: "/usr/bin/env")).result()
        #expect(write.status == 0, "\(write.stderr)")
        #expect(try await CLI.run(["index", "--db", hostile]).status == 0)

        let table = try await CLI.run(["search", "--db", hostile, "evil"])
        #expect(table.status == 0 && table.stdout.contains("evil"), "\(table.stderr)")
        #expect(Self.isSafe(table.stdout), "\(table.stdout.debugDescription)")
        let json = try await CLI.run(["search", "--db", hostile, "evil", "--format", "jsonl"])
        #expect(json.stdout.contains(#"\u001b]0;owned\u0007"#), "JSON keeps the data, escaped by JSON: \(json.stdout)")

        let uninstall = try await CLI.run(["uninstall", "--db", hostile, "--yes", "--log-level", "info"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.isSafe(uninstall.stdout) && Self.isSafe(uninstall.stderr), "\(uninstall.stdout.debugDescription) \(uninstall.stderr.debugDescription)")
        #expect(uninstall.stdout.contains(#"evil\u{1b}[2K\r\u{202e}.sqlite"#), "\(uninstall.stdout.debugDescription)")
    }

    /// Lines with no control character but the line break, no separator, no bidi control.
    static func isSafe(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            scalar == "\n" || !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
                                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value))
        }
    }
}
