import Foundation
import Synchronization
import SearchlightTestSupport

/// Runs the built `searchlight` binary as a subprocess.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var stderrLines: [Substring] { stderr.split(separator: "\n") }
    }

    static var binary: URL {
        // The test bundle and the executable are built into the same directory.
        let besideRunner = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchlight")
        if FileManager.default.isExecutableFile(atPath: besideRunner.path) { return besideRunner }
        var directory = URL(fileURLWithPath: #filePath)
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(".build/debug/searchlight")
    }

    /// Runs to completion.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Result {
        try finish(start(arguments))
    }

    struct Running {
        var process: Process
        var stdout: Pipe
        var stderr: Pipe
    }

    /// Starts `searchlight` (or another executable) with pipes for its output.
    static func start(_ arguments: [String], executable: URL = binary) -> Running {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try! process.run()
        return Running(process: process, stdout: stdout, stderr: stderr)
    }

    static func finish(_ running: Running) throws -> Result {
        // Read stderr on another thread so that neither pipe fills up and blocks the child.
        let errors = Mutex(Data())
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            let data = running.stderr.fileHandleForReading.readDataToEndOfFile()
            errors.withLock { $0 = data }
            group.leave()
        }
        let output = running.stdout.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        running.process.waitUntilExit()
        return Result(status: running.process.terminationStatus,
                      stdout: String(decoding: output, as: UTF8.self), stderr: String(decoding: errors.withLock { $0 }, as: UTF8.self))
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
