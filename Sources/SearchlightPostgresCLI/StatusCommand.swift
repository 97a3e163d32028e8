import ArgumentParser

/// `searchlight-postgres status` (not written yet).
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "(not written yet)")
    func run() async throws { throw ValidationError("not written yet") }
}
