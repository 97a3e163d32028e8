import Foundation
import GRDB

/// How far a consumer has processed history.
public struct HistoryCheckpoint: Hashable, Sendable {
    /// The last processed token.
    public var token: HistoryToken
    /// The timestamp of that transaction, if it still exists.
    public var transactionTimestamp: Date?
    /// When the checkpoint was saved.
    public var savedAt: Date

    public init(token: HistoryToken, transactionTimestamp: Date?, savedAt: Date) {
        self.token = token
        self.transactionTimestamp = transactionTimestamp
        self.savedAt = savedAt
    }
}

/// An author that reads history, and its checkpoint.
public struct HistoryConsumer: Hashable, Sendable {
    public var author: String
    /// Whether cleanup waits for this consumer before deleting history.
    public var isRequired: Bool
    public var registeredAt: Date
    /// `nil` until the consumer saves its first checkpoint.
    public var checkpoint: HistoryCheckpoint?

    public init(author: String, isRequired: Bool, registeredAt: Date, checkpoint: HistoryCheckpoint?) {
        self.author = author
        self.isRequired = isRequired
        self.registeredAt = registeredAt
        self.checkpoint = checkpoint
    }
}

/// Consumer registration and checkpoints, on a `Database` of the caller's choice.
package enum ConsumerLog {
    package static func all(_ db: Database) throws -> [HistoryConsumer] {
        try Row.fetchAll(db, sql: """
            SELECT "author", "required", "registered_at", "token", "transaction_timestamp", "checkpointed_at"
            FROM "searchlight_consumer" ORDER BY "author"
            """).map { row in
            HistoryConsumer(
                author: row["author"], isRequired: row["required"],
                registeredAt: Date(timeIntervalSince1970: row["registered_at"]), checkpoint: checkpoint(row))
        }
    }

    /// The checkpoint of `author`, if it saved one.
    static func checkpoint(for author: String, _ db: Database) throws -> HistoryCheckpoint? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT "token", "transaction_timestamp", "checkpointed_at" FROM "searchlight_consumer" WHERE "author" = ?
            """), arguments: [author]).flatMap(checkpoint)
    }

    /// The checkpoint token of `author`, if it saved one (a consumer batch's one point query).
    static func token(for author: String, _ db: Database) throws -> HistoryToken? {
        try HistoryToken.fetchOne(db.cachedStatement(sql: #"SELECT "token" FROM "searchlight_consumer" WHERE "author" = ?"#), arguments: [author])
    }

    private static func checkpoint(_ row: Row) -> HistoryCheckpoint? {
        guard let token: HistoryToken = row["token"] else { return nil }
        return HistoryCheckpoint(
            token: token,
            transactionTimestamp: (row["transaction_timestamp"] as Double?).map(Date.init(timeIntervalSince1970:)),
            savedAt: Date(timeIntervalSince1970: row["checkpointed_at"] ?? 0))
    }

    /// Registers `author` as a required consumer unless it is known already.
    static func registerIfNeeded(_ author: String, now: Date, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO "searchlight_consumer"("author", "required", "registered_at") VALUES (?, 1, ?)
            ON CONFLICT("author") DO NOTHING
            """).execute(arguments: [author, now.timeIntervalSince1970])
    }

    package static func validate(author: String) throws {
        if author.isEmpty { throw SearchlightError(.invalidArgument, "an author name must not be empty") }
    }

    package static func register(_ author: String, required: Bool, now: Date, _ db: Database) throws {
        try validate(author: author)
        try db.execute(sql: """
            INSERT INTO "searchlight_consumer"("author", "required", "registered_at") VALUES (?, ?, ?)
            ON CONFLICT("author") DO UPDATE SET "required" = excluded."required"
            """, arguments: [author, required, now.timeIntervalSince1970])
    }

    package static func save(_ token: HistoryToken, for author: String, now: Date, _ db: Database) throws {
        try validate(author: author)
        if token.rawValue < 0 { throw SearchlightError(.invalidToken, "invalid token \(token): tokens are not negative") }
        let head = try HistoryLog.headToken(db)
        if token > head {
            throw SearchlightError(.invalidToken, "cannot checkpoint token \(token): it is ahead of the newest token \(head)")
        }
        let timestamp = try Double.fetchOne(db, sql: #"SELECT "timestamp" FROM "searchlight_log" WHERE "id" = ? AND \#(LogRowType.transactionStart)"#, arguments: [token])
        try db.cachedStatement(sql: """
            INSERT INTO "searchlight_consumer"("author", "required", "registered_at", "token", "transaction_timestamp", "checkpointed_at")
            VALUES (?1, 0, ?4, ?2, ?3, ?4)
            ON CONFLICT("author") DO UPDATE SET "token" = ?2, "transaction_timestamp" = ?3, "checkpointed_at" = ?4
            """).execute(arguments: [author, token, timestamp, now.timeIntervalSince1970])
    }
}

