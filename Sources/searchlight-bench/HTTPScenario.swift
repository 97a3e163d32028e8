import Foundation
import Searchlight
import SearchlightHistory
import SearchlightPostgres
import Synchronization

/// Scenario 16: the HTTP API under load. The benchmark's query mix (scenario 14's: words,
/// phrases, prefixes, ORs, typos, as-you-type; top 20 with snippets, typos on) sent by `wrk`
/// over 32 connections on loopback to `searchlight serve` (and `searchlight-postgres serve`),
/// beside the floor: the same searches run in-process on 32 threads; and beside the CLI's cost
/// per search (a process each). The server's RSS is sampled while the load runs.
enum HTTPScenario {
    static let connections = 32
    /// The unqueued figure: one connection (and one thread) per core.
    static let few = 2

    struct Load {
        var throughput: Double
        var p50: Double
        var p99: Double
        var requests: Int
        var failures: Int
        var rss: [Double]
    }

    static func run(_ documents: [Document], url: String?, seconds: Int) async throws -> [Figure] {
        let directory = try scratchDirectory("http")
        defer { try? FileManager.default.removeItem(at: directory) }
        let queries = PostgresSearchScale.queries(documents)
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var figures: [Figure] = []
        let scenario = "16 HTTP API"

        // The local index.
        let path = directory.appendingPathComponent("http.sqlite").path
        let store = try PostgresScenario.emptySource(path)
        try PostgresScenario.write(documents.enumerated().map { ($0.offset + 1, $0.element) }, to: store, rowsPerTransaction: 10_000)
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        let floorSeconds = min(seconds, 60)
        let floor = try inProcess(queries, seconds: floorSeconds) { query in
            _ = try index.search(query.text, asYouType: query.asYouType, limit: 20)
        }
        let floorFew = try inProcess(queries, seconds: 20, threads: few) { query in
            _ = try index.search(query.text, asYouType: query.asYouType, limit: 20)
        }
        let (served, servedFew) = try serve(binaries.appendingPathComponent("searchlight").path, ["serve", "--db", path], queries: queries, seconds: seconds, in: directory)
        let cli = try perProcess(queries) { query in
            [binaries.appendingPathComponent("searchlight").path, "search", "--db", path, "--limit", "20", "--format", "json"] + (query.asYouType ? ["--prefix"] : []) + ["--", query.text]
        }
        figures += report(scenario, "local index", floor: floor, served: served, cli: cli, queries: queries.count)
        figures += reportFew(scenario, "local index", floor: floorFew, served: servedFew)

        if let url {
            let schema = "bench_http"
            let schemaURL = url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
            try await PostgresScenario.dropSchemas(url, [schema])
            _ = try await PostgresSearchScale.load(documents, copies: 1, url: schemaURL, in: directory)
            let endpoint = try PostgresEndpoint(url: schemaURL)
            let (floor, floorFew) = try await PostgresSearch.withSearch(endpoint: endpoint) { search in
                (try await inProcessAsync(queries, seconds: min(seconds, 60)) { query in
                    _ = try await search.search(query.text, asYouType: query.asYouType, limit: 20)
                }, try await inProcessAsync(queries, seconds: 20, tasks: few) { query in
                    _ = try await search.search(query.text, asYouType: query.asYouType, limit: 20)
                })
            }
            let (served, servedFew) = try serve(binaries.appendingPathComponent("searchlight-postgres").path, ["serve", "--postgres", schemaURL],
                                   queries: queries, seconds: seconds, in: directory)
            let cli = try perProcess(queries) { query in
                [binaries.appendingPathComponent("searchlight-postgres").path, "search", "--postgres", schemaURL, "--limit", "20", "--format", "json"]
                    + (query.asYouType ? ["--prefix"] : []) + ["--", query.text]
            }
            figures += report(scenario, "PostgreSQL", floor: floor, served: served, cli: cli, queries: queries.count)
            figures += reportFew(scenario, "PostgreSQL", floor: floorFew, served: servedFew)
            try await PostgresScenario.dropSchemas(url, [schema])
        } else {
            FileHandle.standardError.write(Data("scenario 16 on PostgreSQL skipped: no --postgres\n".utf8))
        }
        return figures
    }

