import GRDB

/// The consumer contract: read history after a checkpoint, apply it, and save the new
/// checkpoint **in the same write transaction**, so that a crash at any instant neither loses
/// nor repeats a change. The indexer of the `Searchlight` library is built on it, and so can be
/// an app's own exporter or sync engine.
///
/// ```swift
/// // One step (from a timer, a cron job, or after each write):
/// switch try store.consumeNextBatch(as: "exporter") { batch, db in
///     for change in batch.changes {
///         try db.execute(sql: "INSERT INTO outbox(entity, object_id, type) VALUES (?, ?, ?)",
///                        arguments: [change.entity, change.objectID, change.type.description])
///     }
/// } {
/// case .caughtUp, .consumed: break
/// case .needsResync: try store.resynchronize(as: "exporter") { head, db in /* export every row */ }
/// }
///
/// // Or follow every commit, from this process or any other, until the task is cancelled:
/// try await store.consume(as: "exporter", resynchronize: { head, db in … }) { batch, db in … }
/// ```
extension HistoryStore {
    /// Processes the next batch of history after `consumer`'s checkpoint.
    ///
    /// In one write transaction: reads at most `batchSize` transactions after the checkpoint,
    /// calls `body` with those that match `filter` (not at all if none does), and saves the
    /// checkpoint at the last transaction read. If `body` throws, nothing is saved. A consumer
    /// that is not registered yet is registered as required, so cleanup waits for it.
    ///
    /// - Returns: ``HistoryConsumption/needsResync(_:)`` when the consumer has no checkpoint
    ///   or cleanup deleted history it had not processed; `body` is not called then.
    /// - Throws: ``SearchlightError`` (``SearchlightError/Code-swift.struct/bodyFailed`` with
    ///   your error as its cause when `body` throws).
    @discardableResult
    public func consumeNextBatch(as consumer: String, filter: HistoryFilter = .all, batchSize: Int = 500,
                                 _ body: (HistoryBatch, Database) throws -> Void) throws(SearchlightError) -> HistoryConsumption {
        do {
            return try dbPool.write { db in try nextBatch(as: consumer, filter: filter, batchSize: batchSize, db, body) }
        } catch {
            throw SearchlightError(wrappingClosureError: error, doing: "consumer \"\(consumer)\" failed")
        }
    }

    /// ``consumeNextBatch(as:filter:batchSize:_:)`` from async code: the write transaction runs
    /// on a thread of its own (it may wait for SQLite's write lock), and the calling task
    /// suspends, holding no cooperative thread, until it commits or rolls back. `body` runs on
    /// that thread. Cancelling the task does not interrupt the batch: it is one transaction.
    ///
    /// ```swift
    /// switch try await store.consumeNextBatchAsync(as: "exporter", { batch, db in try export(batch, db) }) {
    /// case .caughtUp, .consumed: break
    /// case .needsResync: try store.resynchronize(as: "exporter") { head, db in /* export every row */ }
    /// }
    /// ```
    @discardableResult
    public func consumeNextBatchAsync(as consumer: String, filter: HistoryFilter = .all, batchSize: Int = 500,
                                      _ body: @escaping @Sendable (HistoryBatch, Database) throws -> Void)
        async throws(SearchlightError) -> HistoryConsumption
    {
        try await DedicatedThread.run(name: "searchlight.consumer.\(consumer)") { [self] _ throws(SearchlightError) in
            try consumeNextBatch(as: consumer, filter: filter, batchSize: batchSize, body)
        }
    }

    /// ``consumeNextBatch(as:filter:batchSize:_:)`` inside the caller's write transaction, for a
    /// consumer that checks state of its own first (the indexer checks its index's schema).
    ///
    /// - Throws: ``SearchlightError``; when `body` throws, ``SearchlightError/Code-swift.struct/bodyFailed``
    ///   with your error as its cause. The caller's transaction should then roll back (GRDB's
    ///   `write` does when the error leaves its closure).
    @discardableResult
    public func consumeNextBatch(as consumer: String, filter: HistoryFilter = .all, batchSize: Int = 500, in db: Database,
                                 _ body: (HistoryBatch, Database) throws -> Void) throws(SearchlightError) -> HistoryConsumption {
        do {
            return try nextBatch(as: consumer, filter: filter, batchSize: batchSize, db, body)
        } catch {
            throw SearchlightError(wrappingClosureError: error, doing: "consumer \"\(consumer)\" failed")
        }
    }

