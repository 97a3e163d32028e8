import Foundation
import Synchronization
import GRDB
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory
import SearchlightPostgres

/// Scenario 15: a sink that writes continuously, and the GIN index's pending list.
///
/// With `fastupdate` (PostgreSQL's default), GIN appends new entries to a pending list and
/// moves them into the index when the list passes `gin_pending_list_limit` (4 MB): the write
/// that passes it pays for the move, and every search scans the list until then. The corpus is
/// loaded as one source (first once per policy, timed: a first sync's `COPY`); then, for each
/// policy of the documents' GIN index, `--steady-batches`
/// batches of 100 updated rows are written to SQLite and each is carried over by a sink run
/// (`PostgresSink.runOnce()`: connect, read the batch, write it, commit), while another task
/// searches the same source without pause (scenario 14's query mix); `--steady-rounds` rounds,
/// the policies' order reversed each round. Reported for each policy: a sink run's
/// p50/p99/max, and the searches' p50/p99 during the writes, beside the same searches with no
/// writes.
enum PostgresSteadyWrites {
    enum Policy: String, CaseIterable, Hashable {
        case defaultList = "pending list of 4 MB (PostgreSQL's default)"
        case smallList = "pending list of 256 kB"
        case noList = "no pending list (fastupdate off)"
        /// The chosen list with the vocabulary's triggers disabled: what they cost.
        case smallListNoVocabulary = "pending list of 256 kB, vocabulary triggers disabled"

        var storage: String {
            switch self {
            case .defaultList: "RESET (fastupdate, gin_pending_list_limit)"
            case .smallList, .smallListNoVocabulary: "SET (fastupdate = on, gin_pending_list_limit = 256)"
            case .noList: "SET (fastupdate = off)"
            }
        }

        /// `ALTER TABLE documents …` for this policy's triggers.
        var triggers: String { self == .smallListNoVocabulary ? "DISABLE TRIGGER USER" : "ENABLE TRIGGER USER" }
    }

    static let rowsPerBatch = 100

    static func run(_ documents: [Document], url: String, batches: Int, rounds: Int) async throws -> [Figure] {
        let directory = try scratchDirectory("postgres-steady")
        defer { try? FileManager.default.removeItem(at: directory) }
        let name = "bench_steady_\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        let schemaURL = url + (url.contains("?") ? "&" : "?") + "schema=\(name)"
        let endpoint = try PostgresEndpoint(url: schemaURL)
        let template = directory.appendingPathComponent("template.sqlite").path
        do {
            let store = try PostgresScenario.emptySource(template)
            try PostgresScenario.write(documents.enumerated().map { ($0.offset + 1, $0.element) }, to: store, rowsPerTransaction: 10_000)
            _ = try await store.databaseWriter.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        }
        // What each policy costs a first sync (the snapshot path: COPY into the index).
        var figures: [Figure] = []
        for (number, policy) in Policy.allCases.enumerated() {
            let loadName = name + "_load\(number)"
            let loadURL = url + (url.contains("?") ? "&" : "?") + "schema=\(loadName)"
            let loadEndpoint = try PostgresEndpoint(url: loadURL)
            var maker = PostgresSink.Configuration()
            maker.source = "schema-maker"
            maker.logger.logLevel = .warning
            _ = try await PostgresSink(store: try PostgresScenario.emptySource(directory.appendingPathComponent("maker\(number).sqlite").path),
                                       endpoint: loadEndpoint, configuration: maker).runOnce()
            try await PostgresScenario.withClient(loadEndpoint) { client in
                try await client.query("ALTER INDEX \(unescaped: PostgresSchema.quoted(loadName)).documents_vector \(unescaped: policy.storage)")
                try await client.query("ALTER TABLE \(unescaped: PostgresSchema.quoted(loadName)).documents \(unescaped: policy.triggers)")
            }
            let path = directory.appendingPathComponent("load\(number).sqlite").path
            try FileManager.default.copyItem(atPath: template, toPath: path)
            var loader = PostgresSink.Configuration()
            loader.source = "load"
            loader.logger.logLevel = .warning
            let sink = try PostgresSink(store: try HistoryStore(path: path), endpoint: loadEndpoint, configuration: loader)
            let clock = ContinuousClock()
            let start = clock.now
            _ = try await sink.runOnce()
            let seconds = (clock.now - start).seconds
            try await PostgresScenario.dropSchemas(url, [loadName])
            figures.append(Figure("15 PostgreSQL steady writes", "\(policy.rawValue): a first sync of \(documents.count) documents (snapshot, COPY)", unit: "s", ours: seconds))
        }
        let path = directory.appendingPathComponent("steady.sqlite").path
        try FileManager.default.copyItem(atPath: template, toPath: path)
        let store = try HistoryStore(path: path)
        var configuration = PostgresSink.Configuration()
        configuration.source = "steady"
        configuration.logger.logLevel = .warning
        let sink = try PostgresSink(store: store, endpoint: endpoint, configuration: configuration)
        _ = try await sink.runOnce()
        try await PostgresScenario.withClient(endpoint) { client in
            try await client.query("VACUUM (ANALYZE) \(unescaped: PostgresSchema.quoted(name)).documents")
        }
        do {
            figures += try await measure(documents, store: store, sink: sink, endpoint: endpoint, batches: batches, rounds: rounds)
            try await PostgresScenario.dropSchemas(url, [name])
            return figures
        } catch {
            try? await PostgresScenario.dropSchemas(url, [name])
            throw error
        }
    }

