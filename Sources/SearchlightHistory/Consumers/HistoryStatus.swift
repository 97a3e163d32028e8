import Foundation
import GRDB

/// Where history stands: its head, its size, and how far each consumer has processed it.
public struct HistoryStatus: Hashable, Sendable {
    /// A consumer's progress.
    public struct Consumer: Hashable, Sendable {
        public var author: String
        public var isRequired: Bool
        /// Its checkpoint token (`nil`: never checkpointed).
        public var token: HistoryToken?
        /// The timestamp of the checkpointed transaction.
        public var timestamp: Date?
        /// Transactions committed after its checkpoint.
        public var lag: Int
        /// Whether cleanup deleted history it had not processed (its next fetch throws
        /// `historyExpired`).
        public var expired: Bool
    }

    public var headToken: HistoryToken
    /// History was deleted through this token.
    public var purgedThrough: HistoryToken
    public var transactions: Int
    public var changes: Int
    public var consumers: [Consumer]
}

extension HistoryStore {
    /// The head token, history size and every consumer's progress, in one snapshot.
    public func status() throws(SearchlightError) -> HistoryStatus {
        try SearchlightError.catching("cannot read the history status") {
            try dbPool.read { db in
                let row = try Row.fetchOne(db, sql: """
                    SELECT count(*) FILTER (WHERE "type" = ?1), count(*) FILTER (WHERE "type" <> ?1) FROM "searchlight_log"
                    """, arguments: [LogRowType.transactionHeader])!
                let head = try HistoryLog.headToken(db)
                let purged = try HistoryLog.purgedThrough(db)
                let consumers = try ConsumerLog.all(db).map { consumer in
                    let token = consumer.checkpoint?.token
                    let lag = try Int.fetchOne(db, sql: #"SELECT count(*) FROM "searchlight_log" WHERE "type" = ? AND "id" > ?"#,
                                               arguments: [LogRowType.transactionHeader, token ?? .zero]) ?? 0
                    return HistoryStatus.Consumer(
                        author: consumer.author, isRequired: consumer.isRequired, token: token,
                        timestamp: consumer.checkpoint?.transactionTimestamp, lag: lag,
                        expired: purged > .zero && (token ?? .zero) < purged)
                }
                return HistoryStatus(headToken: head, purgedThrough: purged, transactions: row[0], changes: row[1], consumers: consumers)
            }
        }
    }
}
