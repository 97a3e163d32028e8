import ArgumentParser
import Foundation
import SearchlightCommandSupport
import GRDB
import SearchlightHistory

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "List transactions and their changes; --follow streams new ones as they commit.")

    @OptionGroup var options: StoreOptions

    @Option(parsing: .unconditional, help: "Only transactions after this token.")
    var after: Int64?

    @Option(help: "Only transactions recorded after this date (ISO 8601).")
    var since: String?

    @Option(name: .customLong("author"), help: "Only this author (repeat for several).")
    var authors: [String] = []

    @Option(name: .customLong("exclude-author"), help: "Not this author (repeat for several).")
    var excludedAuthors: [String] = []

    @Option(help: "Only changes to this entity.")
    var entity: String?

    @Option(parsing: .unconditional, help: "At most this many transactions (0: no limit). With --follow: the first ones of the backlog, then only transactions committed after the command started.")
    var limit: Int = 0

    /// How `history` prints transactions.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, jsonl
    }

    @Option(help: "Output format.")
    var format: Format = .table

    @Flag(help: "Keep streaming new transactions until SIGINT or SIGTERM.")
    var follow = false

    func validate() throws {
        if after != nil && since != nil { throw ValidationError("give --after or --since, not both") }
        if let since, Self.parseDate(since) == nil { throw ValidationError("--since must be an ISO 8601 date, like 2026-11-22T10:00:00Z") }
        if !authors.isEmpty && !excludedAuthors.isEmpty { throw ValidationError("give --author or --exclude-author, not both") }
        if limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text)
    }

    func request(start: HistoryRequest.Start) -> HistoryRequest {
        var request = HistoryRequest(start: start)
        if !authors.isEmpty { request.authors = .only(Set(authors)) }
        if !excludedAuthors.isEmpty { request.authors = .excluding(Set(excludedAuthors)) }
        request.entities = entity.map { [$0] }
        return request
    }

    func run() async throws {
        let store = try options.openStore(readOnly: true)
        var start: HistoryRequest.Start = .oldest
        if let after { start = .token(HistoryToken(after)) }
        if let since { start = .date(Self.parseDate(since)!) }
        var request = request(start: start)
        request.limit = limit == 0 ? nil : limit
        let feed = store.history(request, follow: follow)
        // Print pages as the feed reads them, until it ends (no --follow), fails, or a signal
        // arrives: one page in memory at a time, one write per page.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var writer = PageWriter(format: format)
                for try await page in feed { try writer.emit(page) }
                if !follow { try writer.finish() }
            }
            if follow { group.addTask { await Signals.waitForTermination() } }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Formats pages of transactions and writes each page to stdout in one write, flushed (a
    /// follower reads lines as they come).
    struct PageWriter {
        let format: Format
        private var header = true
        private let encoder: JSONEncoder
        private var timestamps = Timestamps()

        init(format: Format) {
            self.format = format
            encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // An infinite REAL key (or tombstone value) as search prints it: one line that says
            // so, not an encoding error that stops the whole history.
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        }

        mutating func emit(_ transactions: [HistoryTransaction]) throws {
            var output = Data()
            if format == .jsonl {
                var line = JSONLine(encoder: encoder, timestamps: timestamps)
                for transaction in transactions { try line.write(transaction) }
                timestamps = line.timestamps
                output = Data(line.bytes)
            } else {
                var rows = header ? [["TOKEN", "TIMESTAMP", "AUTHOR", "CONTEXT", "CHANGE", "ENTITY", "ID", "DETAIL"]] : []
                for transaction in transactions {
                    // A transaction with no change (a capture gap's marker) is a row too: --limit counts it.
                    if transaction.changes.isEmpty {
                        rows.append([transaction.token.description, Output.iso8601(transaction.timestamp), transaction.author ?? "-",
                                     transaction.contextName ?? "-", "-", "-", "-", ""])
                    }
                    for (index, change) in transaction.changes.enumerated() {
                        let detail = change.updatedColumns?.joined(separator: ",")
                            ?? change.tombstone.map { $0.keys.sorted().map { "\($0)=\(change.tombstone![$0]!)" }.joined(separator: " ") } ?? ""
                        rows.append(index == 0
                            ? [transaction.token.description, Output.iso8601(transaction.timestamp), transaction.author ?? "-", transaction.contextName ?? "-",
                               change.type.description, change.entity, change.objectID.description, Output.clip(detail, 40)]
                            : ["", "", "", "", change.type.description, change.entity, change.objectID.description, Output.clip(detail, 40)])
                    }
                }
                if !rows.isEmpty { output.append(contentsOf: (Output.table(rows) + "\n").utf8) }
            }
            header = false
            try Output.write(output)
        }

        /// The table's header alone when there was no transaction to list.
        mutating func finish() throws {
            if header && format == .table { try emit([]) }
        }
    }

    /// The timestamps of a feed, as `Output.iso8601` writes them, formatting each second once:
    /// transactions come by the thousand per second.
    struct Timestamps {
        private var second: Int64?
        private var prefix = ""

        /// `2026-11-22T10:00:00.123Z`, rounded to the millisecond.
        mutating func format(_ date: Date) -> String {
            let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
            let (second, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            guard millisecond >= 0 else { return Output.iso8601(date) }
            if second != self.second {
                self.second = second
                prefix = String(Output.iso8601(Date(timeIntervalSince1970: Double(second))).prefix(while: { $0 != "." }))
            }
            let digits = String(millisecond)
            return prefix + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
        }
    }

    /// A transaction as one line of JSON (keys sorted, slashes unescaped, as `JSONEncoder`
    /// with `.sortedKeys` and `.withoutEscapingSlashes` writes it), written directly: encoding
    /// through `Codable` took four fifths of the command's time and kept it under 15,000
    /// transactions a second. REAL numbers still go through the encoder.
    ///
    /// `{"author":null,"changes":[{"entity":"Note","id":1,"type":"insert"}],"context":null,"timestamp":"…","token":1}`
    /// (deletes add `"tombstone":{…}` with BLOBs in base64, updates `"updatedColumns":[…]`; a
    /// BLOB key is its `x'…'` text).
    struct JSONLine {
        let encoder: JSONEncoder
        var timestamps: Timestamps
        var bytes: [UInt8] = []

        init(encoder: JSONEncoder, timestamps: Timestamps) {
            self.encoder = encoder
            self.timestamps = timestamps
            bytes.reserveCapacity(1 << 16)
        }

        mutating func write(_ transaction: HistoryTransaction) throws {
            raw(#"{"author":"#)
            optionalString(transaction.author)
            raw(#","changes":["#)
            for (index, change) in transaction.changes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                raw(#"{"entity":"#)
                string(change.entity)
                raw(#","id":"#)
                switch change.objectID {
                case let .integer(value): raw(String(value))
                case let .text(value): string(value)
                case let .real(value): try encoded(value)
                case .blob: string(change.objectID.description)
                }
                if change.type == .delete {
                    raw(#","tombstone":{"#)
                    for (index, (name, value)) in (change.tombstone ?? [:]).sorted(by: { $0.key < $1.key }).enumerated() {
                        if index > 0 { bytes.append(UInt8(ascii: ",")) }
                        string(name)
                        bytes.append(UInt8(ascii: ":"))
                        switch value.storage {
                        case .null: raw("null")
                        case let .int64(number): raw(String(number))
                        case let .double(number): try encoded(number)
                        case let .string(text): string(text)
                        case let .blob(data): string(data.base64EncodedString())
                        }
                    }
                    bytes.append(UInt8(ascii: "}"))
                }
                raw(#","type":"#)
                string(change.type.description)
                if change.type == .update {
                    raw(#","updatedColumns":["#)
                    for (index, column) in (change.updatedColumns ?? []).enumerated() {
                        if index > 0 { bytes.append(UInt8(ascii: ",")) }
                        string(column)
                    }
                    bytes.append(UInt8(ascii: "]"))
                }
                bytes.append(UInt8(ascii: "}"))
            }
            raw(#"],"context":"#)
            optionalString(transaction.contextName)
            raw(#","timestamp":"#)
            string(timestamps.format(transaction.timestamp))
            raw(#","token":"#)
            raw(transaction.token.description)
            raw("}\n")
        }

        private mutating func raw(_ text: String) {
            bytes.append(contentsOf: text.utf8)
        }

        private mutating func encoded(_ value: some Encodable) throws {
            bytes.append(contentsOf: try encoder.encode(value))
        }

        private mutating func optionalString(_ text: String?) {
            if let text { string(text) } else { raw("null") }
        }

        /// A JSON string: quotes, backslashes and control characters escaped as `JSONEncoder`
        /// escapes them; everything else (slashes and non-ASCII included) as UTF-8.
        private mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): raw(#"\""#)
                case UInt8(ascii: "\\"): raw(#"\\"#)
                case 0x0A: raw(#"\n"#)
                case 0x0D: raw(#"\r"#)
                case 0x09: raw(#"\t"#)
                case 0x08: raw(#"\b"#)
                case 0x0C: raw(#"\f"#)
                case 0x00..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    raw(#"\u00"#)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0x0F)])
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
