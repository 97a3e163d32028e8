import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Searchlight
import SearchlightHistory

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the head token, each consumer's checkpoint and lag, and the size of the index and history.")

    @OptionGroup var options: StoreOptions

    /// How `status` prints its report.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(help: "Output format.")
    var format: Format = .text

    struct Status: Encodable {
        struct Consumer: Encodable {
            var author: String
            var required: Bool
            var token: HistoryToken?
            var timestamp: String?
            var lag: Int
            var expired: Bool

            func encode(to encoder: any Encoder) throws {
                enum Key: String, CodingKey { case author, required, token, timestamp, lag, expired }
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(author, forKey: .author)
                try container.encode(required, forKey: .required)
                try container.encode(token, forKey: .token)
                try container.encode(timestamp, forKey: .timestamp)
                try container.encode(lag, forKey: .lag)
                try container.encode(expired, forKey: .expired)
            }
        }
        var headToken: HistoryToken
        var purgedThroughToken: HistoryToken
        var consumers: [Consumer]
        var documents: Int
        var documentsByEntity: [String: Int]
        var historyTransactions: Int
        var historyChanges: Int
        /// Each entity's capture state, and the renames followed.
        var capture: CaptureStatus
    }

    func run() throws {
        let store = try options.openStore()
        let history = try store.status()
        let documents = try SearchIndex(store: store).documentCounts()
        let status = Status(
            headToken: history.headToken, purgedThroughToken: history.purgedThrough,
            consumers: history.consumers.map {
                .init(author: $0.consumer.author, required: $0.consumer.isRequired, token: $0.consumer.checkpoint?.token,
                      timestamp: $0.consumer.checkpoint?.transactionTimestamp.map(Output.iso8601), lag: $0.lag, expired: $0.isExpired)
            },
            documents: documents.values.reduce(0, +), documentsByEntity: documents,
            historyTransactions: history.transactions, historyChanges: history.changes,
            capture: try store.healCapture())
        if format == .json {
            Output.machine(try Output.json(status))
            return
        }
        print("Head token: \(status.headToken)")
        print("History: \(status.historyTransactions) transactions, \(status.historyChanges) changes (deleted through token \(status.purgedThroughToken))")
        print("Documents: \(status.documents) (\(documents.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")))")
        var rows = [["CONSUMER", "REQUIRED", "TOKEN", "CHECKPOINTED TRANSACTION", "LAG", "EXPIRED"]]
        for consumer in status.consumers {
            rows.append([consumer.author, consumer.required ? "yes" : "no", consumer.token?.description ?? "-",
                         consumer.timestamp ?? "-", String(consumer.lag), consumer.expired ? "yes" : "no"])
        }
        print(Output.table(rows))
        for entity in status.capture.notCapturing {
            print("Not captured: entity \(entity.name): \(entity.state)")
        }
        for rename in status.capture.followed {
            print("Followed: \(rename) on \(Output.iso8601(rename.date))")
        }
    }
}
