import Foundation
import GRDB
import Synchronization

/// Deletes history that every required consumer has processed.
///
/// The rules (PersistentHistoryTrackingKit's, made exact):
/// - **required consumers** (registered with ``HistoryStore/registerConsumer(_:required:)``,
///   plus ``Configuration/allAuthors``) must have checkpointed a transaction before it is
///   deleted. While any of them has no checkpoint, nothing is deleted for them.
/// - **batch authors** only write; cleanup never waits for them.
/// - **maximum duration**: history older than this is deleted even if a consumer lags; that
///   consumer's next fetch throws `historyExpired`.
/// - Deletion runs in bounded chunks, never resets checkpoints, and can be restricted to the
///   history of given authors.
///
/// ```swift
/// let cleaner = HistoryCleaner(store: store, configuration: .init(strategy: .byDuration(.seconds(3600))))
/// let plan = try cleaner.plan()          // dry run: what would go, and what holds the rest back
/// try cleaner.cleanIfNeeded()            // call after processing; runs at most once an hour
/// ```
public final class HistoryCleaner: Sendable {
    /// When ``cleanIfNeeded()`` actually cleans.
    public enum Strategy: Hashable, Sendable {
        /// Never automatically; ``clean()`` still works.
        case none
        /// At most once per this interval.
        case byDuration(Duration)
        /// Every `times`-th call.
        case byNotification(times: Int)
    }

    /// Which consumers cleanup waits for, how old history may get, and when to clean.
    public struct Configuration: Hashable, Sendable {
        public var strategy: Strategy
        /// Authors that must have processed history before it is deleted, in addition to the
        /// consumers registered as required.
        public var allAuthors: Set<String>
        /// Write-only authors, never waited for.
        public var batchAuthors: Set<String>
        /// History older than this is deleted even if a consumer lags.
        public var maximumDuration: Duration?
        /// If set, only these authors' history is deleted (keep, say, a sync engine's own).
        public var onlyAuthors: Set<String>?
        /// Changes deleted per write transaction.
        public var chunkSize: Int

        public init(strategy: Strategy = .none, allAuthors: Set<String> = [], batchAuthors: Set<String> = [],
                    maximumDuration: Duration? = nil, onlyAuthors: Set<String>? = nil, chunkSize: Int = 5_000) {
            self.strategy = strategy
            self.allAuthors = allAuthors
            self.batchAuthors = batchAuthors
            self.maximumDuration = maximumDuration
            self.onlyAuthors = onlyAuthors
            self.chunkSize = chunkSize
        }

        /// The configuration a model file declares (`history.maximumDurationSeconds`, `history.batchAuthors`).
        public init(model: SearchlightModel, strategy: Strategy = .none) {
            self.init(strategy: strategy, batchAuthors: Set(model.history.batchAuthors),
                      maximumDuration: model.history.maximumDuration)
        }
    }

    /// What keeps history from being deleted.
    public enum Holdback: Hashable, Sendable, CustomStringConvertible {
        /// No required consumer is registered: nothing is deleted except by maximum duration.
        case noRequiredConsumers
        /// A required consumer has never saved a checkpoint.
        case noCheckpoint(author: String)
        /// The slowest required consumer(s).
        case checkpoint(author: String, token: HistoryToken)

        public var description: String {
            switch self {
            case .noRequiredConsumers: "no required consumer is registered"
            case let .noCheckpoint(author): "consumer \"\(author)\" has no checkpoint yet"
            case let .checkpoint(author, token): "consumer \"\(author)\" has processed only through token \(token)"
            }
        }
    }

    /// What a cleanup deletes (or would delete), and why not more.
    public struct Plan: Hashable, Sendable {
        /// History is deleted through this token; `nil`: nothing to delete.
        public var deleteThrough: HistoryToken?
        /// What would be deleted.
        public var count: HistoryCount
        /// The head token when the plan was made.
        public var headToken: HistoryToken
        /// What holds back the history that stays.
        public var holdbacks: [Holdback]
        /// Whether the maximum duration moves the bound past a consumer's checkpoint.
        public var forcedByMaximumDuration: Bool
        /// Consumers whose next fetch will throw `historyExpired` after this cleanup.
        public var expiringConsumers: [String]
    }

    /// What a cleanup did.
    public struct Report: Hashable, Sendable {
        public var plan: Plan
        public var deleted: HistoryCount
    }

    public let store: HistoryStore
    public let configuration: Configuration
    private struct ThrottleState { var lastClean: Date?; var notifications = 0 }
    private let state = Mutex(ThrottleState())

    public init(store: HistoryStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
    }

