import ArgumentParser

/// `searchlight-postgres verify` (not written yet).
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify", abstract: "(not written yet)")
    func run() async throws { throw ValidationError("not written yet") }
}
