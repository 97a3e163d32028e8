import Foundation
import GRDB

/// The change feed: pages of the transactions a request selects, read as they are consumed,
/// then (when following) each new matching transaction as it commits, in this process or
/// another. Made by ``HistoryStore/history(_:follow:)``.
///
/// The feed holds one page at a time, whatever the backlog: each page is one read of the log
/// after the token where the previous page ended (a range scan of the log's rowid, never an
/// `OFFSET`), of whole transactions until they hold about ``pageSize`` log rows (a transaction
/// larger than that is one page by itself). Errors are ``SearchlightError``s:
/// `historyExpired` when cleanup deletes history the feed has not read yet, `invalidToken`,
/// `unknownEntity` or `invalidArgument` for a bad request.
///
/// ```swift
/// for try await page in store.history(.after(checkpoint), follow: true) {
///     for transaction in page { print(transaction.token, transaction.changes.count) }
/// }
/// ```
///
/// Without `follow`, the feed ends after the transactions committed when it read its first
/// page. With `follow`, it waits for commits once it caught up, and ends when the consuming
/// task is cancelled. With a request `limit`, the backlog stops after that many transactions,
/// and following resumes from the head as it was at the first page (the rest of the backlog is
/// left out on purpose).
public struct HistoryFeed: AsyncSequence, Sendable {
    public typealias Element = [HistoryTransaction]
    public typealias Failure = SearchlightError

    /// Log rows per page, about (whole transactions; headers count).
    public static let defaultPageSize = 2_000

    let store: HistoryStore
    let request: HistoryRequest
    let follow: Bool
    /// Log rows a page reads, about: it ends with the transaction that reaches this many.
    public let pageSize: Int

    package init(store: HistoryStore, request: HistoryRequest, follow: Bool, pageSize: Int = HistoryFeed.defaultPageSize) {
        self.store = store
        self.request = request
        self.follow = follow
        self.pageSize = Swift.max(1, pageSize)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(feed: self)
    }

    /// Reads the next page when asked for it.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = [HistoryTransaction]
        public typealias Failure = SearchlightError

        private enum State {
            case start, backlog, following, finished
        }

        private let feed: HistoryFeed
        private var state = State.start
        /// The last token read: the next page starts after it.
        private var cursor = HistoryToken.zero
        /// The head when the first page was read: where the backlog ends.
        private var head = HistoryToken.zero
        /// Transactions the request's limit still allows in the backlog.
        private var remaining = Int.max
        private var updates: AsyncStream<HistoryToken>.AsyncIterator?

        init(feed: HistoryFeed) {
            self.feed = feed
        }

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(SearchlightError) -> [HistoryTransaction]? {
            do {
                return try await nextPage(isolation: actor)
            } catch {
                state = .finished
                updates = nil
                // A table of ours that is gone: Searchlight was uninstalled (here or elsewhere).
                let store = feed.store
                if let notInstalled = try? await store.dbPool.read({ db in store.uninstall(explaining: error, in: db) }) { throw notInstalled }
                throw SearchlightError(wrapping: error, doing: "cannot read history")
            }
        }

        public mutating func next() async throws(SearchlightError) -> [HistoryTransaction]? {
            try await next(isolation: nil)
        }

        private mutating func nextPage(isolation actor: isolated (any Actor)?) async throws -> [HistoryTransaction]? {
            while true {
                switch state {
                case .finished:
                    return nil
                case .start:
                    // Subscribe before the first read: no commit after it is missed.
                    if feed.follow { updates = feed.store.historyUpdates().makeAsyncIterator() }
                    let request = feed.request
                    (cursor, head) = try await feed.store.dbPool.read { db in
                        try HistoryLog.validate(request, db)
                        try HistoryLog.checkStart(request.start, db)
                        let purged = try HistoryLog.purgedThrough(db)
                        let start: HistoryToken
                        switch request.start {
                        case let .token(token): start = token
                        case .oldest, .date: start = purged
                        }
                        return (start, try HistoryLog.headToken(db))
                    }
                    remaining = feed.request.limit ?? .max
                    state = .backlog
                case .backlog:
                    let page = try await Self.read(feed, after: cursor, through: head, transactions: remaining)
                    if let last = page.last { cursor = last }
                    remaining -= page.matches.count
                    if page.last == nil || remaining <= 0 {
                        guard feed.follow else {
                            state = .finished
                            return page.matches.isEmpty ? nil : page.matches
                        }
                        cursor = Swift.max(cursor, head)
                        state = .following
                    }
                    if !page.matches.isEmpty { return page.matches }
                case .following:
                    // A file moved over the database or deleted ends the feed with
                    // `databaseReplaced` (its watcher wakes it for that), as it ends `watch`.
                    try feed.store.checkFileIdentity()
                    let page = try await Self.read(feed, after: cursor, through: nil, transactions: .max)
                    if let last = page.last {
                        cursor = last
                        if !page.matches.isEmpty { return page.matches }
                        continue
                    }
                    // Caught up: wait for a commit (nil when the consuming task is cancelled).
                    guard await updates?.next(isolation: actor) != nil else {
                        state = .finished
                        updates = nil
                        return nil
                    }
                }
            }
        }

        /// One page after `cursor`, in one read; throws `historyExpired` if cleanup deleted
        /// history after it meanwhile.
        private static func read(_ feed: HistoryFeed, after cursor: HistoryToken, through bound: HistoryToken?,
                                 transactions: Int) async throws -> (matches: [HistoryTransaction], last: HistoryToken?) {
            let (filter, rows) = (feed.request.filter, feed.pageSize)
            let since: Date? = if case let .date(date) = feed.request.start { date } else { nil }
            return try await feed.store.dbPool.read { db in
                try HistoryLog.checkStart(.token(cursor), db)
                return try HistoryLog.page(after: cursor, through: bound, filter: filter, since: since,
                                           rows: rows, transactions: transactions, db)
            }
        }
    }
}
