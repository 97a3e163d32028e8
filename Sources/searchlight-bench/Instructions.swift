import Foundation
import SearchlightEvaluation
import ArgumentParser

/// Scenario 10: instructions per row, per document and per query, counted by callgrind, so that
/// a regression shows in one run on a noisy machine. Each workload of `searchlight-workload` (built
/// beside the bench) is prepared natively and run under `valgrind --tool=callgrind` at two sizes;
/// the difference of the two counts over the difference of sizes is one unit's work (process
/// start, opening the database and reading the documents cancel out). Tracked against untracked
/// for writes, the index against a plain FTS5 table with its tokenizer and prefixes for indexing,
/// and the search API against hand-written SQL on the index's own FTS5 table for CJK search.
enum Instructions {
    struct Measure {
        var name: String
        var ours: (workload: String, tracked: Bool)
        var baseline: (workload: String, tracked: Bool)
        var baselineName: String
        var unit: String
        var sizes: (Int, Int)
        /// The target as a speed ratio (baseline work ÷ ours), when issue 29 (CJK search: issue 18) sets one.
        var speedTarget: Double?
    }

    /// The workloads a run measures.
    enum Parts: String, ExpressibleByArgument, CaseIterable {
        case all, writes, indexing
    }

    static func run(_ documents: [Document], rows: Int, parts: Parts = .all, cjkCorpus: String?) throws -> [Figure] {
        guard let workload = Scale.executableBeside("searchlight-workload") else {
            throw Corpus.Failure(description: "scenario 10 runs searchlight-workload built beside the bench: swift build -c release")
        }
        guard let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first(where: FileManager.default.isExecutableFile) else {
            throw Corpus.Failure(description: "scenario 10 counts instructions with valgrind (apt-get install valgrind)")
        }
        let directory = try scratchDirectory("instructions")
        defer { try? FileManager.default.removeItem(at: directory) }
        let half = max(min(rows, documents.count / 2), 1)
        let english = directory.appendingPathComponent("documents.jsonl").path
        try write(documents.prefix(2 * half).map { ($0.id, $0.title, $0.body) }, to: english)

        let single = max(half / 2, 1)
        var measures: [Measure] = []
        func writes(_ name: String, _ workload: String, sizes: (Int, Int), target: Double?) {
            measures.append(Measure(name: name, ours: (workload, true), baseline: (workload, false), baselineName: "untracked",
                                    unit: "instructions/row", sizes: sizes, speedTarget: target))
        }
        // Issue 29's targets (speed ratios; single-row transactions: 0.8x timed, none in instructions).
        if parts != .indexing {
            writes("single-row transactions through HistoryStore.write", "single", sizes: (single, 2 * single), target: nil)
            writes("bulk insert through HistoryStore.write", "bulk", sizes: (half, 2 * half), target: 0.6)
            writes("foreign insert, one statement a row", "foreign-insert", sizes: (half, 2 * half), target: 0.5)
            writes("foreign update of a column the model does not track", "foreign-update-untracked", sizes: (half, 2 * half), target: 0.9)
            writes("foreign update of an indexed column", "foreign-update-indexed", sizes: (half, 2 * half), target: 0.45)
            writes("foreign INSERT OR REPLACE of existing rows", "foreign-replace", sizes: (half, 2 * half), target: 0.35)
            writes("foreign delete", "foreign-delete", sizes: (half, 2 * half), target: 0.45)
        }
        func indexing(_ name: String, _ ours: String, _ raw: String, _ rawName: String, target: Double) {
            measures.append(Measure(name: name, ours: (ours, true), baseline: (raw, false), baselineName: rawName,
                                    unit: "instructions/document", sizes: (half, 2 * half), speedTarget: target))
        }
        if parts != .writes {
            indexing("incremental indexing of inserts", "index-inserts", "raw-inserts", "plain FTS5 insert", target: 0.6)
            indexing("incremental indexing of updates", "index-updates", "raw-updates", "plain FTS5 update", target: 0.6)
            indexing("incremental indexing of deletes", "index-deletes", "raw-deletes", "plain FTS5 delete", target: 0.6)
            indexing("full rebuild", "rebuild", "raw-inserts", "plain FTS5 insert", target: 0.7)
        }

        var figures: [Figure] = []
        for measure in measures {
            figures.append(try figure(measure, documents: english, queries: [], workload: workload, valgrind: valgrind, in: directory))
        }
        if let cjkCorpus {
            let cjk = try RecallEvaluation.load(cjkCorpus)
            let path = directory.appendingPathComponent("cjk.jsonl").path
            try write(cjk.map { ($0.id, $0.title, $0.body) }, to: path)
            let name = URL(fileURLWithPath: cjkCorpus).lastPathComponent.replacingOccurrences(of: ".jsonl.gz", with: "")
            let measure = Measure(name: "\(name): top-20 search with snippets, \(cjkQueries.count) words", ours: ("search", true),
                                  baseline: ("raw-search", true), baselineName: "raw FTS5 SQL", unit: "instructions/query",
                                  sizes: (1, 2), speedTarget: 1 / 1.2)
            var page = measure
            page.baseline = ("raw-search-page", true)
            page.baselineName = "raw FTS5 SQL, snippets of the page only"
            for measure in [measure, page] {
                var figure = try figure(measure, documents: path, queries: cjkQueries, workload: workload, valgrind: valgrind, in: directory)
                figure.ours /= Double(cjkQueries.count)
                figure.baseline = figure.baseline.map { $0 / Double(cjkQueries.count) }
                figures.append(figure)
            }
        }
        return figures
    }

