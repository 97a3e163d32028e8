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

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    func validate() throws {
        if ![.text, .json].contains(format) { throw ValidationError("--format must be text or json") }
    }

    struct Result: Encodable {
        var consistent: Bool
        var repaired: Bool
        var differences: Int
        var pending: Int
        var token: HistoryToken
        var integrityErrors: [String]
        var entities: [VerificationReport.EntityReport]
    }

    func run() throws {
        let store = try options.openStore()
        let indexer = try Indexer(store: store, configuration: options.indexerConfiguration())
        try indexer.indexPendingChanges()
        let found = repair ? try indexer.repair() : try indexer.verify()
        let consistent = repair ? try indexer.verify().isConsistent : found.isConsistent
        switch format {
        case .json:
            print(try Output.json(Result(consistent: consistent, repaired: repair && !found.isConsistent, differences: found.differences,
                                         pending: found.pending, token: found.token, integrityErrors: found.integrityErrors,
                                         entities: found.entities)))
        default:
            for entity in found.entities {
                print("\(entity.entity): \(entity.indexedDocuments) indexed, \(entity.sourceDocuments) in the source; "
                      + "\(entity.missing.count) missing, \(entity.stale.count) stale, \(entity.extra.count) extra")
            }
            for error in found.integrityErrors { print("integrity: \(error)") }
            if found.isConsistent {
                print("The index equals the source (token \(found.token)).")
            } else if repair {
                print("Repaired \(found.differences) differences\(consistent ? "; the index now equals the source" : ", but differences remain").")
            } else {
                print("The index differs from the source: \(found.differences) differences (run with --repair to fix).")
            }
        }
        if !consistent { throw ExitCode(1) }
    }
}
