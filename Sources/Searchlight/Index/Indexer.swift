import Foundation
import GRDB
import Logging
import SearchlightHistory
import Synchronization

/// Keeps a full-text index exactly in step with the tracked tables, by consuming history:
/// the analogue of `NSCoreDataCoreSpotlightDelegate`.
///
/// The indexer is a history consumer of its own (author `searchlight.indexer` by default),
/// registered as required, so cleanup never deletes history it has not processed. Each batch
/// collects the object ids that changed, reads their current rows, upserts the present ones
/// and removes the missing ones, then saves its checkpoint **in the same SQLite transaction**:
/// a crash at any instant loses or duplicates nothing, and replaying a batch is harmless.
///
/// ```swift
/// let store = try HistoryStore(path: "notes.sqlite", model: model)
/// let indexer = try Indexer(store: store)
/// indexer.start()                      // follows writes from this process and any other
/// try await indexer.waitUntilCaughtUp()
/// let results = try SearchIndex(store: store).search("kernel pani", asYouType: true)
/// await indexer.stop()
/// ```
///
/// It rebuilds the index from scratch by itself on first start, when the model's indexed
/// fields, weights or tokenizer change, and when cleanup expired history it had not
/// processed, and logs why.
public final class Indexer: Sendable {
    /// How an indexer names itself, batches its work and computes documents.
    public struct Configuration: Sendable {
        /// The indexer's author name in history and checkpoints.
        public var author = "searchlight.indexer"
        /// Transactions per batch (each batch is one write transaction).
        public var batchSize = 500
        /// Rows per write transaction during a rebuild. Larger chunks build faster (FTS5 writes
        /// one segment per transaction) but make other writers wait longer for each chunk: about
        /// 0.1 s for 5,000 short documents on a 2-core machine.
        public var rebuildChunkSize = 5_000
        /// Per-entity hooks that compute the indexed text (see ``DocumentBuilder``).
        public var documentBuilders: [String: DocumentBuilder] = [:]
        public var logger = Logger(label: "searchlight.indexer")

        public init() {}
    }

    /// What one committed batch (or rebuild) did: the `indexDidUpdate` event.
    public struct Update: Hashable, Sendable {
        /// The token the index reached.
        public var token: HistoryToken
        /// History changes processed.
        public var changes: Int
        public var upserted: Int
        public var removed: Int
        /// Whether this update swapped in a rebuilt index.
        public var rebuilt: Bool
    }

    /// What ``indexPendingChanges()`` did in all.
    public struct Summary: Hashable, Sendable {
        public var changes = 0
        public var upserted = 0
        public var removed = 0
        public var token = HistoryToken.zero
        /// Why the index was rebuilt, if it was.
        public var rebuildReason: String?

        mutating func add(_ update: Update) {
            changes += update.changes
            upserted += update.upserted
            removed += update.removed
            token = update.token
        }
    }

    public let store: HistoryStore
    public let configuration: Configuration
    var logger: Logger { configuration.logger }

    private struct State {
        var task: Task<Void, Never>?
        var subscribers: [Int: AsyncStream<Update>.Continuation] = [:]
        var nextSubscriber = 0
    }
    private let state = Mutex(State())

    /// Creates an indexer and registers it as a required history consumer.
    public init(store: HistoryStore, configuration: Configuration = .init()) throws(SearchlightError) {
        self.store = store
        self.configuration = configuration
        for name in configuration.documentBuilders.keys where store.model.entity(named: name) == nil {
            throw SearchlightError(.unknownEntity, "a document builder names entity \"\(name)\", which the model does not declare")
        }
        try SearchlightError.catching("cannot register the indexer") {
            try store.registerConsumer(configuration.author, required: true)
        }
    }

    // MARK: - Batches

    enum Outcome {
        case caughtUp(HistoryToken)
        case progressed(Update)
        case needsRebuild(String)
    }

