import ArgumentParser
import Foundation
import Logging
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres

/// `searchlight-postgres verify`: compares PostgreSQL's documents of a source with its rows.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Bring PostgreSQL up to date, then compare a source's documents there with its rows; exit 1 if they differ.")

    @Option(help: "The SQLite database (set up with `searchlight init`).")
    var db: String

    @OptionGroup var options: PostgresOptions

    @Option(help: "The source's name in PostgreSQL (the database's source id by default).")
    var source: String?

    @Flag(help: "Fix every difference found.")
    var repair = false

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

    @Option(help: "Output format.")
    var format: Format = .table

    struct Result: Encodable {
        var consistent: Bool
        var repaired: Bool
        var differences: Int
        var source: String
        var token: HistoryToken
        var entities: [PostgresVerification.EntityReport]
        var vocabularyDifferences: Int
    }

    func run() async throws {
        let endpoint = try options.endpoint()
        let store = try openStore(db)
        var configuration = PostgresSink.Configuration()
        configuration.source = source
        configuration.logger = Logger(label: "searchlight.postgres.verify")
        let verifier = try PostgresVerifier(store: store, endpoint: endpoint, configuration: configuration)
        let report = try await verifier.verify(repair: repair)
        switch format {
        case .json:
            Output.machine(try Output.json(Result(consistent: report.isConsistent, repaired: report.repaired, differences: report.differences,
                                         source: report.source, token: report.token, entities: report.entities,
                                         vocabularyDifferences: report.vocabularyDifferences)))
        case .table:
            for entity in report.entities {
                print("\(entity.entity): \(entity.postgresDocuments) in PostgreSQL, \(entity.sourceDocuments) in the source; "
                      + "\(entity.missing) missing, \(entity.stale) stale, \(entity.extra) extra")
                for (kind, examples) in [("missing", entity.missingExamples), ("stale", entity.staleExamples), ("extra", entity.extraExamples)]
                    where !examples.isEmpty {
                    print("  \(kind): \(examples.joined(separator: " "))")
                }
            }
            if report.vocabularyDifferences > 0 {
                print("vocabulary: \(report.vocabularyDifferences) words counted otherwise than the documents hold them")
            }
            if report.differences == 0 {
                print("PostgreSQL equals the source \(report.source) (token \(report.token)).")
            } else if report.repaired {
                print("Repaired \(report.differences) differences; PostgreSQL now equals the source \(report.source).")
            } else {
                print("PostgreSQL differs from the source \(report.source): \(report.differences) differences (run with --repair to fix).")
            }
        }
        if !report.isConsistent { throw ExitCode(1) }
    }
}
