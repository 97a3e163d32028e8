import Foundation

/// A PostgreSQL cluster of one test's own (`bash .ci/postgres start` with a state file of its
/// own): a test that terminates backends or stops the server breaks no other test of the run.
struct PrivateCluster: Sendable {
    let state: String
    let url: String
    let dataDirectory: String
    let binDirectory: String
    let osUser: String

    static var repositoryRoot: URL {
        var directory = URL(fileURLWithPath: #filePath)
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            directory.deleteLastPathComponent()
        }
        return directory
    }

    static func start() async throws -> PrivateCluster {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fault-pg-\(UUID().uuidString).state").path
        var environment = ProcessInfo.processInfo.environment
        environment["SEARCHLIGHT_POSTGRES_STATE"] = state
        let result = try await FaultProcess.runLeavingDaemon("/bin/bash", [repositoryRoot.appendingPathComponent(".ci/postgres").path, "start"],
                                                environment: environment)
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst(7).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { values[String(pair[0])] = String(pair[1]) }
        }
        guard let url = values["SEARCHLIGHT_POSTGRES_URL"], let data = values["SEARCHLIGHT_POSTGRES_DATA"],
              let bin = values["SEARCHLIGHT_POSTGRES_BIN"], let user = values["SEARCHLIGHT_POSTGRES_OS_USER"] else {
            throw FaultFailure(".ci/postgres start printed no cluster: \(result.stdout) \(result.stderr)")
        }
        return PrivateCluster(state: state, url: url, dataDirectory: data, binDirectory: bin, osUser: user)
    }

    /// Runs `pg_ctl` as the cluster's user.
    private func pgControl(_ arguments: [String]) async throws {
        let pgctl = binDirectory + "/pg_ctl"
        if getuid() == 0 {
            try await FaultProcess.runLeavingDaemon("/usr/sbin/runuser", ["-u", osUser, "--", pgctl] + arguments)
        } else {
            try await FaultProcess.runLeavingDaemon(pgctl, arguments)
        }
    }

    /// Stops the server at once (`-m immediate`: no shutdown checkpoint, as a crash).
    func crash() async throws {
        try await pgControl(["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
    }

    func restart() async throws {
        let log = URL(fileURLWithPath: dataDirectory).deletingLastPathComponent().appendingPathComponent("server.log").path
        try await pgControl(["-D", dataDirectory, "-l", log, "-w", "-t", "60", "start"])
    }

    /// Stops the cluster and deletes it.
    func remove() async {
        var environment = ProcessInfo.processInfo.environment
        environment["SEARCHLIGHT_POSTGRES_STATE"] = state
        _ = try? await FaultProcess.run("/bin/bash", [Self.repositoryRoot.appendingPathComponent(".ci/postgres").path, "stop"],
                                        environment: environment)
    }
}
