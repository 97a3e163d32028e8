import Foundation
import GRDB
import Searchlight
import SearchlightHistory
import SearchlightEvaluation

/// Scenario 12: a fleet under one `searchlight watch --dbs` process. `databases` files of 100 to
/// 1,000 rows each (tracked, never indexed) are made here; then the watcher's first sync (until
/// every index reaches its head), commit-to-searchable freshness of single-row writes to random
/// tenants, the watcher's CPU while every tenant is idle, and its peak RSS.
enum FleetScenario {
    static func run(_ documents: [Document], databases: Int, rows rowRange: ClosedRange<Int> = 100...1_000, writes: Int, seed: UInt64 = 12) throws -> [Figure] {
        let directory = try scratchDirectory("fleet")
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SplitMix(seed: seed)
        let clock = ContinuousClock()
        var paths: [String] = []
        var rows = 0
        let made = clock.now
        for tenant in 0..<databases {
            let path = directory.appendingPathComponent("tenant-\(tenant).sqlite").path
            let count = rowRange.lowerBound + Int(random.next() % UInt64(rowRange.count))
            do {
                let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
                try pool.write { try $0.execute(sql: WriteOverhead.schema) }
                let store = try HistoryStore(dbPool: pool, model: Indexing.model)
                try store.write(author: "import") { db in
                    for row in 0..<count { try WriteOverhead.insert(documents[(tenant * 7 + row) % documents.count], row + 1, db) }
                }
            }
            rows += count
            paths.append(path)
        }
        FileHandle.standardError.write(Data("fleet: \(databases) databases, \(rows) rows made in \(Int((clock.now - made).seconds)) s\n".utf8))

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchlight")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw Corpus.Failure(description: "build the searchlight executable first (swift build -c release)")
        }
        let watch = Process()
        watch.executableURL = binary
        watch.arguments = ["watch", "--dbs", directory.path + "/*.sqlite", "--log-level", "warning"]
        // SEARCHLIGHT_BENCH_FLEET_LOG: the watcher's log, at SEARCHLIGHT_BENCH_FLEET_LOG_LEVEL
        // (info unless told; debug adds the fleet's counters every 10 s, trace every turn).
        if let log = ProcessInfo.processInfo.environment["SEARCHLIGHT_BENCH_FLEET_LOG"] {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            watch.standardError = FileHandle(forWritingAtPath: log)
            let level = ProcessInfo.processInfo.environment["SEARCHLIGHT_BENCH_FLEET_LOG_LEVEL"] ?? "info"
            watch.arguments = ["watch", "--dbs", directory.path + "/*.sqlite", "--log-level", level]
        }
        let started = clock.now
        try watch.run()
        defer { watch.terminate(); watch.waitUntilExit() }

        // First sync: every tenant's index at its head (read with a plain connection, as the
        // watcher's own process would not be disturbed by a store of ours).
        func indexed(_ path: String) throws -> Bool {
            let queue = try DatabaseQueue(path: path, configuration: readOnly())
            return try queue.read { db in
                guard try db.tableExists("searchlight_consumer") else { return false }
                let head = try Int64.fetchOne(db, sql: "SELECT coalesce(max(CASE token WHEN 0 THEN id ELSE token END), 0) FROM searchlight_log") ?? 0
                let checkpoint = try Int64.fetchOne(db, sql: "SELECT token FROM searchlight_consumer WHERE author = 'searchlight.indexer'")
                return (checkpoint ?? -1) >= head
            }
        }
        // RSS over time, on stderr every 5 s.
        var lastSample = clock.now - .seconds(10)
        func sample(_ phase: String) throws {
            guard clock.now - lastSample >= .seconds(5) else { return }
            lastSample = clock.now
            let (rss, peak) = try memory(watch.processIdentifier)
            let line = "fleet: \(phase) " + String(format: "%.0f s: RSS %.0f MB (peak %.0f MB), %d threads, %.1f CPU s\n",
                              (clock.now - started).seconds, rss, peak, threads(watch.processIdentifier), try cpuSeconds(watch.processIdentifier))
            FileHandle.standardError.write(Data(line.utf8))
        }
        var pending = Set(paths)
        while !pending.isEmpty {
            if clock.now - started > .seconds(3_600) { throw Corpus.Failure(description: "the fleet's first sync took over an hour") }
            for path in pending where try indexed(path) { pending.remove(path) }
            try sample("first sync, \(pending.count) left,")
            if !pending.isEmpty { usleep(200_000) }
        }
        let firstSync = (clock.now - started).seconds
        let (_, syncPeak) = try memory(watch.processIdentifier)
        FileHandle.standardError.write(Data("fleet: first sync took \(Int(firstSync)) s\n".utf8))

