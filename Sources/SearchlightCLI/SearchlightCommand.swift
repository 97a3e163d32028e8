import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightHistory

/// The root command only configures; each subcommand lives in its own file.
@main
struct SearchlightCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchlight",
        abstract: "Full-text search that follows every change to an SQLite database.",
        version: SearchlightVersion.current,
        subcommands: [
            InitCommand.self, IndexCommand.self, WatchCommand.self, SearchCommand.self, SuggestCommand.self, ReindexCommand.self,
            VerifyCommand.self, StatusCommand.self, HistoryCommand.self, CleanupCommand.self, UninstallCommand.self, DemoCommand.self, ServeCommand.self,
        ])

    /// Exit codes: 0 success, 1 a user or runtime error (one line on stderr), 2 a usage error.
    static func main() async {
        do {
            let command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch let error as SearchlightError {
            fail(error.message)
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            // Help and version requests, and usage errors, come from ArgumentParser; it also
            // handles them when `parseAsRoot` returns its built-in help command.
            switch exitCode(for: error) {
            case .success:
                print(fullMessage(for: error))
                Foundation.exit(0)
            case .validationFailure:
                let text = Arguments.usageMessage(fullMessage(for: error))
                Output.error(text + Arguments.usageHint(for: text))
                Foundation.exit(2)
            default:
                fail(Output.describe(error))
            }
        }
    }

    private static func fail(_ message: String) -> Never {
        Output.error(message)
        Foundation.exit(1)
    }
}
