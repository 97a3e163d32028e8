/// Which transactions, and which of their changes, a request or a consumer receives.
///
/// ```swift
/// var filter = HistoryFilter()
/// filter.authors = .excluding(["sync-engine"])   // not what I wrote myself
/// filter.entities = ["Note"]
/// ```
public struct HistoryFilter: Hashable, Sendable {
    /// Which authors' transactions to include.
    public enum AuthorFilter: Hashable, Sendable {
        case any
        /// Only these authors.
        case only(Set<String>)
        /// Everyone but these authors (transactions with no author are included).
        case excluding(Set<String>)
    }

    public var authors: AuthorFilter
    /// Only transactions with this context name.
    public var contextName: String?
    /// Only changes to these entities (by name). A capture gap's marker (a transaction with no
    /// change, context `searchlight.capture-interrupted`) is kept: it concerns every entity.
    public var entities: Set<String>?
    /// Only changes of these types.
    public var changeTypes: Set<HistoryChange.ChangeType>?
    /// Whether deletes carry their tombstones (``HistoryChange/tombstone``). A consumer that only
    /// needs which objects changed (the indexer reads each object's current row) says false, and
    /// the tombstones are not decoded: that was about a tenth of the indexing of a delete.
    public var includesTombstones: Bool

    public init(authors: AuthorFilter = .any, contextName: String? = nil,
                entities: Set<String>? = nil, changeTypes: Set<HistoryChange.ChangeType>? = nil,
                includesTombstones: Bool = true) {
        self.authors = authors
        self.contextName = contextName
        self.entities = entities
        self.changeTypes = changeTypes
        self.includesTombstones = includesTombstones
    }

    /// Everything.
    public static var all: HistoryFilter { .init() }

    /// The transaction with only its matching changes; nil if nothing in it matches.
    func apply(_ transaction: HistoryTransaction) -> HistoryTransaction? {
        switch authors {
        case .any: break
        case let .only(authors): guard let author = transaction.author, authors.contains(author) else { return nil }
        case let .excluding(authors): if let author = transaction.author, authors.contains(author) { return nil }
        }
        if let contextName, transaction.contextName != contextName { return nil }
        guard entities != nil || changeTypes != nil else { return transaction }
        // A capture gap's marker holds no change and concerns every entity: changes of the
        // entities asked for may be missing there.
        if transaction.changes.isEmpty, transaction.contextName == CaptureInstaller.interruptedContext { return transaction }
        var filtered = transaction
        filtered.changes = transaction.changes.filter { change in
            (entities?.contains(change.entity) ?? true) && (changeTypes?.contains(change.type) ?? true)
        }
        return filtered.changes.isEmpty ? nil : filtered
    }
}
