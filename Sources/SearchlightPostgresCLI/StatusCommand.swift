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

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

    @Option(help: "Output format.")
    var format: Format = .table

    func run() async throws {
        let endpoint = try options.endpoint()
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
}
