import Foundation
import GRDB
import SearchlightHistory

extension Indexer {
    /// Progress of a rebuild: documents read from the source so far, out of the total.
    public struct Progress: Hashable, Sendable {
        public var done: Int
        public var total: Int
    }

    /// Rebuilds the index from scratch, online: the new index is built beside the live one
    /// and swapped in atomically, so searches keep answering from the old index until the
    /// swap; changes committed during the rebuild are applied right after it. If another
    /// process is rebuilding already, this waits for that rebuild instead of starting another.
    @discardableResult
    public func reindex(progress: (@Sendable (Progress) -> Void)? = nil) throws(SearchlightError) -> Summary {
        try reindex(progress: progress, until: { Task.isCancelled })
    }

    /// ``reindex(progress:)`` from async code: the rebuild runs on a thread of its own, and the
    /// calling task suspends (it holds no cooperative thread) until it ends.
    ///
    /// Cancelling the task stops the rebuild between chunks with
    /// ``SearchlightError/Code-swift.struct/cancelled``: the chunks committed stay, and the
    /// next rebuild (by any process) resumes where it stopped.
    ///
    /// ```swift
    /// let summary = try await indexer.reindexAsync { progress in print(progress.done, "of", progress.total) }
    /// ```
    @discardableResult
    public func reindexAsync(progress: (@Sendable (Progress) -> Void)? = nil) async throws(SearchlightError) -> Summary {
        try await DedicatedThread.run(name: "searchlight.indexer") { [self] shouldStop throws(SearchlightError) in
            try reindex(progress: progress, until: shouldStop)
        }
    }

    /// ``reindex(progress:)``, stopping between chunks and batches once `shouldStop` says so.
    func reindex(progress: (@Sendable (Progress) -> Void)?, until shouldStop: () -> Bool) throws(SearchlightError) -> Summary {
        var summary = Summary()
        summary.rebuildReason = .requested
        if let update = try rebuild(reason: .requested, progress: progress, until: shouldStop) { summary.add(update) }
        let rest = try indexPendingChanges(until: shouldStop)
        summary.changes += rest.changes
        summary.upserted += rest.upserted
        summary.removed += rest.removed
        summary.token = rest.token
        return summary
    }

    /// Makes the index match the current rows of these objects, whatever history says: each
    /// object whose row exists is indexed again, and the document of one whose row does not is
    /// removed. `entity` nil: the ids are looked up in every entity (an id that names no row of
    /// an entity is harmless there).
    ///
    /// ```swift
    /// try indexer.reindex(ids: [.integer(42)], entity: "Note")
    /// try indexer.reindex(ids: ObjectID.candidates(typed: "42"))   // INTEGER or TEXT keys, every entity
    /// ```
    @discardableResult
    public func reindex(ids: [ObjectID], entity: String? = nil) throws(SearchlightError) -> Summary {
        try reindex(ids: ids, entity: entity, until: { false })
    }

    /// ``reindex(ids:entity:)`` from async code: on a thread of its own (the calling task holds
    /// no cooperative thread). Cancelling the task stops it between chunks of
    /// ``reindexChunkSize`` objects with ``SearchlightError/Code-swift.struct/cancelled``;
    /// the chunks committed stay.
    @discardableResult
    public func reindexAsync(ids: [ObjectID], entity: String? = nil) async throws(SearchlightError) -> Summary {
        try await DedicatedThread.run(name: "searchlight.indexer") { [self] shouldStop throws(SearchlightError) in
            try reindex(ids: ids, entity: entity, until: shouldStop)
        }
    }

