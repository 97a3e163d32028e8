import Foundation
import GRDB
import Testing
import SearchlightTestSupport

/// `searchlight search` as scripts and people use it: CJK text, field filters, zero-hit
/// explanations, and formats.
@Suite struct SearchCommandTests {
    func indexed() async throws -> TestDatabase {
        let (db, model) = try CLI.workspace()
        try db.shell("INSERT INTO notes(id, title, body) VALUES (10, '持久化指南', '本文介绍如何使用CoreData持久化数据。'), (11, 'Panic button', 'press it when the kernel is fine');")
        let result = try await CLI.run(["init", "--db", db.path, "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        return db
    }

    func json(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await CLI.run(arguments + ["--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    @Test func cjkTextAndLatinGluedToItAreFoundWithSnippetsAsWritten() async throws {
        let db = try await indexed()
        for query in ["持久化", "CoreData持久化", "coredata 数据"] {
            let page = try await json(["search", "--db", db.path, query])
            let hits = page["hits"] as! [[String: Any]]
            #expect(hits.map { $0["id"] as? Int } == [10], "\(query)")
        }
        let hit = (try await json(["search", "--db", db.path, "数据"])["hits"] as! [[String: Any]])[0]
        #expect((hit["snippet"] as! String).contains("CoreData持久化[数据]"), "\(hit)")
    }

    /// Found by the outsider of stop 41: the table's padding counted UTF-16 units while the widths
    /// counted characters, and cut a title of emoji in two (`🙂,🙂,�`).
    @Test func aTitleOfEmojiIsPrintedWhole() async throws {
        let (db, model) = try CLI.workspace()
        try db.shell("INSERT INTO notes(id, title, body) VALUES (901, '🙂,🙂,🙂,🙂', 'xylophone'), (902, '👍🏽 family 👨‍👩‍👧‍👦 done', 'xylophone');")
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        let result = try await CLI.run(["search", "--db", db.path, "xylophone"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("🙂,🙂,🙂,🙂") && result.stdout.contains("👍🏽 family 👨‍👩‍👧‍👦 done") && !result.stdout.contains("\u{FFFD}"), "\(result.stdout)")
    }

    /// `search`, `suggest` and `history` only read: while the app holds its write lock they
    /// answer at once (they used to wait 10 s and fail "database is locked"), and they change
    /// nothing in the database (they used to bump its schema version on every run).
    @Test func readingCommandsNeitherWaitForTheAppNorChangeTheDatabase() async throws {
        let db = try await indexed()
        let before = try db.shell("PRAGMA schema_version")
        for _ in 0..<2 { #expect(try await CLI.run(["search", "--db", db.path, "kernel"]).status == 0) }
        #expect(try db.shell("PRAGMA schema_version") == before)
        // The app's connection holds the write lock while the commands run.
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let app = try DatabaseQueue(path: db.path, configuration: configuration)
        try app.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE; INSERT INTO notes(id, title) VALUES (12, 'kernel of truth')") }
        for arguments in [["search", "--db", db.path, "kernel"], ["suggest", "--db", db.path, "ker"], ["history", "--db", db.path, "--limit", "1"]] {
            let result = try await CLI.run(arguments)
            #expect(result.status == 0 && !result.stderr.contains("locked"), "\(arguments[0]): \(result.stderr)")
        }
        try app.inDatabase { try $0.execute(sql: "COMMIT") }
        try app.close()
        #expect(try db.shell("SELECT count(*) FROM notes WHERE id = 12") == "1\n")
        #expect(try db.shell("PRAGMA schema_version") == before)
    }

    static var canSwitchUsers: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") && getpwnam("nobody") != nil && getpwnam("daemon") != nil
    }

    /// An outsider's finding: a search by a user who cannot write the database, in a folder
    /// anyone may write, made SQLite create the -wal and -shm files as that user, and from then
    /// on the database's owner could not write it. It is refused, and leaves nothing.
    @Test(.enabled(if: Self.canSwitchUsers, "needs root, runuser and the users nobody and daemon"))
    func aSearchByAUserWhoCannotWriteLeavesNothingThatStopsTheOwner() async throws {
        let db = try await indexed()
        chmod(db.directory.path, 0o1777)
        #expect(chown(db.path, getpwnam("daemon")!.pointee.pw_uid, getpwnam("daemon")!.pointee.pw_gid) == 0)
        chmod(db.path, 0o644)
        try #require(!FileManager.default.fileExists(atPath: db.path + "-shm"), "nobody has the database open")
        let search = try await CLI.run(["-u", "nobody", "--", CLI.binary.path, "search", "--db", db.path, "kernel"],
                                       executable: URL(fileURLWithPath: "/usr/sbin/runuser"))
        #expect(search.status == 1 && search.stderrLines.count == 1 && search.stderr.contains("not writable by this user"), "\(search.status) \(search.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db.path + "-shm") && !FileManager.default.fileExists(atPath: db.path + "-wal"))
        // The owner's app still writes.
        let write = try await CLI.run(["-u", "daemon", "--", "/usr/bin/sqlite3", db.path, "INSERT INTO notes(id, title) VALUES (13, 'still writable')"],
                                      executable: URL(fileURLWithPath: "/usr/sbin/runuser"))
        #expect(write.status == 0, "\(write.stderr)")
    }

    @Test func fieldFiltersInUserText() async throws {
        let db = try await indexed()
        #expect(((try await json(["search", "--db", db.path, "title:panic"]))["hits"] as! [[String: Any]]).compactMap { $0["id"] as? Int }.sorted() == [1, 11])
        #expect(((try await json(["search", "--db", db.path, "body:panic"]))["total"] as? Int) == 0)
        #expect(((try await json(["search", "--db", db.path, "body:kernel"]))["hits"] as! [[String: Any]]).compactMap { $0["id"] as? Int } == [11])
    }

    /// `--` ends the options, as a shell user types it before a query that starts with `-`:
    /// it is no word of the query, nor of its "did you mean" (an outsider's finding).
    @Test func aDoubleDashEndsTheOptionsAndIsNoWordOfTheQuery() async throws {
        let db = try await indexed()
        let plain = try await CLI.run(["search", "--db", db.path, "kernal", "--typos", "off"])
        let dashed = try await CLI.run(["search", "--db", db.path, "--typos", "off", "--", "kernal"])
        #expect(dashed.status == 0 && dashed.stdout == plain.stdout, "\(dashed.stdout)")
        #expect(dashed.stdout.contains(#"did you mean "kernel"?"#) && !dashed.stdout.contains("--"), "\(dashed.stdout)")
        let excluded = try await CLI.run(["search", "--db", db.path, "--format", "json", "--", "kernel", "-halted"])
        let written = try await CLI.run(["search", "--db", db.path, "--format", "json", "kernel", "-halted"])
        #expect(excluded.status == 0 && excluded.stdout == written.stdout && written.stdout.contains("\"total\""), "\(excluded.stdout)")
        let empty = try await CLI.run(["search", "--db", db.path, "--"])
        #expect(empty.status != 0 && empty.stderr.contains("Missing expected argument"), "\(empty.stderr)")
        // Nor of a suggestion's text (an outsider's finding: `-- ker` suggested `-- kernel`).
        let suggested = try await CLI.run(["suggest", "--db", db.path, "--format", "json", "--", "linux", "ker"])
        #expect(suggested.status == 0 && suggested.stdout.contains(#""text" : "linux kernel""#), "\(suggested.stdout)\(suggested.stderr)")
        let mistyped = try await CLI.run(["search", "--db", db.path, "--facets", "tag", "kernel"])
        #expect(mistyped.status != 0 && mistyped.stderr.contains("Unknown option '--facets'"), "\(mistyped.stderr)")
    }

    @Test func zeroHitQueriesSayWhyInTheTableAndInJSON() async throws {
        let db = try await indexed()
        let table = try await CLI.run(["search", "--db", db.path, "kernal", "--typos", "off"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("0 of 0 matches"))
        #expect(table.stdout.contains(#"no match; did you mean "kernel"?"#), "\(table.stdout)")
        let operators = try await CLI.run(["search", "--db", db.path, "OR"])
        #expect(operators.stdout.contains("in capitals are operators"), "\(operators.stdout)")
        let negative = try await CLI.run(["search", "--db", db.path, "kernel", "--limit", "-1"])
        #expect(negative.status == 2 && negative.stderr.contains("--limit must not be negative"), "\(negative.stderr)")
        let symbols = try await CLI.run(["search", "--db", db.path, "©"])
        #expect(symbols.stdout.contains("nothing to search for"), "\(symbols.stdout)")
        let page = try await json(["search", "--db", db.path, "kernal", "--typos", "off"])
        let explanation = try #require(page["explanation"] as? [String: Any])
        #expect(explanation["reason"] as? String == "noMatch")
        #expect(explanation["suggestions"] as? [String] == ["kernel"])
        #expect(try await json(["search", "--db", db.path, "kernel"])["explanation"] is NSNull, "null when something matched")
    }

    @Test func sortByAColumnNewestFirstOrAscending() async throws {
        let db = try await indexed()
        try db.shell("ALTER TABLE notes ADD COLUMN updated_at TEXT; UPDATE notes SET updated_at = '2026-0' || id || '-01' WHERE id < 10; UPDATE notes SET updated_at = '2026-12-31' WHERE id = 11;")
        func ids(_ extra: [String]) async throws -> [Int] {
            (try await json(["search", "--db", db.path, "kernel OR panic OR hacker"] + extra)["hits"] as! [[String: Any]]).compactMap { $0["id"] as? Int }
        }
        #expect(try await ids(["--sort", "updated_at"]) == [11, 2, 1])
        #expect(try await ids(["--sort", "updated_at", "--ascending"]) == [1, 2, 11])
        let missing = try await CLI.run(["search", "--db", db.path, "kernel", "--sort", "nope"])
        #expect(missing.status == 1 && missing.stderr.contains("has no such column"), "\(missing.stderr)")
        #expect(try await CLI.run(["search", "--db", db.path, "kernel", "--ascending"]).status == 2)
    }

    @Test func helpListsExactlyTheFormatsSearchAccepts() async throws {
        let help = try await CLI.run(["search", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let option = try #require(help.range(of: "--format <format> Output format."))
        let line = try #require(help.range(of: #"\(values: [^)]*\)"#, options: .regularExpression, range: option.upperBound..<help.endIndex).map { String(help[$0]) })
        let listed = line.dropFirst("(values: ".count).split(separator: ";")[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(listed == ["table", "json", "jsonl", "csv"], "\(line)")
        let db = try await indexed()
        for format in listed { #expect(try await CLI.run(["search", "--db", db.path, "kernel", "--format", format]).status == 0, "\(format)") }
        let refused = try await CLI.run(["search", "--db", db.path, "kernel", "--format", "text"])
        #expect(refused.status != 0 && refused.stderr.contains("'text' is invalid"), "\(refused.stderr)")
    }

    @Test func initRefusesATokenizerThisSQLiteCannotCreateAndChangesNothing() async throws {
        let (db, _) = try CLI.workspace()
        let model = db.directory.appendingPathComponent("trigram.model.json")
        try Data(#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}]}], "tokenizer": "trigram remove_diacritics 1"}"#.utf8).write(to: model)
        let before = try db.schemaSnapshot()
        let result = try await CLI.run(["init", "--db", db.path, "--model", model.path])
        let version = try db.shell("SELECT sqlite_version();").trimmingCharacters(in: .whitespacesAndNewlines)
        if version.split(separator: ".").compactMap({ Int($0) }).lexicographicallyPrecedes([3, 45]) {
            #expect(result.status != 0)
            #expect(result.stderr.contains("needs SQLite 3.45.0 or later"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(try db.schemaSnapshot() == before)
        } else {
            #expect(result.status == 0, "SQLite \(version) has the option: \(result.stderr)")
        }
    }
}
