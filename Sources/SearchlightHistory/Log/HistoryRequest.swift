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

    public var start: Start
    /// Which transactions and changes to return.
    public var filter: HistoryFilter
    /// At most this many transactions (must be positive). `nil`: no limit.
    public var limit: Int?

    public init(start: Start, filter: HistoryFilter = .init(), limit: Int? = nil) {
        self.start = start
        self.filter = filter
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

extension HistoryRequest {
    /// ``HistoryFilter/authors`` of ``filter``.
    public var authors: HistoryFilter.AuthorFilter {
        get { filter.authors }
        set { filter.authors = newValue }
    }
    /// ``HistoryFilter/contextName`` of ``filter``.
    public var contextName: String? {
        get { filter.contextName }
        set { filter.contextName = newValue }
    }
    /// ``HistoryFilter/entities`` of ``filter``.
    public var entities: Set<String>? {
        get { filter.entities }
        set { filter.entities = newValue }
    }
    /// ``HistoryFilter/changeTypes`` of ``filter``.
    public var changeTypes: Set<HistoryChange.ChangeType>? {
        get { filter.changeTypes }
        set { filter.changeTypes = newValue }
    }
}