    static func report(_ scenario: String, _ engine: String, floor: Load, served: Load, cli: [Double], queries: Int) -> [Figure] {
        let overhead = 1 - served.throughput / floor.throughput
        FileHandle.standardError.write(Data(("scenario 16, \(engine): in-process \(Int(floor.throughput))/s p50 \(floor.p50) p99 \(floor.p99); "
            + "HTTP \(Int(served.throughput))/s p50 \(served.p50) p99 \(served.p99), \(served.requests) requests, \(served.failures) not 200; "
            + "RSS MB \(served.rss.map { String(format: "%.0f", $0) }.joined(separator: " "))\n").utf8))
        var figures = [
            Figure(scenario, "\(engine): searches a second over HTTP, 32 connections (\(queries) queries, top 20 with snippets)", unit: "/s",
                   ours: served.throughput, baseline: floor.throughput, baselineName: "the same searches in-process on 32 threads",
                   target: "HTTP costs at most 20% of the floor's throughput", met: overhead <= 0.2),
            Figure(scenario, "\(engine): HTTP p50", unit: "ms", ours: served.p50, baseline: floor.p50, baselineName: "in-process on 32 threads"),
            Figure(scenario, "\(engine): HTTP p99", unit: "ms", ours: served.p99, baseline: floor.p99, baselineName: "in-process on 32 threads",
                   target: "≤ 50 ms", met: served.p99 <= 50),
            Figure(scenario, "\(engine): requests that were not 200", unit: "", ours: Double(served.failures), target: "0", met: served.failures == 0),
        ]
        let cliMean = cli.reduce(0, +) / Double(max(cli.count, 1))
        figures.append(Figure(scenario, "\(engine): the CLI's cost per search (a process each, \(cli.count) queries, mean)", unit: "ms", ours: cliMean,
                              baseline: 1000 / served.throughput * Double(connections), baselineName: "an HTTP search's time at 32 connections (32 / throughput)"))
        if let first = served.rss.dropFirst().first, let last = served.rss.last, let most = served.rss.max() {
            figures.append(Figure(scenario, "\(engine): server RSS at the end of the load", unit: "MB", ours: last, baseline: first,
                                  baselineName: "RSS after the first sample (\(served.rss.count) samples, largest \(Int(most)) MB)",
                                  target: "flat: within 10% of the early sample", met: last <= first * 1.1))
        }
        return figures
    }

    static func reportFew(_ scenario: String, _ engine: String, floor: Load, served: Load) -> [Figure] {
        FileHandle.standardError.write(Data("scenario 16, \(engine), \(few) connections: in-process \(Int(floor.throughput))/s p50 \(floor.p50) p99 \(floor.p99); HTTP \(Int(served.throughput))/s p50 \(served.p50) p99 \(served.p99), \(served.failures) not 200\n".utf8))
        return [
            Figure(scenario, "\(engine): searches a second over HTTP, \(few) connections (one a core: no queue)", unit: "/s", ours: served.throughput,
                   baseline: floor.throughput, baselineName: "in-process on \(few) threads"),
            Figure(scenario, "\(engine): HTTP p50, \(few) connections", unit: "ms", ours: served.p50, baseline: floor.p50, baselineName: "in-process on \(few) threads"),
            Figure(scenario, "\(engine): HTTP p99, \(few) connections", unit: "ms", ours: served.p99, baseline: floor.p99, baselineName: "in-process on \(few) threads",
                   target: "≤ 50 ms", met: served.p99 <= 50),
        ]
    }

    /// The floor: `body` on 32 threads for `seconds`, each thread starting at its own place in the mix.
    static func inProcess(_ queries: [PostgresSearchScale.Query], seconds: Int, threads connections: Int = connections,
                          _ body: @escaping @Sendable (PostgresSearchScale.Query) throws -> Void) throws -> Load {
        for query in queries { try body(query) } // warm
        let deadline = ContinuousClock.now + .seconds(seconds)
        let results = Mutex<[[Double]]>([])
        let group = DispatchGroup()
        for thread in 0..<connections {
            group.enter()
            let worker = Thread {
                var measured: [Double] = []
                var next = thread * queries.count / connections
                while ContinuousClock.now < deadline {
                    let start = ContinuousClock.now
                    try? body(queries[next % queries.count])
                    measured.append((ContinuousClock.now - start).seconds * 1000)
                    next += 1
                }
                results.withLock { $0.append(measured) }
                group.leave()
            }
            worker.stackSize = 4 << 20
            worker.start()
        }
        group.wait()
        let all = results.withLock { $0.flatMap { $0 } }
        let p = percentiles(all)
        return Load(throughput: Double(all.count) / Double(seconds), p50: p.p50, p99: p.p99, requests: all.count, failures: 0, rss: [])
    }

    static func inProcessAsync(_ queries: [PostgresSearchScale.Query], seconds: Int, tasks connections: Int = connections,
                               _ body: @escaping @Sendable (PostgresSearchScale.Query) async throws -> Void) async throws -> Load {
        for query in queries { try await body(query) }
        let deadline = ContinuousClock.now + .seconds(seconds)
        let all = try await withThrowingTaskGroup(of: [Double].self) { group in
            for task in 0..<connections {
                group.addTask {
                    var measured: [Double] = []
                    var next = task * queries.count / connections
                    while ContinuousClock.now < deadline {
                        let start = ContinuousClock.now
                        try await body(queries[next % queries.count])
                        measured.append((ContinuousClock.now - start).seconds * 1000)
                        next += 1
                    }
                    return measured
                }
            }
            var all: [Double] = []
            for try await measured in group { all += measured }
            return all
        }
        let p = percentiles(all)
        return Load(throughput: Double(all.count) / Double(seconds), p50: p.p50, p99: p.p99, requests: all.count, failures: 0, rss: [])
    }

