import ArgumentParser

/// `searchlight-postgres sink` (not written yet).
struct SinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sink", abstract: "(not written yet)")
    func run() async throws { throw ValidationError("not written yet") }
}
