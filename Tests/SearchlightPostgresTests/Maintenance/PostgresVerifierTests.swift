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
