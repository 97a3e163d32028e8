import Foundation
import PostgresNIO
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Testing

@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresVerifierTests {
    func verifier(_ store: HistoryStore, _ url: String) throws -> PostgresVerifier {
        var configuration = PostgresSink.Configuration()
        configuration.source = "v"
        return try PostgresVerifier(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
    }

    @Test func verifyFindsTamperedMissingAndExtraDocumentsAndRepairFixesThem() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("verify")
        try await store.write(author: "app") { db in
            for i in 1...40 { try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [i, "title \(i)", "body \(i)"]) }
        }
        #expect(try await verifier(store, url).verify(repair: false).differences == 0)

        // Tamper behind the sink's back: one changed, one vector changed, one deleted, one added.
        let schema = try SinkOracle.schema(url)
        try await PostgresTestServer.withClient(url) { client in
            try await client.query(PostgresQuery(unsafeSQL: """
                UPDATE \(schema).documents SET fields = jsonb_set(fields, '{title}', '"tampered"') WHERE object_key = 'i:3';
                """))
            try await client.query(PostgresQuery(unsafeSQL: "UPDATE \(schema).documents SET vector = 'other:1A' WHERE object_key = 'i:4'"))
            try await client.query(PostgresQuery(unsafeSQL: "DELETE FROM \(schema).documents WHERE object_key = 'i:5'"))
            try await client.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(schema).documents(source, entity, object_key, object_id, title, fields, body, cjk, vector, token)
                SELECT source, entity, 'i:999', '999', 'ghost', fields, body, cjk, vector, token FROM \(schema).documents WHERE object_key = 'i:6'
                """))
        }
        let found = try await verifier(store, url).verify(repair: false)
        let notes = try #require(found.entities.first { $0.entity == "Note" })
        #expect(notes.missing == 1 && notes.missingExamples == ["i:5"])
        #expect(notes.stale == 2 && Set(notes.staleExamples) == ["i:3", "i:4"])
        #expect(notes.extra == 1 && notes.extraExamples == ["i:999"])
        #expect(!found.isConsistent)

        let repaired = try await verifier(store, url).verify(repair: true)
        #expect(repaired.differences == 4 && repaired.isConsistent)
        #expect(try await verifier(store, url).verify(repair: false).differences == 0)
        #expect(try await SinkOracle.actual(url, source: "v") == SinkOracle.expected(database.path))
    }

    /// The vocabulary is checked against a count of the documents: a word miscounted, one
    /// missing and one extra are 3 differences, and repair counts the source's vocabulary again.
    @Test func verifyFindsAMiscountedVocabularyAndRepairCountsItAgain() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("verifyvocab")
        try await store.write(author: "app") { db in
            for i in 1...20 { try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [i, "title \(i)", "kernel panic \(i % 3)"]) }
        }
        #expect(try await verifier(store, url).verify(repair: false).differences == 0)
        let schema = try SinkOracle.schema(url)
        func vocabulary() async throws -> [String: Int] {
            try await PostgresTestServer.withClient(url) { client in
                var words: [String: Int] = [:]
                for try await (word, documents) in try await client.query(PostgresQuery(unsafeSQL: "SELECT word, documents FROM \(schema).vocabulary WHERE source = 'v'"))
                    .decode((String, Int).self) { words[word] = documents }
                return words
            }
        }
        let counted = try await vocabulary()
        #expect(counted["kernel"] == 20 && counted["title"] == 20 && counted["0"] == 6, "\(counted)")
        try await PostgresTestServer.withClient(url) { client in
            try await client.query(PostgresQuery(unsafeSQL: "UPDATE \(schema).vocabulary SET documents = 99 WHERE word = 'kernel'"))
            try await client.query(PostgresQuery(unsafeSQL: "DELETE FROM \(schema).vocabulary WHERE word = 'panic'"))
            try await client.query(PostgresQuery(unsafeSQL: "INSERT INTO \(schema).vocabulary VALUES ('ghost', 'v', 1)"))
        }
        let found = try await verifier(store, url).verify(repair: false)
        #expect(found.vocabularyDifferences == 3 && found.differences == 3 && !found.isConsistent)
        let cli = try await PostgresCLI.run(["verify", "--db", database.path, "--postgres", url, "--source", "v"])
        #expect(cli.status == 1 && cli.stdout.contains("vocabulary: 3 words counted otherwise"), "\(cli.stdout)\(cli.stderr)")
        let repaired = try await verifier(store, url).verify(repair: true)
        #expect(repaired.vocabularyDifferences == 3 && repaired.isConsistent)
        #expect(try await verifier(store, url).verify(repair: false).differences == 0)
        #expect(try await vocabulary() == counted)
    }

    @Test func statusShowsEachSourcesTokenLagResyncsAndDocuments() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("status")
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('a'), ('b')") }
        _ = try await verifier(store, url).sink.runOnce()
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('c')") }
        let sources = try await PostgresStatus.read(try PostgresEndpoint(url: url), database: store)
        let source = try #require(sources.first)
        #expect(sources.count == 1 && source.source == "v")
        #expect(source.documents == ["Note": 2])
        #expect(source.lagTokens == 0)
        #expect(source.liveHeadToken == (try store.currentToken()))
        #expect((source.liveLagTokens ?? 0) > 0)
        #expect(source.resyncs == 0 && source.resyncReason?.contains("first sync") == true)
    }
}
