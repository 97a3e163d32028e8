import Foundation
import GRDB
import Logging
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Testing

@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresSinkTests {
    func makeSink(_ store: HistoryStore, _ url: String, source: String? = "s1", _ edit: (inout PostgresSink.Configuration) -> Void = { _ in }) throws -> PostgresSink {
        var configuration = PostgresSink.Configuration()
        configuration.source = source
        configuration.batchSize = 7
        edit(&configuration)
        return try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
    }

    @Test func aFirstSyncThenInsertsUpdatesAndDeletesReachPostgresWithTheirExactValues() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("happy")
        try await store.write(author: "app") { db in
            for i in 1...30 { try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)", arguments: [i, "note \(i)", "body\t\\ \n \(i) 文件系统", i % 3 == 0 ? nil : "tag"]) }
            try db.execute(sql: "INSERT INTO people(uuid, name) VALUES ('a-1', 'Ada'), ('b-2', NULL)")
        }
        let sink = try makeSink(store, url)
        let first = try await sink.runOnce()
        #expect(first.resyncs == 1 && first.upserted == 32 && first.batches == 0)
        #expect(try await SinkOracle.actual(url, source: "s1") == SinkOracle.expected(database.path))

        try await store.write(author: "app") { db in
            try db.execute(sql: "UPDATE notes SET title = 'changed ' || id, tags = NULL WHERE id % 4 = 0")
            try db.execute(sql: "DELETE FROM notes WHERE id % 5 = 0")
            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (100, 'Ünïcode ''quote''', 'x')")
            try db.execute(sql: "DELETE FROM people WHERE uuid = 'b-2'")
        }
        for i in 0..<20 { try await store.write(author: "app") { db in try db.execute(sql: "UPDATE notes SET body = ? WHERE id = 1", arguments: ["v\(i)"]) } }
        let second = try await sink.runOnce()
        #expect(second.resyncs == 0 && second.batches == 3 && second.deleted == 7)
        #expect(second.token == (try store.currentToken()))
        #expect(try await SinkOracle.actual(url, source: "s1") == SinkOracle.expected(database.path))
        #expect(try store.checkpoint(for: sink.author)?.token == second.token)
        #expect(try store.consumers().first { $0.author == "searchlight.postgres.s1" }?.isRequired == true)
        let third = try await sink.runOnce()
        #expect(third.batches == 0 && third.resyncs == 0 && third.token == second.token)
    }

    /// SQLite hands out TEXT keys cut at a NUL: two keys that differ only after one arrive as
    /// one. The sink keeps one document for them (as the local index does) and never stops: a
    /// batch holding both, and a first sync of a source holding both, succeed.
    @Test func textKeysThatDifferOnlyAfterANulNeitherStopTheSinkNorItsFirstSync() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("nulkeys")
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO people(uuid, name) VALUES ('plain', 'Ada')") }
        let sink = try makeSink(store, url)
        _ = try await sink.runOnce()
        try await store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (CAST(x'00616200' AS TEXT), 'first'), (CAST(x'0078' AS TEXT), 'second')")
        }
        let incremental = try await sink.runOnce()
        #expect(incremental.batches == 1)
        let fresh = try await makeSink(store, url, source: "s2").runOnce()
        #expect(fresh.resyncs == 1 && fresh.upserted >= 2)
        let again = try await sink.runOnce()
        #expect(again.token == (try store.currentToken()))
    }
}
