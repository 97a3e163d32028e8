import ArgumentParser
import Logging
import Searchlight

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
        await Signals.waitForTermination()
        logger.info("stopping: the batch in flight finishes first")
        await indexer.stop()
    }
}
