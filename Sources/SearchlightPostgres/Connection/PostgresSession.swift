import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import SearchlightHistory
import Synchronization

/// A PostgreSQL client for the length of one operation: its run loop lives in a child task, and
/// the first connection is made (and the schema migrated) before `body` runs, so that a server
/// that cannot be reached fails at once with one line.
///
/// ```swift
/// try await PostgresSession.with(endpoint, logger: logger) { session in
///     try await session.transaction { connection in try await connection.query("SELECT 1", logger: logger) }
/// }
/// ```
struct PostgresSession: Sendable {
    let client: PostgresClient
    let endpoint: PostgresEndpoint
    let logger: Logger
    /// When the session last made progress (a connection handed out or given back, a chunk of a
    /// snapshot sent): a sink gives up on a step that made none for a while.
    var progress = ProgressClock()
    /// Who waits on which connection, to be told when its channel closes (one per client).
    var closes = ConnectionCloseWatch()
    /// A shared pool's permits: at most its number of connections in use at once.
    var permits: ConnectionPermits?

    /// The quoted schema name, for statements.
    var schema: String { PostgresSchema.quoted(endpoint.schema) }

    /// Runs `body` with a connected client; migrates the schema first when `migrate` is true,
    /// checks that it is there and of a version this release reads otherwise (unless
    /// `checkSchema` is false: search tells a missing schema itself).
    static func with<T: Sendable>(_ endpoint: PostgresEndpoint, logger: Logger, migrate: Bool, checkSchema: Bool = true,
                                  _ body: @Sendable (PostgresSession) async throws -> T) async throws(SearchlightError) -> T {
        let client = makeClient(endpoint, maximumConnections: 4)
        let session = PostgresSession(client: client, endpoint: endpoint, logger: logger)
        // The client's run loop in a task of its own, cancelled (not awaited) at the end: its
        // shutdown can hang on connections the server terminated (see ``abandoning``).
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        do {
            try await session.connect()
            if migrate {
                try await PostgresSchema.migrate(session)
            } else if checkSchema {
                try await PostgresSchema.check(session)
            }
            return try await body(session)
        } catch {
            throw PostgresErrors.wrap(error, doing: "PostgreSQL at \(endpoint.displayURL)")
        }
    }