    /// ``reindex(ids:entity:)``, stopping between chunks once `shouldStop` says so.
    @discardableResult
    func reindex(ids: [ObjectID], entity: String?, until shouldStop: () -> Bool) throws(SearchlightError) -> Summary {
        let names = entity.map { [$0] } ?? store.model.entities.map(\.name)
        var total = Summary()
        for name in names {
            // One short write transaction per chunk: the app's writers never wait long, and
            // what is held stays one chunk of documents, however many ids (a repair's).
            for start in stride(from: 0, to: max(ids.count, 1), by: Self.reindexChunkSize) {
                if shouldStop() { throw SearchlightError(.cancelled, "reindexing was cancelled") }
                let summary = try reindex(ids: Array(ids[start..<min(ids.count, start + Self.reindexChunkSize)]), inEntity: name)
                total.upserted += summary.upserted
                total.removed += summary.removed
                total.token = summary.token
            }
        }
        return total
    }

    /// Objects reindexed per write transaction by ``reindex(ids:entity:)``.
    static let reindexChunkSize = 200

    private func reindex(ids: [ObjectID], inEntity name: String) throws(SearchlightError) -> Summary {
        try SearchlightError.catching("cannot reindex \(name) objects") {
            try store.databaseWriter.write { db in
                try store.checkInstalled(in: db)
                let model = try store.installedModel(in: db)
                guard model.entity(named: name) != nil else {
                    throw SearchlightError(.unknownEntity, "unknown entity \"\(name)\" (the model declares: \(model.entities.map(\.name).joined(separator: ", ")))")
                }
                guard let live = try IndexState.live(db), let json = live.layout else {
                    throw SearchlightError(.indexNotBuilt, "the index has not been built yet; run a full reindex first")
                }
                let layout = try IndexLayout(json: json)
                let entities = layout.entities
                // An entity set aside (its table is missing) has no documents to reindex.
                guard let entity = entities.first(where: { $0.entity.name == name }), !entity.isSuspended else { return Summary() }
                let counts = try makeWriter(live.schema, layout).apply(ids, entityID: entity.id, db)
                return Summary(changes: 0, upserted: counts.upserted, removed: counts.removed, token: try store.currentToken(in: db))
            }
        }
    }

    /// The consumer that holds history back while a rebuild runs: cleanup must not delete
    /// what came after the rebuild's start token, which the indexer applies after the swap.
    var rebuildConsumer: String { configuration.author + ".rebuild" }

    /// A rebuild this indexer holds the lease of.
    private struct Plan {
        var generation: Int
        var layout: IndexLayout
        var startToken: HistoryToken
        var entityIndex: Int
        var after: DatabaseValue?
        var resumed: Bool
    }

    private enum Start {
        case started(Plan)
        /// Another live process holds the lease.
        case busy(owner: String)
        /// Nothing to do: the live index already has the wanted layout (another process
        /// finished the rebuild this one was waiting for).
        case notNeeded
    }

