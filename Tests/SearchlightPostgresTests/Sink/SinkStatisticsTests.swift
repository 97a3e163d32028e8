import Foundation
import GRDB
import Logging
import PostgresNIO
import SearchlightHistory
import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// A sink that loaded many documents leaves PostgreSQL able to plan searches over them: the
/// table analyzed and the GIN index's pending list merged, instead of waiting up to a minute
/// for autovacuum (meanwhile the planner scans a source's documents one by one).
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct SinkStatisticsTests {
    func makeSink(_ store: HistoryStore, _ url: String) throws -> PostgresSink {
        var configuration = PostgresSink.Configuration()
        configuration.source = "s1"
        return try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
    }

    func insertNotes(_ range: ClosedRange<Int>, into store: HistoryStore) async throws {
        try await store.write(author: "app") { db in
            for i in range {
                try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                               arguments: [i, "note \(i)", "words for note \(i) about kernels, pipes and shells"])
            }
        }
    }

    /// Whether the documents table was analyzed (by the sink, or by autovacuum when it came
    /// first: the sink then finds nothing to do), and the pages `gin_clean_pending_list` still finds.
    func statistics(_ url: String) async throws -> (analyzed: Bool, pendingPages: Int64) {
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        return try await PostgresTestServer.withClient(url) { client in
            var analyzed = false, pending: Int64 = -1
            for try await value in try await client.query("""
                SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL FROM pg_stat_user_tables WHERE relid = to_regclass(\(schema + ".documents"))
                """).decode(Bool.self) { analyzed = value }
            for try await value in try await client.query("""
                SELECT gin_clean_pending_list(to_regclass(\(schema + ".documents_vector")))
                """).decode(Int64.self) { pending = value }
            return (analyzed, pending)
        }
    }

    @Test func aFirstSyncOfThousandsOfDocumentsLeavesTheTableAnalyzedAndThePendingListMerged() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("analyzed")
        try await insertNotes(1...2_500, into: store)
        let report = try await makeSink(store, url).runOnce()
        #expect(report.resyncs == 1 && report.upserted == 2_500)
        let after = try await statistics(url)
        #expect(after.analyzed)
        #expect(after.pendingPages == 0)
    }

    @Test func batchesOfThousandsOfDocumentsLeaveTheTableAnalyzed() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("batches")
        let sink = try makeSink(store, url)
        _ = try await sink.runOnce()
        for start in stride(from: 1, to: 2_500, by: 100) { try await insertNotes(start...(start + 99), into: store) }
        let report = try await sink.runOnce()
        #expect(report.upserted == 2_500 && report.resyncs == 0)
        let after = try await statistics(url)
        #expect(after.analyzed)
        #expect(after.pendingPages == 0)
    }

    /// Analyzing is upkeep after bulk loads, not a cost of every small batch.
    @Test func aFewDocumentsDoNotAnalyze() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("few")
        try await insertNotes(1...20, into: store)
        _ = try await makeSink(store, url).runOnce()
        #expect(try await statistics(url).analyzed == false)
    }

    /// A schema the previous release created (version 1) is migrated: the long texts nobody
    /// filters by get no planner statistics.
    @Test func aVersionOneSchemaMigratesToKeepNoStatisticsOfLongTexts() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("v1")
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        try await insertNotes(1...5, into: store)
        let sink = try makeSink(store, url)
        _ = try await sink.runOnce()
        #expect(try await ginOptions(url) == ["gin_pending_list_limit=256"], "a new schema's GIN index keeps a small pending list")
        // Back to what version 1 left.
        try await PostgresTestServer.withClient(url) { client in
            try await client.query("ALTER INDEX \(unescaped: schema).documents_vector RESET (gin_pending_list_limit)")
            try await client.query("""
                ALTER TABLE \(unescaped: schema).documents ALTER COLUMN body SET STATISTICS -1, ALTER COLUMN cjk SET STATISTICS -1
                """)
            try await client.query("DROP INDEX \(unescaped: schema).documents_newest, \(unescaped: schema).documents_source_newest")
            try await client.query("UPDATE \(unescaped: schema).meta SET value = '1' WHERE key = 'schema_version'")
        }
        try await insertNotes(6...6, into: store)
        _ = try await sink.runOnce()
        let (version, targets, indexes) = try await PostgresTestServer.withClient(url) { client in
            var version = "", targets: [String: Int] = [:], indexes: [String] = []
            for try await value in try await client.query("SELECT value FROM \(unescaped: schema).meta WHERE key = 'schema_version'").decode(String.self) {
                version = value
            }
            for try await (name, target) in try await client.query("""
                SELECT attname::text, COALESCE(attstattarget, -1)::int FROM pg_attribute
                WHERE attrelid = to_regclass(\(schema + ".documents")) AND attnum > 0 AND NOT attisdropped
                """).decode((String, Int).self) { targets[name] = target }
            for try await name in try await client.query("""
                SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = to_regclass(\(schema + ".documents")) ORDER BY 1
                """).decode(String.self) { indexes.append(name) }
            return (version, targets, indexes)
        }
        // Version 3: the btree indexes of a search's newest matches.
        #expect(indexes.contains { $0.hasSuffix(".documents_newest") } && indexes.contains { $0.hasSuffix(".documents_source_newest") }, "\(indexes)")
        #expect(version == String(PostgresSchema.currentVersion))
        #expect(targets["body"] == 0 && targets["cjk"] == 0 && targets["title"] == 0)
        #expect(targets["vector"] == -1 && targets["source"] == -1)
        // Version 4: a small pending list.
        #expect(try await ginOptions(url) == ["gin_pending_list_limit=256"])
    }

    /// A schema named with both quotes is set up and migrated like any other (the migration
    /// names it as an identifier and as a string).
    @Test func aSchemaNamedWithQuotesIsSetUpAndMigrated() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("quotes").replacingOccurrences(of: "schema=", with: "schema=it%27s%20%22odd%22%20")
        #expect(try PostgresEndpoint(url: url).schema.hasPrefix("it's \"odd\" "))
        try await insertNotes(1...3, into: store)
        let sink = try makeSink(store, url)
        #expect(try await sink.runOnce().upserted == 3)
        #expect(try await ginOptions(url) == ["gin_pending_list_limit=256"])
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        try await PostgresTestServer.withClient(url) { client in
            try await client.query("ALTER INDEX \(unescaped: schema).documents_vector RESET (gin_pending_list_limit)")
            try await client.query("UPDATE \(unescaped: schema).meta SET value = '3' WHERE key = 'schema_version'")
        }
        try await insertNotes(4...4, into: store)
        #expect(try await sink.runOnce().upserted == 1)
        #expect(try await ginOptions(url) == ["gin_pending_list_limit=256"])
        let total = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { try await $0.search("kernels").total }
        #expect(total == 4)
    }

    /// The storage options of the documents' GIN index.
    func ginOptions(_ url: String) async throws -> [String] {
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        return try await PostgresTestServer.withClient(url) { client in
            var options: [String] = []
            for try await value in try await client.query("""
                SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = to_regclass(\(schema + ".documents_vector"))
                """).decode(String.self) { options = value.split(separator: ",").map(String.init) }
            return options
        }
    }
}