    /// Reads the batch after `token` without saving anything, for a consumer whose resume point
    /// lives outside this database (the PostgreSQL sink keeps its checkpoint in PostgreSQL and
    /// applies a batch there before it saves `token` here with ``saveCheckpoint(_:for:in:)``).
    ///
    /// Run it in a read transaction, so that the batch and any rows read with it are one
    /// snapshot; call ``healCapture()`` before, so that a migration of the host app is healed
    /// and its gap recorded first. A consumer that saves its checkpoint here only after applying
    /// a batch elsewhere keeps history from being cleaned up before it is applied.
    ///
    /// ```swift
    /// _ = try store.healCapture()
    /// let outcome = try store.databaseWriter.read { db in
    ///     try store.fetchBatch(as: "mirror", after: remoteCheckpoint, in: db)
    /// }
    /// ```
    ///
    /// - Returns: ``HistoryConsumption/needsResync(_:)`` when history after `token` was deleted
    ///   by cleanup, or capture was interrupted after it; ``HistoryConsumption/caughtUp(_:)``
    ///   when nothing follows `token`; otherwise the batch (its ``HistoryBatch/token`` is the
    ///   last transaction read, matching `filter` or not).
    public func fetchBatch(as consumer: String, after token: HistoryToken, filter: HistoryFilter = .all, batchSize: Int = 500,
                           in db: Database) throws(SearchlightError) -> HistoryConsumption {
        try SearchlightError.catching("consumer \"\(consumer)\" cannot read history") {
            try ConsumerLog.validate(author: consumer)
            try checkInstalled(db)
            if batchSize <= 0 { throw SearchlightError(.invalidArgument, "invalid batch size \(batchSize): it must be positive") }
            if token.rawValue < 0 { throw SearchlightError(.invalidToken, "invalid token \(token): tokens are not negative") }
            try HistoryLog.validate(filter, db)
            let purged = try HistoryLog.purgedThrough(db)
            if token < purged {
                return .needsResync(HistoryResync(consumer: consumer, reason: .historyExpired(checkpoint: token, purgedThrough: purged)))
            }
            if let gap = try Meta.get(db, .resyncThroughToken, as: HistoryToken.self), token < gap {
                return .needsResync(HistoryResync(consumer: consumer, reason: .captureInterrupted(checkpoint: token, through: gap)))
            }
            let (matches, last) = try HistoryLog.batch(after: token, filter: filter, maximum: batchSize, db)
            guard let last else { return .caughtUp(token) }
            return .consumed(HistoryBatch(consumer: consumer, previousToken: token, token: last, transactions: matches))
        }
    }

    /// The transaction of ``consumeNextBatch(as:filter:batchSize:in:_:)``.
    private func nextBatch(as consumer: String, filter: HistoryFilter, batchSize: Int, _ db: Database,
                           _ body: (HistoryBatch, Database) throws -> Void) throws -> HistoryConsumption {
        try ConsumerLog.validate(author: consumer)
        try checkFileIdentity()
        // A migration of the host app since the last batch: heal capture, and record the gap
        // before reading, so that this batch already sees it.
        try checkCapture(db)
        if batchSize <= 0 { throw SearchlightError(.invalidArgument, "invalid batch size \(batchSize): it must be positive") }
        try HistoryLog.validate(filter, db)
        guard let checkpoint = try ConsumerLog.token(for: consumer, db) else {
            // Registered now, so that cleanup keeps what it will read after its resync.
            try ConsumerLog.registerIfNeeded(consumer, now: configuration.clock(), db)
            return .needsResync(HistoryResync(consumer: consumer, reason: .noCheckpoint))
        }
        let purged = try HistoryLog.purgedThrough(db)
        if checkpoint < purged {
            return .needsResync(HistoryResync(consumer: consumer, reason: .historyExpired(checkpoint: checkpoint, purgedThrough: purged)))
        }
        if let gap = try Meta.get(db, .resyncThroughToken, as: HistoryToken.self), checkpoint < gap {
            return .needsResync(HistoryResync(consumer: consumer, reason: .captureInterrupted(checkpoint: checkpoint, through: gap)))
        }
        let (matches, last) = try HistoryLog.batch(after: checkpoint, filter: filter, maximum: batchSize, db)
        guard let last else { return .caughtUp(checkpoint) }
        let batch = HistoryBatch(consumer: consumer, previousToken: checkpoint, token: last, transactions: matches)
        if !matches.isEmpty { try body(batch, db) }
        try ConsumerLog.save(last, for: consumer, now: configuration.clock(), db)
        return .consumed(batch)
    }

