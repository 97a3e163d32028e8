import SearchlightCommandSupport
import ArgumentParser
import Logging
import Searchlight
import SearchlightHistory

extension Logger.Level: @retroactive ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// Options every command takes: the database, and how much to log.
struct StoreOptions: ParsableArguments {
    @Option(help: "The SQLite database.")
    var db: String

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    /// Sets up logging to stderr and opens the store with the model saved by `init`; a command
    /// that only reads opens it `readOnly` (it never waits for the app's write lock).
    func openStore(readOnly: Bool = false) throws -> HistoryStore {
        Output.bootstrapLogging(logLevel)
        var configuration = HistoryStore.Configuration()
        configuration.logger = Logger(label: "searchlight")
        configuration.readOnly = readOnly
        return try HistoryStore(path: Arguments.path(db, naming: "database"), configuration: configuration)
    }

    func indexerConfiguration() -> Indexer.Configuration {
        var configuration = Indexer.Configuration()
        configuration.logger = Logger(label: "searchlight.indexer")
        return configuration
    }
}
