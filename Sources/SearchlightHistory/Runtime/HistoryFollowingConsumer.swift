import GRDB

/// What one step of a following consumer did.
public enum HistoryStep: Hashable, Sendable {
    /// It processed something (a batch, a resynchronization): the runner steps again at once.
    case progressed
    /// Nothing follows the checkpoint: the runner waits for a commit (or its fallback poll).
    case caughtUp
}

/// What a ``HistoryFollower`` does with the error of a failed step.
public enum HistoryFailure: Hashable, Sendable {
    /// Retrying may clear it (a lock held too long, a full disk, a network error): the runner
    /// logs it and steps again after a ``Backoff`` delay.
    case transient
    /// Retrying cannot clear it (the database file was replaced, Searchlight was uninstalled,
    /// a consumer's own error): following ends with it.
    case permanent

    /// The default classification: SQLite reporting busy, locked, a full disk or an I/O error
    /// (directly or as the cause of a ``SearchlightError``) and ``SearchlightError/Code-swift.struct/timedOut``
    /// are transient; every other error is permanent, including the errors of your own closures
    /// (``SearchlightError/Code-swift.struct/bodyFailed``), ``SearchlightError/Code-swift.struct/databaseReplaced``
    /// and ``SearchlightError/Code-swift.struct/notInstalled``.
    public static func classify(_ error: any Error) -> HistoryFailure {
        switch error {
        case let error as DatabaseError:
            return isTransient(error.resultCode) ? .transient : .permanent
        case let error as SearchlightError:
            if error.code == .timedOut { return .transient }
            if error.code == .databaseError, let cause = error.databaseError { return isTransient(cause.resultCode) ? .transient : .permanent }
            return .permanent
        default:
            return .permanent
        }
    }

    private static func isTransient(_ code: ResultCode) -> Bool {
        switch code.primaryResultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR: true
        default: false
        }
    }
}

/// A consumer that a ``HistoryFollower`` runs: its name, and how its errors are classified.
/// Adopt one of its two kinds, by where the checkpoint lives:
///
/// - ``LocalHistoryConsumer``: the work and the checkpoint commit in one SQLite transaction of
///   the history database (an index in the same file, an app's outbox table). Neither loses
///   nor repeats a change, whatever the crash.
/// - ``ExternalHistoryConsumer``: the work goes to another system (a server, another
///   database) that keeps its own checkpoint, moved by compare-and-set with the work; the
///   local checkpoint is confirmed afterwards, so that cleanup keeps history until it is applied.
public protocol HistoryFollowingConsumer: Sendable {
    /// The consumer's author name: the key of its checkpoint, and its name in logs.
    var author: String { get }

    /// Whether retrying may clear `error`, thrown by a step. The default is
    /// ``HistoryFailure/classify(_:)``.
    func classify(_ error: any Error) -> HistoryFailure
}

extension HistoryFollowingConsumer {
    public func classify(_ error: any Error) -> HistoryFailure { HistoryFailure.classify(error) }
}

/// A consumer whose work and checkpoint commit together, in one write transaction of the
/// history database.
///
/// ```swift
/// struct Exporter: LocalHistoryConsumer {
///     let author = "exporter"
///
///     func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep {
///         switch try store.consumeNextBatch(as: author, { batch, db in try export(batch, db) }) {
///         case .caughtUp: return .caughtUp
///         case .consumed: return .progressed
///         case .needsResync:
///             try store.resynchronize(as: author) { head, db in try exportEveryRow(db) }
///             return .progressed
///         }
///     }
/// }
///
/// try await HistoryFollower(Exporter(), store: store).run() // until the task is cancelled
/// ```
public protocol LocalHistoryConsumer: HistoryFollowingConsumer {
    /// One unit of work, on the runner's dedicated thread (it may block on SQLite): typically
    /// one write transaction that reads the history after the checkpoint, applies it, and
    /// saves the checkpoint. A long step (a rebuild in chunks) checks `shouldStop` between the
    /// transactions it commits, and returns when it is true.
    func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep
}

