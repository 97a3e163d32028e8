import ArgumentParser
import Foundation
import GRDB
import SearchlightHistory

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "List transactions and their changes; --follow streams new ones as they commit.")

    @OptionGroup var options: StoreOptions

    @Option(help: "Only transactions after this token.")
    var after: Int64?

    @Option(help: "Only transactions recorded after this date (ISO 8601).")
    var since: String?

    @Option(name: .customLong("author"), help: "Only this author (repeat for several).")
    var authors: [String] = []

    @Option(name: .customLong("exclude-author"), help: "Not this author (repeat for several).")
    var excludedAuthors: [String] = []

    @Option(help: "Only changes to this entity.")
    var entity: String?

    @Option(help: "At most this many transactions (0: no limit). With --follow: the first ones of the backlog, then only transactions committed after the command started.")
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

    /// A transaction in the change feed's JSON shape.
    struct Line: Encodable {
        var transaction: HistoryTransaction

        func encode(to encoder: any Encoder) throws {
            enum Key: String, CodingKey { case token, timestamp, author, context, changes }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(transaction.token, forKey: .token)
            try container.encode(Output.iso8601(transaction.timestamp), forKey: .timestamp)
            try container.encode(transaction.author, forKey: .author)
            try container.encode(transaction.contextName, forKey: .context)
            try container.encode(transaction.changes.map(Change.init), forKey: .changes)
        }
    }

    struct Change: Encodable {
        var change: HistoryChange

        func encode(to encoder: any Encoder) throws {
            enum Key: String, CodingKey { case entity, id, type, updatedColumns, tombstone }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(change.entity, forKey: .entity)
            try container.encode(change.objectID, forKey: .id)
            try container.encode(change.type.description, forKey: .type)
            if change.type == .update { try container.encode(change.updatedColumns ?? [], forKey: .updatedColumns) }
            if change.type == .delete { try container.encode((change.tombstone ?? [:]).mapValues(JSONValue.init), forKey: .tombstone) }
        }
    }

    struct JSONValue: Encodable {
        var value: DatabaseValue
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch value.storage {
            case .null: try container.encodeNil()
            case let .int64(number): try container.encode(number)
            case let .double(number): try container.encode(number)
            case let .string(text): try container.encode(text)
            case let .blob(data): try container.encode(data.base64EncodedString())
            }
        }
    }

    func run() async throws {
        let store = try options.openStore()
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

        init(format: Format) {
            self.format = format
            encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        }

        mutating func emit(_ transactions: [HistoryTransaction]) throws {
            var output = Data()
            if format == .jsonl {
                for transaction in transactions {
                    output.append(try encoder.encode(Line(transaction: transaction)))
                    output.append(0x0A)
                }
            } else {
                var rows = header ? [["TOKEN", "TIMESTAMP", "AUTHOR", "CONTEXT", "CHANGE", "ENTITY", "ID", "DETAIL"]] : []
                for transaction in transactions {
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
}
