import Foundation
import GRDB
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory
import Synchronization

/// Keeps a PostgreSQL copy of one SQLite database's documents: an ordinary history consumer
/// whose resume point lives in PostgreSQL.
///
/// ```swift
/// let store = try HistoryStore(path: "app.sqlite")
/// let sink = try PostgresSink(store: store, endpoint: PostgresEndpoint(url: "postgres://app@db.example/search"))
/// let report = try await sink.runOnce()   // catch up, then return
/// try await sink.run()                    // or follow every commit until the task is cancelled
/// ```
///
/// **Exactly once across two databases.** Each batch is read from one SQLite snapshot (the
/// history after PostgreSQL's checkpoint and the current rows of the objects it changed:
/// present → upsert, missing or excluded → delete), then applied in one PostgreSQL transaction
/// that locks the source's row of `sources` and compares-and-sets its token: a second sink of
/// the same source loses the compare, rolls back, and follows. Only then is the consumer's
/// checkpoint saved in SQLite (never moved back), which lets cleanup delete that history: a
/// crash between the two commits keeps more history, never loses a change.
///
/// **Lineage.** Before every batch the local checkpoint (token and commit time) is compared
/// with PostgreSQL's: equal → go on; PostgreSQL one batch ahead with a digest equal to the
/// local history over that batch → the sink's own batch committed before a crash: adopt it;
/// anything else → the file was restored from an older backup, copied and written to, or
/// PostgreSQL was restored: the source is resynchronized (a warning names the reason;
/// `sources.resyncs` counts it). A resync replaces the source's documents with a snapshot in
/// one transaction (`COPY`), streamed from one SQLite read transaction.
///
/// **Unknown outcomes.** An error while committing (connection dropped, backend terminated,
/// server restarted) is never guessed about: the sink reconnects with backoff and runs the
/// lineage check again, which reads the checkpoint back.
///
/// **Connections and threads.** A sink made with an endpoint has a pool of its own (4
/// connections, connected for each run); sinks made with one ``PostgresPool`` share its
/// connections (a fleet: ``PostgresSinkFleet``). Every blocking SQLite call of a step (the file
/// check, healing capture, checkpoint reads, the batch and snapshot reads, saving the
/// checkpoint) runs on a dedicated thread, never on Swift's cooperative pool; ``run()`` is a
/// ``HistoryFollower`` whose step is this sink's.
public final class PostgresSink: Sendable {
    public struct Configuration: Sendable {
        /// The source's name in PostgreSQL; the database's ``HistoryStore/sourceID()`` by default.
        public var source: String?
        /// Transactions per batch.
        public var batchSize = 500
        /// The indexer's document hooks, by entity name (the same documents as the local index).
        public var documentBuilders: [String: DocumentBuilder] = [:]
        public var logger = Logger(label: "searchlight.postgres.sink")
        /// The longest wait between two attempts after a PostgreSQL error (waits double from
        /// 100 ms up to it, jittered; sub-second values are honoured; it must be positive).
        public var maximumBackoff: Duration = .seconds(5)
        /// How many failed attempts in a row ``runOnce()`` makes before it gives up
        /// (``run()`` never gives up on PostgreSQL errors).
        public var attempts = 6
        /// Test hooks.
        package var faults = Faults()

        public init() {}
    }

    /// Points where tests make the sink fail.
    package struct Faults: Sendable {
        /// Called after a batch committed in PostgreSQL, before the SQLite checkpoint is saved;
        /// throwing there is a crash between the two commits.
        package var afterPostgresCommit: (@Sendable (HistoryToken) throws -> Void)?
        package init() {}
    }

    /// What a run did.
    public struct Report: Hashable, Sendable, Codable {
        public var source: String
        /// Batches applied.
        public var batches = 0
        /// Documents written (by batches and by snapshots).
        public var upserted = 0
        /// Documents deleted by batches.
        public var deleted = 0
        /// Snapshots loaded (the first sync included).
        public var resyncs = 0
        /// Batches another sink (or this one before a crash) committed, adopted after checking them.
        public var adopted = 0
        /// The checkpoint reached.
        public var token = HistoryToken.zero

        public init(source: String) { self.source = source }
    }

