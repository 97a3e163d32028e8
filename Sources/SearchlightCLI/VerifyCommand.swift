import SearchlightCommandSupport
import ArgumentParser
import Searchlight
import SearchlightHistory

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Bring the index up to date, then compare it with the source; exit 1 if they differ.")

    @OptionGroup var options: StoreOptions

    @Flag(help: "Fix every difference found.")
    var repair = false

    /// How `verify` prints its report.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(help: "Output format.")
    var format: Format = .text

    struct Result: Encodable {
        var consistent: Bool
        var repaired: Bool
        var differences: Int
        var pending: Int
        var token: HistoryToken
        var integrityErrors: [String]
        var vocabularyDifferences: String?
        var notIndexed: [String]
        var entities: [VerificationReport.EntityReport]
    }

    func run() throws {
        let store = try options.openStore()
        let indexer = try Indexer(store: store, configuration: options.indexerConfiguration())
        try indexer.indexPendingChanges() // what history says first: only real differences remain
        let found: VerificationReport, repaired: Bool, consistent: Bool
        if repair {
            let report = try indexer.repair()
            (found, repaired, consistent) = (report.found, report.repaired, report.isConsistent)
        } else {
            found = try indexer.verify()
            (repaired, consistent) = (false, found.isConsistent)
        }
        switch format {
        case .json:
            Output.machine(try Output.json(Result(consistent: consistent, repaired: repaired, differences: found.differences,
                                         pending: found.pending, token: found.token, integrityErrors: found.integrityErrors,
                                         vocabularyDifferences: found.vocabularyDifferences, notIndexed: found.notIndexed, entities: found.entities)))
        case .text:
            for entity in found.entities {
                print("\(entity.entity): \(entity.indexedDocuments) indexed, \(entity.sourceDocuments) in the source; "
                      + "\(entity.missing.count) missing, \(entity.stale.count) stale, \(entity.extra.count) extra")
            }
            for error in found.integrityErrors { print("integrity: \(error)") }
            if let vocabulary = found.vocabularyDifferences {
                print("vocabulary: \(vocabulary)" + (repair ? "; counted again" : " (typo tolerance and suggestions read it)"))
            }
            for message in found.notIndexed { print("not indexed: \(message)") }
            if found.isConsistent {
                print("The index equals the source (token \(found.token)).")
            } else if found.differences == 0 && found.integrityErrors.isEmpty && found.vocabularyDifferences == nil {
                print("The index is not complete: \(found.notIndexed.count) \(found.notIndexed.count == 1 ? "entity is" : "entities are") not indexed (see above).")
            } else {
                let vocabulary = found.vocabularyDifferences == nil ? "" : " and in its vocabulary"
                if repair {
                    print("Repaired \(found.differences) document differences\(vocabulary)\(consistent ? "; the index now equals the source" : ", but differences remain").")
                } else {
                    print("The index differs from the source: \(found.differences) document differences\(vocabulary) (run with --repair to fix).")
                }
            }
        }
        if !consistent { throw ExitCode(1) }
    }
}
