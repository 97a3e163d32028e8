import SearchlightCommandSupport
import ArgumentParser
import Logging
import Searchlight
import SearchlightHistory

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Keep the index up to date with writes from any process until SIGINT or SIGTERM.",
        discussion: """
            With --dbs, one process follows every database whose name matches the pattern (quote \
            it: --dbs 'tenants/*.sqlite'): files that appear are picked up, removed ones dropped, \
            at most --concurrency databases index at once, in turns. A database that is not set \
            up, locked or damaged gets one log line and is tried again later; the others go on.
            """)

    @Option(help: "The SQLite database.")
    var db: String?

    @Option(help: "Every database whose file name matches this pattern, in one folder (quoted: 'tenants/*.sqlite').")
    var dbs: String?

    @Option(parsing: .unconditional, help: "With --dbs: databases that index at once.")
    var concurrency: Int = 4

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if (db == nil) == (dbs == nil) { throw ValidationError("give either --db or --dbs") }
        if !(1...256).contains(concurrency) { throw ValidationError("--concurrency must be from 1 to 256") }
    }

    func run() async throws {
        if let dbs { return try await watchFleet(dbs) }
        let options = try StoreOptions.parse(["--db", db ?? "", "--log-level", logLevel.rawValue])
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

    /// Every database of the pattern, until SIGINT or SIGTERM.
    private func watchFleet(_ pattern: String) async throws {
        Output.bootstrapLogging(logLevel)
        let glob = try DatabaseGlob(pattern)
        _ = try glob.matchingPaths() // an unreadable folder is told at once
        var configuration = Fleet<IndexFleetMember>.Configuration()
        configuration.concurrency = concurrency
        configuration.logger = Logger(label: "searchlight.watch")
        let fleet = Fleet(glob: glob, configuration: configuration) { path throws(SearchlightError) in
            // Every line says which database it is about.
            var store = HistoryStore.Configuration()
            store.logger = Logger(label: "searchlight")
            store.logger[metadataKey: "db"] = "\(path)"
            var indexer = Indexer.Configuration()
            indexer.logger = Logger(label: "searchlight.indexer")
            indexer.logger[metadataKey: "db"] = "\(path)"
            return try await IndexFleetMember.open(path: path, storeConfiguration: store, indexerConfiguration: indexer)
        }
        configuration.logger.info("watching \(glob)")
        let following = Task { await fleet.run() }
        await Signals.waitForTermination()
        configuration.logger.info("stopping: the turns in flight finish first")
        following.cancel()
        await following.value
    }
}
