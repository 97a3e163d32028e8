import ArgumentParser

/// `searchlight-postgres search` (not written yet).
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "search", abstract: "(not written yet)")
    func run() async throws { throw ValidationError("not written yet") }
}
