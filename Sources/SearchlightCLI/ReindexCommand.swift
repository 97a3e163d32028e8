import ArgumentParser
import Foundation
import Synchronization
import Searchlight
import SearchlightHistory

struct ReindexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reindex",
        abstract: "Rebuild the index from scratch while searches go on, or reindex only the given ids.")

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("id"), help: "Reindex only this object id (repeat for several).")
    var ids: [String] = []

    @Option(help: "With --id or --filter: the entity of the ids (default: every entity).")
    var entity: String?

    @Option(help: "Reindex only the objects whose attributes satisfy this condition, in the index or in the tables (e.g. 'account = 7').")
    var filter: String?

    func validate() throws {
        if filter != nil && !ids.isEmpty { throw ValidationError("--filter and --id cannot be combined") }
    }

    func run() throws {
        let store = try options.openStore()
        let indexer = try Indexer(store: store, configuration: options.indexerConfiguration())
        if let filter {
            let summary = try indexer.reindex(matching: try SearchFilter(parsing: filter), entity: entity)
            print("Reindexed the objects matching the filter: \(summary.upserted) documents upserted, \(summary.removed) removed.")
            return
        }
        if ids.isEmpty {
            let bar = ProgressBar(enabled: isatty(STDERR_FILENO) != 0)
            let summary = try indexer.reindex { bar.show($0.done, of: $0.total) }
            bar.finish()
            // What the index holds, not only what this run wrote (it may have resumed a rebuild
            // that a stopped run began).
            let held = try SearchIndex(store: store).documentCounts().values.reduce(0, +)
            print("Rebuilt the index: it holds \(held) documents (\(summary.upserted) written by this run); then applied \(summary.changes) later changes; token \(summary.token).")
            return
        }
        let summary = try indexer.reindex(ids: ids.flatMap(ObjectID.candidates(typed:)), entity: entity)
        print("Reindexed \(ids.count) ids: \(summary.upserted) documents upserted, \(summary.removed) removed.")
    }
}

/// A one-line progress bar on stderr, shown only on a terminal.
final class ProgressBar: Sendable {
    private let enabled: Bool
    private let last = Mutex(-1)

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ done: Int, of total: Int) {
        guard enabled else { return }
        let percent = total == 0 ? 100 : done * 100 / total
        last.withLock { last in
            guard percent != last else { return }
            last = percent
            let filled = percent / 4
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 25 - filled)
            FileHandle.standardError.write(Data("\rReindexing [\(bar)] \(percent)% \(done)/\(total)".utf8))
        }
    }

    func finish() {
        if enabled && last.withLock({ $0 }) >= 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