    /// A client of at most `maximumConnections` connections (its run loop not started).
    static func makeClient(_ endpoint: PostgresEndpoint, maximumConnections: Int) -> PostgresClient {
        var configuration = endpoint.configuration
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 0
        return PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "searchlight.postgres.client",
                                                                                   factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// This session for one user of a shared client: its own progress clock (a sink's step is
    /// given up when *it* makes no progress) and logger.
    func forUser(logger: Logger) -> PostgresSession {
        var session = PostgresSession(client: client, endpoint: endpoint, logger: logger)
        session.closes = closes
        session.permits = permits
        return session
    }

    /// The first connection, within the connect timeout (the pool would otherwise wait for a
    /// server that never answers).
    func connect() async throws(SearchlightError) {
        let timeout = endpoint.configuration.options.connectTimeout + .seconds(2)
        let client = client
        let logger = logger
        let probe = probe
        do {
            try await abandoning(after: timeout, timeout: { NoAnswer(timeout: timeout) }) {
                let probed = try await probe()
                try await client.withConnection { connection in
                    _ = try await connection.query("SELECT 1", logger: logger)
                    // The probe's backend ends a moment after its connection closed: the pool
                    // opens no second connection before it is gone, so that a client of N
                    // connections never adds one more (a few milliseconds; 2 s at most).
                    guard let probed else { return }
                    let deadline = ContinuousClock.now + .seconds(2)
                    while ContinuousClock.now < deadline {
                        var alive = 0
                        let rows = try await connection.query("SELECT count(*)::int FROM pg_stat_activity WHERE pid = \(probed)", logger: logger)
                        for try await count in rows.decode(Int.self) { alive = count }
                        if alive == 0 { return }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
            }
        } catch {
            throw SearchlightError(.postgresError, "cannot connect to PostgreSQL at \(endpoint.displayURL): \(PostgresErrors.describe(error))",
                                   underlyingError: error)
        }
    }

    /// One direct connection, closed at once: a refused connection, an unknown host, a wrong
    /// password or database is told right away and by name (the pool would retry quietly until
    /// the timeout). Returns the probe's backend pid.
    @Sendable private func probe() async throws -> Int32? {
        let pool = endpoint.configuration
        guard let host = pool.host, let port = pool.port else { return nil }
        let tls: PostgresConnection.Configuration.TLS
        switch endpoint.tlsMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        let configuration = PostgresConnection.Configuration(host: host, port: port, username: pool.username, password: pool.password,
                                                             database: pool.database, tls: tls)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            var pid: Int32?
            if let rows = try? await connection.query("SELECT pg_backend_pid()", logger: logger) {
                for try await value in rows.decode(Int32.self) { pid = value }
            }
            try? await connection.close()
            return pid
        } catch let error as PSQLError where error.serverInfo == nil {
            if let underlying = error.underlying as? NIOConnectionError { throw Self.reason(underlying, host: host) }
            throw error
        }
    }

    /// What went wrong connecting, in a few words.
    private static func reason(_ error: NIOConnectionError, host: String) -> SearchlightError {
        if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
            return SearchlightError(.postgresError, "unknown host \(host)", underlyingError: error)
        }
        let reasons = Set(error.connectionErrors.map { failure -> String in
            if let io = failure.error as? IOError {
                switch io.errnoCode {
                case ECONNREFUSED: return "connection refused"
                case ENETUNREACH, EHOSTUNREACH: return "host unreachable"
                default: return String(cString: strerror(io.errnoCode))
                }
            }
            return "\(failure.error)"
        })
        return SearchlightError(.postgresError, reasons.sorted().joined(separator: ", "), underlyingError: error)
    }

    /// A connection of the pool for `body`, within the connect timeout: a pool whose connections
    /// were terminated under it (a server restart, `pg_terminate_backend`) may never hand one out
    /// again, and waiting for it would hang the sink. Past the timeout this throws
    /// ``ConnectionUnavailable``; the sink then starts over with a new client.
    ///
    /// If the connection's channel closes while `body` runs (the server crashed or was stopped:
    /// the pool may even hand out a connection whose close it has not yet heard of), `body` is
    /// given up at once with ``ConnectionClosed``: postgres-nio drops a query written to a closed
    /// channel without ever failing it, and waiting for it hung a sink until its step was given
    /// up a minute later. Whatever `body` did is then unknown, as after an error in `COMMIT`.
    ///
    /// With ``permits`` (a shared pool), a permit is taken first, without a bound on the wait
    /// (other sinks hold every connection; that is no failure, and not a stall either), so the
    /// client always has a connection to give within the timeout.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        if let permits {
            progress.waiting(true)
            defer { progress.waiting(false) }
            try await permits.acquire()
        }
        defer { permits?.release() }
        let client = client
        let acquired = AtomicFlag()
        let timeout = endpoint.configuration.options.connectTimeout + .seconds(2)
        let closes = closes
        do {
            return try await abandoning(after: timeout, unless: { acquired.isSet }, timeout: { ConnectionUnavailable(timeout: timeout) }) {
                try await client.withConnection { [progress] connection in
                    acquired.set()
                    progress.touch()
                    defer { progress.touch() }
                    return try await closes.abandoningOnClose(connection) { try await body(connection) }
                }
            }
        } catch let error where !acquired.isSet && !(error is ConnectionUnavailable) && !(error is CancellationError) {
            // The pool handed out no connection (its circuit breaker tripped, it closed…): as
            // unavailable as a lease that never came; the next session's probe says why.
            throw ConnectionUnavailable(timeout: timeout, underlying: error)
        }
    }

    /// Runs `body` in a transaction: `BEGIN`, body, `COMMIT`; `ROLLBACK` if body throws. An
    /// error while committing is thrown as ``CommitOutcomeUnknown``: the transaction may or may
    /// not have committed, and only reading the database back tells.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let logger = logger
        return try await withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            let result: T
            do {
                result = try await body(connection)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            do {
                try await connection.query("COMMIT", logger: logger)
            } catch {
                throw CommitOutcomeUnknown(underlying: error)
            }
            return result
        }
    }
}

