import ArgumentParser
import Foundation

@main
struct SearchlightBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchlight-bench",
        abstract: "Measures Searchlight against what users would otherwise do, side by side in one run.")

    @Option(help: "A corpus as JSON lines ({\"id\", \"title\", \"body\"}), optionally gzipped, or a WordNet directory (/usr/share/wordnet).")
    var corpus: String

    @Option(help: "Use at most this many documents of the corpus.")
    var limit: Int?

    @Option(help: "Single-row transactions per variant in the write-overhead scenario.")
    var singleRows = 2_000

    @Option(help: "Rows of the bulk insert in the write-overhead scenario.")
    var bulkRows = 100_000

    @Option(help: "Rounds per write-overhead variant (the best round counts).")
    var rounds = 3

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @Option(help: "CJK corpora for scenario 7 (JSON lines, repeatable), e.g. ../shared/corpus/manpages-zh.jsonl.gz.")
    var cjkCorpus: [String] = []

    @Option(help: "Queries per kind in scenario 7.")
    var cjkQueries = 100

    @Option(help: "Run only these scenarios (1-16, repeatable; 10, instruction counts under callgrind, 12 and 13, fleets of databases, 14, PostgreSQL search at scale, 15, steady writes into PostgreSQL, and 16, the HTTP API under wrk (needs the searchlight and searchlight-postgres binaries beside this one), run only when named).")
    var scenario: [Int] = []

    @Option(help: "Writes in the freshness scenario.")
    var freshnessWrites = 300

    @Option(help: "History changes purged in the cleanup scenario.")
    var cleanupChanges = 1_000_000

    @Option(help: "Transactions in the history part of scenario 8 (a quarter of them too).")
    var scaleTransactions = 200_000

    @Option(help: "Rows of about 4 KB in the verify part of scenario 8 (a quarter of them too).")
    var verifyRows = 40_000

    @Option(help: "A PostgreSQL server for scenario 9 (postgres://user@host:port/database); its tables go in schemas of their own, dropped after.")
    var postgres: String?

    @Option(help: "A hot standby of --postgres (postgres://…, streaming from it): scenario 9 measures freshness on it too.")
    var postgresReplica: String?

    @Option(help: "Copies of the corpus in scenario 9's second search-latency measurement.")
    var postgresCopies = 8

    @Option(help: "Rows (and documents) of scenario 10's smaller size; the larger is twice that.")
    var instructionRows = 1_000

    @Option(help: "Which workloads of scenario 10 run: all, writes or indexing (the CJK search part runs with all).")
    var instructionParts: Instructions.Parts = .all

    @Option(help: "Sizes of scenario 14 (search on PostgreSQL at scale), in copies of the corpus (repeatable; 85 copies of WordNet are 10 million documents).")
    var postgresScaleCopies: [Int] = [1, 8]

    @Option(help: "The sizes of scenario 14 at which the local index of the same rows is measured too.")
    var postgresScaleLocalCopies: [Int] = [1, 8]

    @Flag(help: "Keep scenario 14's loaded schemas (bench_scale_<copies>) for a later run, which reuses them.")
    var postgresKeep = false

    @Option(help: "Typo'd queries in scenario 11.")
    var typoQueries = 1_000

    @Option(help: "The seed of scenario 11's queries.")
    var typoSeed: UInt64 = 11

    @Option(help: "Sink runs of 100 updated documents per GIN policy in scenario 15 (steady writes into PostgreSQL).")
    var steadyBatches = 300

    @Option(help: "Rounds of scenario 15's policies (the order reversed each round).")
    var steadyRounds = 2

    @Option(help: "One-word typo'd queries in scenario 11.")
    var typoOneWordQueries = 300

    @Flag(help: "Scenario 11 measures the one-word recall only.")
    var typoRecallOnly = false

    @Option(help: "Databases in scenarios 12 and 13 (a fleet under one watch --dbs, and under one searchlight-postgres sink --dbs).")
    var fleetDatabases = 1_000

    @Option(help: "Writes to random tenants in the freshness measurement of scenarios 12 and 13.")
    var fleetWrites = 200

    @Option(help: "Rows in each database of scenarios 12 and 13, as MIN-MAX (drawn uniformly, seeded).")
    var fleetRows = "100-1000"

    @Option(help: "Seconds of load in scenario 16 (the HTTP API under wrk; 300 for the 5 minutes of the RSS figure).")
    var httpSeconds = 30

    @Option(help: .hidden)
    var rebuildChild: String?

    func run() async throws {
        if let rebuildChild { return try Indexing.rebuildChild(rebuildChild) }
        let rowBounds = fleetRows.split(separator: "-").compactMap { Int($0) }
        guard rowBounds.count == 2, rowBounds[0] >= 1, rowBounds[0] <= rowBounds[1] else {
            throw ValidationError("--fleet-rows takes MIN-MAX with 1 <= MIN <= MAX, such as 100-1000")
        }
        let rows = rowBounds[0]...rowBounds[1]
        let documents = try Corpus.load(corpus, limit: limit)
        let chosen = Set(scenario.isEmpty ? Array(1...9) + [11] : scenario)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        var report = Report(
            date: formatter.string(from: Date()),
            machine: "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB",
            corpus: URL(fileURLWithPath: corpus).lastPathComponent, documents: documents.count)
        func step(_ number: Int, _ name: String, _ body: () throws -> [Figure]) throws {
            guard chosen.contains(number) else { return }
            FileHandle.standardError.write(Data("scenario \(number): \(name)…\n".utf8))
            report.figures += try body()
        }
        try step(1, "write overhead") {
            try WriteOverhead.run(documents, singleRowCount: singleRows, bulkCount: bulkRows, rounds: rounds)
                + ForeignWrites.run(documents, rows: bulkRows, rounds: rounds)
        }
        try step(2, "incremental indexing") { try Indexing.run(documents) }
        try step(3, "full reindex") { try Indexing.rebuild(documents, corpus: corpus, limit: limit) }
        try step(4, "freshness") { try Freshness.run(documents, writes: freshnessWrites, rate: 50) }
        try step(5, "search latency") { try SearchLatency.run(documents) }
        try step(6, "cleanup") { try Cleanup.run(changes: cleanupChanges) }
        try step(8, "at scale: history, verify, INSERT OR REPLACE") {
            try Scale.run(documents, transactions: scaleTransactions, verifyRows: verifyRows)
        }
        if !cjkCorpus.isEmpty {
            try step(7, "CJK search") {
                try CJKSearch.run(corpora: cjkCorpus, english: documents, englishName: URL(fileURLWithPath: corpus).lastPathComponent.replacingOccurrences(of: ".jsonl.gz", with: ""),
                                  queriesPerKind: cjkQueries, seed: 7)
            }
        } else if chosen.contains(7) {
            FileHandle.standardError.write(Data("scenario 7 (CJK search) skipped: no --cjk-corpus\n".utf8))
        }
        if let postgres, chosen.contains(9) {
            FileHandle.standardError.write(Data("scenario 9: PostgreSQL sink…\n".utf8))
            report.figures += try await PostgresScenario.run(documents, url: postgres, replica: postgresReplica, freshnessWrites: freshnessWrites, copies: postgresCopies)
        } else if chosen.contains(9) {
            FileHandle.standardError.write(Data("scenario 9 (PostgreSQL sink) skipped: no --postgres\n".utf8))
        }
        try step(12, "a fleet under one watch --dbs") { try FleetScenario.run(documents, databases: fleetDatabases, rows: rows, writes: fleetWrites) }
        if let postgres, chosen.contains(13) {
            FileHandle.standardError.write(Data("scenario 13: a fleet under one searchlight-postgres sink --dbs…\n".utf8))
            report.figures += try await SinkFleetScenario.run(documents, url: postgres, databases: fleetDatabases, rows: rows, writes: fleetWrites)
        } else if chosen.contains(13) {
            FileHandle.standardError.write(Data("scenario 13 (a fleet under one sink --dbs) skipped: no --postgres\n".utf8))
        }
        if let postgres, chosen.contains(14) {
            FileHandle.standardError.write(Data("scenario 14: search on PostgreSQL at scale…\n".utf8))
            report.figures += try await PostgresSearchScale.run(documents, url: postgres, sizes: postgresScaleCopies,
                                                                localSizes: Set(postgresScaleLocalCopies), keep: postgresKeep)
        } else if chosen.contains(14) {
            FileHandle.standardError.write(Data("scenario 14 (search on PostgreSQL at scale) skipped: no --postgres\n".utf8))
        }
        if let postgres, chosen.contains(15) {
            FileHandle.standardError.write(Data("scenario 15: steady writes into PostgreSQL and the GIN pending list…\n".utf8))
            report.figures += try await PostgresSteadyWrites.run(documents, url: postgres, batches: steadyBatches, rounds: steadyRounds)
        } else if chosen.contains(15) {
            FileHandle.standardError.write(Data("scenario 15 (steady writes into PostgreSQL) skipped: no --postgres\n".utf8))
        }
        try step(11, "typo tolerance and suggestions") { try TypoSearch.run(documents, queryCount: typoQueries, seed: typoSeed, oneWordQueries: typoOneWordQueries, recallOnly: typoRecallOnly) }
        if let postgres, chosen.contains(11) {
            FileHandle.standardError.write(Data("scenario 11 on PostgreSQL: one-word typo recall of both engines…\n".utf8))
            report.figures += try await TypoSearch.postgresOneWordRecall(documents, url: postgres, count: typoOneWordQueries, seed: typoSeed)
        }
        if chosen.contains(16) {
            FileHandle.standardError.write(Data("scenario 16: the HTTP API under wrk…\n".utf8))
            report.figures += try await HTTPScenario.run(documents, url: postgres, seconds: httpSeconds)
        }
        if chosen.contains(10) {
            FileHandle.standardError.write(Data("scenario 10: instructions (callgrind)…\n".utf8))
            report.figures += try Instructions.run(documents, rows: instructionRows, parts: instructionParts,
                                                        cjkCorpus: instructionParts == .all ? cjkCorpus.first : nil)
        }
        print(report.table())
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
    }
}