    /// One batch, inside the caller's write transaction.
    func batch(_ db: Database) throws -> Outcome {
        guard let schema = try IndexSchema.live(db) else { return .needsRebuild("the index has not been built yet") }
        let entities = try IndexedEntity.resolve(store.model, db)
        if try Meta.get(db, "index.fingerprint", as: String.self) != IndexSchema.fingerprint(store.model, entities) {
            return .needsRebuild("the model's indexed fields, weights or tokenizer (or a table's key) changed")
        }
        guard let checkpoint = try ConsumerLog.all(db).first(where: { $0.author == configuration.author })?.checkpoint else {
            return .needsRebuild("the indexer has no checkpoint")
        }
        let transactions: [HistoryTransaction]
        do {
            transactions = try HistoryLog.fetchTransactions(HistoryRequest(start: .token(checkpoint.token), limit: configuration.batchSize), db)
        } catch let error as SearchlightError where error.code == .historyExpired {
            return .needsRebuild("history the indexer had not processed was deleted by cleanup (\(error.message))")
        }
        guard let last = transactions.last else { return .caughtUp(checkpoint.token) }

        let byName = Dictionary(uniqueKeysWithValues: entities.map { ($0.entity.name, $0) })
        struct Key: Hashable { var entityID: Int64; var objectID: ObjectID }
        var ids: [Int64: [ObjectID]] = [:]
        var seen: Set<Key> = []
        var changeCount = 0
        for change in transactions.lazy.flatMap(\.changes) {
            changeCount += 1
            guard let entity = byName[change.entity] else { continue }
            // Only changes to indexed fields reindex an object (a builder may read any column).
            if change.type == .update, configuration.documentBuilders[entity.entity.name] == nil,
               let columns = change.updatedColumns,
               !columns.contains(where: { column in entity.fieldColumns.contains { $0.caseInsensitiveCompare(column) == .orderedSame } }) {
                continue
            }
            if seen.insert(Key(entityID: entity.id, objectID: change.objectID)).inserted {
                ids[entity.id, default: []].append(change.objectID)
            }
        }
        let writer = makeWriter(schema, entities)
        var counts = IndexWriter.Counts()
        for (entityID, objectIDs) in ids.sorted(by: { $0.key < $1.key }) {
            counts = counts + (try writer.apply(objectIDs, entityID: entityID, db))
        }
        try store.saveCheckpoint(last.token, for: configuration.author, in: db)
        return .progressed(Update(token: last.token, changes: changeCount, upserted: counts.upserted, removed: counts.removed, rebuilt: false))
    }

    func makeWriter(_ schema: IndexSchema, _ entities: [IndexedEntity]) -> IndexWriter {
        IndexWriter(schema: schema, sources: Dictionary(uniqueKeysWithValues: entities.map {
            ($0.id, DocumentSource(entity: $0, builder: configuration.documentBuilders[$0.entity.name]))
        }))
    }

    /// Brings the index up to date with everything committed so far, in batches, rebuilding
    /// first if needed. Safe to run while another process indexes the same database.
    @discardableResult
    public func indexPendingChanges() throws(SearchlightError) -> Summary {
        var summary = Summary()
        while true {
            let outcome = try SearchlightError.catching("indexing failed") { try store.dbPool.write { try batch($0) } }
            switch outcome {
            case let .caughtUp(token):
                summary.token = token
                return summary
            case let .progressed(update):
                summary.add(update)
                publish(update)
                logger.info("indexed \(update.changes) changes: \(update.upserted) upserted, \(update.removed) removed, token \(update.token)")
            case let .needsRebuild(reason):
                if summary.rebuildReason != nil {
                    throw SearchlightError(.databaseError, "the index still needs a rebuild after rebuilding (\(reason))")
                }
                summary.rebuildReason = reason
                summary.add(try rebuild(reason: reason, progress: nil))
            }
        }
    }

    // MARK: - Following history

    /// Starts following history: the backlog first, then every commit, from this process or
    /// another. Does nothing if already started.
    public func start() {
        state.withLock { state in
            guard state.task == nil else { return }
            let commits = store.historyUpdates() // subscribe before catching up: no commit is missed
            state.task = Task.detached { [self] in
                await self.follow(commits)
            }
        }
    }

    /// Stops following history; the batch in flight commits or rolls back first.
    public func stop() async {
        let task: Task<Void, Never>? = state.withLock { state in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
    }

    /// Whether ``start()`` was called and ``stop()`` was not.
    public var isIndexing: Bool { state.withLock { $0.task != nil } }

    private func follow(_ commits: AsyncStream<HistoryToken>) async {
        var failures = 0
        var pending = true
        var iterator = commits.makeAsyncIterator()
        while !Task.isCancelled {
            if pending {
                do {
                    try indexPendingChanges()
                    failures = 0
                } catch {
                    failures += 1
                    logger.error("indexing failed (attempt \(failures)): \(error)")
                    // Back off, then retry: a full disk or a lock held too long may clear.
                    try? await Task.sleep(for: .milliseconds(min(5_000, 50 << min(failures, 7))))
                    continue
                }
            }
            guard await iterator.next() != nil else { return }
            pending = true
        }
    }

    /// `indexDidUpdate` events: one per committed batch, carrying the token reached.
    public func updates() -> AsyncStream<Update> {
        let (stream, continuation) = AsyncStream<Update>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id: Int = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ update: Update) {
        state.withLock { state in
            for continuation in state.subscribers.values { continuation.yield(update) }
        }
    }

    /// Returns once everything committed before the call is indexed. If the indexer is not
    /// started, it indexes the pending changes itself; otherwise it waits for the running
    /// indexer (in this process or another), checking its checkpoint every few milliseconds.
    public func waitUntilCaughtUp() async throws(SearchlightError) {
        let target = try SearchlightError.catching("cannot read the head token") { try store.currentToken() }
        while try indexedToken() < target {
            if isIndexing {
                try? await Task.sleep(for: .milliseconds(5))
            } else {
                try indexPendingChanges()
            }
        }
    }

    /// The token the index has reached (its checkpoint).
    public func indexedToken() throws(SearchlightError) -> HistoryToken {
        try SearchlightError.catching("cannot read the indexer's checkpoint") {
            try store.checkpoint(for: configuration.author)?.token ?? .zero
        }
    }
}
