import ArgumentParser
import Foundation

@main
struct SearchlightBench: ParsableCommand {
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

    func run() throws {
        let documents = try Corpus.load(corpus, limit: limit)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        var report = Report(
            date: formatter.string(from: Date()),
            machine: "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB",
            corpus: URL(fileURLWithPath: corpus).lastPathComponent, documents: documents.count)
        report.figures += try WriteOverhead.run(documents, singleRowCount: singleRows, bulkCount: bulkRows, rounds: rounds)
        print(report.table())
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
    }
}
