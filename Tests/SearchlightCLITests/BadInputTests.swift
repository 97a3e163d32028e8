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

    @Test func randomBytesAndInvalidUTF8QueriesNeverCrashTheCLI() async throws {
        let (db, model) = try CLI.workspace()
        try await CLI.run(["init", "--db", db.path, "--model", model])
        let (seed, random) = seededGenerator("randomBytesAndInvalidUTF8QueriesNeverCrashTheCLI")
        var generator = random
        // Queries as raw bytes through the shell: invalid UTF-8, controls, FTS5 operators, length.
        var queries: [String] = [#"\377\376"#, #"\300\200"#, #"\355\240\200"#, #"kern\377el"#, #"\"\"\"\\"#, #"\001\002\033[31m"#,
                                 String(repeating: "OR AND NOT ( ) * ^ : ", count: 2_000), String(repeating: "x", count: 100_000)]
        for _ in 0..<24 {
            queries.append((0..<Int.random(in: 1...40, using: &generator)).map { _ in
                String(format: "\\%03o", Int.random(in: 1...255, using: &generator))
            }.joined())
        }
        for query in queries {
            for raw in [false, true] {
                let script = "exec \"$0\" search --db \"$1\" \(raw ? "--raw " : "")\"$(printf \"$2\")\""
                let result = try await CLI.finish(CLI.start(["-c", script, CLI.binary.path, db.path, query], executable: URL(fileURLWithPath: "/bin/sh")))
                if raw {
                    // Raw syntax may be refused, cleanly.
                    #expect(result.status == 0 || (result.status == 1 && result.stderrLines.count == 1), "\(query.prefix(40)): \(result.status) \(result.stderr.prefix(200)) (seed \(seed))")
                } else {
                    #expect(result.status == 0, "the default mode never fails: \(query.prefix(40)) → \(result.stderr.prefix(200)) (seed \(seed))")
                }
            }
        }
    }
}
