import Foundation
import SearchlightHistory

/// Checks of the command line that ArgumentParser cannot make: file paths, and hints for usage
/// errors.
package enum Arguments {
    /// A file path given on the command line, checked before anything is opened: not empty, and
    /// the bytes the user typed (Swift reads arguments as UTF-8 and replaces bytes that are not
    /// with U+FFFD, so such a path names a file that is not there).
    ///
    /// - Parameter what: what the path names, for the message (`database`, `model file`).
    package static func path(_ path: String, naming what: String) throws(SearchlightError) -> String {
        if path.isEmpty { throw SearchlightError(.invalidArgument, "invalid \(what) path: it is empty") }
        if path.contains("\u{FFFD}") && rawArgumentsHoldInvalidUTF8() {
            throw SearchlightError(.invalidArgument, "the \(what) path \(UserText.shown(path, limit: 200)) is not valid UTF-8: Searchlight opens UTF-8 paths only (rename the file, or link it under a UTF-8 name)")
        }
        return path
    }

    /// ArgumentParser's message of a usage error on one line: its first line, and the values it
    /// lists on the lines after (`Please provide one of the following: trace, debug, …`).
    package static func usageMessage(_ full: String) -> String {
        let lines = full.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = lines.first else { return "invalid usage" }
        let text = first.replacingOccurrences(of: "Error: ", with: "")
        let values = lines.dropFirst().filter { $0.hasPrefix("- ") }.map { $0.dropFirst(2) }
        guard text.hasSuffix(":"), !values.isEmpty else { return text }
        return text + " " + values.joined(separator: ", ")
    }

    /// The hint after a usage error: an unknown option may be a query or value that starts with
    /// `-`, which goes after `--`.
    package static func usageHint(for message: String) -> String {
        let command = Output.commandName
        if message.hasPrefix("Unknown option") || message.hasPrefix("Invalid option") {
            return " (text that starts with '-' goes after '--', as in: \(command) search … -- -word; see '\(command) help')"
        }
        return " (see '\(command) help')"
    }

    private static func rawArgumentsHoldInvalidUTF8() -> Bool {
        (0..<Int(CommandLine.argc)).contains { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return false }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
            return String(validating: bytes, as: UTF8.self) == nil
        }
    }
}
