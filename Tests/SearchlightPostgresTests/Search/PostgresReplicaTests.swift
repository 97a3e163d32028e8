import Foundation
import PostgresNIO
import Searchlight
import SearchlightHistory
@testable import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// Searches on a hot standby (PostgreSQL's streaming replication, `.ci/postgres` starts one):
/// once the replica has replayed the primary's WAL it answers every query as the primary does,
/// and what must write (a sink) is refused there with one line.
@Suite(.enabled(if: PostgresTestServer.hasReplica, PostgresTestServer.replicaSkipReason))
struct PostgresReplicaTests {
    @Test func aReplicaAnswersAsThePrimaryDoes() async throws {
        var (_, random) = seededGenerator("PostgresReplicaTests.aReplicaAnswers")
        let sources = [try PostgresSearchTests.makeSource("alpha", notes: 60, people: 12, firstToken: 0, &random),
                       try PostgresSearchTests.makeSource("beta", notes: 40, people: 8, firstToken: 1_000, &random)]
        let fixture = try SearchFixture("replica")
        try await PostgresTestServer.withClient { client in
            try await fixture.create(client)
            for source in sources {
                try await fixture.addSource(source.name, model: TestDatabase.notesModel, client)
                try await fixture.insert(source.documents, client)
            }
        }
        try await PostgresTestServer.waitForReplica()
        let replica = try PostgresEndpoint(url: PostgresTestServer.replicaURL(of: fixture.url))
        var bounded = PostgresSearch.Options()
        bounded.maximumRankedMatches = 15 // the bounded paths too
        bounded.maximumCountedMatches = 10
        let options = bounded
        let queries = PostgresSearchTests.queries(&random, perForm: 4)
        var compared = 0, matched = 0
        for query in queries {
            for scope in [nil, Set(["beta"])] as [Set<String>?] {
                // A bound against a hang (a standby's query waiting on replay), not a latency check.
                let (primary, standby) = try await withTimeout(120) {
                    let primary = try await fixture.search(options: options) { search in
                        try await search.search(query.text, asYouType: query.asYouType, sources: scope, limit: 30)
                    }
                    let standby = try await PostgresSearch.withSearch(endpoint: replica, options: options) { search in
                        try await search.search(query.text, asYouType: query.asYouType, sources: scope, limit: 30)
                    }
                    return (primary, standby)
                }
                #expect(standby == primary, "\(query.form) \(query.text) in \(scope?.sorted() ?? [])")
                compared += 1
                if primary.total > 0 { matched += 1 }
            }
        }
        #expect(compared == queries.count * 2 && matched >= compared / 4, "the queries find something (\(matched) of \(compared))")
    }

    /// The commands that read work on a replica; a sink, which writes, is refused in one line
    /// and the replica is as it was.
    @Test func theCommandLineSearchesAReplicaAndASinkThereIsRefused() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('replicated kernel'), ('other')") }
        let url = PostgresTestServer.freshURL("replicacli")
        let once = try await PostgresCLI.run(["sink", "--db", database.path, "--postgres", url, "--source", "cli", "--once"])
        #expect(once.status == 0, "\(once.stderr)")
        try await PostgresTestServer.waitForReplica()
        let replica = PostgresTestServer.replicaURL(of: url)
        let search = try await PostgresCLI.run(["search", "--postgres", replica, "replicated", "--format", "json"])
        #expect(search.status == 0, "\(search.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(search.stdout.utf8)) as? [String: Any]
        #expect(json?["total"] as? Int == 1 && json?["totalRelation"] as? String == "eq", "\(search.stdout)")
        let status = try await PostgresCLI.run(["status", "--postgres", replica])
        #expect(status.status == 0 && status.stdout.contains("cli"), "\(status.stdout)\(status.stderr)")
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('not on the replica')") }
        let sink = try await PostgresCLI.run(["sink", "--db", database.path, "--postgres", replica, "--source", "cli", "--once"])
        #expect(sink.status == 1 && sink.stderrLines.count == 1, "\(sink.stderr)")
        #expect(sink.stderr.contains("is a hot standby (read-only"), "\(sink.stderr)")
        // Refused before it registered with the database: nothing holds cleanup back.
        let consumers = try database.shell("SELECT count(*) FROM searchlight_consumer WHERE author LIKE 'searchlight.postgres.%';")
        #expect(consumers.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "only the primary's sink: \(consumers)")
        // A database already caught up is refused too (nothing to write is no reason to accept).
        let caughtUp = try TestDatabase()
        _ = try caughtUp.openStore()
        let idle = try await PostgresCLI.run(["sink", "--db", caughtUp.path, "--postgres", replica, "--source", "idle", "--once"])
        #expect(idle.status == 1 && idle.stderr.contains("is a hot standby (read-only"), "\(idle.stderr)")
        let none = try caughtUp.shell("SELECT count(*) FROM searchlight_consumer WHERE author LIKE 'searchlight.postgres.%';")
        #expect(none.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(none)")
        let after = try await PostgresCLI.run(["search", "--postgres", replica, "replica", "--format", "json"])
        let total = (try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])?["total"] as? Int
        #expect(total == 0, "the refused sink wrote nothing: \(after.stdout)\(after.stderr)")
    }
}
