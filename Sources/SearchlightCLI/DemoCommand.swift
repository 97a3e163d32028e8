import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Logging
import Searchlight
import SearchlightDemoData
import SearchlightHistory

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Index the Jargon File, search it, then watch the index follow plain SQL writes.")

    @Option(help: "Where to create the demo database (default: a new temporary directory).")
    var db: String?

    @Option(help: "Log level on stderr.")
    var logLevel: Logger.Level = .warning

    func run() async throws {
        Output.bootstrapLogging(logLevel)
        let path = try db ?? {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-demo-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory.appendingPathComponent("jargon.sqlite").path
        }()
        let clock = ContinuousClock()

        print("1. Creating a sample database of the Jargon File (2,307 entries, public domain) at")
        print("   \(path)")
        try DemoDatabase.create(at: path)

        print("2. Enabling history tracking and building the search index…")
        let store = try HistoryStore(path: path, model: DemoDatabase.model)
        let indexer = try Indexer(store: store)
        let started = clock.now
        let summary = try indexer.indexPendingChanges()
        let counts = try SearchIndex(store: store).documentCounts()
        print("   Indexed \(counts.values.reduce(0, +)) documents in \(Self.format(clock.now - started)) (history token \(summary.token)).")

        let index = SearchIndex(store: store, options: {
            var options = SearchIndex.Options()
            options.snippetTokens = 10
            return options
        }())
        print("3. Searching:")
        for query in ["hacker ethic", "\"black magic\"", "kern", "cracker -hacker"] {
            try show(query, asYouType: query == "kern", index)
        }

        print("4. Changing the data with plain SQL (no Searchlight code), while the indexer follows:")
        indexer.start()
        for edit in DemoDatabase.edits {
            // Exact matches: the demo shows each edit reaching the index, not what typos find.
            let before = try index.search(edit.query, asYouType: false, limit: 0, typos: .off).total
            try DemoDatabase.apply(edit, to: store.databaseWriter)
            try await indexer.waitUntilCaughtUp()
            let after = try index.search(edit.query, limit: 0, typos: .off).total
            print("   \(edit.description)")
            print("     search \(edit.query): \(before) → \(after) matches")
        }
        await indexer.stop()
        let report = try indexer.verify()
        print("5. Verified: the index \(report.isConsistent ? "equals" : "DIFFERS FROM") the source (\(report.entities.map { "\($0.indexedDocuments) documents" }.joined())).")
        print("")
        print("Try it yourself:")
        print("  swift run searchlight search --db '\(path)' 'your words here'")
        print("  swift run searchlight history --db '\(path)' --limit 5")
        print("  swift run searchlight status --db '\(path)'")
    }

    private func show(_ query: String, asYouType: Bool, _ index: SearchIndex) throws {
        let results = try index.search(query, asYouType: asYouType, limit: 3)
        print("   search \(query)\(asYouType ? " (as you type)" : ""): \(results.total) matches")
        for hit in results.hits {
            print("     \(Output.clip(hit.title ?? "", 24).padding(toLength: 24, withPad: " ", startingAt: 0))  \(Output.clip(hit.snippet, 70))")
        }
    }

    private static func format(_ duration: Duration) -> String {
        String(format: "%.2f s", duration.seconds)
    }
}