    static func measure(_ documents: [Document], store: HistoryStore, sink: PostgresSink, endpoint: PostgresEndpoint,
                        batches: Int, rounds: Int) async throws -> [Figure] {
        let scenario = "15 PostgreSQL steady writes"
        let schema = PostgresSchema.quoted(endpoint.schema)
        let queries = PostgresSearchScale.queries(documents)
        var runs: [Policy: [Double]] = [:], searched: [Policy: [Double]] = [:]
        var next = 0
        // The policies in turn, the order reversed each round (what autovacuum or the cache does
        // at one moment falls on each of them).
        for round in 0..<rounds {
            for policy in round % 2 == 0 ? Policy.allCases : Policy.allCases.reversed() {
                try await PostgresScenario.withClient(endpoint) { client in
                    try await client.query("ALTER INDEX \(unescaped: schema).documents_vector \(unescaped: policy.storage)")
                    try await client.query("ALTER TABLE \(unescaped: schema).documents \(unescaped: policy.triggers)")
                    try await client.query("SELECT gin_clean_pending_list(to_regclass(\("\(schema).documents_vector")))")
                }
                let writing = ManagedAtomicFlag()
                let searches = Task { try await search(queries, endpoint: endpoint, until: writing) }
                let clock = ContinuousClock()
                for _ in 0..<batches {
                    let first = next
                    next += rowsPerBatch
                    try await store.databaseWriter.write { db in
                        for row in first..<first + rowsPerBatch {
                            let document = documents[(row * 7 + 3 + row / documents.count) % documents.count] // another text on each pass
                            try db.execute(sql: "UPDATE docs SET title = ?, body = ? WHERE id = ?",
                                           arguments: [document.title, document.body, row % documents.count + 1])
                        }
                    }
                    let start = clock.now
                    let report = try await sink.runOnce()
                    runs[policy, default: []].append((clock.now - start).seconds * 1000)
                    // (An update that writes a row's own values again is no change: a few fewer.)
                    guard report.upserted > rowsPerBatch / 2 else {
                        throw Corpus.Failure(description: "a sink run upserted \(report.upserted) documents of \(rowsPerBatch) updated rows")
                    }
                }
                writing.finish()
                searched[policy, default: []] += try await searches.value
            }
        }
        // The floor: the same searches with no writes, the pending list empty.
        let quietDone = ManagedAtomicFlag()
        let quietCount = searched.values.map(\.count).min() ?? 0
        let quiet = try await search(queries, endpoint: endpoint, until: quietDone, count: max(quietCount / rounds, queries.count))
        let q = percentiles(quiet)
        var figures = [
            Figure(scenario, "top-20 with snippets, no writes, p50 (\(quiet.count) searches, \(documents.count) documents)", unit: "ms", ours: q.p50),
            Figure(scenario, "top-20 with snippets, no writes, p99", unit: "ms", ours: q.p99),
        ]
        for policy in Policy.allCases {
            let r = percentiles(runs[policy] ?? []), s = percentiles(searched[policy] ?? [])
            let label = policy.rawValue
            figures += [
                Figure(scenario, "\(label): a sink run of \(rowsPerBatch) updated documents, p50 (\(runs[policy]?.count ?? 0) runs)", unit: "ms", ours: r.p50),
                Figure(scenario, "\(label): a sink run, p99", unit: "ms", ours: r.p99),
                Figure(scenario, "\(label): a sink run, max", unit: "ms", ours: runs[policy]?.max() ?? 0),
                Figure(scenario, "\(label): top-20 with snippets during the writes, p50 (\(searched[policy]?.count ?? 0) searches)", unit: "ms",
                       ours: s.p50, baseline: q.p50, baselineName: "no writes"),
                Figure(scenario, "\(label): top-20 with snippets during the writes, p99", unit: "ms", ours: s.p99, baseline: q.p99, baselineName: "no writes"),
            ]
        }
        return figures
    }

    /// Searches the mix in a loop, on the one source, until `done` (or `count` searches).
    static func search(_ queries: [PostgresSearchScale.Query], endpoint: PostgresEndpoint, until done: ManagedAtomicFlag,
                       count: Int = .max) async throws -> [Double] {
        try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            var measured: [Double] = []
            let clock = ContinuousClock()
            var index = 0
            while !done.isDone, index < count {
                let query = queries[index % queries.count]
                index += 1
                let start = clock.now
                _ = try await search.search(query.text, asYouType: query.asYouType, sources: ["steady"], limit: 20)
                measured.append((clock.now - start).seconds * 1000)
            }
            return measured
        }
    }
}

/// A flag one task sets and another polls.
final class ManagedAtomicFlag: Sendable {
    private let state = Mutex(false)
    var isDone: Bool { state.withLock { $0 } }
    func finish() { state.withLock { $0 = true } }
}
