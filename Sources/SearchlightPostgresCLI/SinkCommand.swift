import ArgumentParser
import Foundation
import Logging
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres

/// `searchlight-postgres sink`: the history of one database flows into PostgreSQL.
struct SinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Copy a database's documents into PostgreSQL and keep them current, until SIGINT or SIGTERM (or --once).")

    @Option(help: "The SQLite database (set up with `searchlight init`).")
    var db: String

    @OptionGroup var options: PostgresOptions

    @Option(help: "The source's name in PostgreSQL (the database's source id by default).")
    var source: String?

    @Flag(help: "Catch up, print one line, and exit.")
    var once = false

    @Option(help: "Transactions per batch.")
    var batchSize = 500

    func validate() throws {
        if batchSize <= 0 { throw ValidationError("--batch-size must be positive") }
    }

    func run() async throws {
        let endpoint = try options.endpoint()
        let store = try openStore(db)
        var configuration = PostgresSink.Configuration()
        configuration.source = source
        configuration.batchSize = batchSize
        configuration.logger = Logger(label: "searchlight.postgres.sink")
        let sink = try PostgresSink(store: store, endpoint: endpoint, configuration: configuration)
        if once {
            let report = try await sink.runOnce()
            print("source \(report.source): caught up at token \(report.token) (\(report.upserted) upserted, \(report.deleted) deleted, \(report.resyncs) resyncs)")
            return
        }
        // Until SIGINT or SIGTERM, or until following ends by itself (the file was replaced).
        let failure = await withTaskGroup(of: SearchlightError?.self) { group in
            group.addTask { await Signals.waitForTermination(); return nil }
            group.addTask {
                do throws(SearchlightError) { try await sink.run(); return nil } catch { return error }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            await group.waitForAll()
            return first
        }
        if let failure { throw failure }
    }
}
