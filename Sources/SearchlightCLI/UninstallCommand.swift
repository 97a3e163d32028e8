import ArgumentParser
import Foundation
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
        let interactive = isatty(STDIN_FILENO) != 0
        if !yes && !interactive {
            throw SearchlightError(.invalidArgument, "uninstall removes Searchlight's history and index from \(options.db): pass --yes to confirm (stdin is not a terminal)")
        }
        let store: HistoryStore
        do {
            store = try options.openStore()
        } catch SearchlightError.notInstalled {
            throw SearchlightError(.notInstalled, "\(options.db) has no Searchlight setup: nothing to uninstall")
        }
        if !yes {
            let entities = store.model.entities.map { "\($0.name) (\($0.table))" }.joined(separator: ", ")
            FileHandle.standardError.write(Data("Remove Searchlight from \(options.db): capture of \(entities), its history, checkpoints and index? [y/N] ".utf8))
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                Output.note("Nothing was changed.")
                throw ExitCode.failure
            }
        }
        try Indexer.uninstall(from: store)
        print("Searchlight uninstalled from \(options.db): its triggers, history and index are removed; the app's tables are untouched.")
    }
}
