import Foundation
import Testing
import SearchlightTestSupport

/// `watch --dbs GLOB`: one process follows every matching database; files that appear are picked
/// up, removed ones dropped; a garbage file gets one log line and does not stop the others; the
/// `sqlite3` shell is the writer and `search` the oracle.
@Suite struct FleetCommandTests {
    static let schema = "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);"

    /// A folder for the fleet, and the model file beside it.
    static func fleet() throws -> (directory: String, model: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tenants"), withIntermediateDirectories: true)
        let model = directory.appendingPathComponent("model.json").path
        try Data(#"{"entities": [{"name": "Note", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}, {"column": "body"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: model))
        return (directory.path, model)
    }

    static func sqlite(_ path: String, _ sql: String) async throws {
        let result = await Subprocess.start(["sqlite3", "-cmd", ".timeout 20000", path, sql], executable: URL(fileURLWithPath: "/usr/bin/env")).result()
        #expect(result.status == 0, "\(result.stderr)")
    }

    static func tenant(_ directory: String, _ name: String, model: String) async throws -> String {
        let path = directory + "/tenants/" + name
        try await sqlite(path, schema)
        let result = try await CLI.run(["init", "--db", path, "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        return path
    }

    /// Waits (bounded) until a search of `path` finds `word`: the fleet indexed it.
    static func indexed(_ path: String, _ word: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            let result = try await CLI.run(["search", "--db", path, word, "--format", "jsonl"])
            if result.status == 0, result.stdout.contains(word) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test func oneProcessFollowsAFleetAsItChanges() async throws {
        let (directory, model) = try Self.fleet()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var tenants: [String] = []
        for index in 1...3 { tenants.append(try await Self.tenant(directory, "t\(index).sqlite", model: model)) }
        let garbage = directory + "/tenants/garbage.sqlite"
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: garbage))
        try Data("ignored".utf8).write(to: URL(fileURLWithPath: directory + "/tenants/notes.txt"))

        let watch = CLI.start(["watch", "--dbs", directory + "/tenants/*.sqlite", "--concurrency", "2"])
        defer { if watch.process.isRunning { watch.process.terminate() } }
        #expect(await watch.waitUntil(stderrContains: "following 4 databases"), "\(watch.stderr)")
        #expect(await watch.waitUntil(stderrContains: "garbage.sqlite: "), "\(watch.stderr)")

        // Writes to every tenant, by the sqlite3 shell, are indexed.
        for (index, tenant) in tenants.enumerated() {
            try await Self.sqlite(tenant, "INSERT INTO notes(title) VALUES ('tenantword\(index)')")
        }
        for (index, tenant) in tenants.enumerated() {
            #expect(try await Self.indexed(tenant, "tenantword\(index)"), "\(watch.stderr)")
        }

        // A tenant that appears is picked up, its backlog and later writes indexed.
        let late = try await Self.tenant(directory, "t4.sqlite", model: model)
        try await Self.sqlite(late, "INSERT INTO notes(title) VALUES ('latecomer')")
        #expect(try await Self.indexed(late, "latecomer"), "\(watch.stderr)")

        // A removed tenant is dropped; the others go on.
        try FileManager.default.removeItem(atPath: tenants[2])
        #expect(await watch.waitUntil(stderrContains: "1 gone"), "\(watch.stderr)")
        try await Self.sqlite(tenants[0], "INSERT INTO notes(title) VALUES ('aftertheremoval')")
        #expect(try await Self.indexed(tenants[0], "aftertheremoval"), "\(watch.stderr)")

        // The garbage file said so once, however often it was tried; replaced by a database set
        // up elsewhere (moved in), it works.
        let fixed = directory + "/fixed.sqlite"
        try await Self.sqlite(fixed, Self.schema + "INSERT INTO notes(title) VALUES ('repaired');")
        #expect(try await CLI.run(["init", "--db", fixed, "--model", model]).status == 0)
        try FileManager.default.removeItem(atPath: garbage)
        try FileManager.default.moveItem(atPath: fixed, toPath: garbage)
        #expect(try await Self.indexed(garbage, "repaired"), "\(watch.stderr)")
        let garbageLines = watch.stderr.split(separator: "\n").filter { $0.contains("garbage.sqlite: ") && $0.contains("error") }
        #expect(garbageLines.count == 1, "\(garbageLines)")

        watch.process.terminate() // SIGTERM
        let result = try await CLI.finish(watch)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(arguments: [
        (["--dbs", "x*/a.sqlite"], 1, "wildcards may appear in the file name only"),
        (["--dbs", "/nonexistent-folder-for-searchlight/*.sqlite"], 1, "cannot read the folder"),
        (["--dbs", "a/*.sqlite", "--db", "b.sqlite"], 2, "either --db or --dbs"),
        (["--dbs", "some/"], 1, "names a folder"),
        (["--dbs", "a/*.sqlite", "--concurrency", "1000000"], 2, "--concurrency must be from 1 to 256"),
        // A negative number is a value, not an option: the range is told, not "missing value".
        (["--dbs", "a/*.sqlite", "--concurrency", "-1"], 2, "--concurrency must be from 1 to 256"),
    ])
    func badFleetArgumentsAreToldInOneLine(arguments: [String], status: Int32, message: String) async throws {
        let result = try await CLI.run(["watch"] + arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains(message), "\(result.stderr)")
    }
}