    public let store: HistoryStore
    public let endpoint: PostgresEndpoint
    /// The connections the sink uses: shared with other sinks, or its own (4 connections).
    public let pool: PostgresPool
    /// Whether the pool is the sink's own (made by ``init(store:endpoint:configuration:)``).
    private let ownsPool: Bool
    /// The source's name in PostgreSQL.
    public let source: String
    /// The consumer name in SQLite: `searchlight.postgres.<source>`, registered as required.
    public var author: String { "searchlight.postgres.\(source)" }
    let configuration: Configuration
    var logger: Logger { configuration.logger }
    private let reader: SinkReader
    private let decodedModel = Mutex<(json: String, model: SearchlightModel?)?>(nil)
    /// The source's row as this sink's last batch left it: while the local checkpoint is still
    /// that batch's token, the next step need not read the row back first (the batch's
    /// compare-and-set still checks it under lock). Forgotten on any error or lost race.
    private let lastApplied = Mutex<SourceRow?>(nil)
    /// Documents written since the last look at the table's statistics (see
    /// ``refreshStatisticsIfNeeded(_:)``).
    let unanalyzedWrites = Mutex(0)
    /// Whether the sink registered as a consumer of the store, and said it follows.
    private let registered = AtomicFlag()
    private let announced = AtomicFlag()
    /// When this sink's step last made progress (stall detection), whatever the pool's other users do.
    private let progress = ProgressClock()
    /// The last token a step reached (for the notice that the sink follows).
    private let lastToken = Mutex(HistoryToken.zero)

    /// A sink of `store` into `endpoint`, with a pool of its own (4 connections). Throws
    /// `invalidArgument` for a bad source name, `unknownEntity` for a builder of an entity the
    /// model lacks. Nothing is written anywhere until a run starts: a run first connects to
    /// PostgreSQL (and migrates its schema), then registers the sink as a required consumer of
    /// `store`, so that cleanup keeps the history it has not applied.
    public convenience init(store: HistoryStore, endpoint: PostgresEndpoint, configuration: Configuration = .init()) throws(SearchlightError) {
        let pool = try PostgresPool(endpoint: endpoint, maximumConnections: 4, logger: configuration.logger)
        try self.init(store: store, pool: pool, ownsPool: true, configuration: configuration)
    }

    /// A sink of `store` whose PostgreSQL connections come from `pool`, shared with other
    /// sinks (a fleet's): they hold at most the pool's connections together.
    public convenience init(store: HistoryStore, pool: PostgresPool, configuration: Configuration = .init()) throws(SearchlightError) {
        try self.init(store: store, pool: pool, ownsPool: false, configuration: configuration)
    }

    private init(store: HistoryStore, pool: PostgresPool, ownsPool: Bool, configuration: Configuration) throws(SearchlightError) {
        let source: String
        if let name = configuration.source { source = name } else { source = try store.sourceID() }
        try Self.validate(source: source)
        if configuration.maximumBackoff <= .zero {
            throw SearchlightError(.invalidArgument, "invalid maximum backoff \(configuration.maximumBackoff): it must be positive")
        }
        for name in configuration.documentBuilders.keys where store.model.entity(named: name) == nil {
            throw SearchlightError(.unknownEntity, "a document builder names entity \"\(name)\", which the model does not declare")
        }
        self.store = store
        self.endpoint = pool.endpoint
        self.pool = pool
        self.ownsPool = ownsPool
        self.source = source
        self.configuration = configuration
        reader = SinkReader(store: store, source: source, author: "searchlight.postgres.\(source)", builders: configuration.documentBuilders)
    }

    deinit {
        if ownsPool { pool.shutdown() }
    }