    /// Builds a new generation of the index from the source tables and swaps it in, under the
    /// rebuild lease. Returns nil when another process did the rebuild (this one waited).
    func rebuild(reason: RebuildReason, progress: (@Sendable (Progress) -> Void)?, until shouldStop: () -> Bool) throws(SearchlightError) -> Update? {
        var waited = false
        var plan: Plan
        // Set up when another process holds the lease: wakes when that rebuild ends.
        var changes: DatabaseChangeSignal?
        // 1. Take the lease: start a generation, resume the one a stopped or dead rebuild left,
        // or wait for the process that is rebuilding.
        while true {
            if shouldStop() { throw SearchlightError(.cancelled, "the rebuild was cancelled") }
            let start = try SearchlightError.catching("cannot start the rebuild") {
                try store.databaseWriter.write { db in try begin(reason: waited ? nil : reason, db) }
            }
            switch start {
            case let .started(started):
                plan = started
            case .notNeeded:
                logger.notice("another process rebuilt the index")
                return nil
            case let .busy(owner):
                if !waited { logger.notice("waiting for the rebuild under way in process \(owner.split(separator: " ").dropFirst().first ?? "?")") }
                waited = true
                guard let changes else {
                    // Subscribe, then look again: a rebuild that ended in between is not missed.
                    changes = DatabaseChangeSignal(store.historyUpdates())
                    continue
                }
                // A rebuild ends with a swap, which changes the schema and wakes this. The
                // timeout only notices a holder that died without a word (kill -9, seen at once
                // on this host) or whose lease expired.
                changes.wait(timeout: .seconds(1))
                continue
            }
            break
        }
        logger.notice("\(plan.resumed ? "resuming" : "rebuilding") the index from scratch: \(reason)")

        // 2. Fill it in chunks, each a short write transaction that renews the lease and
        // records how far it got: writers and searches go on, and a stop resumes from there.
        let writer = makeWriter(IndexSchema(generation: plan.generation), plan.layout)
        let total = try SearchlightError.catching("cannot count the rows to index") {
            try store.databaseWriter.read { db in
                // (Only for the progress bar: a table dropped meanwhile counts as empty.)
                plan.layout.entities.filter { !$0.isSuspended }.reduce(0) { sum, entity in
                    let count = try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLQuoting.identifier(entity.entity.table))")
                    return sum + (count ?? 0)
                }
            }
        }
        var done = 0
        var upserted = 0
        progress?(Progress(done: 0, total: total))
        for entityIndex in plan.entityIndex..<plan.layout.entities.count {
            let entity = plan.layout.entities[entityIndex]
            if entity.isSuspended { continue }
            let source = writer.sources[entity.id]!
            var after = entityIndex == plan.entityIndex ? plan.after : nil
            while true {
                if shouldStop() {
                    try? releaseLease()
                    throw SearchlightError(.cancelled, "the rebuild was cancelled; it resumes where it stopped")
                }
                let position = after
                let chunk = try SearchlightError.catching("cannot rebuild the index") {
                    try store.databaseWriter.write { db in
                        try fillChunk(entityIndex: entityIndex, after: position, source: source, writer: writer, db)
                    }
                }
                guard let chunk else {
                    logger.warning("another process took the rebuild over (this one's lease had expired)")
                    return nil
                }
                done += chunk.count
                upserted += chunk.inserted
                progress?(Progress(done: min(done, max(total, done)), total: max(total, done)))
                guard chunk.count == configuration.rebuildChunkSize, let last = chunk.last else { break }
                after = last
            }
        }
        // 3. Swap: the new generation becomes live, and the checkpoint moves to where the
        // rebuild started (changes since then are applied next, idempotently).
        let swapped = try SearchlightError.catching("cannot swap in the rebuilt index") {
            try store.databaseWriter.write { db -> Bool in
                try store.checkInstalled(in: db)
                guard try IndexState.get(db, .rebuildOwner, as: String.self) == leaseOwner else { return false }
                try IndexState.set(db, .generation, plan.generation)
                try IndexState.set(db, .layout, plan.layout.json)
                try IndexSchema.dropGenerations(except: [plan.generation], db)
                try store.saveCheckpoint(plan.startToken, for: configuration.author, in: db)
                try store.unregisterConsumer(rebuildConsumer, in: db)
                try clearLease(db)
                return true
            }
        }
        guard swapped else {
            logger.warning("another process took the rebuild over (this one's lease had expired)")
            return nil
        }
        let update = Update(token: plan.startToken, changes: 0, upserted: upserted, removed: 0, rebuilt: true)
        publish(update)
        if plan.resumed {
            // This run wrote only what an earlier, stopped run had left: say how many the index
            // holds, so that the figure never reads as documents lost.
            let held = (try? SearchIndex(store: store).documentCounts().values.reduce(0, +)).map { "\($0) documents" } ?? "its documents"
            logger.notice("rebuilt the index: it holds \(held) (this run resumed a stopped rebuild and wrote \(upserted) of them), generation \(plan.generation), from token \(plan.startToken)")
        } else {
            logger.notice("rebuilt the index: \(upserted) documents, generation \(plan.generation), from token \(plan.startToken)")
        }
        return update
    }

    private struct Chunk {
        var count: Int
        var last: DatabaseValue?
        var inserted: Int
    }

    /// Copies the next chunk of one entity's rows into the new generation, renewing the lease
    /// and recording the progress; nil if another process took the lease over.
    private func fillChunk(entityIndex: Int, after: DatabaseValue?, source: DocumentSource, writer: IndexWriter, _ db: Database) throws -> Chunk? {
        try store.checkInstalled(in: db)
        guard try IndexState.get(db, .rebuildOwner, as: String.self) == leaseOwner else { return nil }
        let key = SQLQuoting.identifier(source.entity.entity.primaryKey)
        let condition = after == nil ? "1" : "\(key) > ?"
        // The host app may drop or remake the table while the rebuild runs: copy nothing then.
        // The next batch heals capture and records the gap, and a new rebuild follows.
        let rows = try db.tableExistsInCurrentSchema(source.entity.entity.table)
            ? try Row.fetchAll(db, sql: source.selectSQL(where: condition) + " ORDER BY \(key) LIMIT ?",
                               arguments: StatementArguments(after.map { [$0] } ?? []) + [configuration.rebuildChunkSize])
            : []
        var inserted = 0
        var vocabulary = try writer.makeVocabulary(db)
        for row in rows {
            guard let id = ObjectID.fromDatabaseValue(row[0]), let fields = try source.fields(of: row, db) else { continue }
            try writer.insertNew(id, fields: fields, attributes: source.attributeValues(of: row), entityID: source.entity.id,
                                 vocabulary: &vocabulary, db)
            inserted += 1
        }
        try vocabulary?.flush(db)
        let last: DatabaseValue? = rows.last?[0]
        let finished = rows.count < configuration.rebuildChunkSize || last == nil
        try IndexState.set(db, .rebuildEntity, finished ? entityIndex + 1 : entityIndex)
        try IndexState.set(db, .rebuildAfter, finished ? nil : last)
        try IndexState.set(db, .rebuildExpiresAt, leaseExpiry())
        return Chunk(count: rows.count, last: last, inserted: inserted)
    }

    /// Takes the rebuild lease in one write transaction (see ``rebuild(reason:progress:until:)``).
    /// `reason` nil: this indexer was waiting for another rebuild, which may have made its own
    /// unnecessary.
    private func begin(reason: RebuildReason?, _ db: Database) throws -> Start {
        // Checked before anything is created: after an uninstall, only an install creates tables.
        try store.checkInstalled(in: db)
        let (layout, json) = try currentLayout(db)
        let live = try IndexState.live(db)
        if reason == nil, let live, live.layout == json, try store.checkpoint(for: configuration.author, in: db)?.token != nil,
           try IndexState.get(db, .rebuildOwner, as: String.self) == nil {
            return .notNeeded
        }
        if try rebuildIsUnderWay(db), let owner = try IndexState.get(db, .rebuildOwner, as: String.self) {
            return .busy(owner: owner)
        }
        // Resume the rebuild left in place if it builds the same layout.
        if let generation = try IndexState.get(db, .rebuildGeneration, as: Int.self),
           try IndexState.get(db, .rebuildLayout, as: String.self) == json,
           let start = try IndexState.get(db, .rebuildStartToken, as: HistoryToken.self),
           try store.checkpoint(for: rebuildConsumer, in: db)?.token == start,
           try db.tableExistsInCurrentSchema(IndexSchema(generation: generation).documentTable) {
            try IndexState.set(db, .rebuildOwner, leaseOwner)
            try IndexState.set(db, .rebuildExpiresAt, leaseExpiry())
            return .started(Plan(
                generation: generation, layout: layout, startToken: start,
                entityIndex: try IndexState.get(db, .rebuildEntity, as: Int.self) ?? 0,
                // A NULL cursor reads back as `DatabaseValue.null`, not nil: `key > NULL` would
                // match nothing and swap in an empty generation.
                after: try IndexState.get(db, .rebuildAfter, as: DatabaseValue.self).flatMap { $0.isNull ? nil : $0 },
                resumed: true))
        }
        // Start a new generation: nobody else is filling one (we hold the lease now).
        let liveGeneration = live?.schema.generation
        try IndexSchema.dropGenerations(except: Set([liveGeneration].compactMap { $0 }), db)
        let previous = max(liveGeneration ?? 0, try IndexState.get(db, .rebuildGeneration, as: Int.self) ?? 0)
        let schema = IndexSchema(generation: previous + 1)
        for statement in schema.createStatements(for: layout.entities, tokenizer: layout.tokenizer, prefixes: layout.prefixes) {
            do {
                try db.execute(sql: statement)
            } catch let error as DatabaseError where statement.contains("USING fts5") {
                throw SearchlightError(.invalidModel, "cannot create the full-text index (tokenizer \"\(layout.tokenizer)\"): \(error.message ?? "\(error)")", underlyingError: error)
            }
        }
        let start = try store.currentToken(in: db)
        try store.registerConsumer(rebuildConsumer, required: true, in: db)
        try store.saveCheckpoint(start, for: rebuildConsumer, in: db)
        try IndexState.set(db, .rebuildOwner, leaseOwner)
        try IndexState.set(db, .rebuildExpiresAt, leaseExpiry())
        try IndexState.set(db, .rebuildGeneration, schema.generation)
        try IndexState.set(db, .rebuildLayout, json)
        try IndexState.set(db, .rebuildStartToken, start)
        try IndexState.set(db, .rebuildEntity, 0)
        try IndexState.set(db, .rebuildAfter, nil)
        return .started(Plan(generation: schema.generation, layout: layout, startToken: start, entityIndex: 0, after: nil, resumed: false))
    }

    /// Whether a live process other than this indexer holds the rebuild lease.
    func rebuildIsUnderWay(_ db: Database) throws -> Bool {
        guard let owner = try IndexState.get(db, .rebuildOwner, as: String.self), owner != leaseOwner else { return false }
        return (try IndexState.get(db, .rebuildExpiresAt, as: Double.self) ?? 0) > Date().timeIntervalSince1970 && !Self.isDead(owner)
    }

    /// Whether the holder of a lease is a process of this host that no longer exists. Taking a
    /// lease over wrongly is safe (the holder checks the lease in every chunk's transaction and
    /// gives up); it only wastes work.
    static func isDead(_ owner: String) -> Bool {
        let parts = owner.split(separator: " ")
        guard parts.count == 3, parts[0] == ProcessInfo.processInfo.hostName, let pid = Int32(parts[1]) else { return false }
        return kill(pid, 0) == -1 && errno == ESRCH
    }

    private func leaseExpiry() -> Double {
        Date().timeIntervalSince1970 + configuration.rebuildLease.seconds
    }

    /// Lets another process resume this rebuild at once (its progress stays).
    private func releaseLease() throws {
        try store.databaseWriter.write { db in
            try store.checkInstalled(in: db)
            guard try IndexState.get(db, .rebuildOwner, as: String.self) == leaseOwner else { return }
            try IndexState.set(db, .rebuildOwner, nil)
            try IndexState.set(db, .rebuildExpiresAt, nil)
        }
    }

    private func clearLease(_ db: Database) throws {
        for key in [IndexState.Key.rebuildOwner, .rebuildExpiresAt, .rebuildGeneration, .rebuildLayout, .rebuildStartToken, .rebuildEntity, .rebuildAfter] {
            try db.execute(sql: #"DELETE FROM "searchlight_index_state" WHERE "key" = ?"#, arguments: [key])
        }
    }
}

/// Wakes a thread that waits for another process: signalled by every new head token, and by
/// schema changes (a rebuild's swap drops and renames tables), from the store's watcher.
final class DatabaseChangeSignal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let listener: Task<Void, Never>

    init(_ updates: AsyncStream<HistoryToken>) {
        let semaphore = self.semaphore
        listener = Task { for await _ in updates { semaphore.signal() } }
    }

    deinit { listener.cancel() }

    /// Waits for the next change, or `timeout`.
    func wait(timeout: Duration) {
        _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(timeout / .nanoseconds(1))))
    }
}
