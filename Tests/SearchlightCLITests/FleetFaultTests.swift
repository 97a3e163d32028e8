import Foundation
import Testing
import SearchlightTestSupport

/// kill -9 of a `watch --dbs` process at random instants, while the `sqlite3` shell writes to
/// random tenants, tenants appear and disappear, and one file turns to garbage: after a last run
/// catches up, every tenant's search results equal its rows, as the `sqlite3` shell reads them
/// (the oracle shares no code with Searchlight), and no document is there twice.
@Suite struct FleetFaultTests {
    /// Rounds per seed: `SEARCHLIGHT_FLEET_ROUNDS` for a long form (CI runs 10 per seed);
    /// `SEARCHLIGHT_KEEP_FLEET=1` keeps the folder to look at.
    static let rounds = ProcessInfo.processInfo.environment["SEARCHLIGHT_FLEET_ROUNDS"].flatMap(Int.init) ?? 10

    @Test(arguments: testSeeds("killingTheFleetAtRandomInstantsLosesNothing", count: 2))
    func killingTheFleetAtRandomInstantsLosesNothing(seed: UInt64) async throws {
        print("FleetFaultTests seed \(seed) (replay: SEARCHLIGHT_SEED=\(seed)), \(Self.rounds) rounds")
        var generator = SplitMix(seed: seed)
        let (directory, model) = try FleetCommandTests.fleet()
        defer { if ProcessInfo.processInfo.environment["SEARCHLIGHT_KEEP_FLEET"] == nil { try? FileManager.default.removeItem(atPath: directory) } }
        let glob = directory + "/tenants/*.sqlite"
        var tenants: [String] = []
        var created = 0
        func newTenant() async throws -> String {
            created += 1
            return try await FleetCommandTests.tenant(directory, "t\(created).sqlite", model: model)
        }
        for _ in 0..<4 { tenants.append(try await newTenant()) }
        var nextID = 1
        var killed = 0
        var gone: [String] = []

        for round in 0..<Self.rounds {
            let watch = CLI.start(["watch", "--dbs", glob, "--concurrency", "2", "--log-level", "warning"])
            defer { if watch.process.isRunning { kill(watch.process.processIdentifier, SIGKILL) } }
            // Tenants appear, disappear, and one turns to garbage, while the fleet runs (before the
            // writers start: the shell would create a removed file anew).
            if round % 4 == 1 { tenants.append(try await newTenant()) }
            if round % 4 == 3, tenants.count > 3 {
                let removed = tenants.remove(at: Int.random(in: 0..<tenants.count, using: &generator))
                try FileManager.default.removeItem(atPath: removed)
                gone.append(removed)
            }
            if round == Self.rounds / 2 {
                try Data("garbage, not a database".utf8).write(to: URL(fileURLWithPath: directory + "/tenants/garbage.sqlite"))
            }
            // Writers: a transaction each into a few random tenants, at the same time as the fleet.
            var writers: [Subprocess.Running] = []
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let tenant = tenants.randomElement(using: &generator)!
                var sql = "BEGIN;"
                for _ in 0..<Int.random(in: 1...30, using: &generator) {
                    sql += "INSERT INTO notes(id, title, body) VALUES (\(nextID), 'fleetmark n\(nextID) r\(round)', 'body');"
                    nextID += 1
                }
                sql += "UPDATE notes SET title = title || ' u\(round)' WHERE id % 3 = \(round % 3);"
                sql += "DELETE FROM notes WHERE id % 11 = \(round % 11);COMMIT;"
                writers.append(Subprocess.start(["sqlite3", "-cmd", ".timeout 20000", tenant, sql], executable: URL(fileURLWithPath: "/usr/bin/env")))
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...600, using: &generator)))
            if watch.process.isRunning {
                kill(watch.process.processIdentifier, SIGKILL)
                killed += 1
            }
            _ = try await CLI.finish(watch)
            for writer in writers {
                let result = await writer.result()
                #expect(result.status == 0, "\(result.stderr)")
            }
        }
        #expect(killed >= Self.rounds / 2, "most runs were killed mid-way (\(killed) of \(Self.rounds), seed \(seed))")

        // The last run catches up; then each tenant's documents equal its rows.
        let watch = CLI.start(["watch", "--dbs", glob, "--log-level", "warning"])
        defer { if watch.process.isRunning { watch.process.terminate() } }
        for tenant in tenants {
            let (rows, documents, errors) = try await Self.caughtUp(tenant)
            #expect(documents == rows, "\(tenant): \(rows.count) rows, \(documents.count) documents (seed \(seed)) \(errors)\n\(watch.stderr.suffix(2_000))")
        }
        // The garbage file was logged, and did not stop the others (they caught up above).
        #expect(watch.stderr.contains("garbage.sqlite"), "\(watch.stderr.suffix(2_000))")
        watch.process.terminate()
        let result = try await CLI.finish(watch)
        #expect(result.status == 0, "\(result.stderr.suffix(2_000))")
        #expect(!gone.contains { FileManager.default.fileExists(atPath: $0) })
    }

    /// Waits (bounded) until a search of `tenant` returns its rows, then returns both: the rows as
    /// the `sqlite3` shell reads them (id → title) and the documents as `search` finds them (an id
    /// found twice is kept twice, as a mismatch).
    static func caughtUp(_ tenant: String) async throws -> (rows: [String: String], documents: [String: String], errors: String) {
        let deadline = ContinuousClock.now + .seconds(600)
        var rows: [String: String] = [:], documents: [String: String] = [:], errors = ""
        repeat {
            let read = await Subprocess.start(["sqlite3", "-cmd", ".timeout 20000", "-json", tenant, "SELECT id, title FROM notes"],
                                              executable: URL(fileURLWithPath: "/usr/bin/env")).result()
            let table = (try? JSONSerialization.jsonObject(with: Data((read.stdout.isEmpty ? "[]" : read.stdout).utf8))) as? [[String: Any]] ?? []
            rows = Dictionary(table.map { ("\($0["id"]!)", "\($0["title"]!)") }, uniquingKeysWith: { a, _ in a })
            let search = try await CLI.run(["search", "--db", tenant, "fleetmark", "--typos", "off", "--limit", "0", "--format", "jsonl"])
            documents = [:]
            errors = read.stderr + search.stderr
            for line in search.stdout.split(separator: "\n") {
                guard let hit = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let key = hit["id"], let title = hit["title"] as? String else { continue }
                let id = "\(key)"
                documents[documents[id] == nil ? id : id + " (twice)"] = title
            }
            if rows == documents { break }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return (rows, documents, errors)
    }
}
