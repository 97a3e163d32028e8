import Foundation
import GRDB
import Logging
import PostgresNIO
import SearchlightEvaluation
import SearchlightHistory
import SearchlightPostgres

/// Scenario 13: a fleet under one `searchlight-postgres sink --dbs` process, against a server
/// given by `--postgres URL`. `databases` files of 100 to 1,000 rows each are set up here (as
/// scenario 12's); then one sink process with `--connections 4`: its first sync (until every
/// source's token in PostgreSQL equals its database's head), commit-to-visible freshness of
/// single-row writes to random tenants (each polled in PostgreSQL by its source and key), the
/// sink's CPU while every source is idle, its peak RSS, and the most PostgreSQL client
/// connections seen at any poll of the run.
enum SinkFleetScenario {
    static let connections = 4

    static func run(_ documents: [Document], url: String, databases: Int, rows rowRange: ClosedRange<Int> = 100...1_000, writes: Int, idleSeconds: Int = 30, seed: UInt64 = 13) async throws -> [Figure] {
        let directory = try scratchDirectory("sink-fleet")
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SplitMix(seed: seed)
        let clock = ContinuousClock()
        var paths: [String] = [], sources: [String] = [], heads: [String: Int64] = [:]
        var rows = 0
        let made = clock.now
        for tenant in 0..<databases {
            let path = directory.appendingPathComponent("tenant-\(tenant).sqlite").path
            let count = rowRange.lowerBound + Int(random.next() % UInt64(rowRange.count))
            let share = (0..<count).map { row in (row + 1, documents[(tenant * 7 + row) % documents.count]) }
            let store = try PostgresScenario.emptySource(path)
            try PostgresScenario.write(share, to: store, rowsPerTransaction: count)
            let source = try store.sourceID()
            heads[source] = try await store.databaseWriter.read { db in
                try Int64.fetchOne(db, sql: "SELECT coalesce(max(CASE token WHEN 0 THEN id ELSE token END), 0) FROM searchlight_log") ?? 0
            }
            rows += count
            paths.append(path)
            sources.append(source)
        }
        FileHandle.standardError.write(Data("sink fleet: \(databases) databases, \(rows) rows made in \(Int((clock.now - made).seconds)) s\n".utf8))

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchlight-postgres")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw Corpus.Failure(description: "build the searchlight-postgres executable first (swift build -c release)")
        }
        let schemaName = "bench_fleet_\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        let fleetURL = url + (url.contains("?") ? "&" : "?") + "schema=\(schemaName)"
        let schema = PostgresSchema.quoted(schemaName)
        let sink = Process()
        sink.executableURL = binary
        let log = ProcessInfo.processInfo.environment["SEARCHLIGHT_BENCH_SINK_FLEET_LOG"]
        sink.arguments = ["sink", "--dbs", directory.path + "/*.sqlite", "--postgres", fleetURL,
                          "--connections", "\(connections)", "--log-level", log == nil ? "warning" : "info"]
        if let log {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            sink.standardError = FileHandle(forWritingAtPath: log)
        } else {
            sink.standardError = FileHandle.nullDevice
        }
        sink.standardOutput = FileHandle.nullDevice
        defer { if sink.isRunning { sink.terminate(); sink.waitUntilExit() } }

