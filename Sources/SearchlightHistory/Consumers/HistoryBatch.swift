/// A page of history handed to a consumer: the transactions after its checkpoint that match
/// its filter, in token order.
public struct HistoryBatch: Hashable, Sendable {
    /// The consumer (author) the batch is for.
    public var consumer: String
    /// The checkpoint the batch starts after.
    public var previousToken: HistoryToken
    /// The checkpoint saved with the batch: the last transaction read, matching or not.
    public var token: HistoryToken
    /// The matching transactions, each with only its matching changes.
    public var transactions: [HistoryTransaction]

    /// The changes of every transaction, in order.
    public var changes: [HistoryChange] { transactions.flatMap(\.changes) }

    /// Creates a batch, for instance to test a consumer's processing without a database:
    ///
    /// ```swift
    /// let batch = HistoryBatch(consumer: "mirror", previousToken: .zero,
    ///                          token: HistoryToken(rawValue: 11), transactions: [transaction])
    /// ```
    public init(consumer: String, previousToken: HistoryToken, token: HistoryToken, transactions: [HistoryTransaction]) {
        self.consumer = consumer
        self.previousToken = previousToken
        self.token = token
        self.transactions = transactions
    }
}

/// Why a consumer must rebuild its state from the tables instead of reading history.
public struct HistoryResync: Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The consumer never saved a checkpoint: history alone does not hold the rows that
        /// existed before it.
        case noCheckpoint
        /// Cleanup deleted history after the consumer's checkpoint (the model's maximum
        /// duration expired it, or history was deleted by hand).
        case historyExpired(checkpoint: HistoryToken, purgedThrough: HistoryToken)
        /// Capture triggers were found missing (a migration tool remade a tracked table) and
        /// were reinstalled at token `through`: changes made while they were missing are not in
        /// history.
        case captureInterrupted(checkpoint: HistoryToken, through: HistoryToken)
    }

    public var consumer: String
    public var reason: Reason

    public var description: String {
        switch reason {
        case .noCheckpoint:
            "consumer \"\(consumer)\" has no checkpoint yet"
        case let .historyExpired(checkpoint, purgedThrough):
            "history after token \(checkpoint), the checkpoint of \"\(consumer)\", was deleted through token \(purgedThrough)"
        case let .captureInterrupted(checkpoint, through):
            "capture triggers were missing (a tracked table was remade) until token \(through), after the checkpoint \(checkpoint) of \"\(consumer)\": changes made meanwhile are not in history"
        }
    }
}

/// What one step of a consumer did.
public enum HistoryConsumption: Hashable, Sendable {
    /// Nothing after the checkpoint: the consumer is up to date at this token.
    case caughtUp(HistoryToken)
    /// A batch was processed and its checkpoint saved, in one transaction.
    case consumed(HistoryBatch)
    /// The consumer cannot continue from history: it must resynchronize
    /// (``HistoryStore/resynchronize(as:_:)``), then consume again.
    case needsResync(HistoryResync)
}
