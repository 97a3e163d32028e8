import ArgumentParser
import Foundation

/// `searchlight-workload prepare|run WORKLOAD …`: see ``Workload``.
@main
struct WorkloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchlight-workload",
        abstract: "Fixed workloads for instruction counting (searchlight-bench --scenario 10 runs them under callgrind).")

    enum Step: String, ExpressibleByArgument { case prepare, run }

    @Argument(help: "prepare (not measured) or run (measured).")
    var step: Step

    @Argument(help: "The workload: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workload: String

    @Option(help: "A directory for the workload's databases (the same for prepare and run).")
    var directory: String

    @Option(help: "Documents as JSON lines ({\"id\", \"title\", \"body\"}); all are read, whatever --count.")
    var documents: String

    @Option(help: "Rows, documents or passes of the query set the run does.")
    var count: Int

    @Flag(help: "Writes: on a tracked database (otherwise untracked).")
    var tracked = false

    @Option(help: "A search query (repeatable), for search and raw-search.")
    var query: [String] = []

    func run() throws {
        guard let workload = Workload(rawValue: workload) else {
            throw ValidationError("unknown workload \(workload): \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let decoder = JSONDecoder()
        let text = try String(contentsOfFile: documents, encoding: .utf8)
        let documents = try text.split(separator: "\n").map { try decoder.decode(Workload.Document.self, from: Data($0.utf8)) }
        guard (1...documents.count).contains(count) || [.search, .rawSearch, .rawSearchPage].contains(workload) else {
            throw ValidationError("--count must be from 1 to the \(documents.count) documents")
        }
        let url = URL(fileURLWithPath: directory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let context = Workload.Context(directory: url, documents: documents, count: count, tracked: tracked, queries: query)
        switch step {
        case .prepare: try workload.prepare(context)
        case .run: try workload.run(context)
        }
    }
}
