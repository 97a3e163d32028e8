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
/// It is an ordinary history consumer: each batch goes through
/// ``SearchlightHistory/HistoryStore/consumeNextBatch(as:filter:batchSize:in:_:)``, the same
/// public contract an app's exporter uses. It rebuilds the index from scratch by itself
/// (``RebuildReason``) on first start, when the model's indexed fields, weights or tokenizer
/// change (also when another process installs such a model while it runs), and when cleanup
/// expired history it had not processed. One process rebuilds at a time (a lease); the others
/// wait for it, or take over a rebuild whose process died.
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
        /// How long a rebuild's lease lasts without renewal. The rebuilding process renews it
        /// with every chunk; if it dies, another process takes the rebuild over after this.
        public var rebuildLease: Duration = .seconds(30)
        /// Per-entity hooks that compute the indexed text (see ``DocumentBuilder``).
        public var documentBuilders: [String: DocumentBuilder] = [:]
        public var logger = Logger(label: "searchlight.indexer")
        /// For the benchmark's baseline only: leaves the vocabulary as it is (scenario 11 times
        /// indexing without it). An index so written is no longer consistent (`verify`).
        package var skipsVocabulary = false

        public init() {}
    }

    /// Why the index is rebuilt from scratch.
    public enum RebuildReason: Hashable, Sendable, CustomStringConvertible {
        /// The index was never built.
        case notBuilt
        /// The indexed fields, weights, tokenizer, prefix indexes or a table's key changed (a new model, or a release that indexes other prefixes).
        case modelChanged
        /// The indexer has no checkpoint.
        case noCheckpoint
        /// Cleanup deleted history the indexer had not processed.
        case historyExpired(HistoryResync)
        /// Capture triggers were missing for a while (a tracked table was remade).
        case captureInterrupted(HistoryResync)
        /// FTS5's integrity check failed (``Indexer/repair()``).
        case damaged
        /// ``Indexer/reindex(progress:)`` was called.
        case requested
        /// A rebuild was stopped, or its process died, before it finished: it resumes.
        case interrupted

        public var description: String {
            switch self {
            case .notBuilt: "the index has not been built yet"
            case .modelChanged: "the model or its tables changed (indexed fields, weights, tokenizer, prefix indexes, a table's key, a table renamed, dropped or created again)"
            case .noCheckpoint: "the indexer has no checkpoint"
            case let .historyExpired(resync): "history the indexer had not processed was deleted by cleanup (\(resync))"
            case let .captureInterrupted(resync): "\(resync)"
            case .damaged: "the full-text index failed its integrity check"
            case .requested: "requested"
            case .interrupted: "a rebuild was stopped, or its process died, before it finished"
            }
        }
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

        /// Creates an update, for instance to test code that reacts to ``Indexer/updates()``
        /// without an index:
        ///
        /// ```swift
        /// let update = Indexer.Update(token: HistoryToken(rawValue: 42), changes: 3, upserted: 2, removed: 1)
        /// ```
        public init(token: HistoryToken, changes: Int = 0, upserted: Int = 0, removed: Int = 0, rebuilt: Bool = false) {
            self.token = token
            self.changes = changes
            self.upserted = upserted
            self.removed = removed
            self.rebuilt = rebuilt
        }
    }

    /// What ``indexPendingChanges()`` did in all.
    public struct Summary: Hashable, Sendable {
        public var changes = 0
        public var upserted = 0
        public var removed = 0
        public var token = HistoryToken.zero
        /// Why the index was rebuilt, if it was.
        public var rebuildReason: RebuildReason?
        /// Whether the index reached the head: always, but after a bounded turn
        /// (``indexPendingChanges(maximumBatches:)``) that stopped with batches left.
        public var isCaughtUp = true

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
    /// Who holds a rebuild lease: unique to this indexer; its host and process id let another
    /// process on the same host see at once that the holder died (kill -9).
    let leaseOwner = "\(ProcessInfo.processInfo.hostName) \(ProcessInfo.processInfo.processIdentifier) \(UUID().uuidString)"

    /// What the follower tells waiters: a committed update, or the error a batch failed with.
    enum Event: Sendable {
        case update(Update)
        case failure(SearchlightError)
    }

    private struct State {
        var follower: IndexFollowing?
        var subscribers: [Int: AsyncStream<Update>.Continuation] = [:]
        var waiters: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextSubscriber = 0
        /// Why following ended by itself, if it did.
        var followFailure: SearchlightError?
        /// Following steps in a row that rebuilt the index.
        var rebuildSteps = 0
    }
    private let state = Mutex(State())

    /// The layout the installed model asks for, and its JSON, with what they were made from.
    private struct LayoutCache {
        var model: SearchlightModel
        var capture: CaptureStatus
        var schemaVersion: Int
        var layout: IndexLayout
        var json: String
    }
    private let layoutCache = Mutex<LayoutCache?>(nil)

    /// Creates an indexer and registers it as a required history consumer.
    public init(store: HistoryStore, configuration: Configuration = .init()) throws(SearchlightError) {
        self.store = store
        self.configuration = configuration
        for name in configuration.documentBuilders.keys where store.model.entity(named: name) == nil {
            throw SearchlightError(.unknownEntity, "a document builder names entity \"\(name)\", which the model does not declare")
        }
        try store.registerConsumer(configuration.author, required: true)
        try SearchlightError.catching("cannot set up the index") { try IndexState.migrateIfNeeded(store) }
    }

    // MARK: - Batches

    enum Outcome {
        case caughtUp(HistoryToken)
        case progressed(Update)
        case needsRebuild(RebuildReason)
    }

    /// The layout the installed model asks for, and its JSON. Building it reads each entity's
    /// table definition, which only a schema change alters: it is made again only when the model,
    /// the capture status or `PRAGMA schema_version` changed, so each batch pays a pragma for the
    /// capture check, a point query for the model revision and a pragma for the schema.
    ///
    /// In a write transaction (a batch, a rebuild) capture is checked and healed first
    /// (``HistoryStore/healCapture(in:)``), so that a table the host app just renamed, dropped
    /// or remade is seen as it is before the batch reads it; in a read transaction (verify) the
    /// status is read as the last check left it.
    func currentLayout(_ db: Database) throws -> (layout: IndexLayout, json: String) {
        let capture = try store.healCapture(in: db)
        let model = try store.installedModel(in: db)
        let schemaVersion = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        if let cached = layoutCache.withLock({ $0 }), cached.schemaVersion == schemaVersion, cached.model == model, cached.capture == capture {
            return (cached.layout, cached.json)
        }
        let layout = try IndexLayout(model: model, capture: capture, store: store, db)
        let json = layout.json
        layoutCache.withLock { $0 = LayoutCache(model: model, capture: capture, schemaVersion: schemaVersion, layout: layout, json: json) }
        return (layout, json)
    }

    /// One batch, inside the caller's write transaction: the model and the index's layout are
    /// checked first, then the next batch of history is consumed.
    func batch(_ db: Database) throws -> Outcome {
        try store.checkInstalled(in: db) // after an uninstall, nothing but an install creates the index
        guard let live = try IndexState.live(db) else { return .needsRebuild(.notBuilt) }
        let (layout, json) = try currentLayout(db)
        guard live.layout == json else { return .needsRebuild(.modelChanged) }
        if try IndexState.get(db, .rebuildGeneration, as: Int.self) != nil, try !rebuildIsUnderWay(db) {
            return .needsRebuild(.interrupted)
        }

        let byName = Dictionary(uniqueKeysWithValues: layout.entities.filter { !$0.isSuspended }.map { ($0.entity.name, $0) })
        let writer = makeWriter(live.schema, layout)
        var counts = IndexWriter.Counts()
        var changeCount = 0
        // Which objects changed is all it needs: it reads their current rows.
        let outcome = try store.consumeNextBatch(as: configuration.author, filter: HistoryFilter(includesTombstones: false),
                                                 batchSize: configuration.batchSize, in: db) { batch, db in
            struct Key: Hashable { var entityID: Int64; var objectID: ObjectID }
            var ids: [Int64: [ObjectID]] = [:]
            var seen: Set<Key> = []
            for change in batch.transactions.lazy.flatMap(\.changes) {
                changeCount += 1
                guard let entity = byName[change.entity] else { continue }
                // Only changes to indexed fields and attributes reindex an object (a builder may read any column).
                if change.type == .update, configuration.documentBuilders[entity.entity.name] == nil,
                   let columns = change.updatedColumns,
                   !columns.contains(where: { column in entity.indexedColumns.contains { $0.caseInsensitiveCompare(column) == .orderedSame } }) {
                    continue
                }
                if seen.insert(Key(entityID: entity.id, objectID: change.objectID)).inserted {
                    ids[entity.id, default: []].append(change.objectID)
                }
            }
            for (entityID, objectIDs) in ids.sorted(by: { $0.key < $1.key }) {
                counts = counts + (try writer.apply(objectIDs, entityID: entityID, db))
            }
        }
        switch outcome {
        case let .caughtUp(token):
            return .caughtUp(token)
        case let .consumed(batch):
            return .progressed(Update(token: batch.token, changes: changeCount, upserted: counts.upserted, removed: counts.removed, rebuilt: false))
        case let .needsResync(resync):
            switch resync.reason {
            case .noCheckpoint: return .needsRebuild(.noCheckpoint)
            case .historyExpired: return .needsRebuild(.historyExpired(resync))
            case .captureInterrupted: return .needsRebuild(.captureInterrupted(resync))
            }
        }
    }

    func makeWriter(_ schema: IndexSchema, _ layout: IndexLayout) -> IndexWriter {
        let text = layout.text
        return IndexWriter(schema: schema, keepsVocabulary: layout.keepsVocabulary && !configuration.skipsVocabulary, sources: Dictionary(uniqueKeysWithValues: layout.entities.map {
            ($0.id, DocumentSource(entity: $0, builder: configuration.documentBuilders[$0.entity.name], text: text))
        }))
    }

    /// Brings the index up to date with everything committed so far, in batches, rebuilding
    /// first if needed. Safe to run while another process indexes the same database: if that
    /// one is rebuilding, this one waits for it (or takes the rebuild over if it died).
    ///
    /// Called from a task, it checks for cancellation between batches (and between a rebuild's
    /// chunks) and throws ``SearchlightError/Code-swift.struct/cancelled``; what was committed
    /// stays, and a rebuild resumes where it stopped.
    @discardableResult
    public func indexPendingChanges() throws(SearchlightError) -> Summary {
        try indexPendingChanges(until: { Task.isCancelled })
    }

    /// One turn of indexing, for a scheduler that shares threads among many indexes (``Fleet``):
    /// at most `maximumBatches` batches, on a thread of its own (the calling task's thread is
    /// never blocked). A rebuild, when one is needed, runs whole within the turn. Cancelling the
    /// calling task stops between batches with `cancelled`, as ``indexPendingChanges()`` does.
    ///
    /// - Returns: what the turn did; ``Summary/isCaughtUp`` is false when batches are left.
    public func indexPendingChanges(maximumBatches: Int) async throws(SearchlightError) -> Summary {
        if maximumBatches <= 0 {
            throw SearchlightError(.invalidArgument, "invalid maximumBatches \(maximumBatches): it must be positive")
        }
        return try await DedicatedThread.run(name: "searchlight.indexer") { [self] shouldStop throws(SearchlightError) in
            try indexPendingChanges(until: shouldStop, maximumBatches: maximumBatches)
        }
    }

    /// ``indexPendingChanges()``, stopping (with `cancelled`) between batches and rebuild
    /// chunks once `shouldStop` says so, and after `maximumBatches` batches (not caught up).
    func indexPendingChanges(until shouldStop: () -> Bool, maximumBatches: Int = .max) throws(SearchlightError) -> Summary {
        var summary = Summary()
        var rebuilds = 0
        var batches = 0
        while true {
            if shouldStop() { throw SearchlightError(.cancelled, "indexing was cancelled") }
            if batches >= maximumBatches {
                summary.isCaughtUp = false
                return summary
            }
            batches += 1
            let outcome = try SearchlightError.catchingCallbacks("indexing failed") { try store.databaseWriter.write { try batch($0) } }
            switch outcome {
            case let .caughtUp(token):
                summary.token = token
                return summary
            case let .progressed(update):
                summary.add(update)
                publish(update)
                logger.info("indexed \(update.changes) changes: \(update.upserted) upserted, \(update.removed) removed, token \(update.token)")
            case let .needsRebuild(reason):
                rebuilds += 1
                if rebuilds > 3 {
                    throw SearchlightError(.databaseError, "the index still needs a rebuild after rebuilding (\(reason))")
                }
                summary.rebuildReason = summary.rebuildReason ?? reason
                if let update = try rebuild(reason: reason, progress: nil, until: shouldStop) { summary.add(update) }
            }
        }
    }

    // MARK: - Following history

    /// Starts following history: the backlog first, then every commit, from this process or
    /// another. Does nothing if already started.
    ///
    /// A ``SearchlightHistory/HistoryFollower`` runs the indexer (a
    /// ``SearchlightHistory/LocalHistoryConsumer``: see ``step(_:shouldStop:)``) in a task: each
    /// step runs on a thread of its own, never in Swift's cooperative pool. The task holds the
    /// indexer only while a step runs: an indexer that is started and then released without
    /// ``stop()`` stops following.
    public func start() {
        state.withLock { state in
            guard state.follower == nil else { return }
            let runner = HistoryFollower(FollowingIndexer(self), store: store, logger: logger)
            state.follower = IndexFollowing { [weak self] in
                do throws(SearchlightError) {
                    try await runner.run()
                } catch {
                    // Permanent (see `classify`): the runner has logged it and the step told the waiters.
                    self?.state.withLock { $0.followFailure = error }
                }
            }
        }
    }

    deinit {
        let (follower, streams) = state.withLock { ($0.follower, Array($0.subscribers.values)) }
        follower?.requestStop()
        for stream in streams { stream.finish() }
    }

    /// Stops following history. Returns as soon as the batch (or rebuild chunk) in flight
    /// commits; a rebuild stopped this way resumes where it stopped on the next start.
    public func stop() async {
        let follower: IndexFollowing? = state.withLock { state in
            defer { state.follower = nil }
            state.follower?.requestStop() // before isIndexing turns false
            return state.follower
        }
        await follower?.stop()
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.finish() }
    }

    /// Returns when following ends: after ``stop()``, or by throwing the error that ended it by
    /// itself, one retrying cannot clear (the database file was replaced, or Searchlight was
    /// uninstalled). `watch` exits on it.
    ///
    /// Cancelling the waiting task ends the wait with ``SearchlightError/Code-swift.struct/cancelled``
    /// and leaves the indexer following: to follow until a task is cancelled, use ``run()``.
    public func waitUntilFollowingEnds() async throws(SearchlightError) {
        if let follower = state.withLock({ $0.follower }) {
            await follower.waitUntilFinished()
            if !follower.isFinished { throw SearchlightError(.cancelled, "stopped waiting for the indexer: the task was cancelled") }
        }
        if let failure = state.withLock({ $0.followFailure }) { throw failure }
    }

    /// Follows history until the calling task is cancelled: the backlog first, then every
    /// commit, from this process or another, as ``start()`` does. On cancellation it stops as
    /// ``stop()`` does (the batch or rebuild chunk in flight commits) and returns.
    ///
    /// ```swift
    /// let following = Task { try await indexer.run() }
    /// // … at shutdown:
    /// following.cancel()
    /// try await following.value
    /// ```
    ///
    /// - Throws: the error that ended following by itself, one retrying cannot clear (the
    ///   database file was replaced, or Searchlight was uninstalled). Errors retrying may clear
    ///   (a lock held too long, a full disk) are logged and retried with backoff.
    public func run() async throws(SearchlightError) {
        start()
        let follower = state.withLock { $0.follower }
        await withTaskCancellationHandler {
            await follower?.waitUntilFinished(cancellable: false)
        } onCancel: {
            follower?.requestStop()
        }
        await stop()
        if let failure = state.withLock({ $0.followFailure }) { throw failure }
    }

    /// Whether ``start()`` was called and ``stop()`` was not.
    public var isIndexing: Bool { state.withLock { $0.follower != nil } }

    /// How many ``waitUntilCaughtUp()`` calls are waiting for the follower (tests wait for one to start).
    package var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// One step of following (see ``step(_:shouldStop:)``): one batch, or a rebuild.
    ///
    /// Every failure is told to the waiters (``waitUntilCaughtUp()`` throws it). The two that
    /// retrying cannot clear are told as ending following.
    func followingStep(until shouldStop: @escaping @Sendable () -> Bool) throws(SearchlightError) -> HistoryStep {
        do throws(SearchlightError) {
            let summary = try indexPendingChanges(until: shouldStop, maximumBatches: 1)
            // A rebuild that leaves the index needing another, again and again, is a failure
            // (as in one call of `indexPendingChanges()`), retried with backoff.
            let rebuilds = state.withLock { state in
                state.rebuildSteps = summary.rebuildReason == nil ? 0 : state.rebuildSteps + 1
                defer { if state.rebuildSteps > 3 { state.rebuildSteps = 0 } }
                return state.rebuildSteps
            }
            if rebuilds > 3, let reason = summary.rebuildReason {
                throw SearchlightError(.databaseError, "the index still needs a rebuild after rebuilding (\(reason))")
            }
            return summary.isCaughtUp ? .caughtUp : .progressed
        } catch where error.code == .cancelled {
            throw error
        } catch where error.code == .databaseReplaced {
            // Permanent: retrying would follow a file nobody writes any more.
            let failure = SearchlightError(.databaseReplaced, "stopped following: the database file \(store.databaseWriter.path) was replaced or deleted; open it again")
            notifyWaiters(.failure(failure))
            throw failure
        } catch where error.code == .notInstalled {
            // Permanent: Searchlight was uninstalled; only an install may set it up again.
            let failure = SearchlightError(.notInstalled, "stopped following: \(error.message)", underlyingError: error)
            notifyWaiters(.failure(failure))
            throw failure
        } catch {
            notifyWaiters(.failure(error))
            throw error
        }
    }

    /// `indexDidUpdate` events: one per committed batch, carrying the token reached.
    public func updates() -> AsyncStream<Update> {
        subscribe(\.subscribers, buffering: 64)
    }

    /// A stream registered in `list` until its consumer goes away.
    private func subscribe<Element>(_ list: any WritableKeyPath<State, [Int: AsyncStream<Element>.Continuation]> & Sendable,
                                    buffering: Int) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(buffering))
        let id: Int = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state[keyPath: list][state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0[keyPath: list].removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ update: Update) {
        state.withLock { state in
            for continuation in state.subscribers.values { continuation.yield(update) }
        }
        notifyWaiters(.update(update))
    }

    private func notifyWaiters(_ event: Event) {
        state.withLock { state in
            for continuation in state.waiters.values { continuation.yield(event) }
        }
    }

    private func waiterEvents() -> AsyncStream<Event> {
        subscribe(\.waiters, buffering: 16)
    }

    /// Returns once everything committed before the call is indexed.
    ///
    /// If the indexer is not started, it indexes the pending changes itself, on a thread of its
    /// own (that may be a whole rebuild: the caller's cooperative thread is never blocked), and
    /// cancelling the waiting task stops that work between batches. Otherwise it awaits the
    /// running indexer's updates, and throws the error the indexer fails with (it does not hang
    /// on an indexer that keeps failing), or ``SearchlightError/Code-swift.struct/cancelled``
    /// when the indexer stops or the waiting task is cancelled.
    public func waitUntilCaughtUp() async throws(SearchlightError) {
        let target = try store.currentToken()
        guard isIndexing else {
            try await DedicatedThread.run(name: "searchlight.indexer") { [self] shouldStop throws(SearchlightError) in
                _ = try indexPendingChanges(until: shouldStop)
            }
            return
        }
        let events = waiterEvents() // before reading the checkpoint: no update is missed
        var iterator = events.makeAsyncIterator()
        while try indexedToken() < target {
            guard let event = await iterator.next() else {
                throw SearchlightError(.cancelled, "stopped waiting for the indexer: \(Task.isCancelled ? "the task was cancelled" : "the indexer stopped")")
            }
            if case let .failure(error) = event { throw error }
        }
    }

    /// ``waitUntilCaughtUp()``, bounded: throws ``SearchlightError/Code-swift.struct/timedOut``
    /// when the index has not reached what was committed before the call within `timeout`
    /// (the indexer goes on).
    public func waitUntilCaughtUp(timeout: Duration) async throws(SearchlightError) {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.waitUntilCaughtUp() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw SearchlightError(.timedOut, "the index did not catch up within \(timeout)")
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch let error as SearchlightError {
            throw error
        } catch {
            throw SearchlightError(.cancelled, "stopped waiting for the indexer: the task was cancelled", underlyingError: error)
        }
    }

    /// The token the index has reached (its checkpoint).
    public func indexedToken() throws(SearchlightError) -> HistoryToken {
        try store.checkpoint(for: configuration.author)?.token ?? .zero
    }
}
