import SearchlightHistory

/// How the index compares with the source tables.
public struct VerificationReport: Hashable, Sendable, Codable {
    /// The differences of one entity.
    public struct EntityReport: Hashable, Sendable, Codable {
        public var entity: String
        /// Rows in the source that should be indexed.
        public var sourceDocuments: Int
        /// Documents in the index.
        public var indexedDocuments: Int
        /// Objects that should be indexed but are not.
        public var missing: [ObjectID]
        /// Objects indexed with text that differs from their current row.
        public var stale: [ObjectID]
        /// Indexed objects that should not be (deleted or excluded).
        public var extra: [ObjectID]

        public var differences: Int { missing.count + stale.count + extra.count }

        /// Creates an entity's report, for instance to build a ``VerificationReport`` in a test.
        public init(entity: String, sourceDocuments: Int, indexedDocuments: Int,
                    missing: [ObjectID] = [], stale: [ObjectID] = [], extra: [ObjectID] = []) {
            self.entity = entity
            self.sourceDocuments = sourceDocuments
            self.indexedDocuments = indexedDocuments
            self.missing = missing
            self.stale = stale
            self.extra = extra
        }
    }

    public var entities: [EntityReport]
    /// Problems reported by FTS5's `integrity-check` (empty when it passes).
    public var integrityErrors: [String]
    /// Objects with history the indexer had not processed when the check ran: they were left
    /// out of the comparison, since the index is allowed to lag behind.
    public var pending: Int
    /// The token the index had reached.
    public var token: HistoryToken

    /// Entities set aside (``CaptureStatus/State/modelMismatch(_:)``) or whose table is missing
    /// (``CaptureStatus/State/tableMissing(_:)``): their rows are not indexed until a model that
    /// fits is installed, or the table is created again. One line each.
    public var notIndexed: [String] = []

    public var differences: Int { entities.reduce(0) { $0 + $1.differences } }
    /// True when the index equals the source (an entity set aside is a difference).
    public var isConsistent: Bool { differences == 0 && integrityErrors.isEmpty && notIndexed.isEmpty && vocabularyDifferences == nil }

    /// Creates a report, for instance to test code that acts on ``Indexer/verify()`` without
    /// an index:
    ///
    /// ```swift
    /// let report = VerificationReport(
    ///     entities: [.init(entity: "Note", sourceDocuments: 2, indexedDocuments: 1, missing: [.integer(2)])],
    ///     token: HistoryToken(rawValue: 42))
    /// ```
    /// How the index's vocabulary (the words typo tolerance and suggestions read, with their
    /// document counts) differs from FTS5's own counts of the index's text: nil when it does
    /// not. Exact search does not read it, but typo tolerance and suggestions do: the index is
    /// not consistent, and ``Indexer/repair()`` counts the vocabulary again.
    public var vocabularyDifferences: String? = nil

    public init(entities: [EntityReport], integrityErrors: [String] = [], pending: Int = 0, token: HistoryToken,
                notIndexed: [String] = []) {
        self.entities = entities
        self.integrityErrors = integrityErrors
        self.pending = pending
        self.token = token
        self.notIndexed = notIndexed
    }
}

/// What ``Indexer/repair()`` found and did.
public struct RepairReport: Hashable, Sendable {
    /// The differences found (before the repair).
    public var found: VerificationReport
    /// Whether differences were found and repaired.
    public var repaired: Bool
    /// Whether the index equals the source now (verified again after a repair).
    public var isConsistent: Bool

    public init(found: VerificationReport, repaired: Bool, isConsistent: Bool) {
        self.found = found
        self.repaired = repaired
        self.isConsistent = isConsistent
    }
}
