import ArgumentParser
import Foundation
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres

/// `searchlight-postgres status`: every source's checkpoint, lag, resyncs and documents.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each source in PostgreSQL: its token, its lag in tokens and seconds, its resyncs and documents.")

    @OptionGroup var options: PostgresOptions

    @Option(help: "A database that a sink feeds: show how far PostgreSQL is behind it now.")
    var db: String?

    @Option(help: "Every database whose file name matches this pattern (quoted: 'tenants/*.sqlite'): each one's source and how far PostgreSQL is behind it now.")
    var dbs: String?

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

    @Option(help: "Output format.")
    var format: Format = .table

    func validate() throws {
        if db != nil, dbs != nil { throw ValidationError("give --db or --dbs, not both") }
    }

    func run() async throws {
        let endpoint = try options.endpoint()
        if let dbs { return try await fleet(endpoint, try DatabaseGlob(dbs)) }
        let store = try db.map(openStore)
        let sources = try await PostgresStatus.read(endpoint, database: store)
        switch format {
        case .json:
            Output.machine(try Output.json(sources))
        case .table:
            guard !sources.isEmpty else { print("No sources in PostgreSQL yet."); return }
            var rows = [["SOURCE", "TOKEN", "HEAD", "LAG", "LAG_S", "APPLIED_S_AGO", "LIVE_LAG", "RESYNCS", "DOCUMENTS", "LAST_RESYNC_REASON"]]
            for source in sources {
                rows.append([
                    source.source, "\(source.token)", source.headToken.map { "\($0)" } ?? "-", source.lagTokens.map { "\($0)" } ?? "-",
                    source.lagSeconds.map { String(format: "%.3f", $0) } ?? "-", String(format: "%.1f", source.secondsSinceApplied),
                    source.liveLagTokens.map { "\($0)" } ?? "-", "\(source.resyncs)",
                    source.documents.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","),
                    Output.clip(source.resyncReason ?? "-", 80),
                ])
            }
            print(Output.table(rows))
        }
    }

    /// Each database of the pattern with its source's lag.
    private func fleet(_ endpoint: PostgresEndpoint, _ glob: DatabaseGlob) async throws {
        let databases = try await PostgresStatus.read(endpoint, databases: glob)
        switch format {
        case .json:
            Output.machine(try Output.json(databases))
        case .table:
            guard !databases.isEmpty else { print("No database matches \(glob)."); return }
            var rows = [["DATABASE", "SOURCE", "HEAD", "TOKEN", "LAG", "LAG_S", "APPLIED_S_AGO", "RESYNCS", "NOTE"]]
            for database in databases {
                let row = database.postgres
                rows.append([
                    database.databasePath, database.source ?? "-", database.headToken.map { "\($0)" } ?? "-",
                    row.map { "\($0.token)" } ?? "-", database.lagTokens.map { "\($0)" } ?? "-",
                    row?.lagSeconds.map { String(format: "%.3f", $0) } ?? "-", row.map { String(format: "%.1f", $0.secondsSinceApplied) } ?? "-",
                    row.map { "\($0.resyncs)" } ?? "-",
                    Output.clip(database.error ?? (row == nil && database.source != nil ? "not in PostgreSQL yet" : ""), 60),
                ])
            }
            print(Output.table(rows))
        }
    }
}
