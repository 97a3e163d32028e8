import Foundation
import Synchronization
import SearchlightTestSupport

/// Runs the built `searchlight-postgres` binary as a subprocess (``Subprocess``).
enum PostgresCLI {
    typealias Result = Subprocess.Result
    typealias Running = Subprocess.Running

    static var binary: URL { Subprocess.builtExecutable("searchlight-postgres") }

    /// Runs to completion (blocking the calling thread: prefer the `async` overload in tests).
    @discardableResult
    static func run(_ arguments: [String]) throws -> Result {
        try finish(start(arguments))
    }

    /// Runs to completion without blocking a thread of the cooperative pool.
    @discardableResult
    static func run(_ arguments: [String]) async throws -> Result {
        try await finish(start(arguments))
    }

    /// Starts `searchlight-postgres` (or another executable); its output is collected as it comes.
    static func start(_ arguments: [String], executable: URL = binary) -> Running {
        Subprocess.start(arguments, executable: executable)
    }

    /// Waits for the process to exit (blocking the calling thread: prefer the `async` overload).
    static func finish(_ running: Running) throws -> Result {
        running.result()
    }

    /// Waits for the process to exit without blocking a thread of the cooperative pool.
    static func finish(_ running: Running) async throws -> Result {
        await running.result()
    }
}
