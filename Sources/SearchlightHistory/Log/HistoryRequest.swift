import Foundation

/// Which history to fetch: a starting point, filters, and a page size.
///
/// ```swift
/// // Everything after my checkpoint, except what I wrote myself, 500 transactions at a time:
/// var request = HistoryRequest.after(checkpoint.token)
/// request.authors = .excluding(["sync-engine"])
/// request.limit = 500
/// let page = try store.fetchTransactions(request)
/// ```
public struct HistoryRequest: Hashable, Sendable {
    /// Where a request starts (exclusive).
    public enum Start: Hashable, Sendable {
        /// The oldest history the log still holds (never throws `historyExpired`).
        case oldest
        /// Transactions whose token is greater than this one.
        case token(HistoryToken)
        /// Transactions recorded after this date. Informational: timestamps can jump or tie,
        /// so consumers that must not miss anything start from a token.
        case date(Date)
    }

    /// Which authors' transactions to include.
    public enum AuthorFilter: Hashable, Sendable {
        case any
        /// Only these authors.
        case only(Set<String>)
        /// Everyone but these authors (transactions with no author are included).
        case excluding(Set<String>)
    }

    public var start: Start
    public var authors: AuthorFilter = .any
    /// Only transactions with this context name.
    public var contextName: String?
    /// Only changes to these entities (by name).
    public var entities: Set<String>?
    /// Only changes of these types.
    public var changeTypes: Set<ChangeType>?
    /// At most this many transactions (must be positive). `nil`: no limit.
    public var limit: Int?

    public init(start: Start, authors: AuthorFilter = .any, contextName: String? = nil,
                entities: Set<String>? = nil, changeTypes: Set<ChangeType>? = nil, limit: Int? = nil) {
        self.start = start
        self.authors = authors
        self.contextName = contextName
        self.entities = entities
        self.changeTypes = changeTypes
        self.limit = limit
    }

    /// History after a token.
    public static func after(_ token: HistoryToken) -> HistoryRequest { .init(start: .token(token)) }
    /// History after a date.
    public static func after(_ date: Date) -> HistoryRequest { .init(start: .date(date)) }
    /// History after a transaction.
    public static func after(_ transaction: HistoryTransaction) -> HistoryRequest { .init(start: .token(transaction.token)) }
    /// All history the log still holds.
    public static var all: HistoryRequest { .init(start: .oldest) }
}
