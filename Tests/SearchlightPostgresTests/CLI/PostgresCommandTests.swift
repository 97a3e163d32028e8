import Foundation
import PostgresNIO
import Searchlight
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// `searchlight-postgres sink|status|verify` as a user runs them.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresCommandTests {
    @Test func sinkOncePrintsOneLineAndFollowingSaysWhenItIsCaughtUp() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("cli")
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('a'), ('b'), ('c')") }
        let once = try await PostgresCLI.run(["sink", "--db", database.path, "--postgres", url, "--source", "cli", "--once"])
        #expect(once.status == 0, "\(once.stderr)")
        let head = try store.currentToken()
        #expect(once.stdout == "source cli: caught up at token \(head) (3 upserted, 0 deleted, 1 resyncs)\n")

        let following = PostgresCLI.start(["sink", "--db", database.path, "--postgres", url, "--source", "cli"])
        #expect(await following.waitUntil(stderrContains: "following source cli at token \(head)"))
        try await store.write(author: "app") { db in try db.execute(sql: "DELETE FROM notes WHERE id = 1") }
        let deleted = try await withTimeout(60) {
            while try await SinkOracle.actual(url, source: "cli").count != 2 { try await Task.sleep(for: .milliseconds(20)) }
            return true
        }
        #expect(deleted)
        following.process.interrupt()
        let result = try await PostgresCLI.finish(following)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await SinkOracle.actual(url, source: "cli") == SinkOracle.expected(database.path))

        let status = try await PostgresCLI.run(["status", "--postgres", url, "--db", database.path, "--format", "json"])
        #expect(status.status == 0 && status.stdout.contains("\"source\" : \"cli\""), "\(status.stderr)")
        let verify = try await PostgresCLI.run(["verify", "--db", database.path, "--postgres", url, "--source", "cli"])
        #expect(verify.status == 0 && verify.stdout.contains("PostgreSQL equals the source cli"), "\(verify.stdout)\(verify.stderr)")
    }

    /// A following sink whose schema a newer release migrates meanwhile (an upgrade rolling
    /// through a fleet) stops at its next batch with one line, and writes nothing there (an
    /// outsider's finding: the previous release's sink went on writing).
    @Test func aFollowingSinkStopsWhenANewerReleaseMigratedItsSchema() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("newer")
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('before')") }
        let following = PostgresCLI.start(["sink", "--db", database.path, "--postgres", url, "--source", "cli"])
        #expect(await following.waitUntil(stderrContains: "following source cli"))
        let meta = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema) + ".meta"
        try await PostgresTestServer.withClient(url) { client in
            try await client.query(PostgresQuery(unsafeSQL: "UPDATE \(meta) SET value = '\(PostgresSchema.currentVersion + 1)' WHERE key = 'schema_version'"))
        }
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('after')") }
        let stopped = await following.waitUntil(stderrContains: "by a newer release")
        if !stopped { following.process.interrupt() }
        let result = try await PostgresCLI.finish(following)
        #expect(stopped && result.status == 1, "\(result.stderr)")
        #expect(result.stderrLines.last?.contains("by a newer release") == true, "the last line says why: \(result.stderr)")
        #expect(result.stderr.contains("was migrated to version \(PostgresSchema.currentVersion + 1) by a newer release"), "\(result.stderr)")
        #expect(try await SinkOracle.actual(url, source: "cli").count == 1, "nothing written after the migration")
    }

    /// `--filter` and `--facet` on PostgreSQL, as the local command takes and prints them.
    @Test func searchFiltersAndCountsFacets() async throws {
        let database = try TestDatabase(schema: "CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT, year INTEGER, tag TEXT COLLATE NOCASE);")
        let model = try SearchlightModel(entities: [
            .init(name: "Item", table: "items", primaryKey: "id", fields: [.init(column: "body")],
                  attributes: [.init(column: "year"), .init(column: "tag")]),
        ])
        let store = try database.openStore(model: model)
        try await store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO items(body, year, tag) VALUES ('kernel', 2019, 'Swift'), ('kernel', 2021, 'swift'), ('kernel', 2022, 'go')")
            try db.execute(sql: "INSERT INTO items(body, year, tag) VALUES ('infinite', 9e999, 'go')")
        }
        let url = PostgresTestServer.freshURL("clifilter")
        let sink = try await PostgresCLI.run(["sink", "--db", database.path, "--postgres", url, "--source", "s", "--once"])
        #expect(sink.status == 0, "\(sink.stderr)")
        let table = try await PostgresCLI.run(["search", "--postgres", url, "--filter", "year >= \"2020\"", "--facet", "tag", "kernel"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("2 of 2 matches") && table.stdout.contains("tag: go 1, swift 1"), "\(table.stdout)")
        let json = try await PostgresCLI.run(["search", "--postgres", url, "--facet", "TAG", "--format", "json", "kernel"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains(#""attribute" : "tag""#) && json.stdout.contains(#""value" : "Swift""#), "\(json.stdout)")
        let bad = try await PostgresCLI.run(["search", "--postgres", url, "--filter", "year >= \"20\u{0}", "kernel"])
        #expect(bad.status != 0 && bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains("invalid filter"), "\(bad.stderr)")
        let sorted = try await PostgresCLI.run(["search", "--postgres", url, "--sort", "YEAR", "--ascending", "--format", "csv", "kernel"])
        #expect(sorted.status == 0, "\(sorted.stderr)")
        #expect(sorted.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",")[2] } == ["1", "2", "3"], "\(sorted.stdout)")
        let notAnAttribute = try await PostgresCLI.run(["search", "--postgres", url, "--sort", "body", "kernel"])
        #expect(notAnAttribute.status != 0 && notAnAttribute.stderr.split(separator: "\n").count == 1
                && notAnAttribute.stderr.contains("cannot sort by \"body\": entity Item of source s has no attribute of that column"), "\(notAnAttribute.stderr)")
        let suggest = try await PostgresCLI.run(["suggest", "--postgres", url, "--format", "json", "linux", "kernl"])
        #expect(suggest.status == 0 && suggest.stdout.contains(#""text" : "linux kernel""#) && suggest.stdout.contains(#""typos" : 1"#), "\(suggest.stdout)\(suggest.stderr)")
        let typo = try await PostgresCLI.run(["search", "--postgres", url, "kernl"])
        #expect(typo.status == 0 && typo.stdout.contains("3 of 3 matches") && typo.stdout.contains("Typo matches (after the exact ones): kernl → kernel (1 typo)."), "\(typo.stdout)")
        let explained = try await PostgresCLI.run(["search", "--postgres", url, "--typos", "off", "kernl"])
        #expect(explained.status == 0 && explained.stdout.contains("0 of 0 matches") && explained.stdout.contains("no match; did you mean \"kernel\"?"), "\(explained.stdout)")
        let explainedJSON = try await PostgresCLI.run(["search", "--postgres", url, "--typos", "off", "--format", "json", "kernl"])
        #expect(explainedJSON.stdout.contains(#""suggestions" : ["#) && explainedJSON.stdout.contains(#""reason" : "noMatch""#), "\(explainedJSON.stdout)")
        let infinite = try await PostgresCLI.run(["search", "--postgres", url, "--facet", "year", "--format", "json", "infinite"])
        #expect(infinite.status == 0 && infinite.stdout.contains(#""value" : "Infinity""#), "\(infinite.stdout)\(infinite.stderr)")
        let mistyped = try await PostgresCLI.run(["search", "--postgres", url, "--facets", "tag", "kernel"])
        #expect(mistyped.status != 0 && mistyped.stderr.contains("Unknown option '--facets'"), "\(mistyped.stderr)")
        let unknown = try await PostgresCLI.run(["search", "--postgres", url, "--filter", "color = 'red'", "kernel"])
        #expect(unknown.status != 0 && unknown.stderr.contains(#"unknown attribute "color" (declared: year, tag)"#), "\(unknown.stderr)")
    }

    @Test func badInputGetsOneLineAndChangesNothing() async throws {
        let database = try TestDatabase()
        _ = try database.openStore()
        let url = PostgresTestServer.freshURL("bad")
        // What the sink would change: its consumer registration and checkpoint. (Opening a store may
        // heal capture's bookkeeping, as every `searchlight` command does.)
        let consumers = "SELECT * FROM searchlight_consumer;"
        let before = try database.shell(consumers)
        let cases: [([String], String)] = [
            (["sink", "--db", database.path, "--postgres", "mysql://x@y/z", "--once"], "invalid PostgreSQL URL"),
            (["sink", "--db", database.path, "--postgres", "postgres://nobody@127.0.0.1:1/none", "--once"], "cannot connect to PostgreSQL at postgres://nobody@127.0.0.1:1/none"),
            (["sink", "--db", database.directory.appendingPathComponent("missing.sqlite").path, "--postgres", url, "--once"], "no database at"),
            (["sink", "--db", database.path, "--postgres", url, "--source", "", "--once"], "invalid source name"),
            (["sink", "--db", database.path, "--postgres", url, "--source", "a\u{7}b", "--once"], "control characters"),
            (["status", "--postgres", url], "holds no Searchlight tables"),
        ]
        for (arguments, message) in cases {
            let result = try await PostgresCLI.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains(message) && result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try database.shell(consumers) == before)
        let plain = try TestDatabase()
        let notSetUp = try await PostgresCLI.run(["sink", "--db", plain.path, "--postgres", url, "--once"])
        #expect(notSetUp.status == 1 && notSetUp.stderr.contains("no Searchlight setup"), "\(notSetUp.stderr)")
        let usage = try await PostgresCLI.run(["sink", "--db", database.path, "--postgres", url, "--batch-size", "0"])
        #expect(usage.status == 2)
    }

    /// A URL whose server refuses the connection, whose database or role does not exist, is
    /// told at once by `search` as by `status` (one line, exit 1): a first direct connection,
    /// not a pool that retries until its circuit breaker trips a minute later.
    @Test func searchTellsABadServerDatabaseOrRoleInOneLine() async throws {
        let base = try #require(PostgresTestServer.url)
        let server = try #require(URLComponents(string: base))
        let host = server.host ?? "127.0.0.1", port = server.port ?? 5432, user = server.user ?? "postgres"
        let cases: [(String, String)] = [
            ("postgres://\(user)@127.0.0.1:1/none", "connection refused"),
            ("postgres://\(user)@\(host):\(port)/searchlight_nosuchdb", #"database "searchlight_nosuchdb" does not exist"#),
            ("postgres://searchlight_nosuchrole@\(host):\(port)/searchlight", #"role "searchlight_nosuchrole" does not exist"#),
        ]
        for (url, message) in cases {
            for command in ["search", "status"] {
                let arguments = command == "search" ? ["search", "kernel", "--postgres", url] : ["status", "--postgres", url]
                let result = try await PostgresCLI.run(arguments)
                #expect(result.status == 1, "\(arguments): \(result.status)")
                #expect(result.stderrLines.count == 1 && result.stderr.contains("cannot connect to PostgreSQL at \(url): \(message)"),
                        "\(arguments): \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            }
        }
    }

    /// A following sink (no `--once`) whose database or role does not exist stops with one line
    /// and exit 1, and changes nothing: only a person can fix that. A refused connection is
    /// retried (the server may be starting): the sink keeps running, saying so, until SIGTERM.
    @Test func aFollowingSinkStopsOnAnUnknownDatabaseOrRoleAndRetriesARefusedConnection() async throws {
        let base = try #require(PostgresTestServer.url)
        let server = try #require(URLComponents(string: base))
        let host = server.host ?? "127.0.0.1", port = server.port ?? 5432, user = server.user ?? "postgres"
        let database = try TestDatabase()
        _ = try database.openStore()
        let consumers = "SELECT * FROM searchlight_consumer;"
        let before = try database.shell(consumers)
        let cases: [(String, String)] = [
            ("postgres://\(user)@\(host):\(port)/searchlight_nosuchdb", #"database "searchlight_nosuchdb" does not exist"#),
            ("postgres://searchlight_nosuchrole@\(host):\(port)/searchlight", #"role "searchlight_nosuchrole" does not exist"#),
        ]
        for (url, message) in cases {
            let sink = PostgresCLI.start(["sink", "--db", database.path, "--postgres", url])
            // Bounded against a sink that retries forever (it did: every 5 s); not a latency assertion.
            let ended = await sink.waitUntil(timeout: 90) { _, _ in sink.isFinished }
            if !ended { sink.process.terminate() }
            let result = try await PostgresCLI.finish(sink)
            #expect(ended, "the sink of \(url) still runs: \(result.stderr.suffix(500))")
            #expect(result.status == 1, "\(url): \(result.status)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains("cannot connect to PostgreSQL at \(url): \(message)"),
                    "\(url): \(result.stderr)")
        }
        #expect(try database.shell(consumers) == before)

        // Refused: retried with backoff; still running after two attempts; SIGTERM ends it with 0.
        let refused = PostgresCLI.start(["sink", "--db", database.path, "--postgres", "postgres://\(user)@127.0.0.1:1/none"])
        let retried = await refused.waitUntil(timeout: 90) { _, stderr in
            stderr.components(separatedBy: "connection refused; trying again in").count > 2
        }
        #expect(retried && !refused.isFinished, "\(refused.stderr.suffix(500))")
        refused.process.terminate()
        let stopped = try await PostgresCLI.finish(refused)
        #expect(stopped.status == 0, "\(stopped.status): \(stopped.stderr.suffix(500))")
    }
}
