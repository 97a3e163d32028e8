import Foundation
import Synchronization

/// Runs a built executable of the package (`searchlight`, `searchlight-postgres`) as a
/// subprocess, for the tests of both commands.
///
/// A started process's output is collected as it comes, on threads of its own (never on Swift
/// concurrency's pool, nor on Dispatch's workers, which run that pool's jobs on Linux), so that neither pipe fills up and blocks the child, and so
/// that a test can wait for a readiness line (``Running/waitUntil(stderrContains:timeout:)``)
/// instead of sleeping. The `async` overloads of ``run(_:executable:)`` and ``finish(_:)`` wait for the
/// process without blocking a thread of the pool: on a 2-core machine the pool has two threads,
/// and a test blocked in `waitUntilExit()` starves every other test's timeouts.
package enum Subprocess {
    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        package var stderrLines: [Substring] { stderr.split(separator: "\n") }
    }

    /// The executable `name` built beside the test bundle (or in `.build/debug`).
    package static func builtExecutable(_ name: String) -> URL {
        let besideRunner = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: besideRunner.path) { return besideRunner }
        var directory = URL(fileURLWithPath: #filePath)
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(".build/debug/\(name)")
    }

    /// A started process and the output it has written so far.
    package final class Running: Sendable {
        package let process: Process
        /// Output read so far, appended to by a reading thread.
        private final class Buffer: Sendable {
            let data = Mutex(Data())
            var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
        }
        private let stdoutBuffer = Buffer(), stderrBuffer = Buffer()
        /// Left when the process has exited.
        private let exited = DispatchGroup()
        /// Left when both pipes reached end of file.
        private let drained = DispatchGroup()

        package init(_ arguments: [String], executable: URL) {
            process = Process()
            process.executableURL = executable
            process.arguments = arguments
            let stdout = Pipe(), stderr = Pipe()
            process.standardOutput = stdout
            process.standardError = stderr
            process.standardInput = FileHandle.nullDevice
            exited.enter()
            process.terminationHandler = { [exited] _ in exited.leave() }
            try! process.run()
            for (pipe, buffer) in [(stdout, stdoutBuffer), (stderr, stderrBuffer)] {
                drained.enter()
                let handle = pipe.fileHandleForReading
                // A thread of its own, blocked in read(2) until output or EOF. Not a Dispatch
                // worker: on Linux those also run Swift concurrency's jobs, and blocked readers
                // there starve every test.
                let reader = Thread { [drained] in
                    while true {
                        let chunk = handle.availableData
                        if chunk.isEmpty { break }
                        buffer.data.withLock { $0.append(chunk) }
                    }
                    drained.leave()
                }
                reader.name = "CLI output reader"
                reader.start()
            }
        }

        /// What the process wrote to stdout so far.
        package var stdout: String { stdoutBuffer.text }
        /// What the process wrote to stderr so far.
        package var stderr: String { stderrBuffer.text }

        /// Whether the process exited and all its output was read.
        package var isFinished: Bool { exited.wait(timeout: .now()) == .success && drained.wait(timeout: .now()) == .success }

        /// Waits until `condition` holds for the output so far, the process ends, or `timeout`
        /// seconds pass (a bound against hangs, not a latency assertion: choose it generously).
        /// Returns whether the condition held.
        package func waitUntil(timeout: Double = 120, _ condition: (_ stdout: String, _ stderr: String) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(timeout)
            while true {
                let finished = isFinished // read before the output: what follows is all there is
                if condition(stdout, stderr) { return true }
                if finished || ContinuousClock.now >= deadline { return false }
                await sleepUncancelled(for: .milliseconds(10))
            }
        }

        /// Waits (bounded) until the process has written `text` on stderr: a readiness signal.
        package func waitUntil(stderrContains text: String, timeout: Double = 120) async -> Bool {
            await waitUntil(timeout: timeout) { _, stderr in stderr.contains(text) }
        }

        /// Waits (bounded) until the process has written `text` on stdout.
        package func waitUntil(stdoutContains text: String, timeout: Double = 120) async -> Bool {
            await waitUntil(timeout: timeout) { stdout, _ in stdout.contains(text) }
        }

        /// Waits for the end (blocking the calling thread).
        package func result() -> Result {
            exited.wait()
            drained.wait()
            return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
        }

        /// Waits for the end without blocking a thread of the cooperative pool, and never
        /// forever: Foundation's `terminationHandler` was once seen never to run for a child that
        /// had exited (the suite hung, every thread idle), so the child's exit is also read from
        /// `/proc` (a zombie nobody reaped is reaped here), and after `timeout` seconds the
        /// process is killed and the result says so (status -1).
        package func result(timeout: Double = 600) async -> Result {
            let deadline = ContinuousClock.now + .seconds(timeout)
            var status: Int32?
            var zombieSince: ContinuousClock.Instant?
            while exited.wait(timeout: .now()) != .success {
                // A zombie for half a second that Foundation did not reap: reaped here.
                if isZombie() {
                    let since = zombieSince ?? .now
                    zombieSince = since
                    if ContinuousClock.now - since > .milliseconds(500), let reaped = reap() { status = reaped; break }
                } else {
                    zombieSince = nil
                }
                if ContinuousClock.now >= deadline {
                    process.terminate()
                    return Result(status: -1, stdout: stdout, stderr: stderr + "\n[the test gave up waiting for the process after \(Int(timeout)) s]")
                }
                await sleepUncancelled(for: .milliseconds(10))
            }
            while drained.wait(timeout: .now()) != .success, ContinuousClock.now < deadline {
                await sleepUncancelled(for: .milliseconds(10))
            }
            return Result(status: status ?? process.terminationStatus, stdout: stdout, stderr: stderr)
        }

        /// Whether the child exited and nobody reaped it yet.
        private func isZombie() -> Bool {
            let pid = process.processIdentifier
            guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
        }

        /// Reaps the exited child: its exit status (or the signal that ended it, as Foundation
        /// reports it).
        private func reap() -> Int32? {
            let pid = process.processIdentifier
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            // WIFEXITED: the exit status; else the signal that ended it (as Foundation reports).
            return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
        }
    }

    /// Starts `executable`; its output is collected as it comes.
    package static func start(_ arguments: [String], executable: URL) -> Running {
        Running(arguments, executable: executable)
    }
}
