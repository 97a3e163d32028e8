import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightHistory

struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Remove every trigger, table and setting Searchlight added (history, checkpoints, index); the app's tables stay as they are.",
        discussion: """
            Running `watch` and other commands stop with an error; only `init` sets Searchlight up again.
            Asks for confirmation on a terminal; otherwise pass --yes.
            """)

    @OptionGroup var options: StoreOptions

    @Flag(help: "Do not ask for confirmation (required when stdin is not a terminal).")
    var yes = false

    func run() throws {
        // Confirmation comes first: opening the database may already write (a capture check).
        if !yes {
            guard isatty(STDIN_FILENO) != 0 else {
                throw SearchlightError(.invalidArgument, "uninstall removes Searchlight's history and index from \(options.db): pass --yes to confirm (stdin is not a terminal)")
            }
            FileHandle.standardError.write(Data("Remove Searchlight from \(options.db): its capture triggers, history, checkpoints and index? [y/N] ".utf8))
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                Output.note("Nothing was changed.")
                throw ExitCode.failure
            }
        }
        let store: HistoryStore
        do {
            store = try options.openStore()
        } catch SearchlightError.notInstalled {
            throw SearchlightError(.notInstalled, "\(options.db) has no Searchlight setup: nothing to uninstall")
        }
        try Indexer.uninstall(from: store)
        print("Searchlight uninstalled from \(options.db): its triggers, history and index are removed; the app's tables are untouched.")
    }
}
