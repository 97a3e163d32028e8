import Foundation
import GRDB

/// Where history stands: its head, its size, and how far each consumer has processed it.
public struct HistoryStatus: Hashable, Sendable {
    /// A consumer, and how far behind the head it is.
    public struct ConsumerProgress: Hashable, Sendable {
        /// The consumer and its checkpoint (see ``HistoryStore/consumers()``).
        public var consumer: HistoryConsumer
        /// Transactions committed after its checkpoint (all of them, without one).
        public var lag: Int
        /// Whether cleanup deleted history it had not processed (its next fetch throws
        /// `historyExpired`).
        public var isExpired: Bool

        public init(consumer: HistoryConsumer, lag: Int, isExpired: Bool) {
            self.consumer = consumer
            self.lag = lag
            self.isExpired = isExpired
        }
    }

    public var headToken: HistoryToken
    /// History was deleted through this token.
    public var purgedThrough: HistoryToken
    public var transactions: Int
    public var changes: Int
    public var consumers: [ConsumerProgress]

    public init(headToken: HistoryToken, purgedThrough: HistoryToken, transactions: Int, changes: Int, consumers: [ConsumerProgress]) {
        self.headToken = headToken
        self.purgedThrough = purgedThrough
        self.transactions = transactions
        self.changes = changes
        self.consumers = consumers
    }
}

extension HistoryStore {
    /// The head token, history size and every consumer's progress, in one snapshot.
    public func status() throws(SearchlightError) -> HistoryStatus {
        try SearchlightError.catching("cannot read the history status") {
            try dbPool.read { db in
                let head = try HistoryLog.headToken(db)
                let purged = try HistoryLog.purgedThrough(db)
                let row = try Row.fetchOne(db, sql: """
                    SELECT count(*) FILTER (WHERE \(LogRowType.transactionStart)), count(*) FILTER (WHERE "type" IN (1, 2, 3))
                    FROM "searchlight_log"
                    """)!
                let consumers = try ConsumerLog.all(db).map { consumer in
                    let token = consumer.checkpoint?.token
                    let lag = try Int.fetchOne(db, sql: #"SELECT count(*) FROM "searchlight_log" WHERE \#(LogRowType.transactionStart) AND "id" > ?"#,
                                               arguments: [token ?? .zero]) ?? 0
                    return HistoryStatus.ConsumerProgress(
                        consumer: consumer, lag: lag, isExpired: purged > .zero && (token ?? .zero) < purged)
                }
                return HistoryStatus(headToken: head, purgedThrough: purged, transactions: row[0], changes: row[1], consumers: consumers)
            }
        }
    }
}
