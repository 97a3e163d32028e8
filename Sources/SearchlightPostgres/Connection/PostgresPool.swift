import Foundation
import Logging
import PostgresNIO
import SearchlightHistory
import Synchronization

/// One bounded pool of PostgreSQL connections that many sinks share: a fleet's sinks (one per
/// database) hold at most ``maximumConnections`` connections together, whatever their number.
///
/// ```swift
/// let pool = try PostgresPool(endpoint: try PostgresEndpoint(url: "postgres://app@db/search"), maximumConnections: 4)
/// let sinks = try stores.map { store throws(SearchlightError) in try PostgresSink(store: store, pool: pool) }
/// // … run them; at the end:
/// pool.shutdown()
/// ```
///
/// The pool connects (and migrates the schema) once, when a sink first asks for it; a server
/// that cannot be reached, or a database or role that does not exist, is told then with one
/// line. After a connection-level failure (the server restarted, a backend was terminated, a
/// step made no progress for a minute) the sink that saw it asks for a new client
/// (``replace(generation:)``): the first such request of a client replaces it, the others,
/// from sinks that saw the same failure, find it replaced already. So sources do not restart
/// one by one, and connections the server terminated cannot leave a client that never hands
/// out another one. The old client is shut down before the new one connects: its connections
/// are closed first (those the server ended are gone already), so that the process never holds
/// more than ``maximumConnections``; a shutdown that does not end within a few seconds (a
/// connection the server dropped silently) is left to end by itself.
public final class PostgresPool: Sendable {
    public let endpoint: PostgresEndpoint
    /// The most connections the pool opens at once.
    public let maximumConnections: Int
    private let logger: Logger

    private struct State {
        var generation = 0
        /// The current client's session, once connected (or being connected).
        var connecting: Task<PostgresSession, any Error>?
        var runner: Task<Void, Never>?
        var closed = false
    }
    private let state = Mutex(State())
    /// At most ``maximumConnections`` connections in use, whatever the client (see ``PostgresSession/withConnection(_:)``).
    private let permits: ConnectionPermits

    /// A pool of at most `maximumConnections` (at least 1) connections to `endpoint`. Nothing
    /// connects until a sink asks for a session.
    public init(endpoint: PostgresEndpoint, maximumConnections: Int = 4,
                logger: Logger = Logger(label: "searchlight.postgres.pool")) throws(SearchlightError) {
        guard maximumConnections >= 1 else {
            throw SearchlightError(.invalidArgument, "invalid number of PostgreSQL connections \(maximumConnections): it must be at least 1")
        }
        self.endpoint = endpoint
        self.maximumConnections = maximumConnections
        self.logger = logger
        permits = ConnectionPermits(count: maximumConnections)
    }

    deinit {
        state.withLock { $0.runner?.cancel() }
    }

    /// A connected session of the current client, and its generation (for ``replace(generation:)``).
    struct Lease: Sendable {
        var session: PostgresSession
        var generation: Int
    }

    /// Connects now (and migrates the schema): a server that cannot be reached, or a database
    /// or role that does not exist, is told at once.
    public func connect() async throws(SearchlightError) {
        _ = try await lease()
    }

    /// The current client's session, connecting it first if it is new. Callers that ask at once
    /// share one connection attempt; a failed attempt is forgotten, so the next call tries again.
    func lease() async throws(SearchlightError) -> Lease {
        while true {
            do {
                return try await leaseOnce()
            } catch where error.code == .cancelled && !Task.isCancelled && !state.withLock({ $0.closed }) {
                // The attempt this caller awaited was cancelled by a replacement: connect anew.
                continue
            }
        }
    }

    private func leaseOnce() async throws(SearchlightError) -> Lease {
        let endpoint = endpoint, logger = logger, maximum = maximumConnections, permits = permits
        let (task, generation) = try state.withLock { state throws(SearchlightError) -> (Task<PostgresSession, any Error>, Int) in
            if state.closed { throw SearchlightError(.cancelled, "the PostgreSQL pool of \(endpoint.displayURL) is shut down") }
            if let connecting = state.connecting { return (connecting, state.generation) }
            let previous = state.runner
            let client = PostgresSession.makeClient(endpoint, maximumConnections: maximum)
            let runner = Task { await client.run() }
            state.runner = runner
            let task = Task { () throws -> PostgresSession in
                // The replaced client's connections close before this one opens any.
                if let previous { await Self.awaitEnd(of: previous, atMost: .seconds(5)) }
                var session = PostgresSession(client: client, endpoint: endpoint, logger: logger)
                session.permits = permits
                try await session.connect()
                try await PostgresSchema.migrate(session)
                return session
            }
            state.connecting = task
            return (task, state.generation)
        }
        do {
            return Lease(session: try await task.value, generation: generation)
        } catch {
            // Forget the failed attempt (unless another caller did, or the client was replaced).
            state.withLock { state in
                if state.generation == generation, state.connecting == task { state.connecting = nil }
            }
            throw PostgresErrors.wrap(error, doing: "PostgreSQL at \(endpoint.displayURL)")
        }
    }

    /// Replaces the client of `generation` after a connection-level failure: its run loop is
    /// cancelled (its connections close) and the next ``lease()`` connects a new one. A request
    /// for an older generation does nothing: another sink replaced it already.
    func replace(generation: Int) {
        state.withLock { state in
            guard state.generation == generation, !state.closed else { return }
            state.generation += 1
            state.connecting?.cancel()
            state.connecting = nil
            state.runner?.cancel()
            // `runner` stays: the next client waits for its end.
        }
        logger.info("PostgreSQL at \(endpoint.displayURL): a new client replaces the one whose connection failed")
    }

    /// Closes the current client (its connections close); the next ``lease()`` connects anew
    /// and migrates the schema again. A sink with a pool of its own does so after each run.
    func reset() {
        state.withLock { state in
            state.generation += 1
            state.connecting?.cancel()
            state.connecting = nil
            state.runner?.cancel()
        }
    }

    /// Closes the pool: its connections close, and sinks that still use it fail with `cancelled`.
    public func shutdown() {
        state.withLock { state in
            state.closed = true
            state.connecting?.cancel()
            state.connecting = nil
            state.runner?.cancel()
        }
    }

    /// Whether `error` says the connection (not the statement) failed: the client is replaced.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        switch error {
        case let error as SearchlightError:
            return error.underlyingError.map(isConnectionFailure) ?? false
        case is StepStalled, is ConnectionUnavailable, is ConnectionClosed, is CommitOutcomeUnknown, is NoAnswer:
            return true
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] {
                return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
            }
            return PostgresErrors.isTransient(error)
        default:
            // NIO's channel errors; SQLite's errors are not the connection's.
            return PostgresErrors.isTransient(error)
        }
    }

    /// Waits for `task` to end, `limit` at most (a shutdown that hangs is left to end by itself).
    private static func awaitEnd(of task: Task<Void, Never>, atMost limit: Duration) async {
        _ = try? await abandoning(after: limit, timeout: { NoAnswer(timeout: limit) }) { await task.value }
    }
}
