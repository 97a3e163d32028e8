import ArgumentParser
import Foundation
import SearchlightCommandSupport
import SearchlightHistory

/// `searchlight-postgres`: history of SQLite databases flows into PostgreSQL, and one search
/// spans them all. The root command only configures; each subcommand lives in its own file.
@main
struct SearchlightPostgresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchlight-postgres",
        abstract: "Sinks the history of SQLite databases into PostgreSQL, and searches them all.",
        version: SearchlightVersion.current,
        subcommands: [SinkCommand.self, SearchCommand.self, SuggestCommand.self, StatusCommand.self, VerifyCommand.self, ServeCommand.self])

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
