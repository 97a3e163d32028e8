import Foundation
import Logging
import SearchlightHistory
import Synchronization

/// Formatting shared by the commands: results to stdout, messages and logs to stderr.
package enum Output {
    private static let logging = Mutex(false)

    package static func bootstrapLogging(_ level: Logger.Level) {
        logging.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return EscapingLogHandler(handler)
            }
        }
    }

    /// Text for people on stdout: each line with the characters that could rewrite a terminal
    /// escaped (``UserText``), the line breaks kept. Machine formats (JSON, CSV) go through
    /// ``machine(_:)`` and keep their data exact.
    package static func human(_ text: String, terminator: String = "\n") {
        Swift.print(text.split(separator: "\n", omittingEmptySubsequences: false).map { UserText.oneLine(String($0)) }.joined(separator: "\n"),
                    terminator: terminator)
    }

    /// JSON or CSV on stdout, exactly (JSON escapes control characters itself).
    package static func machine(_ text: String) {
        Swift.print(text)
    }

    /// One line on stderr.
    /// The command's name as it was run (`searchlight`, `searchlight-postgres`), for messages.
    package static let commandName = URL(fileURLWithPath: CommandLine.arguments.first ?? "searchlight").lastPathComponent

    package static func error(_ message: String) {
        // The libraries escape the user text they quote; this keeps every message on one line
        // and unable to rewrite the terminal whatever it holds (escapes, `\r`, `\v`, separators).
        let line = UserText.oneLine(message)
        FileHandle.standardError.write(Data("\(commandName): error: \(line)\n".utf8))
    }

    package static func note(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// The message of an error, for people: never a stack trace or a type dump.
    package static func describe(_ error: any Error) -> String {
        switch error {
        case let error as SearchlightError: error.message
        case let error as LocalizedError: error.errorDescription ?? "\(error)"
        default: "\(error)"
        }
    }

    package static func json<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        // A REAL attribute value may be infinite (SQLite stores 9e999 so): JSON has no such
        // number, so it is written as a string.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Aligned columns, the first row being the header; cells are data, escaped for a terminal.
    package static func table(_ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(UserText.oneLine) }
        guard let header = rows.first else { return "" }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                // Padded by characters, as the widths are counted (Foundation's `padding(toLength:)`
                // counts UTF-16 units, and cut an emoji in two).
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - cell.count))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    package static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `2026-11-22T10:00:00.000Z`
    package static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// Writes bytes to stdout, after anything `print` buffered, and flushes.
    package static func write(_ data: Data) throws {
        fflush(nil)
        guard !data.isEmpty else { return }
        try FileHandle.standardOutput.write(contentsOf: data)
    }

    /// A count as people read it: `12,345`, and `10,000+` for a lower bound.
    package static func count(_ value: Int, atLeast: Bool = false) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped + (atLeast ? "+" : "")
    }

    /// Text on one line, at most `width` characters.
    package static func clip(_ text: String, _ width: Int) -> String {
        let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count <= width ? flat : String(flat.prefix(width - 1)) + "…"
    }
}

/// A log handler that escapes what could rewrite a terminal (paths, table and column names, user
/// text quoted in messages) in each message and metadata value, then hands it on: every log line
/// stays one line.
struct EscapingLogHandler: LogHandler {
    var wrapped: StreamLogHandler

    init(_ wrapped: StreamLogHandler) { self.wrapped = wrapped }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue.mapValues(Self.escaped) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escaped) }
    }

    private static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        .string(UserText.oneLine("\(value)"))
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(UserText.oneLine("\(event.message)"))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        wrapped.log(event: event)
    }
}
