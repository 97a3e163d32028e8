import Foundation
import GRDB
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory
import SearchlightPostgres

/// Scenario 9: the PostgreSQL sink, against a server given by `--postgres URL`.
///
/// - Throughput: eight sources (the corpus dealt out among eight SQLite files, written in
///   transactions of 10 rows) sink into one server at once; against a raw batched
///   `INSERT … ON CONFLICT` of the same documents, already prepared, into the same table and
///   indexes, from eight connections at once, in transactions of the same size.
/// - Freshness: a following `searchlight-postgres sink` process; this process commits single
///   rows at a steady rate and searches PostgreSQL for each until it is found.
/// - Search latency: top 20 with snippets for scenario 5's query set, on PostgreSQL at the
///   corpus's size and at eight copies of it, beside the local index on the same data.
enum PostgresScenario {
    static let sources = 8
    static let rowsPerTransaction = 10
    static let batchSize = 500

    static func run(_ documents: [Document], url: String, replica: String?, freshnessWrites: Int, copies: Int) async throws -> [Figure] {
        let directory = try scratchDirectory("postgres")
        defer { try? FileManager.default.removeItem(at: directory) }
        var figures: [Figure] = []
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let sinkURL = url + (url.contains("?") ? "&" : "?") + "schema=bench_sink_\(tag)"
        let rawURL = url + (url.contains("?") ? "&" : "?") + "schema=bench_raw_\(tag)"
        let copiesURL = url + (url.contains("?") ? "&" : "?") + "schema=bench_copies_\(tag)"
        let replicaURL = replica.map { $0 + ($0.contains("?") ? "&" : "?") + "schema=bench_sink_\(tag)" }

        // (Profiling the sink: freshness alone, on a small source.)
        if ProcessInfo.processInfo.environment["SEARCHLIGHT_BENCH_POSTGRES_FRESHNESS_ONLY"] != nil {
            let path = directory.appendingPathComponent("fresh.sqlite").path
            let store = try emptySource(path)
            try write(documents.prefix(Int(ProcessInfo.processInfo.environment["SEARCHLIGHT_BENCH_POSTGRES_FRESHNESS_ONLY"] ?? "") ?? 2_000).enumerated().map { ($0.offset + 1, $0.element) }, to: store)
            var configuration = PostgresSink.Configuration()
            configuration.source = "source-0"
            _ = try await PostgresSink(store: store, endpoint: try PostgresEndpoint(url: sinkURL), configuration: configuration).runOnce()
            let figures = try await freshness(documents, store: store, path: path, url: sinkURL, writes: freshnessWrites, replica: replicaURL)
            try? await dropSchemas(url, ["bench_sink_\(tag)"])
            return figures
        }
        // Throughput: 8 sources at once, incremental (history → PostgreSQL).
        var stores: [HistoryStore] = []
        var sinks: [PostgresSink] = []
        let shares = (0..<sources).map { s in documents.enumerated().filter { $0.offset % sources == s }.map { ($0.offset + 1, $0.element) } }
        for s in 0..<sources {
            let store = try emptySource(directory.appendingPathComponent("source\(s).sqlite").path)
            var configuration = PostgresSink.Configuration()
            configuration.source = "source-\(s)"
            configuration.batchSize = batchSize
            configuration.logger.logLevel = .warning
            let sink = try PostgresSink(store: store, endpoint: try PostgresEndpoint(url: sinkURL), configuration: configuration)
            _ = try await sink.runOnce() // creates the schema and the (empty) source
            try write(shares[s], to: store)
            stores.append(store)
            sinks.append(sink)
        }
        let clock = ContinuousClock()
        let sinkStart = clock.now
        let upserted = try await withThrowingTaskGroup(of: Int.self) { group in
            for sink in sinks { group.addTask { try await sink.runOnce().upserted } }
            return try await group.reduce(0, +)
        }
        let sinkSeconds = (clock.now - sinkStart).seconds
        guard upserted == documents.count else { throw Corpus.Failure(description: "the sinks upserted \(upserted) of \(documents.count) documents") }

        // The raw baseline: the same documents, prepared beforehand, the same table and indexes.
        let emptyStore = try emptySource(directory.appendingPathComponent("raw.sqlite").path)
        var rawConfiguration = PostgresSink.Configuration()
        rawConfiguration.source = "schema-maker"
        rawConfiguration.logger.logLevel = .warning
        _ = try await PostgresSink(store: emptyStore, endpoint: try PostgresEndpoint(url: rawURL), configuration: rawConfiguration).runOnce()
        let analyzer = SearchTextAnalyzer(model: Indexing.model)
        let entity = Indexing.model.entities[0]
        let prepared = shares.enumerated().map { s, share in
            share.map { id, doc in
                PostgresDocument(source: "source-\(s)", entity: entity, objectID: .integer(Int64(id)), token: Int64(id),
                                 values: ["title": doc.title, "body": doc.body], analyzer: analyzer)
            }
        }
        let rawEndpoint = try PostgresEndpoint(url: rawURL)
        let rowsPerBatch = batchSize * rowsPerTransaction
        let rawSeconds = try await withClient(rawEndpoint) { client in
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for share in prepared {
                    group.addTask {
                        try await client.withConnection { connection in
                            for chunk in stride(from: 0, to: share.count, by: rowsPerBatch).map({ share[$0..<min($0 + rowsPerBatch, share.count)] }) {
                                try await rawUpsert(Array(chunk), schema: rawEndpoint.schema, connection)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (clock.now - start).seconds
        }
        let sinkRate = Double(documents.count) / sinkSeconds, rawRate = Double(documents.count) / rawSeconds
        figures.append(Figure("9 PostgreSQL sink", "throughput, \(sources) sources at once (\(documents.count) documents)", unit: "docs/s",
                              ours: sinkRate, baseline: rawRate, baselineName: "raw INSERT … ON CONFLICT", target: ">= 0.7x", met: sinkRate >= 0.7 * rawRate))

        // (Profiling the sink: stop after the throughput part.)
        if ProcessInfo.processInfo.environment["SEARCHLIGHT_BENCH_POSTGRES_THROUGHPUT_ONLY"] != nil {
            try? await dropSchemas(url, ["bench_sink_\(tag)", "bench_raw_\(tag)"])
            return figures
        }
        // Freshness: a following sink process, single-row commits at 50 a second.
        figures += try await freshness(documents, store: stores[0], path: directory.appendingPathComponent("source0.sqlite").path,
                                       url: sinkURL, writes: freshnessWrites, replica: replicaURL)

        // Search latency at 1 and at `copies` copies of the corpus, beside the local index.
        let texts = SearchLatency.queryTexts(documents)
        let sinkEndpoint = try PostgresEndpoint(url: sinkURL)
        let pgOne = try await latencies(texts, endpoint: sinkEndpoint)
        let local = try localLatencies(texts, documents: documents, copies: 1, in: directory)
        var copyStores: [HistoryStore] = []
        let template = directory.appendingPathComponent("copy-template.sqlite").path
        let templateStore = try emptySource(template)
        try write(documents.enumerated().map { ($0.offset + 1, $0.element) }, to: templateStore, rowsPerTransaction: 10_000)
        _ = try await templateStore.databaseWriter.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        for c in 0..<copies {
            let path = directory.appendingPathComponent("copy\(c).sqlite").path
            try FileManager.default.copyItem(atPath: template, toPath: path)
            copyStores.append(try HistoryStore(path: path))
        }
        let loadStart = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (c, store) in copyStores.enumerated() {
                var configuration = PostgresSink.Configuration()
                configuration.source = "copy-\(c)"
                configuration.logger.logLevel = .warning
                let sink = try PostgresSink(store: store, endpoint: try PostgresEndpoint(url: copiesURL), configuration: configuration)
                group.addTask { _ = try await sink.runOnce() }
            }
            try await group.waitForAll()
        }
        let loadSeconds = (clock.now - loadStart).seconds
        figures.append(Figure("9 PostgreSQL sink", "first sync (snapshot, COPY) of \(copies) copies at once (\(copies * documents.count) documents)",
                              unit: "docs/s", ours: Double(copies * documents.count) / loadSeconds))
        let pgMany = try await latencies(texts, endpoint: try PostgresEndpoint(url: copiesURL))
        let localMany = try localLatencies(texts, documents: documents, copies: copies, in: directory)
        for (label, pg, local) in [("\(documents.count)", pgOne, local), ("\(copies * documents.count)", pgMany, localMany)] {
            let p = percentiles(pg), l = percentiles(local)
            figures.append(Figure("9 PostgreSQL sink", "search top-20 with snippets at \(label) documents, p50 (\(texts.count) queries)", unit: "ms",
                                  ours: p.p50, baseline: l.p50, baselineName: "local index, same data"))
            figures.append(Figure("9 PostgreSQL sink", "search top-20 with snippets at \(label) documents, p99", unit: "ms",
                                  ours: p.p99, baseline: l.p99, baselineName: "local index, same data"))
        }
        try? await dropSchemas(url, ["bench_sink_\(tag)", "bench_raw_\(tag)", "bench_copies_\(tag)"])
        return figures
    }

    /// An SQLite database with the bench's `docs` table, set up and empty.
    static func emptySource(_ path: String) throws -> HistoryStore {
        let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
        try pool.write { try $0.execute(sql: WriteOverhead.schema) }
        return try HistoryStore(dbPool: pool, model: Indexing.model)
    }

    /// Writes `rows` through the API, `rowsPerTransaction` rows a transaction.
    static func write(_ rows: [(Int, Document)], to store: HistoryStore, rowsPerTransaction: Int = rowsPerTransaction) throws {
        for start in stride(from: 0, to: rows.count, by: rowsPerTransaction) {
            try store.write(author: "import") { db in
                for (id, doc) in rows[start..<min(start + rowsPerTransaction, rows.count)] { try WriteOverhead.insert(doc, id, db) }
            }
        }
    }

    /// What a user would write by hand: one multi-row upsert per transaction.
    static func rawUpsert(_ documents: [PostgresDocument], schema name: String, _ connection: PostgresConnection) async throws {
        let logger = Logger(label: "bench")
        let encoder = JSONEncoder()
        let fields = documents.map { String(decoding: (try? encoder.encode($0.fields)) ?? Data("{}".utf8), as: UTF8.self) }
        let schema = PostgresSchema.quoted(name)
        try await connection.query("BEGIN", logger: logger)
        try await connection.query("""
            INSERT INTO \(unescaped: schema).documents (source, entity, object_key, object_id, title, fields, body, cjk, vector, token)
            SELECT s, e, k, o::jsonb, t, f::jsonb, b, c, v::tsvector, n
            FROM unnest(\(documents.map(\.source)), \(documents.map(\.entity)), \(documents.map(\.objectKey)), \(documents.map(\.objectJSON)),
                        \(documents.map { $0.title ?? "" }), \(fields), \(documents.map(\.body)), \(documents.map(\.cjkText)),
                        \(documents.map(\.vector)), \(documents.map(\.token))) AS u(s, e, k, o, t, f, b, c, v, n)
            ON CONFLICT (source, entity, object_key) DO UPDATE SET object_id = excluded.object_id, title = excluded.title,
                fields = excluded.fields, body = excluded.body, cjk = excluded.cjk, vector = excluded.vector, token = excluded.token
            """, logger: logger)
        try await connection.query("COMMIT", logger: logger)
    }

    /// Commit to searchable: a following sink process into `url`, single-row commits, each
    /// searched for on `url` and, with a replica (`searchURL`, the same schema on a hot standby),
    /// on the replica as well, which answers once it has replayed the sink's commit.
    static func freshness(_ documents: [Document], store: HistoryStore, path: String, url: String, writes: Int,
                          replica: String? = nil) async throws -> [Figure] {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchlight-postgres")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw Corpus.Failure(description: "build the searchlight-postgres executable first (swift build -c release)")
        }
        let sink = Process()
        sink.executableURL = binary
        sink.arguments = ["sink", "--db", path, "--postgres", url, "--source", "source-0"]
        let errors = Pipe()
        sink.standardError = errors
        try sink.run()
        defer { sink.terminate(); sink.waitUntilExit() }
        // Ready when it says it follows (it logs the line once caught up).
        var seen = Data()
        let deadline = Date().addingTimeInterval(60)
        while !String(decoding: seen, as: UTF8.self).contains("following source") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty || Date() > deadline { throw Corpus.Failure(description: "the sink did not start following: \(String(decoding: seen, as: UTF8.self))") }
            seen.append(chunk)
        }
        Thread.detachNewThread { while !errors.fileHandleForReading.availableData.isEmpty {} } // keep the pipe drained
        let endpoint = try PostgresEndpoint(url: url)
        let standby = try replica.map { try PostgresEndpoint(url: $0) }
        let clock = ContinuousClock()
        let (primary, secondary) = try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            try await withReplicaSearch(standby) { replicaSearch in
                var measured: [Double] = [], onReplica: [Double] = []
                for i in 0..<writes {
                    let started = clock.now
                    let word = "fresh\(i)zq"
                    try await store.databaseWriter.write { db in
                        try db.execute(sql: "INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)",
                                       arguments: [2_000_000 + i, word, word, documents[i % documents.count].body])
                    }
                    let committed = clock.now
                    var onPrimary: Duration?
                    var replicated: Duration? = replicaSearch == nil ? .zero : nil
                    while onPrimary == nil || replicated == nil {
                        if onPrimary == nil, try await search.search(word, sources: ["source-0"], limit: 1).total > 0 { onPrimary = clock.now - committed }
                        if replicated == nil, let replicaSearch, try await replicaSearch.search(word, sources: ["source-0"], limit: 1).total > 0 {
                            replicated = clock.now - committed
                        }
                        if clock.now - committed > .seconds(10) { throw Corpus.Failure(description: "write \(i) not in PostgreSQL (or its replica) after 10 s") }
                    }
                    measured.append(onPrimary!.seconds * 1000)
                    if replicaSearch != nil { onReplica.append(replicated!.seconds * 1000) }
                    let next = started + .milliseconds(20)
                    if next > clock.now { try await Task.sleep(until: next) }
                }
                return (measured, onReplica)
            }
        }
        let p = percentiles(primary)
        var figures = [
            Figure("9 PostgreSQL sink", "freshness, commit to searchable in PostgreSQL, p50 (\(writes) writes)", unit: "ms", ours: p.p50, target: "<= 20 ms", met: p.p50 <= 20),
            Figure("9 PostgreSQL sink", "freshness, p99", unit: "ms", ours: p.p99, target: "<= 100 ms", met: p.p99 <= 100),
        ]
        if !secondary.isEmpty {
            let r = percentiles(secondary)
            figures += [
                Figure("9 PostgreSQL sink", "freshness, commit to searchable on a streaming replica, p50 (\(writes) writes)", unit: "ms", ours: r.p50),
                Figure("9 PostgreSQL sink", "freshness on the replica, p99", unit: "ms", ours: r.p99, target: "<= 200 ms", met: r.p99 <= 200),
            ]
        }
        return figures
    }

