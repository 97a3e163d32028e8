import Foundation
import GRDB
import Logging
import PostgresNIO
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Synchronization
import Testing

/// `sink --dbs` in the library: one process sinks a folder of databases over a bounded pool.
/// Checked against the oracle (plain SQL on both sides), and against PostgreSQL's own count of
/// the fleet's connections (`pg_stat_activity`, for a role only the fleet uses).
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresSinkFleetTests {
    /// A folder of databases, removed at the end.
    final class Folder: Sendable {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-pgfleet-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// A database set up with the notes model and `rows` notes; returns its store.
        func database(_ name: String, rows: Int) throws -> HistoryStore {
            let file = path + "/" + name
            let queue = try DatabaseQueue(path: file)
            try queue.write { try $0.execute(sql: TestDatabase.notesSchema) }
            try queue.close()
            let store = try HistoryStore(path: file, model: TestDatabase.notesModel)
            if rows > 0 {
                try store.write(author: "app") { db in
                    for i in 0..<rows { try db.execute(sql: "INSERT INTO notes(title, body) VALUES (?, ?)", arguments: ["\(name) \(i)", "body \(i)"]) }
                }
            }
            return store
        }

        func remove(_ name: String) {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + "/" + name + suffix) }
        }
    }

    /// A login role of its own for the fleet (so that `pg_stat_activity` counts its connections
    /// alone), and the URL that uses it; dropped with what it owns at the end.
    struct FleetRole {
        let name: String
        /// The fleet's URL (as the role), and the tests' own (the same schema, as the test user).
        let url: String
        let oracleURL: String

        init() async throws {
            name = "sl_fleet_\(UInt32.random(in: 0...UInt32.max))"
            let role = name
            try await PostgresTestServer.withClient { client in
                try await client.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN SUPERUSER"))
            }
            oracleURL = PostgresTestServer.freshURL("fleet")
            var components = URLComponents(string: oracleURL)!
            components.user = name
            components.password = nil
            url = components.string!
        }

        /// The role's connections now (their backends' pids, start times and last statements).
        func connections() async throws -> [String] {
            let role = name
            return try await PostgresTestServer.withClient { client in
                var rows: [String] = []
                for try await (pid, started, query) in try await client.query("""
                    SELECT pid, backend_start::text, left(query, 60) FROM pg_stat_activity WHERE usename = \(role)
                    """).decode((Int32, String, String).self) {
                    rows.append("\(pid) \(started) \(query)")
                }
                return rows
            }
        }

        func drop() async {
            let role = name
            _ = try? await PostgresTestServer.withClient { client in
                try await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \(role)")
                try await client.query(PostgresQuery(unsafeSQL: "DROP OWNED BY \(role) CASCADE"))
                try await client.query(PostgresQuery(unsafeSQL: "DROP ROLE \(role)"))
            }
        }
    }

    /// Waits until PostgreSQL's documents of `store`'s source equal its rows.
    static func waitUntilEqual(_ store: HistoryStore, _ url: String, timeout: Double = 120) async throws -> Bool {
        let source = try store.sourceID(), path = store.databaseWriter.path
        return try await withTimeout(timeout) {
            // Until the first sync, the schema may not be there yet.
            while (try? await SinkOracle.actual(url, source: source)) != (try SinkOracle.expected(path)) {
                try await Task.sleep(for: .milliseconds(50))
            }
            return true
        }
    }

    @Test(.timeLimit(.minutes(10))) func everySourceIsSunkOverAtMostNConnectionsAndBadDatabasesDoNotStopTheOthers() async throws {
        let role = try await FleetRole()
        let folder = try Folder()
        let (seed, generator) = seededGenerator("pg-fleet")
        var random = generator
        print("PostgresSinkFleetTests seed \(seed)")
        var stores: [String: HistoryStore] = [:]
        for name in ["a.sqlite", "b.sqlite", "c.sqlite", "d.sqlite"] { stores[name] = try folder.database(name, rows: Int.random(in: 1...40, using: &random)) }
        // Not set up, and not a database: each gets one line, and the others go on.
        let plain = try DatabaseQueue(path: folder.path + "/plain.sqlite")
        try await plain.write { try $0.execute(sql: TestDatabase.notesSchema) }
        try plain.close()
        FileManager.default.createFile(atPath: folder.path + "/garbage.sqlite", contents: Data((0..<8_192).map { _ in UInt8.random(in: 0...255, using: &random) }))

        let log = CapturedLog()
        var configuration = PostgresSinkFleet.Configuration()
        configuration.connections = 2
        configuration.concurrency = 3
        configuration.logger = log.logger(label: "test.fleet", level: .info)
        configuration.sink.logger = log.logger(label: "test.fleet.sink", level: .info)
        configuration.sink.batchSize = 5
        let fleet = try PostgresSinkFleet(glob: try DatabaseGlob(folder.path + "/*.sqlite"), endpoint: try PostgresEndpoint(url: role.url),
                                          configuration: configuration)
        let running = Task { try await fleet.run() }
        // PostgreSQL's own count of the fleet's connections, sampled all along.
        let peak = Mutex((0, [String]()))
        let sampler = Task {
            while !Task.isCancelled {
                if let rows = try? await role.connections() { peak.withLock { if rows.count > $0.0 { $0 = (rows.count, rows) } } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }

        // Writers write to every database while the fleet catches up.
        let writes = (0..<30).map { _ in (["a.sqlite", "b.sqlite", "c.sqlite", "d.sqlite"].randomElement(using: &random)!, Int.random(in: 0...2, using: &random)) }
        for (name, kind) in writes {
            try await stores[name]!.write(author: "app") { db in
                switch kind {
                case 0: try db.execute(sql: "INSERT INTO notes(title) VALUES ('more')")
                case 1: try db.execute(sql: "UPDATE notes SET body = 'changed ' || id WHERE id % 3 = 0")
                default: try db.execute(sql: "DELETE FROM notes WHERE id = (SELECT min(id) FROM notes)")
                }
            }
        }
        for (name, store) in stores.sorted(by: { $0.key < $1.key }) {
            #expect(try await Self.waitUntilEqual(store, role.oracleURL), "\(name)")
        }

        // A database created mid-run is picked up (it may be seen before it is set up: retried).
        let late = try folder.database("late.sqlite", rows: 7)
        #expect(try await Self.waitUntilEqual(late, role.oracleURL), "late.sqlite")

        // A database deleted mid-run is dropped; the others go on.
        stores["d.sqlite"] = nil
        folder.remove("d.sqlite")
        let dropped = try await withTimeout(60) {
            while fleet.members().contains(where: { $0.path.hasSuffix("/d.sqlite") }) { try await Task.sleep(for: .milliseconds(20)) }
            return true
        }
        #expect(dropped)
        try await stores["a.sqlite"]!.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('after the drop')") }
        #expect(try await Self.waitUntilEqual(stores["a.sqlite"]!, role.oracleURL))

        running.cancel()
        _ = try? await running.value
        sampler.cancel()
        await sampler.value
        let (most, seen) = peak.withLock { $0 }
        #expect(most >= 1 && most <= 2, "the fleet held \(most) connections at once, with at most 2 allowed: \(seen)")
        let lines = log.messages
        for bad in ["plain.sqlite", "garbage.sqlite"] {
            let failures = lines.filter { $0.contains("/\(bad):") && $0.contains("trying again later") }
            #expect(failures.count == 1, "\(bad): \(failures)")
        }
        #expect(fleet.members().isEmpty || running.isCancelled)
        await role.drop()
    }

    /// PostgreSQL crashes (`-m immediate`) and starts again twice under a fleet whose sources
    /// are written to: the sources that saw the failure ask the pool for a new client (once per
    /// failure, not once per source), and every source catches up by itself. On a cluster of the
    /// test's own: stopping the shared server would break the other tests.
    @Test(.enabled(if: PostgresTestServer.canRestart, "no PostgreSQL binaries"), .timeLimit(.minutes(10)))
    func aFleetRidesOutServerCrashesWithOneSharedPool() async throws {
        let cluster = try await PrivateCluster.start()
        var failures: [String] = []
        do {
            let base = cluster.url
            let url = base + (base.contains("?") ? "&" : "?") + "schema=sl_fleetcrash&connect_timeout=60"
            let folder = try Folder()
            let names = ["a.sqlite", "b.sqlite", "c.sqlite"]
            var stores: [HistoryStore] = []
            for name in names { stores.append(try folder.database(name, rows: 10)) }
            let log = CapturedLog()
            var configuration = PostgresSinkFleet.Configuration()
            configuration.connections = 2
            configuration.concurrency = 3
            configuration.logger = log.logger(label: "test.fleet", level: .info)
            configuration.sink.logger = log.logger(label: "test.fleet.sink", level: .info)
            configuration.sink.maximumBackoff = .milliseconds(500)
            configuration.fleet.maximumRetry = .seconds(2)
            let fleet = try PostgresSinkFleet(glob: try DatabaseGlob(folder.path + "/*.sqlite"), endpoint: try PostgresEndpoint(url: url),
                                              configuration: configuration)
            let running = Task { try await fleet.run() }
            for store in stores where !(try await Self.waitUntilEqual(store, url)) { failures.append("no first sync") }
            for round in 1...2 {
                for (index, store) in stores.enumerated() {
                    try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["before crash \(round) \(index)"]) }
                }
                try await cluster.crash()
                for (index, store) in stores.enumerated() {
                    try await store.write(author: "app") { db in try db.execute(sql: "UPDATE notes SET body = ? WHERE id % 2 = ?", arguments: ["down \(round)", index % 2]) }
                }
                try await cluster.restart()
            }
            for (index, store) in stores.enumerated() {
                try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["after \(index)"]) }
            }
            for (name, store) in zip(names, stores) where !(try await Self.waitUntilEqual(store, url)) {
                failures.append("\(name) did not catch up after the crashes: \(log.messages.suffix(20))")
            }
            running.cancel()
            _ = try? await running.value
            let replacements = log.messages.filter { $0.contains("a new client replaces") }.count
            print("aFleetRidesOutServerCrashes: \(replacements) client replacements for 2 crashes of 3 sources")
            // Recovery is the promise (checked above). How many clients that took is printed, not
            // asserted: none when postgres-nio's own reconnection served first (as once in CI on
            // a loaded machine), more when a retry met the server still down.
        } catch {
            failures.append("\(error)")
        }
        await cluster.remove()
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
