import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// Scenario 4: commit-to-searchable latency while `searchlight watch` runs in another process
/// and this process writes single rows at a steady rate, polling search for each one.
enum Freshness {
    static func run(_ documents: [Document], writes: Int, rate: Double) throws -> [Figure] {
        let directory = try scratchDirectory("freshness")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, path) = try Indexing.trackedDatabase(Array(documents.prefix(20_000)), in: directory)
        try Indexer(store: store).indexPendingChanges()
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchlight")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw Corpus.Failure(description: "build the searchlight executable first (swift build -c release)")
        }
        let watch = Process()
        watch.executableURL = binary
        watch.arguments = ["watch", "--db", path, "--log-level", "warning"]
        try watch.run()
        defer { watch.terminate(); watch.waitUntilExit() }
        Thread.sleep(forTimeInterval: 1)

        let index = SearchIndex(store: store)
        var latencies: [Double] = []
        let clock = ContinuousClock()
        let interval = 1 / rate
        for i in 0..<writes {
            let started = clock.now
            let word = "fresh\(i)zq"
            try store.databaseWriter.write { db in // a plain write: the watcher learns of it from the WAL
                try db.execute(sql: "INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)",
                               arguments: [1_000_000 + i, word, word, documents[i % documents.count].body])
            }
            let committed = clock.now
            while try index.search(word, limit: 1).total == 0 {
                if clock.now - committed > .seconds(5) { throw Corpus.Failure(description: "write \(i) not searchable after 5 s") }
                usleep(200)
            }
            latencies.append((clock.now - committed).seconds * 1000)
            let elapsed = (clock.now - started).seconds
            if elapsed < interval { usleep(UInt32((interval - elapsed) * 1_000_000)) }
        }
        let p = percentiles(latencies)
        let slowest = latencies.enumerated().sorted { $0.element > $1.element }.prefix(8).map { "#\($0.offset): \(Int($0.element)) ms" }
        FileHandle.standardError.write(Data("freshness: slowest \(slowest.joined(separator: ", "))\n".utf8))
        return [
            Figure("4 freshness", "commit to searchable, p50 (\(writes) writes at \(Int(rate))/s)", unit: "ms", ours: p.p50, target: "<= 10 ms", met: p.p50 <= 10),
            Figure("4 freshness", "commit to searchable, p95", unit: "ms", ours: p.p95),
            Figure("4 freshness", "commit to searchable, p99", unit: "ms", ours: p.p99, target: "<= 50 ms", met: p.p99 <= 50),
        ]
    }
}

func percentiles(_ values: [Double]) -> (p50: Double, p95: Double, p99: Double) {
    let sorted = values.sorted()
    func at(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    return (at(0.50), at(0.95), at(0.99))
}