extension HistoryStore {
    /// Registers `author` as a consumer. Cleanup never deletes history that a required
    /// consumer has not checkpointed (unless it is older than the maximum duration).
    public func registerConsumer(_ author: String, required: Bool = true) throws(SearchlightError) {
        try SearchlightError.catching("cannot register consumer \"\(author)\"") {
            try dbPool.write { db in
                try checkInstalled(db)
                try ConsumerLog.register(author, required: required, now: configuration.clock(), db)
            }
        }
    }

    /// ``registerConsumer(_:required:)`` in the caller's write transaction.
    public func registerConsumer(_ author: String, required: Bool = true, in db: Database) throws(SearchlightError) {
        try SearchlightError.catching("cannot register consumer \"\(author)\"") {
            try checkInstalled(db)
            try ConsumerLog.register(author, required: required, now: configuration.clock(), db)
        }
    }

    /// Forgets a consumer and its checkpoint. Throws `invalidArgument` for an unknown author.
    public func unregisterConsumer(_ author: String) throws(SearchlightError) {
        try SearchlightError.catching("cannot unregister consumer \"\(author)\"") {
            try dbPool.write { db in try unregisterConsumer(author, in: db) }
        }
    }

    /// ``unregisterConsumer(_:)`` in the caller's write transaction.
    public func unregisterConsumer(_ author: String, in db: Database) throws(SearchlightError) {
        let deleted = try SearchlightError.catching("cannot unregister consumer \"\(author)\"") {
            try checkInstalled(db)
            try db.execute(sql: #"DELETE FROM "searchlight_consumer" WHERE "author" = ?"#, arguments: [author])
            return db.changesCount
        }
        if deleted == 0 { throw SearchlightError(.invalidArgument, "unknown consumer \"\(author)\"") }
    }

    /// Every registered consumer, and every author that saved a checkpoint.
    public func consumers() throws(SearchlightError) -> [HistoryConsumer] {
        try SearchlightError.catching("cannot read consumers") { try dbPool.read(ConsumerLog.all) }
    }

    /// The checkpoint of `author`, or `nil` if it never saved one.
    public func checkpoint(for author: String) throws(SearchlightError) -> HistoryCheckpoint? {
        try SearchlightError.catching("cannot read the checkpoint of \"\(author)\"") {
            try dbPool.read { try ConsumerLog.checkpoint(for: author, $0) }
        }
    }

    /// ``checkpoint(for:)`` in the caller's transaction.
    public func checkpoint(for author: String, in db: Database) throws(SearchlightError) -> HistoryCheckpoint? {
        try SearchlightError.catching("cannot read the checkpoint of \"\(author)\"") { try ConsumerLog.checkpoint(for: author, db) }
    }

    /// Saves how far `author` has processed history.
    public func saveCheckpoint(_ token: HistoryToken, for author: String) throws(SearchlightError) {
        try SearchlightError.catching("cannot save the checkpoint of \"\(author)\"") {
            try dbPool.write { try saveCheckpoint(token, for: author, in: $0) }
        }
    }

    /// Saves a checkpoint inside the caller's transaction, so that a consumer commits its
    /// results and its checkpoint together (exactly once, crash-safe).
    ///
    /// ```swift
    /// try store.databaseWriter.write { db in
    ///     try applyToMyIndex(transactions, db)
    ///     try store.saveCheckpoint(transactions.last!.token, for: "my-consumer", in: db)
    /// }
    /// ```
    public func saveCheckpoint(_ token: HistoryToken, for author: String, in db: Database) throws(SearchlightError) {
        try SearchlightError.catching("cannot save the checkpoint of \"\(author)\"") {
            try checkInstalled(db)
            try ConsumerLog.save(token, for: author, now: configuration.clock(), db)
        }
    }
}