    /// Starts a server (`--port 0`), warms it with the mix once, loads it with `wrk` for
    /// `seconds` while sampling its RSS, then stops it.
    static func serve(_ binary: String, _ arguments: [String], queries: [PostgresSearchScale.Query], seconds: Int, in directory: URL) throws -> (Load, Load) {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: binary)
        server.arguments = arguments + ["--port", "0", "--max-concurrent-searches", "64"]
        let errors = Pipe()
        server.standardError = errors
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        // The port, from "Serving http://127.0.0.1:PORT/".
        var said = ""
        while !said.contains("Serving http://") {
            let data = errors.fileHandleForReading.availableData
            if data.isEmpty { throw Corpus.Failure(description: "\(binary) stopped before serving: \(said)") }
            said += String(decoding: data, as: UTF8.self)
        }
        guard let match = said.firstMatch(of: /Serving http:\/\/127\.0\.0\.1:(\d+)\//), let port = Int(match.output.1) else { throw Corpus.Failure(description: "no port in: \(said)") }
        // Keep reading its stderr so that it never blocks on a full pipe.
        errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        let paths = queries.map { query in
            var components = URLComponents()
            components.path = "/v1/search"
            components.queryItems = [URLQueryItem(name: "q", value: query.text), URLQueryItem(name: "limit", value: "20")] + (query.asYouType ? [URLQueryItem(name: "prefix", value: "true")] : [])
            return components.percentEncodedPath + "?" + (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        }
        let script = directory.appendingPathComponent("mix.lua")
        let lines = paths.map { "  \"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"," }
        try ("local paths = {\n" + lines.joined(separator: "\n") + "\n}\n" + """
            local counter = 0
            setup = function(thread) thread:set("offset", counter * 7919); counter = counter + 1 end
            init = function(args) i = tonumber(offset) or 0 end
            request = function()
              i = i + 1
              return wrk.format("GET", paths[(i % #paths) + 1])
            end
            """).write(to: script, atomically: true, encoding: .utf8)
        let base = "http://127.0.0.1:\(port)"
        _ = try wrk(["-t2", "-c\(connections)", "-d5s", "-s", script.path, base]) // warm
        let samples = Mutex<[Double]>([])
        let sampler = Thread {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if let rss = try? FleetScenario.memory(server.processIdentifier).rss { samples.withLock { $0.append(rss) } }
                Thread.sleep(forTimeInterval: max(1, Double(seconds) / 30))
            }
        }
        sampler.start()
        let output = try wrk(["-t2", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", script.path, base])
        var load = try Self.load(output)
        load.rss = samples.withLock { $0 }
        let unqueued = try Self.load(try wrk(["-t\(few)", "-c\(few)", "-d20s", "--latency", "-s", script.path, base]))
        return (load, unqueued)
    }

    static func load(_ output: String) throws -> Load {
        guard let rate = output.firstMatch(of: /Requests\/sec:\s+([\d.]+)/).flatMap({ Double($0.output.1) }),
              let p50 = latency(output, "50%"), let p99 = latency(output, "99%"),
              let requests = output.firstMatch(of: /(\d+) requests in/).flatMap({ Int($0.output.1) }) else {
            throw Corpus.Failure(description: "unreadable wrk output: \(output)")
        }
        let failures = output.firstMatch(of: /Non-2xx or 3xx responses: (\d+)/).flatMap { Int($0.output.1) } ?? 0
        let socketErrors = output.firstMatch(of: /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/)
            .map { Int($0.output.1)! + Int($0.output.2)! + Int($0.output.3)! + Int($0.output.4)! } ?? 0
        return Load(throughput: rate, p50: p50, p99: p99, requests: requests, failures: failures + socketErrors, rss: [])
    }

    /// wrk's "  99%   12.34ms" line, in milliseconds.
    static func latency(_ output: String, _ percentile: String) -> Double? {
        guard let match = output.firstMatch(of: try! Regex("\\s\(percentile)\\s+([\\d.]+)(us|ms|s)\\b")),
              let value = Double(match.output[1].substring ?? "") else { return nil }
        switch match.output[2].substring ?? "" {
        case "us": return value / 1000
        case "s": return value * 1000
        default: return value
        }
    }

    static func wrk(_ arguments: [String]) throws -> String {
        try Instructions.output(["/usr/bin/env", "wrk"] + arguments) // (Debian's wrk)
    }

    /// Milliseconds per search through the CLI, a process each, for 40 queries of the mix.
    static func perProcess(_ queries: [PostgresSearchScale.Query], command: (PostgresSearchScale.Query) -> [String]) throws -> [Double] {
        let chosen = stride(from: 0, to: queries.count, by: max(1, queries.count / 40)).prefix(40).map { queries[$0] }
        return try chosen.map { query in
            let start = ContinuousClock.now
            _ = try Instructions.output(command(query))
            return (ContinuousClock.now - start).seconds * 1000
        }
    }
}
