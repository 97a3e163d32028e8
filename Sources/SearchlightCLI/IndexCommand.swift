import ArgumentParser
import Searchlight
import SearchlightHistory

struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index", abstract: "Bring the index up to date once and print what was done.")

    @OptionGroup var options: StoreOptions

    func run() throws {
        let store = try options.openStore()
        let summary = try Indexer(store: store, configuration: options.indexerConfiguration()).indexPendingChanges()
        if let reason = summary.rebuildReason {
            let held = try SearchIndex(store: store).documentCounts().values.reduce(0, +)
            print("Rebuilt the index (\(reason)): it holds \(held) documents.")
        }
        print("Processed \(summary.changes) changes: \(summary.upserted) documents upserted, \(summary.removed) removed; token \(summary.token).")
        for entity in try store.healCapture().notCapturing {
            print("Not indexed: entity \(entity.name): \(entity.state)")
        }
    }
}
