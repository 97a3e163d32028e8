import Foundation
import Logging
import SearchlightHistory

/// Every database of a ``DatabaseGlob`` sunk into PostgreSQL by one process: what
/// `searchlight-postgres sink --dbs GLOB` runs. One ``Fleet`` of ``PostgresSinkFleetMember``s
/// over one ``PostgresPool``: databases that appear are picked up and removed ones dropped; at
/// most ``Configuration/concurrency`` sources work at once, in turns; the whole process holds at
/// most ``Configuration/connections`` PostgreSQL connections. A database that is not set up,
/// locked, corrupt or deleted mid-run gets one log line and a later retry; the others go on.
///
/// ```swift
/// let fleet = try PostgresSinkFleet(glob: try DatabaseGlob("tenants/*.sqlite"), endpoint: endpoint)
/// let following = Task { try await fleet.run() }   // until cancelled
/// ```
public final class PostgresSinkFleet: Sendable {
    public struct Configuration: Sendable {
        /// Sources that work at once.
        public var concurrency = 4
        /// PostgreSQL connections of the whole process.
        public var connections = 4
        /// What each source's sink does (its `source` is ignored: each database is the source
        /// its id names).
        public var sink = PostgresSink.Configuration()
        /// Steps (batches, resyncs) of one source before the next source's turn.
        public var stepsPerTurn = 8
        /// The fleet's own lines (databases picked up, dropped, failing, working again).
        public var logger = Logger(label: "searchlight.postgres.fleet")
        /// The scheduling (folder rescans, retries of failing databases); `concurrency` and
        /// `logger` above replace its own.
        public var fleet = Fleet<PostgresSinkFleetMember>.Configuration()

        public init() {}
    }

    public let glob: DatabaseGlob
    public let pool: PostgresPool
    public let configuration: Configuration
    private let fleet: Fleet<PostgresSinkFleetMember>

    /// Throws `invalidArgument` for fewer than one connection or source at once.
    public init(glob: DatabaseGlob, endpoint: PostgresEndpoint, configuration: Configuration = .init()) throws(SearchlightError) {
        guard configuration.concurrency >= 1 else {
            throw SearchlightError(.invalidArgument, "invalid concurrency \(configuration.concurrency): at least one source must work at once")
        }
        self.glob = glob
        self.configuration = configuration
        let pool = try PostgresPool(endpoint: endpoint, maximumConnections: configuration.connections, logger: configuration.logger)
        self.pool = pool
        var scheduling = configuration.fleet
        scheduling.concurrency = configuration.concurrency
        scheduling.logger = configuration.logger
        let sink = configuration.sink, steps = configuration.stepsPerTurn
        fleet = Fleet(glob: glob, configuration: scheduling) { path throws(SearchlightError) in
            // Every line of a source says which database it is about.
            var store = HistoryStore.Configuration()
            store.logger[metadataKey: "db"] = "\(path)"
            var sinkConfiguration = sink
            sinkConfiguration.logger[metadataKey: "db"] = "\(path)"
            return try await PostgresSinkFleetMember.open(path: path, pool: pool, storeConfiguration: store,
                                                          sinkConfiguration: sinkConfiguration, stepsPerTurn: steps)
        }
    }

    /// Each database now, sorted by path: whether it is open, and its last failure.
    public func members() -> [Fleet<PostgresSinkFleetMember>.MemberStatus] { fleet.members() }

    /// Follows every database until the calling task is cancelled, then closes the pool.
    ///
    /// - Throws: before following, a folder that cannot be read, or a server that refuses this
    ///   database or role (a server that cannot be reached now is logged, and retried by each
    ///   source).
    public func run() async throws(SearchlightError) {
        defer { pool.shutdown() }
        _ = try glob.matchingPaths() // an unreadable folder is told at once
        do {
            try await pool.connect()
        } catch where PostgresSink.isRetryable(error) {
            configuration.logger.warning("\(error.message); each source tries again later")
        }
        configuration.logger.info("sinking \(glob) into PostgreSQL at \(pool.endpoint.displayURL) (at most \(pool.maximumConnections) connection\(pool.maximumConnections == 1 ? "" : "s"))")
        await fleet.run()
    }
}