    /// Runs `body` with a search on the replica, if there is one.
    static func withReplicaSearch<T: Sendable>(_ endpoint: PostgresEndpoint?, _ body: @Sendable (PostgresSearch?) async throws -> T) async throws -> T {
        guard let endpoint else { return try await body(nil) }
        return try await PostgresSearch.withSearch(endpoint: endpoint) { search in try await body(search) }
    }

    /// Milliseconds per query, top 20 with snippets, after one warm-up round.
    static func latencies(_ texts: [String], endpoint: PostgresEndpoint) async throws -> [Double] {
        try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            for text in texts { _ = try await search.search(text, limit: 20) }
            let clock = ContinuousClock()
            var measured: [Double] = []
            for text in texts {
                let start = clock.now
                _ = try await search.search(text, limit: 20)
                measured.append((clock.now - start).seconds * 1000)
            }
            return measured
        }
    }

    /// The same queries on the local index of `copies` copies of the corpus.
    static func localLatencies(_ texts: [String], documents: [Document], copies: Int, in directory: URL) throws -> [Double] {
        let store = try emptySource(directory.appendingPathComponent("local-\(copies).sqlite").path)
        var rows: [(Int, Document)] = []
        for c in 0..<copies { rows += documents.enumerated().map { (c * documents.count + $0.offset + 1, $0.element) } }
        try write(rows, to: store, rowsPerTransaction: 10_000)
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        for text in texts { _ = try index.search(text, limit: 20) }
        let clock = ContinuousClock()
        return try texts.map { text in
            let start = clock.now
            _ = try index.search(text, limit: 20)
            return (clock.now - start).seconds * 1000
        }
    }

    static func withClient<T: Sendable>(_ endpoint: PostgresEndpoint, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: endpoint.configuration, backgroundLogger: Logger(label: "bench"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    static func dropSchemas(_ url: String, _ schemas: [String]) async throws {
        try await withClient(try PostgresEndpoint(url: url)) { client in
            for name in schemas {
                let schema = PostgresSchema.quoted(name)
                try await client.query("DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE")
            }
        }
    }
}
