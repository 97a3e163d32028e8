import SearchlightCommandSupport
import ArgumentParser
import Logging
import Searchlight
import SearchlightHistory

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Keep the index up to date with writes from any process until SIGINT or SIGTERM.")

    @OptionGroup var options: StoreOptions

    func run() async throws {
        let store = try options.openStore()
        let indexer = try Indexer(store: store, configuration: options.indexerConfiguration())
        let logger = Logger(label: "searchlight.watch")
        indexer.start()
        logger.info("watching \(options.db)")
        // Until SIGINT or SIGTERM, or until following ends by itself (the file was replaced).
        let failure = await withTaskGroup(of: SearchlightError?.self) { group in
            group.addTask { await Signals.waitForTermination(); return nil }
            group.addTask {
                do throws(SearchlightError) { try await indexer.waitUntilFollowingEnds(); return nil } catch { return error }
            }
            let first = await group.next() ?? nil
            logger.info("stopping: the batch in flight finishes first")
            await indexer.stop()
            group.cancelAll()
            return first
        }
        if let failure { throw failure }
    }
}