/// A consumer that applies history to another system, which keeps its own checkpoint.
///
/// Each step of the ``HistoryFollower``: reads the other system's checkpoint
/// (``externalCheckpoint()``), fetches what follows it from SQLite on the runner's thread
/// (``fetch(after:from:)``), applies it there (``apply(_:)``: in one transaction of that
/// system, the work and its checkpoint moved from ``PendingHistoryBatch/previousToken`` to
/// ``PendingHistoryBatch/token`` by compare-and-set), then confirms it locally
/// (``PendingHistoryBatch/confirm(in:)`` saves the local checkpoint, so that cleanup keeps
/// history until it is applied).
///
/// A crash between applying and confirming leaves the local checkpoint behind: the next
/// step starts from the other system's checkpoint, so nothing is applied twice.
///
/// ```swift
/// struct Mirror: ExternalHistoryConsumer {
///     let author = "mirror"
///     let remote: RemoteStore
///
///     func externalCheckpoint() async throws -> HistoryToken? { try await remote.checkpoint() }
///
///     func fetch(after checkpoint: HistoryToken?, from store: HistoryStore) throws -> PendingHistoryBatch<HistoryBatch>? {
///         _ = try store.captureStatus()
///         let outcome = try store.databaseWriter.read { db in
///             try store.fetchBatch(as: author, after: checkpoint ?? .zero, in: db)
///         }
///         guard case let .consumed(batch) = outcome else { return nil } // (handle .needsResync too)
///         return PendingHistoryBatch(batch)
///     }
///
///     func apply(_ pending: PendingHistoryBatch<HistoryBatch>) async throws {
///         // UPDATE checkpoint SET token = pending.token WHERE token = pending.previousToken, with the writes
///         try await remote.apply(pending.payload, from: pending.previousToken, to: pending.token)
///     }
/// }
/// ```
public protocol ExternalHistoryConsumer: HistoryFollowingConsumer {
    /// What a fetched batch carries to ``apply(_:)`` (the batch, and rows read with it).
    associatedtype Payload: Sendable

    /// The token the other system's checkpoint holds, or `nil` if it holds none yet.
    func externalCheckpoint() async throws -> HistoryToken?

    /// On the runner's dedicated thread (it may block on SQLite): what follows `checkpoint`,
    /// or `nil` when nothing does.
    func fetch(after checkpoint: HistoryToken?, from store: HistoryStore) throws -> PendingHistoryBatch<Payload>?

    /// Applies `pending` to the other system: its work and its checkpoint, moved from
    /// `pending.previousToken` to `pending.token` only if it still holds `previousToken`
    /// (compare-and-set), in one transaction there. Throws if the checkpoint moved meanwhile.
    func apply(_ pending: PendingHistoryBatch<Payload>) async throws
}

/// A batch fetched for an ``ExternalHistoryConsumer``: applied elsewhere first, then confirmed
/// here with ``confirm(in:)``, which saves the local checkpoint.
public struct PendingHistoryBatch<Payload: Sendable>: Sendable {
    /// The consumer (author) whose checkpoint the confirmation saves.
    public let author: String
    /// The other system's checkpoint the batch follows (`nil`: it had none).
    public let previousToken: HistoryToken?
    /// The checkpoint once the batch is applied.
    public let token: HistoryToken
    /// What ``ExternalHistoryConsumer/apply(_:)`` applies.
    public let payload: Payload

    public init(author: String, previousToken: HistoryToken?, token: HistoryToken, payload: Payload) {
        self.author = author
        self.previousToken = previousToken
        self.token = token
        self.payload = payload
    }

    /// Saves ``token`` as the local checkpoint of ``author``, once the batch is applied
    /// elsewhere (blocking: the runner calls it on its thread).
    public func confirm(in store: HistoryStore) throws(SearchlightError) {
        try store.saveCheckpoint(token, for: author)
    }
}

extension PendingHistoryBatch where Payload == HistoryBatch {
    /// A pending batch carrying a batch of history (read with ``HistoryStore/fetchBatch(as:after:filter:batchSize:in:)``).
    public init(_ batch: HistoryBatch) {
        self.init(author: batch.consumer, previousToken: batch.previousToken, token: batch.token, payload: batch)
    }
}