    /// Resynchronizes a consumer from scratch: in one write transaction, calls `body` with the
    /// head token (the state of the tables `body` reads is exactly the state at that token) and
    /// saves the head as the consumer's checkpoint. Returns that token.
    ///
    /// A consumer whose resynchronization is too large for one transaction builds its state in
    /// steps instead, and saves the checkpoint it started from with
    /// ``saveCheckpoint(_:for:in:)`` (the indexer's online rebuild does so).
    @discardableResult
    public func resynchronize(as consumer: String, _ body: (HistoryToken, Database) throws -> Void) throws(SearchlightError) -> HistoryToken {
        do {
            return try dbPool.write { db in try resynchronize(as: consumer, in: db, body) }
        } catch {
            throw SearchlightError(wrappingClosureError: error, doing: "resynchronizing consumer \"\(consumer)\" failed")
        }
    }

    /// The transaction of ``resynchronize(as:_:)``.
    private func resynchronize(as consumer: String, in db: Database, _ body: (HistoryToken, Database) throws -> Void) throws -> HistoryToken {
        try checkInstalled(db)
        try ConsumerLog.registerIfNeeded(consumer, now: configuration.clock(), db)
        try checkCapture(db)
        let head = try HistoryLog.headToken(db)
        try body(head, db)
        try ConsumerLog.save(head, for: consumer, now: configuration.clock(), db)
        return head
    }

    /// Follows history as `consumer` until the calling task is cancelled: processes every
    /// pending batch, then each commit as it happens, in this process or any other (see
    /// ``historyUpdates()``). When the consumer needs a resync, `resynchronize` runs as in
    /// ``resynchronize(as:_:)``, in the same transaction as the check that asked for it, and
    /// consumption goes on from the head.
    ///
    /// It runs on a ``HistoryFollower``: each batch is one write transaction on a dedicated
    /// thread, never in Swift's cooperative pool. Cancellation is checked between batches: the
    /// batch in flight commits (or rolls back) and the function returns normally.
    ///
    /// Errors that retrying may clear (SQLite busy or locked past the busy timeout, a full
    /// disk, an I/O error: see ``HistoryFailure/classify(_:)``) are logged with the store's
    /// logger and retried with backoff (50 ms to 5 s, jittered). Any other error ends it,
    /// nothing of its batch saved: an error thrown by `body` or `resynchronize` (as
    /// ``SearchlightError/Code-swift.struct/bodyFailed``, your error as its cause), the
    /// database file replaced, Searchlight uninstalled, an invalid filter or batch size.
    public func consume(as consumer: String, filter: HistoryFilter = .all, batchSize: Int = 500,
                        resynchronize: @escaping @Sendable (HistoryToken, Database) throws -> Void,
                        _ body: @escaping @Sendable (HistoryBatch, Database) throws -> Void) async throws(SearchlightError) {
        let closures = ClosureConsumer(author: consumer, filter: filter, batchSize: batchSize, resynchronize: resynchronize, body: body)
        try await HistoryFollower(closures, store: self).run()
    }

    /// One step of ``consume(as:filter:batchSize:resynchronize:_:)``: a batch, or a resync, in
    /// one write transaction.
    fileprivate func consumeStep(as consumer: String, filter: HistoryFilter, batchSize: Int,
                                 resynchronize: (HistoryToken, Database) throws -> Void,
                                 _ body: (HistoryBatch, Database) throws -> Void) throws -> HistoryStep {
        let outcome = try dbPool.write { db in
            let outcome = try nextBatch(as: consumer, filter: filter, batchSize: batchSize, db, body)
            if case .needsResync = outcome { _ = try self.resynchronize(as: consumer, in: db, resynchronize) }
            return outcome
        }
        if case .caughtUp = outcome { return .caughtUp }
        return .progressed
    }
}

/// The consumer of ``HistoryStore/consume(as:filter:batchSize:resynchronize:_:)``: its closures.
private struct ClosureConsumer: LocalHistoryConsumer {
    let author: String
    let filter: HistoryFilter
    let batchSize: Int
    let resynchronize: @Sendable (HistoryToken, Database) throws -> Void
    let body: @Sendable (HistoryBatch, Database) throws -> Void

    func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep {
        try store.consumeStep(as: author, filter: filter, batchSize: batchSize, resynchronize: resynchronize, body)
    }
}
