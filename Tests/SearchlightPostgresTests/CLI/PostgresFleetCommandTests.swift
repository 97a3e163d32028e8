import Foundation
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Synchronization
import Testing

/// `searchlight-postgres sink --dbs` and `status --dbs` as an operator runs them.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresFleetCommandTests {
    /// An entry of `status --dbs --format json`, as a script reads it.
    struct Entry: Decodable {
        var databasePath: String
        var source: String?
        var lagTokens: Int64?
        var error: String?
    }

    @Test(.timeLimit(.minutes(10))) func sinkDbsFollowsEveryDatabaseOverItsConnectionsAndStatusListsThem() async throws {
        let role = try await PostgresSinkFleetTests.FleetRole()
        let folder = try PostgresSinkFleetTests.Folder()
        let a = try folder.database("a.sqlite", rows: 5)
        let b = try folder.database("b.sqlite", rows: 9)
        _ = FileManager.default.createFile(atPath: folder.path + "/garbage.sqlite", contents: Data(repeating: 0x5A, count: 4_096))
        let sink = PostgresCLI.start(["sink", "--dbs", folder.path + "/*.sqlite", "--postgres", role.url, "--connections", "1", "--concurrency", "2"])
        let peak = Mutex(0)
        let sampler = Task {
            while !Task.isCancelled {
                if let rows = try? await role.connections() { peak.withLock { $0 = max($0, rows.count) } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(try await PostgresSinkFleetTests.waitUntilEqual(a, role.oracleURL), "\(sink.stderr.suffix(800))")
        #expect(try await PostgresSinkFleetTests.waitUntilEqual(b, role.oracleURL), "\(sink.stderr.suffix(800))")
        try await b.write(author: "app") { db in try db.execute(sql: "DELETE FROM notes WHERE id = 1") }
        #expect(try await PostgresSinkFleetTests.waitUntilEqual(b, role.oracleURL), "\(sink.stderr.suffix(800))")

        let status = try await PostgresCLI.run(["status", "--dbs", folder.path + "/*.sqlite", "--postgres", role.oracleURL, "--format", "json"])
        #expect(status.status == 0, "\(status.stderr)")
        let entries = try JSONDecoder().decode([Entry].self, from: Data(status.stdout.utf8))
        #expect(entries.map { URL(fileURLWithPath: $0.databasePath).lastPathComponent } == ["a.sqlite", "b.sqlite", "garbage.sqlite"])
        for (entry, store) in zip(entries, [a, b]) {
            #expect(entry.source == (try store.sourceID()) && entry.lagTokens == 0 && entry.error == nil, "\(entry)")
        }
        #expect(entries.last?.source == nil && entries.last?.error != nil)
        let table = try await PostgresCLI.run(["status", "--dbs", folder.path + "/*.sqlite", "--postgres", role.oracleURL])
        let aSource = try a.sourceID()
        #expect(table.status == 0 && table.stdout.contains(aSource) && table.stdout.contains("garbage.sqlite"), "\(table.stdout)\(table.stderr)")

        sink.process.terminate()
        let result = try await PostgresCLI.finish(sink)
        sampler.cancel()
        await sampler.value
        #expect(result.status == 0, "\(result.stderr.suffix(800))")
        let garbageLines = result.stderrLines.filter { $0.contains("garbage.sqlite") && $0.contains("trying again later") }
        #expect(garbageLines.count == 1, "\(result.stderr.suffix(800))")
        let most = peak.withLock { $0 }
        #expect(most == 1, "the process held \(most) connections at once, with --connections 1")
        await role.drop()
    }

    @Test func sinkTakesEitherDbOrDbs() async throws {
        let cases: [[String]] = [
            ["sink", "--postgres", "postgres://x@y/z"],
            ["sink", "--db", "a.sqlite", "--dbs", "*.sqlite", "--postgres", "postgres://x@y/z"],
            ["sink", "--dbs", "*.sqlite", "--postgres", "postgres://x@y/z", "--connections", "0"],
            ["sink", "--dbs", "*.sqlite", "--postgres", "postgres://x@y/z", "--once"],
            // Negative numbers are values: their range is told, not "missing value".
            ["sink", "--dbs", "*.sqlite", "--postgres", "postgres://x@y/z", "--connections", "-1"],
            ["sink", "--dbs", "*.sqlite", "--postgres", "postgres://x@y/z", "--concurrency", "-1"],
            ["sink", "--db", "a.sqlite", "--postgres", "postgres://x@y/z", "--batch-size", "-1"],
        ]
        for arguments in cases {
            let result = try await PostgresCLI.run(arguments)
            #expect(result.status == 2 && result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
            if arguments.last == "-1" { #expect(result.stderr.contains("must be"), "\(arguments): \(result.stderr)") }
        }
    }

    /// A server that refuses the database ends the fleet at once with one line, as a single sink.
    @Test(.timeLimit(.minutes(5))) func sinkDbsWithAnUnknownDatabaseEndsAtOnceWithOneLine() async throws {
        let folder = try PostgresSinkFleetTests.Folder()
        _ = try folder.database("a.sqlite", rows: 1)
        var components = URLComponents(string: PostgresTestServer.url ?? "")!
        components.path = "/searchlight_nosuchdb"
        let url = components.string!
        let sink = PostgresCLI.start(["sink", "--dbs", folder.path + "/*.sqlite", "--postgres", url])
        // Bounded against a fleet that would retry forever; not a latency assertion.
        let ended = await sink.waitUntil(timeout: 90) { _, _ in sink.isFinished }
        if !ended { sink.process.terminate() }
        let result = try await PostgresCLI.finish(sink)
        #expect(ended && result.status == 1, "\(result.status): \(result.stderr.suffix(500))")
        #expect(result.stderrLines.count == 1 && result.stderr.contains(#"database "searchlight_nosuchdb" does not exist"#), "\(result.stderr)")
    }
}
