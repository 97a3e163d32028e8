import Foundation
import Synchronization
import SearchlightTestSupport

/// Runs the built `searchlight` binary as a subprocess (``Subprocess``).
enum CLI {
    typealias Result = Subprocess.Result
    typealias Running = Subprocess.Running

    static var binary: URL { Subprocess.builtExecutable("searchlight") }

    /// Runs to completion (blocking the calling thread: prefer the `async` overload in tests).
    @discardableResult
    static func run(_ arguments: [String]) throws -> Result {
        try finish(start(arguments))
    }

    /// Runs to completion without blocking a thread of the cooperative pool.
    @discardableResult
    static func run(_ arguments: [String], executable: URL = binary) async throws -> Result {
        try await finish(start(arguments, executable: executable))
    }

    /// Starts `searchlight` (or another executable); its output is collected as it comes.
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

    /// Interrupts (SIGINT) a process still running after `seconds`: a bound against hangs, never a
    /// latency assertion. A test that expects the process to end by itself checks ``fired``.
    final class Watchdog: Sendable {
        private let state = Mutex((fired: false, cancelled: false))

        init(_ running: Running, seconds: Double = 600) {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                let fire = state.withLock { state in
                    state.fired = !state.cancelled && running.process.isRunning
                    return state.fired
                }
                if fire { running.process.interrupt() }
            }
        }

        /// Whether it had to interrupt the process.
        var fired: Bool { state.withLock { $0.fired } }

        func cancel() { state.withLock { $0.cancelled = true } }
    }

    /// A database with a `notes` table and a model file for it.
    static func workspace() throws -> (TestDatabase, model: String) {
        let db = try TestDatabase(schema: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);
            INSERT INTO notes VALUES (1, 'Kernel panic', 'The system halted.'), (2, 'Hacker ethic', 'Information wants to be free.');
            """)
        let model = db.directory.appendingPathComponent("model.json").path
        try Data("""
            {"entities": [{"name": "Note", "table": "notes", "primaryKey": "id",
              "fields": [{"column": "title", "weight": 10, "role": "title"}, {"column": "body"}],
              "preserveOnDelete": ["title"]}],
             "history": {"maximumDurationSeconds": 604800}}
            """.utf8).write(to: URL(fileURLWithPath: model))
        return (db, model)
    }
}