/// The last instant something made progress.
final class ProgressClock: Sendable {
    private let last = Mutex((instant: ContinuousClock.now, waiting: 0))
    func touch() { last.withLock { $0.instant = .now } }
    /// Starts or ends a wait that is not a stall (for a connection other sinks hold); its end
    /// counts as progress.
    func waiting(_ started: Bool) {
        last.withLock { state in
            state.waiting += started ? 1 : -1
            state.instant = .now
        }
    }
    /// How long since the last progress (zero while waiting for a connection).
    var age: Duration {
        let (instant, waiting) = last.withLock { ($0.instant, $0.waiting) }
        return waiting > 0 ? .zero : ContinuousClock.now - instant
    }
}

/// The pool handed out no connection within the timeout.
struct ConnectionUnavailable: Error, CustomStringConvertible {
    var timeout: Duration
    /// What the pool threw instead of handing one out, if it did.
    var underlying: (any Error)?
    var description: String {
        if let underlying { return "the pool handed out no connection to PostgreSQL: \(PostgresErrors.describe(underlying))" }
        return "no connection to PostgreSQL within \(timeout)"
    }
}

/// The first connection was not made within the connect timeout.
struct NoAnswer: Error, CustomStringConvertible {
    var timeout: Duration
    var description: String { "no answer within \(timeout)" }
}

/// `COMMIT` failed (the connection dropped, the backend was terminated, the server restarted):
/// whether the transaction committed is unknown until the database is read back.
struct CommitOutcomeUnknown: Error, CustomStringConvertible {
    var underlying: any Error
    var description: String { "the outcome of COMMIT is unknown: \(PostgresErrors.describe(underlying))" }
}

/// The pool's connection closed while it was in use.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the connection to PostgreSQL closed (the server stopped, crashed or ended it)" }
}

/// Tells operations on a connection that its channel closed: one callback on each connection's
/// `closeFuture` (registered at its first use, kept until it closes), whatever the number of
/// operations that used it.
final class ConnectionCloseWatch: Sendable {
    private struct State {
        /// By connection id: the operations running on it now (by a number of their own), or
        /// nil once it closed.
        var watched: [Int: [Int: @Sendable () -> Void]?] = [:]
        var next = 0
    }
    private let state = Mutex(State())

    /// Runs `operation` in a task of its own; if `connection` closes before it ends, throws
    /// ``ConnectionClosed`` without waiting for it (it is cancelled and left to end by itself,
    /// as ``abandoning(after:unless:timeout:sleep:_:)`` does).
    func abandoningOnClose<T: Sendable>(_ connection: PostgresConnection,
                                         _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await operation() }
        let outcome = OnceContinuation<T>()
        let closed: @Sendable () -> Void = { if outcome.resume(.failure(ConnectionClosed())) { task.cancel() } }
        let (key, first, alreadyClosed) = state.withLock { state -> (Int, Bool, Bool) in
            state.next += 1
            let key = state.next
            switch state.watched[connection.id] {
            case .none:
                state.watched[connection.id] = [key: closed]
                return (key, true, false)
            case .some(.none):
                return (key, false, true)
            case .some(.some(var waiters)):
                waiters[key] = closed
                state.watched[connection.id] = waiters
                return (key, false, false)
            }
        }
        if alreadyClosed { closed() }
        if first {
            let id = connection.id
            connection.closeFuture.whenComplete { _ in self.closed(id) }
        }
        defer {
            state.withLock { state in
                if case .some(.some(var waiters)) = state.watched[connection.id] {
                    waiters[key] = nil
                    state.watched[connection.id] = waiters
                }
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                outcome.set(continuation)
                Task {
                    do { outcome.resume(.success(try await task.value)) } catch { outcome.resume(.failure(error)) }
                }
            }
        } onCancel: {
            task.cancel() // the operation ends by itself (a closed connection ends it as above)
        }
    }

    /// Connection `id` closed: tells the operations on it, and those to come.
    private func closed(_ id: Int) {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            defer { state.watched[id] = .some(nil) }
            return state.watched[id].flatMap { $0 }.map { Array($0.values) } ?? []
        }
        for waiter in waiters { waiter() }
    }
}