    /// Common words of the Chinese and Japanese man pages (file, directory, user, option, command).
    static let cjkQueries = ["文件", "目录", "用户", "选项", "命令"]

    static func figure(_ measure: Measure, documents: String, queries: [String], workload: String, valgrind: String,
                       in directory: URL) throws -> Figure {
        func perUnit(_ name: String, tracked: Bool) throws -> Double {
            var counts: [Double] = []
            for size in [measure.sizes.0, measure.sizes.1] {
                let scratch = directory.appendingPathComponent("\(name)-\(tracked)-\(size)")
                var arguments = [name, "--directory", scratch.path, "--documents", documents, "--count", "\(size)"]
                if tracked { arguments.append("--tracked") }
                for query in queries { arguments += ["--query", query] }
                _ = try output([workload, "prepare"] + arguments)
                let report = try output([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", workload, "run"] + arguments)
                guard let line = report.split(separator: "\n").last(where: { $0.contains("Collected :") }),
                      let count = Double(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) else {
                    throw Corpus.Failure(description: "callgrind printed no count for \(name): \(report.suffix(400))")
                }
                counts.append(count)
                try? FileManager.default.removeItem(at: scratch)
            }
            return (counts[1] - counts[0]) / Double(measure.sizes.1 - measure.sizes.0)
        }
        let ours = try perUnit(measure.ours.workload, tracked: measure.ours.tracked)
        let baseline = try perUnit(measure.baseline.workload, tracked: measure.baseline.tracked)
        FileHandle.standardError.write(Data("\(measure.name): \(Int(ours)) against \(Int(baseline)) \(measure.unit)\n".utf8))
        // The ratio printed is ours ÷ baseline in instructions; the target is the issue's speed
        // ratio turned into instructions (0.7x the speed = at most 1/0.7 the instructions).
        let target = measure.speedTarget.map { String(format: "<= %.2fx", 1 / $0) }
        return Figure("10 instructions", measure.name, unit: measure.unit, ours: ours, baseline: baseline,
                      baselineName: measure.baselineName, target: target,
                      met: measure.speedTarget.map { ours <= baseline / $0 })
    }

    /// Runs a command and returns what it printed on both streams; throws when it fails.
    static func output(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Corpus.Failure(description: "\(command.joined(separator: " ")) failed (exit \(process.terminationStatus)): \(text.suffix(600))")
        }
        return text
    }

    static func write(_ documents: [(id: String, title: String, body: String)], to path: String) throws {
        let encoder = JSONEncoder()
        var data = Data()
        for doc in documents {
            data += try encoder.encode(["id": doc.id, "title": doc.title, "body": doc.body])
            data += Data("\n".utf8)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