        // Freshness: a row written to a random tenant, searched until found.
        var latencies: [Double] = []
        for i in 0..<writes {
            let path = paths[Int(random.next() % UInt64(paths.count))]
            let store = try HistoryStore(path: path)
            let index = SearchIndex(store: store)
            let word = "fleetfresh\(i)zq"
            try store.databaseWriter.write { db in
                try db.execute(sql: "INSERT INTO docs(key, title, body) VALUES (?, ?, ?)", arguments: [word, word, "a fleet write"])
            }
            let committed = clock.now
            while try index.search(word, limit: 1).total == 0 {
                if clock.now - committed > .seconds(10) { throw Corpus.Failure(description: "fleet write \(i) not searchable after 10 s") }
                usleep(200)
            }
            let latency = (clock.now - committed).seconds * 1000
            // The tail, with when it happened (the watcher's log at trace level says what it did then).
            if latency > 250 { FileHandle.standardError.write(Data("fleet: write \(i) to \(path) at \(Date()) took \(Int(latency)) ms\n".utf8)) }
            latencies.append(latency)
            try sample("writes,")
            usleep(20_000)
        }
        let p = percentiles(latencies)
        let slowest = latencies.max() ?? 0

        // Idle: CPU over 10 s with no writes, once every member was released (10 s idle).
        let (_, busyPeak) = try memory(watch.processIdentifier)
        Thread.sleep(forTimeInterval: 13)
        let cpuBefore = try cpuSeconds(watch.processIdentifier)
        Thread.sleep(forTimeInterval: 10)
        let idleCPU = (try cpuSeconds(watch.processIdentifier) - cpuBefore) / 10 * 100
        let (rss, peak) = try memory(watch.processIdentifier)
        FileHandle.standardError.write(Data(String(format: "fleet: idle: RSS %.0f MB, %d threads\n", rss, threads(watch.processIdentifier)).utf8))
        let scenario = "12 fleet (\(databases) databases)"
        return [
            Figure(scenario, "first sync: \(rows) rows in \(databases) databases", unit: "s", ours: firstSync),
            Figure(scenario, "commit to searchable, p50 (\(writes) writes to random tenants)", unit: "ms", ours: p.p50, target: "<= 50 ms", met: p.p50 <= 50),
            Figure(scenario, "commit to searchable, p99", unit: "ms", ours: p.p99, target: "<= 500 ms", met: p.p99 <= 500),
            Figure(scenario, "commit to searchable, slowest", unit: "ms", ours: slowest),
            Figure(scenario, "CPU with every tenant idle", unit: "% of a core", ours: idleCPU, target: "<= 2%", met: idleCPU <= 2),
            Figure(scenario, "peak RSS during the first sync", unit: "MB", ours: syncPeak),
            Figure(scenario, "peak RSS before the idle members were released", unit: "MB", ours: busyPeak),
            Figure(scenario, "RSS once idle members were released", unit: "MB", ours: rss),
            Figure(scenario, "peak RSS", unit: "MB", ours: peak, target: "<= 300 MB", met: peak <= 300),
            Figure(scenario, "peak RSS per database", unit: "KB", ours: peak * 1024 / Double(databases)),
            Figure(scenario, "idle RSS per database", unit: "KB", ours: rss * 1024 / Double(databases)),
        ]
    }

    private static func readOnly() -> Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return configuration
    }

    /// User and system CPU seconds of a process (`/proc/PID/stat`, fields 14 and 15).
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (Double(fields[11])! + Double(fields[12])!) / ticks
    }

    /// Threads of a process (`/proc/PID/status`).
    static func threads(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
        return Int(line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? 0
    }

    /// Resident and peak resident memory of a process, in MB (`/proc/PID/status`).
    static func memory(_ pid: Int32) throws -> (rss: Double, peak: Double) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func value(_ key: String) -> Double {
            let line = status.split(separator: "\n").first { $0.hasPrefix(key) } ?? ""
            return (Double(line.split(separator: " ").dropFirst().first { !$0.isEmpty }.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0) / 1024
        }
        return (value("VmRSS:"), value("VmHWM:"))
    }
}
