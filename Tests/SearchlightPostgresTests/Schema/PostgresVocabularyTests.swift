import Foundation
import GRDB
import PostgresNIO
import Searchlight
import SearchlightHistory
@testable import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// The vocabulary PostgreSQL keeps for each source (schema version 5) holds the words and
/// document counts that the local index's vocabulary holds for the same rows: the oracle is the
/// local indexer's own count (SQLite's tokenizer, counted in Swift), which shares no code with
/// the triggers that keep PostgreSQL's (lexemes of the sink's vectors, counted in SQL). Checked
/// after a first sync (`COPY`), after batches of inserts, updates and deletes, after a resync
/// (`DELETE` and `COPY`), and after the migration from version 4 counted what was there.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresVocabularyTests {
    /// (Not Greek or Cyrillic letters with marks: the sink folds their marks away, as it folds
    /// every script's, where the local tokenizer folds Latin ones only: `σύστημα` is `συστημα`
    /// in PostgreSQL and stays `σύστημα` locally; docs/Limitations.md.)
    static let words = ["kernel", "Panic", "Café", "résumé", "Straße", "naïve", "x11", "2024", "ядро", "система", "数据库", "ファイル",
                        "kernel数据", "e-mail", "o'clock", String(repeating: "long", count: 17), String(repeating: "é", count: 40), "ok"]

    static func text(_ random: inout SplitMix) -> String {
        (0..<Int.random(in: 0...6, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: [" ", ", ", "。"].randomElement(using: &random)!)
    }

    /// The local index's vocabulary: word → documents.
    static func local(_ store: HistoryStore) throws -> [String: Int] {
        try store.databaseWriter.read { db in
            guard let table = try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'searchlight_terms_g%' ORDER BY name DESC LIMIT 1") else { return [:] }
            return try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT term, documents FROM \"\(table)\"").map { ($0[0] as String, $0[1] as Int) })
        }
    }

    /// PostgreSQL's vocabulary of `source`: word → documents.
    static func remote(_ url: String, source: String) async throws -> [String: Int] {
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        return try await PostgresTestServer.withClient(url) { client in
            var words: [String: Int] = [:]
            for try await (word, documents) in try await client.query("SELECT word, documents FROM \(unescaped: schema).vocabulary WHERE source = \(source)")
                .decode((String, Int).self) { words[word] = documents }
            return words
        }
    }

    static func compare(_ store: HistoryStore, _ url: String, source: String, _ label: String) async throws {
        try Indexer(store: store).indexPendingChanges()
        let local = try local(store), remote = try await remote(url, source: source)
        let differences = Set(local.keys).union(remote.keys).filter { local[$0] != remote[$0] }.sorted()
        #expect(differences.isEmpty, "\(label): \(differences.prefix(10).map { "\($0): \(Array($0.unicodeScalars).map { String($0.value, radix: 16) }) local \(local[$0].map(String.init) ?? "-"), PostgreSQL \(remote[$0].map(String.init) ?? "-")" })")
        #expect(local.count > 5, "\(label): the vocabulary holds words (\(local.count))")
    }

    func write(_ store: HistoryStore, _ random: inout SplitMix, inserts: ClosedRange<Int>, changes: Int) throws {
        var random2 = random
        try store.write(author: "app") { db in
            for id in inserts {
                try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)",
                               arguments: [id, Self.text(&random2), Self.text(&random2), Self.text(&random2)])
            }
            for _ in 0..<changes {
                let id = Int.random(in: 1...inserts.upperBound, using: &random2)
                if Bool.random(using: &random2) {
                    try db.execute(sql: "UPDATE notes SET body = ?, title = ? WHERE id = ?", arguments: [Self.text(&random2), Self.text(&random2), id])
                } else {
                    try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [id])
                }
            }
        }
        random = random2
    }

    @Test func theVocabularyHoldsTheLocalIndexsWordsThroughEveryWritePath() async throws {
        var (_, random) = seededGenerator("PostgresVocabularyTests.everyWritePath")
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("vocabulary")
        try write(store, &random, inserts: 1...80, changes: 10)
        try await store.write(author: "app") { db in
            for id in 1...6 { try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: ["p\(id)", "Person naïve \(id) ядро"]) }
        }
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        configuration.batchSize = 7 // several batches, several statements
        let sink = try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
        #expect(try await sink.runOnce().resyncs == 1, "a first sync: the snapshot's COPY")
        try await Self.compare(store, url, source: "s", "first sync")
        for round in 1...3 {
            try write(store, &random, inserts: (80 + round * 20 - 19)...(80 + round * 20), changes: 25)
            _ = try await sink.runOnce()
            try await Self.compare(store, url, source: "s", "batches, round \(round)")
        }
        // A word's last document deleted, or updated without it: the word goes.
        try await store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (1001, 'zyzzyva', 'kernel'), (1002, 'quokka', 'panic')")
        }
        _ = try await sink.runOnce()
        #expect(try await Self.remote(url, source: "s")["zyzzyva"] == 1)
        try await store.write(author: "app") { db in
            try db.execute(sql: "DELETE FROM notes WHERE id = 1001")
            try db.execute(sql: "UPDATE notes SET title = 'kernel' WHERE id = 1002")
        }
        _ = try await sink.runOnce()
        try await Self.compare(store, url, source: "s", "last documents gone")
        let left = try await Self.remote(url, source: "s")
        #expect(left["zyzzyva"] == nil && left["quokka"] == nil, "\(left["zyzzyva"] ?? -1) \(left["quokka"] ?? -1)")
        // Another source with the same words counts apart.
        let other = try TestDatabase()
        let otherStore = try other.openStore()
        try await otherStore.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'kernel Panic')") }
        var otherConfiguration = PostgresSink.Configuration()
        otherConfiguration.source = "t"
        _ = try await PostgresSink(store: otherStore, endpoint: PostgresEndpoint(url: url), configuration: otherConfiguration).runOnce()
        #expect(try await Self.remote(url, source: "t") == ["kernel": 1, "panic": 1])
        try await Self.compare(store, url, source: "s", "beside another source")
        // A resync: PostgreSQL ahead of this database's checkpoint (a restored backup).
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        try await PostgresTestServer.withClient(url) { client in
            try await client.query("UPDATE \(unescaped: schema).sources SET token = token + 1000 WHERE source = 's'")
        }
        try write(store, &random, inserts: 141...150, changes: 10)
        #expect(try await sink.runOnce().resyncs == 1)
        try await Self.compare(store, url, source: "s", "after a resync")
        #expect(try await Self.remote(url, source: "t") == ["kernel": 1, "panic": 1], "the other source's words are its own")
    }

    /// A version 4 schema gains the vocabulary of what it holds; writes after count on.
    @Test func theMigrationCountsTheDocumentsThere() async throws {
        var (_, random) = seededGenerator("PostgresVocabularyTests.migration")
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("vocmigrate")
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        try write(store, &random, inserts: 1...40, changes: 5)
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        let sink = try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
        _ = try await sink.runOnce()
        try await PostgresTestServer.withClient(url) { client in
            try await client.query("DROP TABLE \(unescaped: schema).vocabulary")
            try await client.query("DROP FUNCTION \(unescaped: schema).vocabulary_count() CASCADE")
            try await client.query("DROP FUNCTION \(unescaped: schema).vocabulary_words(tsvector)")
            try await client.query("UPDATE \(unescaped: schema).meta SET value = '4' WHERE key = 'schema_version'")
        }
        try write(store, &random, inserts: 41...50, changes: 10)
        _ = try await sink.runOnce()
        try await Self.compare(store, url, source: "s", "migrated")
        try write(store, &random, inserts: 51...60, changes: 10)
        _ = try await sink.runOnce()
        try await Self.compare(store, url, source: "s", "after the migration")
    }
}
