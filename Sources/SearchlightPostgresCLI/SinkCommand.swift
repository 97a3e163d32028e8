import ArgumentParser
import Foundation
import Logging
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres

/// `searchlight-postgres sink`: the history of one database, or of every database of a pattern,
/// flows into PostgreSQL.
struct SinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Copy a database's documents into PostgreSQL and keep them current, until SIGINT or SIGTERM (or --once).",
        discussion: """
            With --dbs, one process follows every database whose name matches the pattern (quote \
            it: --dbs 'tenants/*.sqlite'), each as the source its id names: files that appear are \
            picked up, removed ones dropped, at most --concurrency sources work at once, in turns, \
            over at most --connections PostgreSQL connections. A database that is not set up, \
            locked or damaged gets one log line and is tried again later; the others go on.
            """)

    @Option(help: "The SQLite database (set up with `searchlight init`).")
    var db: String?

    @Option(help: "Every database whose file name matches this pattern, in one folder (quoted: 'tenants/*.sqlite').")
    var dbs: String?

    @OptionGroup var options: PostgresOptions

    @Option(help: "The source's name in PostgreSQL (the database's source id by default; not with --dbs).")
    var source: String?

    @Flag(help: "Catch up, print one line, and exit (not with --dbs).")
    var once = false

    @Option(parsing: .unconditional, help: "Transactions per batch.")
    var batchSize = 500

    @Option(parsing: .unconditional, help: "With --dbs: PostgreSQL connections of the whole process.")
    var connections = 4

    @Option(parsing: .unconditional, help: "With --dbs: sources that work at once.")
    var concurrency = 4

    func validate() throws {
        if (db == nil) == (dbs == nil) { throw ValidationError("give either --db or --dbs") }
        if dbs != nil, source != nil { throw ValidationError("--source needs --db: with --dbs each database is the source its id names") }
        if dbs != nil, once { throw ValidationError("--once needs --db") }
        if batchSize <= 0 { throw ValidationError("--batch-size must be positive") }
        if !(1...1_000).contains(connections) { throw ValidationError("--connections must be from 1 to 1000") }
        if !(1...256).contains(concurrency) { throw ValidationError("--concurrency must be from 1 to 256") }
    }

    func run() async throws {
        let endpoint = try options.endpoint()
        var configuration = PostgresSink.Configuration()
        configuration.source = source
        configuration.batchSize = batchSize
        configuration.logger = Logger(label: "searchlight.postgres.sink")
        if let dbs {
            var fleet = PostgresSinkFleet.Configuration()
            fleet.sink = configuration
            fleet.connections = connections
            fleet.concurrency = concurrency
            let sinks = try PostgresSinkFleet(glob: try DatabaseGlob(dbs), endpoint: endpoint, configuration: fleet)
            return try await untilTerminated { () async throws(SearchlightError) in try await sinks.run() }
        }
        let store = try openStore(db ?? "")
        let sink = try PostgresSink(store: store, endpoint: endpoint, configuration: configuration)
        if once {
            let report = try await sink.runOnce()
            print("source \(report.source): caught up at token \(report.token) (\(report.upserted) upserted, \(report.deleted) deleted, \(report.resyncs) resyncs)")
            return
        }
        try await untilTerminated { () async throws(SearchlightError) in try await sink.run() }
    }

    /// Runs `body` until SIGINT or SIGTERM, or until it ends by itself (the file was replaced, the
    /// server refused the database): its error, if any, is thrown.
    private func untilTerminated(_ body: @escaping @Sendable () async throws(SearchlightError) -> Void) async throws {
        let failure = await withTaskGroup(of: SearchlightError?.self) { group in
            group.addTask { await Signals.waitForTermination(); return nil }
            group.addTask {
                do throws(SearchlightError) { try await body(); return nil } catch { return error }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            await group.waitForAll()
            return first
        }
        if let failure { throw failure }
    }
}
