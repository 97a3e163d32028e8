import Foundation
import SearchlightTestSupport
import Synchronization

/// A child process of a fault test (the `searchlight`, `searchlight-postgres` and
/// `searchlight-stress` binaries, `psql`, `sqlite3`), its output collected as it comes on threads
/// of its own (never on Swift concurrency's pool: on a 2-core machine a blocked pool thread
/// starves every other test's timeouts), so that a test waits for a readiness line instead of
/// sleeping, and waits for the exit without blocking the pool.
final class FaultProcess: Sendable {
    let process: Process
    let arguments: [String]
    private final class Buffer: Sendable {
        let data = Mutex(Data())
        var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
    }
    private let stdoutBuffer = Buffer(), stderrBuffer = Buffer()
    private let exited = DispatchGroup()
    private let drained = DispatchGroup()

    struct Result: Sendable {
        var status: Int32
        var signalled: Bool
        var stdout: String
        var stderr: String
    }

    /// The directory the package's executables are built into (beside the test bundle).
    static var buildDirectory: URL {
        let besideRunner = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if FileManager.default.isExecutableFile(atPath: besideRunner.appendingPathComponent("searchlight-postgres").path) { return besideRunner }
        var directory = URL(fileURLWithPath: #filePath)
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(".build/debug")
    }

    static func tool(_ name: String) -> URL { buildDirectory.appendingPathComponent(name) }

    /// Starts `executable` (a built tool's name, or an absolute path) with `arguments`.
    init(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil) {
        let url = executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : Self.tool(executable)
        self.arguments = [executable] + arguments
        process = Process()
        process.executableURL = url
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        exited.enter()
        process.terminationHandler = { [exited] _ in exited.leave() }
        do { try process.run() } catch {
            exited.leave()
            stderrBuffer.data.withLock { $0 = Data("cannot start \(url.path): \(error)".utf8) }
            return
        }
        if let input {
            let handle = stdin.fileHandleForWriting
            let writer = Thread {
                handle.write(Data(input.utf8))
                try? handle.close()
            }
            writer.start()
        }
        for (pipe, buffer) in [(stdout, stdoutBuffer), (stderr, stderrBuffer)] {
            drained.enter()
            let handle = pipe.fileHandleForReading
            let reader = Thread { [drained] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.data.withLock { $0.append(chunk) }
                }
                drained.leave()
            }
            reader.name = "fault process output reader"
            reader.start()
        }
    }

    var stdout: String { stdoutBuffer.text }
    var stderr: String { stderrBuffer.text }
    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var isFinished: Bool { exited.wait(timeout: .now()) == .success && drained.wait(timeout: .now()) == .success }

    /// Waits until `condition` holds for the output so far, the process ends, or `timeout` seconds
    /// pass (a bound against hangs, never a latency assertion). Returns whether it held.
    func waitUntil(timeout: Double = 120, _ condition: (_ stdout: String, _ stderr: String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while true {
            let finished = isFinished
            if condition(stdout, stderr) { return true }
            if finished || ContinuousClock.now >= deadline { return false }
            await sleepUncancelled(for: .milliseconds(10))
        }
    }

    func waitUntil(stderrContains text: String, timeout: Double = 120) async -> Bool {
        await waitUntil(timeout: timeout) { _, stderr in stderr.contains(text) }
    }

    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the exit without blocking a thread of the cooperative pool; after `timeout`
    /// seconds the process is killed (SIGKILL) and the result says so (`signalled`).
    func finish(timeout: Double = 180) async -> Result {
        let done = Mutex(false)
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [process] in
            if !done.withLock({ $0 }) && process.isRunning {
                FileHandle.standardError.write(Data("fault test: killing \(pid) after \(timeout) s\n".utf8))
                kill(pid, SIGKILL)
            }
        }
        for group in [exited, drained] {
            await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        }
        done.withLock { $0 = true }
        return Result(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                      stdout: stdout, stderr: stderr)
    }

    /// Runs to the end; throws if it did not exit 0.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
                    timeout: Double = 180) async throws -> Result {
        let child = FaultProcess(executable, arguments, input: input, environment: environment)
        let result = await child.finish(timeout: timeout)
        guard result.status == 0, !result.signalled else {
            throw FaultFailure("\(([executable] + arguments).joined(separator: " ").prefix(300)) exited \(result.status)\(result.signalled ? " (signal)" : ""): \(result.stderr.suffix(1_500)) \(result.stdout.suffix(500))")
        }
        return result
    }
}

extension FaultProcess {
    /// Runs a command that leaves a daemon behind (`pg_ctl start`) with every descriptor above 2
    /// closed: Foundation's `Process` on Linux learns that a child ended when a socket the child
    /// inherited closes, and a daemon that inherited it too would keep the command "running".
    @discardableResult
    static func runLeavingDaemon(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Result {
        let script = #"( for f in /proc/$BASHPID/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null; fi; done; exec "$@" ); status=$?; exit $status"#
        return try await run("/bin/bash", ["-c", script, "fault-daemon", executable] + arguments, environment: environment)
    }
}

struct FaultFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