        let targets = (0..<writes).map { _ in Int(random.next() % UInt64(databases)) }
        let totalRows = rows
        let endpoint = try PostgresEndpoint(url: url)
        let logger = Logger(label: "bench")
        let result = try await PostgresScenario.withClient(endpoint) { [heads, paths, sources] client in
            // Everything below runs on this one connection, so that pg_stat_activity's count of
            // the other client backends is the sink's (the server is the bench's own).
            try await client.withConnection { connection in
                var maximumConnections = 0
                func sampleConnections() async throws {
                    let rows = try await connection.query("""
                        SELECT count(*)::int8 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
                        """, logger: logger)
                    for try await count in rows.decode(Int64.self) { maximumConnections = max(maximumConnections, Int(count)) }
                }
                let started = clock.now
                try sink.run()

                // First sync: every source's token in PostgreSQL at its database's head.
                var pending = heads
                while !pending.isEmpty {
                    if !sink.isRunning { throw Corpus.Failure(description: "the sink exited with status \(sink.terminationStatus) during the first sync") }
                    if clock.now - started > .seconds(3_600) { throw Corpus.Failure(description: "the sink fleet's first sync took over an hour") }
                    try await sampleConnections()
                    do {
                        let rows = try await connection.query("SELECT source, token FROM \(unescaped: schema).sources", logger: logger)
                        for try await (source, token) in rows.decode((String, Int64).self) where token >= (pending[source] ?? .max) {
                            pending[source] = nil
                        }
                    } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                        // Not created yet.
                    }
                    if !pending.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
                }
                let firstSync = (clock.now - started).seconds
                FileHandle.standardError.write(Data("sink fleet: first sync in \(Int(firstSync)) s\n".utf8))

                // Freshness: a row written to a random tenant, polled in PostgreSQL by its source and key.
                var latencies: [Double] = []
                for i in 0..<writes {
                    let tenant = targets[i]
                    let id = 10_000_000 + i
                    let queue = try DatabaseQueue(path: paths[tenant], configuration: HistoryStore.databaseConfiguration())
                    let started = clock.now
                    try await queue.write { db in
                        try db.execute(sql: "INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)",
                                       arguments: [id, "fleetfresh\(i)", "fleetfresh\(i)zq", documents[i % documents.count].body])
                    }
                    let committed = clock.now
                    let source = sources[tenant], key = "i:\(id)"
                    var polls = 0
                    while true {
                        let rows = try await connection.query("""
                            SELECT count(*)::int8 FROM \(unescaped: schema).documents WHERE source = \(source) AND object_key = \(key)
                            """, logger: logger)
                        var found = false
                        for try await count in rows.decode(Int64.self) { found = count > 0 }
                        if found { break }
                        if clock.now - committed > .seconds(10) { throw Corpus.Failure(description: "write \(i) (\(source)) not in PostgreSQL after 10 s") }
                        polls += 1
                        if polls % 50 == 0 { try await sampleConnections() }
                    }
                    latencies.append((clock.now - committed).seconds * 1000)
                    try await sampleConnections()
                    try queue.close()
                    let next = started + .milliseconds(20)
                    if next > clock.now { try await Task.sleep(until: next) }
                }

                // Every row once: the documents equal the rows written.
                var total: Int64 = 0
                for try await count in try await connection.query("SELECT count(*)::int8 FROM \(unescaped: schema).documents", logger: logger).decode(Int64.self) {
                    total = count
                }
                guard total == Int64(totalRows + writes) else {
                    throw Corpus.Failure(description: "PostgreSQL holds \(total) documents, not the \(totalRows + writes) rows written")
                }

                // Idle: CPU over `idleSeconds` with no writes, after 13 s (idle members are released after 10 s).
                let (_, busyPeak) = try FleetScenario.memory(sink.processIdentifier)
                try await Task.sleep(for: .seconds(13))
                try await sampleConnections()
                let cpuBefore = try FleetScenario.cpuSeconds(sink.processIdentifier)
                try await Task.sleep(for: .seconds(idleSeconds))
                let idleCPU = (try FleetScenario.cpuSeconds(sink.processIdentifier) - cpuBefore) / Double(idleSeconds) * 100
                try await sampleConnections()
                let (rss, peak) = try FleetScenario.memory(sink.processIdentifier)
                return (firstSync, latencies, idleCPU, busyPeak, rss, peak, maximumConnections)
            }
        }
        if sink.isRunning { sink.terminate(); sink.waitUntilExit() }
        try? await PostgresScenario.dropSchemas(url, [schemaName])

        let (firstSync, latencies, idleCPU, busyPeak, rss, peak, maximumConnections) = result
        let p = percentiles(latencies)
        let scenario = "13 sink fleet (\(databases) databases)"
        return [
            Figure(scenario, "first sync: \(rows) rows of \(databases) databases into PostgreSQL", unit: "s", ours: firstSync),
            Figure(scenario, "commit to visible in PostgreSQL, p50 (\(writes) writes to random tenants)", unit: "ms", ours: p.p50, target: "<= 50 ms", met: p.p50 <= 50),
            Figure(scenario, "commit to visible in PostgreSQL, p99", unit: "ms", ours: p.p99, target: "<= 500 ms", met: p.p99 <= 500),
            Figure(scenario, "commit to visible in PostgreSQL, max", unit: "ms", ours: latencies.max() ?? 0),
            Figure(scenario, "CPU with every source idle (\(idleSeconds) s)", unit: "% of a core", ours: idleCPU, target: "<= 2%", met: idleCPU <= 2),
            Figure(scenario, "peak RSS before the idle members were released", unit: "MB", ours: busyPeak),
            Figure(scenario, "RSS once idle members were released", unit: "MB", ours: rss),
            Figure(scenario, "peak RSS", unit: "MB", ours: peak, target: "<= 300 MB", met: peak <= 300),
            Figure(scenario, "peak RSS per database", unit: "KB", ours: peak * 1024 / Double(databases)),
            Figure(scenario, "most PostgreSQL connections seen (--connections \(connections))", unit: "connections",
                   ours: Double(maximumConnections), target: "<= \(connections)", met: maximumConnections <= connections),
        ]
    }
}
