import ArgumentParser
import Foundation
import Logging
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres

extension Logger.Level: @retroactive ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// The PostgreSQL server, and how much to log: every subcommand takes them.
struct PostgresOptions: ParsableArguments {
    @Option(help: "The PostgreSQL server: postgres://user[:password]@host[:port]/database[?schema=NAME&sslmode=…&connect_timeout=SECONDS].")
    var postgres: String

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    /// Sets up logging to stderr and parses the URL.
    func endpoint() throws -> PostgresEndpoint {
        Output.bootstrapLogging(logLevel)
        return try PostgresEndpoint(url: postgres)
    }
}

/// Opens a database that `searchlight init` set up.
func openStore(_ path: String) throws -> HistoryStore {
    var configuration = HistoryStore.Configuration()
    configuration.logger = Logger(label: "searchlight")
    return try HistoryStore(path: Arguments.path(path, naming: "database"), configuration: configuration)
}