    /// A dry run: what ``clean()`` would delete now, and what holds the rest back.
    public func plan() throws(SearchlightError) -> Plan {
        try SearchlightError.catching("cannot plan history cleanup") {
            try store.dbPool.read { db in try makePlan(db) }
        }
    }

    private func makePlan(_ db: Database) throws -> Plan {
        let head = try HistoryLog.headToken(db)
        let consumers = try ConsumerLog.all(db)
        let byAuthor = Dictionary(consumers.map { ($0.author, $0) }, uniquingKeysWith: { a, _ in a })
        let required = Set(consumers.filter(\.isRequired).map(\.author)).union(configuration.allAuthors)
            .subtracting(configuration.batchAuthors)

        var holdbacks: [Holdback] = []
        var consensus: HistoryToken?
        if required.isEmpty {
            holdbacks.append(.noRequiredConsumers)
        } else {
            let missing = required.filter { byAuthor[$0]?.checkpoint == nil }.sorted()
            if !missing.isEmpty {
                holdbacks += missing.map { .noCheckpoint(author: $0) }
            } else {
                let tokens = required.map { byAuthor[$0]!.checkpoint!.token }
                let minimum = tokens.min()!
                consensus = minimum
                if minimum < head {
                    holdbacks += required.filter { byAuthor[$0]!.checkpoint!.token == minimum }.sorted()
                        .map { .checkpoint(author: $0, token: minimum) }
                }
            }
        }

        var forced: HistoryToken?
        if let maximumDuration = configuration.maximumDuration {
            let cutoff = store.configuration.clock().timeIntervalSince1970 - maximumDuration.seconds
            // The longest prefix of tokens that are all older than the cutoff: with clocks that
            // jump back, a young transaction is never deleted because an older token looks new.
            let firstYoung = try HistoryToken.fetchOne(db, sql: """
                SELECT min("id") FROM "searchlight_log" WHERE \(LogRowType.transactionStart) AND "timestamp" >= ?
                """, arguments: [cutoff])
            // The newest transaction before the first young one.
            forced = try firstYoung.map { young in
                try HistoryToken.fetchOne(db, sql: """
                    SELECT "id" FROM "searchlight_log" WHERE \(LogRowType.transactionStart) AND "id" < ? ORDER BY "id" DESC LIMIT 1
                    """, arguments: [young]) ?? .zero
            } ?? head
        }

        let bound = max(consensus ?? .zero, forced ?? .zero)
        let forcedPastConsensus = (forced ?? .zero) > (consensus ?? .zero)
        var count = HistoryCount(transactions: 0, changes: 0)
        if bound > .zero {
            var request = HistoryRequest(start: .oldest)
            if let only = configuration.onlyAuthors { request.authors = .only(only) }
            count = try HistoryLog.count(request, db, through: bound)
        }
        let expiring = forcedPastConsensus
            ? consumers.filter { ($0.checkpoint?.token ?? .zero) < bound && !configuration.batchAuthors.contains($0.author) }.map(\.author)
            : []
        return Plan(
            deleteThrough: count.transactions > 0 ? bound : nil, count: count, headToken: head,
            holdbacks: holdbacks, forcedByMaximumDuration: forcedPastConsensus && count.transactions > 0,
            expiringConsumers: count.transactions > 0 ? expiring : [])
    }

    /// Cleans now, by the same rules as the automatic strategy.
    @discardableResult
    public func clean() throws(SearchlightError) -> Report {
        let plan = try plan()
        var deleted = HistoryCount(transactions: 0, changes: 0)
        if let bound = plan.deleteThrough {
            deleted = try SearchlightError.catching("cannot delete history") {
                try HistoryPurge(dbPool: store.dbPool, chunkSize: configuration.chunkSize)
                    .delete(through: bound, authors: configuration.onlyAuthors)
            }
            store.configuration.logger.info("history cleanup deleted \(deleted.transactions) transactions and \(deleted.changes) changes through token \(bound)")
        }
        let now = store.configuration.clock()
        state.withLock { $0.lastClean = now; $0.notifications = 0 }
        return Report(plan: plan, deleted: deleted)
    }

    /// Cleans if the strategy says it is time; call it after each processed batch of history.
    /// Returns `nil` when it did not clean.
    @discardableResult
    public func cleanIfNeeded() throws(SearchlightError) -> Report? {
        let now = store.configuration.clock()
        let due: Bool = state.withLock { state in
            switch configuration.strategy {
            case .none:
                return false
            case let .byDuration(interval):
                guard let last = state.lastClean else { return true }
                // A clock that jumps back counts as due: never stall cleanup forever.
                return now.timeIntervalSince(last) >= interval.seconds || now < last
            case let .byNotification(times):
                state.notifications += 1
                return state.notifications >= max(times, 1)
            }
        }
        return due ? try clean() : nil
    }
}