    /// A source name: not empty, at most 200 characters, no control characters.
    public static func validate(source: String) throws(SearchlightError) {
        if source.isEmpty { throw SearchlightError(.invalidArgument, "invalid source name: it is empty") }
        if source.count > 200 { throw SearchlightError(.invalidArgument, "invalid source name: longer than 200 characters") }
        if source.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw SearchlightError(.invalidArgument, "invalid source name \(source.debugDescription): it holds control characters")
        }
    }

    // MARK: - Running

    /// Catches up: applies every batch (resynchronizing when needed) until PostgreSQL holds the
    /// source's newest token, then returns what it did. PostgreSQL errors are retried with
    /// backoff (``Configuration/attempts`` in a row at most).
    public func runOnce() async throws(SearchlightError) -> Report {
        // A pool of its own: connected (and the schema migrated) for this run, closed after it.
        defer { if ownsPool { pool.reset() } }
        // A server that cannot be reached now is told at once, not retried.
        try await pool.connect()
        var report = Report(source: source)
        var failures = 0
        while true {
            do {
                let (step, _) = try await leasedStep()
                failures = 0
                report.add(step)
                if step.caughtUp { return report }
            } catch {
                failures += 1
                guard Self.isRetryable(error), failures < configuration.attempts else { throw ended(error) }
                do { try await backOff(after: error, failures: failures) } catch { throw ended(error) }
            }
        }
    }

    /// Follows the source until the calling task is cancelled: catches up, logs the notice
    /// `following source S at token T`, then applies each commit as it happens (in any
    /// process). PostgreSQL errors (a restart, a terminated backend) are logged and retried
    /// with bounded backoff; SQLite errors that mean the database is gone or no longer set up
    /// end it with that error. Cancellation is honoured between batches.
    ///
    /// A ``HistoryFollower`` drives it: waking on each commit (and every
    /// ``idleCheckInterval`` anyway), the backoff (100 ms doubling up to
    /// ``Configuration/maximumBackoff``, sub-second values honoured), cancellation. Each of its
    /// steps is this sink's step (the lineage check, then a batch, an adopted batch or a resync),
    /// with its SQLite work on a dedicated thread.
    public func run() async throws(SearchlightError) {
        defer { if ownsPool { pool.reset() } }
        let maximum = configuration.maximumBackoff
        let follower = HistoryFollower(
            self, store: store, backoff: Backoff(minimum: min(.milliseconds(100), maximum), maximum: maximum),
            pollInterval: Self.idleCheckInterval, logger: logger,
            reporting: HistoryFollower.Reporting(retrying: { [self] error, delay, _ in logRetry(after: error, delay: delay) },
                                                 ending: { [self] error in ended(error) })
        ) { [self] in
            let (step, token) = try await leasedStep()
            guard step.caughtUp else { return .progressed }
            if !announced.isSet {
                announced.set()
                logger.notice("following source \(source) at token \(token)")
            }
            return .caughtUp
        }
        try await follower.run()
    }

    /// One turn of a fleet: at most `maximumSteps` steps; whether the source caught up.
    package func turn(maximumSteps: Int) async throws(SearchlightError) -> Bool {
        for _ in 0..<max(1, maximumSteps) {
            do {
                let (step, _) = try await leasedStep()
                if step.caughtUp { return true }
            } catch {
                throw ended(error)
            }
        }
        return false
    }

    /// The error a run ends with: `postgresError` naming the server, SQLite's errors as they are.
    private func ended(_ error: any Error) -> SearchlightError {
        PostgresErrors.wrap(error, doing: "PostgreSQL at \(endpoint.displayURL)")
    }

    /// One step with a session of the pool (connected first if it is new): registers the sink
    /// as a consumer of the store the first time; after a connection-level failure, asks the
    /// pool for a new client. Returns the step and the token reached so far.
    private func leasedStep() async throws -> (Step, HistoryToken) {
        let lease = try await pool.lease()
        let session = lease.session.forUser(logger: logger)
        do {
            if !registered.isSet {
                let store = self.store, author = self.author
                try await blocking { try store.registerConsumer(author, required: true) }
                registered.set()
            }
            let step = try await isolatedStep(session)
            if let token = step.token { lastToken.withLock { $0 = token } }
            return (step, lastToken.withLock { $0 })
        } catch {
            if Task.isCancelled { throw CancellationError() }
            if PostgresPool.isConnectionFailure(error) { pool.replace(generation: lease.generation) }
            throw error
        }
    }

    /// Runs blocking SQLite work on a dedicated thread (never on Swift's cooperative pool).
    func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await DedicatedThread.run(name: "searchlight.postgres.sink") { _ throws(any Error) -> T in try work() }
    }

    /// One step, in a task of its own: cancelling the caller lets the step in flight finish
    /// (its PostgreSQL transaction commits or rolls back, its checkpoint is saved), but not
    /// forever: a step still waiting after ``stepGracePeriod`` is cancelled too. A step whose
    /// session made no progress for ``stallLimit`` (a query on a connection the server dropped
    /// that postgres-nio never fails) is given up, cancelled and left to end by itself: the
    /// error starts a new session. Whatever a given-up step left undone, the lineage check of
    /// the next one sorts out.
    private func isolatedStep(_ shared: PostgresSession) async throws -> Step {
        var own = shared
        own.progress = progress
        let session = own
        session.progress.touch()
        let task = Task {
            do {
                return try await self.step(session)
            } catch {
                self.lastApplied.withLock { $0 = nil } // read the row back next time
                throw error
            }
        }
        let limit = Self.stallLimit
        return try await awaitUnlessStalled(task, checkingEvery: .seconds(1), isStalled: { session.progress.age > limit },
                                            stalled: { StepStalled(limit: limit) }, grace: Self.stepGracePeriod)
    }

    /// How long a step may go without progress before it is given up.
    static let stallLimit: Duration = .seconds(60)

    /// How often a following sink that heard of no commit checks for one anyway.
    static let idleCheckInterval: Duration = .seconds(2)

    /// How long a cancelled run waits for the step in flight.
    static let stepGracePeriod: Duration = .seconds(10)

    private func backOff(after error: any Error, failures: Int) async throws {
        var generator = SystemRandomNumberGenerator()
        let delay = Self.backoff(failures: failures, maximum: configuration.maximumBackoff, using: &generator)
        logRetry(after: error, delay: delay)
        try await Task.sleep(for: delay)
    }

    private func logRetry(after error: any Error, delay: Duration) {
        let milliseconds = Double(delay.components.seconds) * 1_000 + Double(delay.components.attoseconds) / 1e15
        logger.warning("source \(source): \(PostgresErrors.describe(error)); trying again in \(max(1, Int(milliseconds.rounded(.up)))) ms")
    }

    /// The wait before attempt `failures + 1`: 100 ms doubled with each failure in a row, never
    /// more than `maximum` (sub-second maxima included), at least 1 ms, jittered: a random
    /// point of the upper half (sinks that failed together do not retry in step).
    static func backoff(failures: Int, maximum: Duration, using generator: inout some RandomNumberGenerator) -> Duration {
        Backoff.delay(failures: failures, minimum: .milliseconds(100), maximum: maximum, floor: .milliseconds(1), using: &generator)
    }

    /// Whether to try again after `error`: PostgreSQL's and the network's transient failures
    /// by kind (``PostgresErrors/isTransient(_:)``: SQLSTATE classes, postgres-nio's codes,
    /// NIO's channel errors), an unknown commit outcome, a step given up, SQLite being busy.
    /// Anything else (no such database or role, a schema newer than this release, the file
    /// replaced, uninstalled, not a database…) ends the run: a person must act.
    static func isRetryable(_ error: any Error) -> Bool {
        switch error {
        case is StepStalled: return true
        case let error as SearchlightError:
            if error.code == .databaseError, let databaseError = error.databaseError {
                return Self.isTransient(databaseError)
            }
            return error.code == .postgresError && PostgresErrors.isTransient(error)
        case let error as DatabaseError:
            return Self.isTransient(error)
        default:
            return PostgresErrors.isTransient(error)
        }
    }

    /// SQLite busy, or a table or column that the app's migration renamed or dropped between the
    /// last capture check and this read: the next step checks capture again (a table gone for
    /// good is then suspended: its documents are deleted, not read).
    private static func isTransient(_ error: DatabaseError) -> Bool {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_SCHEMA: return true
        case .SQLITE_ERROR:
            let message = error.message ?? ""
            return message.hasPrefix("no such table") || message.hasPrefix("no such column")
        default: return false
        }
    }

    // MARK: - One step

    /// What one step did.
    struct Step: Sendable {
        var caughtUp = false
        var batches = 0, upserted = 0, deleted = 0, resyncs = 0, adopted = 0
        var token: HistoryToken?
    }

    /// The lineage check, then one batch (or a resync, or adopting a committed batch).
    func step(_ session: PostgresSession) async throws -> Step {
        let store = self.store, author = self.author, reader = self.reader
        let local = try await blocking {
            try store.checkFileIdentity()
            _ = try store.healCapture() // heals capture after a migration of the app, records its gap
            return try store.checkpoint(for: author)
        }
        let schema = session.schema, source = self.source, logger = self.logger
        let localTime = local?.transactionTimestamp?.timeIntervalSince1970
        let cached = lastApplied.withLock { row in row.flatMap { row in local.map { row.holds($0.token.rawValue, localTime) } ?? false ? row : nil } }
        let row: SourceRow?
        if let cached {
            row = cached
        } else {
            row = try await session.withConnection { connection in
                try await SourceRow.read(source, schema: schema, lock: false, connection, logger: logger)
            }
        }
        guard let row else {
            return try await resync(session, expected: nil, reason: "first sync: PostgreSQL holds no checkpoint of this source")
        }
        if let local, row.holds(local.token.rawValue, localTime) {
            // The same lineage: go on from the checkpoint.
        } else if let local, row.previousToken == local.token.rawValue, SourceRow.sameTime(row.previousTimestamp, localTime),
                  let digest = row.batchDigest,
                  try await blocking({ try reader.digest(after: local.token, through: HistoryToken(row.token)) }) == digest {
            // A batch of this history committed in PostgreSQL before its checkpoint was saved here.
            let token = HistoryToken(row.token)
            try await saveLocalCheckpoint(token)
            logger.notice("source \(source): PostgreSQL holds the batch through token \(token) of this history; checkpoint adopted")
            return Step(adopted: 1, token: token)
        } else if try await blocking({ try reader.holdsHistory(of: row, after: local?.token) }) {
            // PostgreSQL is further along this very history (another sink of this file committed
            // batches, or a snapshot, since this one read its checkpoint): follow it.
            let token = HistoryToken(row.token)
            try await saveLocalCheckpoint(token)
            logger.info("source \(source): PostgreSQL holds this history through token \(token), ahead of the checkpoint \(local.map { "\($0.token)" } ?? "none") read here; following it")
            return Step(adopted: 1, token: token)
        } else {
            let reason = divergence(local: local, row: row)
            logger.warning("source \(source) resynchronized: \(reason)")
            return try await resync(session, expected: row, reason: reason)
        }

        let batchSize = configuration.batchSize
        switch try await blocking({ try reader.batch(after: HistoryToken(row.token), batchSize: batchSize) }) {
        case let .needsResync(resync):
            logger.warning("source \(source) resynchronized: \(resync)")
            return try await self.resync(session, expected: row, reason: resync.description)
        case let .caughtUp(model, comparisons, head):
            if !sameModel(model, row) {
                return try await resync(session, expected: row, reason: "the model changed")
            }
            if let reason = row.attributesResyncReason(comparisons) {
                return try await resync(session, expected: row, reason: reason)
            }
            await refreshStatisticsIfNeeded(session)
            return Step(caughtUp: true, token: head)
        case let .batch(batch):
            if !sameModel(batch.model, row) {
                return try await resync(session, expected: row, reason: "the model changed")
            }
            if let reason = row.attributesResyncReason(batch.comparisons) {
                return try await resync(session, expected: row, reason: reason)
            }
            return try await apply(batch, session, expected: row)
        }
    }

    /// Applies a batch in one PostgreSQL transaction, compare-and-set on the row's checkpoint,
    /// then saves the SQLite checkpoint.
    ///
    /// ```sql
    /// BEGIN;
    /// SELECT token, token_timestamp, … FROM "searchlight".sources WHERE source = $1 FOR UPDATE;  -- must still be the batch's previous token
    /// INSERT INTO "searchlight".documents … ON CONFLICT … DO UPDATE …;  DELETE FROM "searchlight".documents …;
    /// UPDATE "searchlight".sources SET token = $2, token_timestamp = $3, previous_token = $4, previous_timestamp = $5,
    ///     batch_digest = $6, head_token = $7, head_timestamp = $8, applied_at = now(), database_path = $9 WHERE source = $1;
    /// COMMIT;
    /// ```
    private func apply(_ batch: SinkReader.Batch, _ session: PostgresSession, expected row: SourceRow) async throws -> Step {
        let schema = session.schema, source = self.source, logger = self.logger, path = store.databaseWriter.path
        let writer = DocumentWriter(schema: schema, source: source, logger: logger)
        let deleted = try await session.transaction { connection -> Int? in
            guard let locked = try await SourceRow.read(source, schema: schema, lock: true, connection, logger: logger),
                  locked.holds(row.token, row.tokenTimestamp) else { return nil }
            try await writer.upsert(batch.upserts, connection)
            let deleted = try await writer.delete(batch.deletes, connection)
            try await writer.deleteEntities(batch.suspended, connection)
            try await connection.query("""
                UPDATE \(unescaped: schema).sources SET token = \(batch.batch.token.rawValue), token_timestamp = \(batch.tokenTimestamp),
                    previous_token = \(row.token), previous_timestamp = \(row.tokenTimestamp), batch_digest = \(batch.digest),
                    head_token = \(batch.head.rawValue), head_timestamp = \(batch.headTimestamp), applied_at = now(),
                    database_path = \(path)
                WHERE source = \(source)
                """, logger: logger)
            return deleted
        }
        guard let deleted else {
            lastApplied.withLock { $0 = nil }
            logger.info("source \(source): another sink applied the batch after token \(row.token) first; following it")
            return Step()
        }
        lastApplied.withLock {
            $0 = SourceRow(token: batch.batch.token.rawValue, tokenTimestamp: batch.tokenTimestamp, previousToken: row.token,
                           previousTimestamp: row.tokenTimestamp, batchDigest: batch.digest, modelJSON: row.modelJSON, resyncs: row.resyncs,
                           attributesJSON: row.attributesJSON)
        }
        recordWritten(batch.upserts.count + deleted)
        try configuration.faults.afterPostgresCommit?(batch.batch.token)
        try await saveLocalCheckpoint(batch.batch.token)
        logger.debug("source \(source): applied tokens \(batch.batch.previousToken)…\(batch.batch.token) (\(batch.upserts.count) upserted, \(deleted) deleted)")
        return Step(batches: 1, upserted: batch.upserts.count, deleted: deleted, token: batch.batch.token)
    }

    /// Saves the consumer checkpoint in SQLite, unless it is at `token` or beyond already (two
    /// sinks of one file each save theirs; it never goes back).
    func saveLocalCheckpoint(_ token: HistoryToken) async throws {
        let store = self.store, author = self.author
        try await blocking {
            try store.databaseWriter.write { db in
                if let current = try store.checkpoint(for: author, in: db), current.token >= token { return }
                try store.saveCheckpoint(token, for: author, in: db)
            }
        }
    }

    /// Why the local checkpoint and PostgreSQL's disagree, for the log and `resync_reason`.
    private func divergence(local: HistoryCheckpoint?, row: SourceRow) -> String {
        guard let local else {
            return "this database has no checkpoint of the sink, but PostgreSQL holds the source at token \(row.token) (a copy, or a crash before the first checkpoint)"
        }
        if local.token.rawValue > row.token {
            return "PostgreSQL is behind this database's checkpoint (\(row.token) < \(local.token)): PostgreSQL was restored from a backup, or another file with this source id wrote it"
        }
        if local.token.rawValue == row.token {
            return "token \(row.token) was committed at another time in PostgreSQL's lineage: the file was restored from a backup or copied, and its history diverged"
        }
        if row.previousToken == local.token.rawValue {
            return "the last batch in PostgreSQL (tokens \(local.token)…\(row.token)) is not this database's history: a copy of the file, or a restored backup, wrote other transactions"
        }
        return "PostgreSQL holds token \(row.token), this database's checkpoint is \(local.token): the file was restored from an older backup, or copied"
    }

    /// Whether PostgreSQL's row holds `model` (decoded once per distinct text).
    private func sameModel(_ model: SearchlightModel, _ row: SourceRow) -> Bool {
        let stored = decodedModel.withLock { cache -> SearchlightModel? in
            if let cache, cache.json == row.modelJSON { return cache.model }
            let decoded = try? SearchlightModel(jsonData: Data(row.modelJSON.utf8))
            cache = (row.modelJSON, decoded)
            return decoded
        }
        return stored == model
    }
}

/// The sink is a consumer of the runtime: its author name is its checkpoint's key, and a step's
/// error is retried when ``PostgresSink/isRetryable(_:)`` says so (PostgreSQL's and the network's
/// transient failures by SQLSTATE and kind, an unknown commit outcome, a step given up, SQLite busy).
/// Its step does not fit fetch, apply, confirm: it first compares its local checkpoint with
/// PostgreSQL's, then applies a batch, adopts one PostgreSQL already holds, or resynchronizes.
extension PostgresSink: HistoryFollowingConsumer {
    public func classify(_ error: any Error) -> HistoryFailure {
        Self.isRetryable(error) ? .transient : .permanent
    }
}

extension PostgresSink.Report {
    mutating func add(_ step: PostgresSink.Step) {
        batches += step.batches
        upserted += step.upserted
        deleted += step.deleted
        resyncs += step.resyncs
        adopted += step.adopted
        if let token = step.token { self.token = token }
    }
}
