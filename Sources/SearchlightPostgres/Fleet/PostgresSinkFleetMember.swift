import Foundation
import Logging
import SearchlightHistory
import Synchronization

/// The sink of one database of a ``Fleet``: what `searchlight-postgres sink --dbs GLOB` runs for
/// each matching file. Every member's sink takes its connections from one shared
/// ``PostgresPool``, so that the fleet holds at most the pool's connections.
///
/// A member keeps every guarantee of a ``PostgresSink`` (exactly once, the lineage check,
/// adopting batches, resyncs): its turn is up to ``stepsPerTurn`` steps of that sink. A check
/// reads the head token, the sink's checkpoint and the schema version (``ConsumerPosition``),
/// through a read-only connection opened for it unless the member holds its database open; a
/// member idle for a while lets its database go (``release()``), and its next turn opens it
/// again, after it wrote the WAL back into the file (``writeBack()``), as
/// ``Searchlight/IndexFleetMember`` does.
///
/// ```swift
/// let pool = try PostgresPool(endpoint: endpoint, maximumConnections: 4)
/// let fleet = Fleet(glob: try DatabaseGlob("tenants/*.sqlite")) { path throws(SearchlightError) in
///     try await PostgresSinkFleetMember.open(path: path, pool: pool)
/// }
/// ```
public final class PostgresSinkFleetMember: FleetMember {
    public let path: String
    public let pool: PostgresPool
    /// The source's name in PostgreSQL (the database's source id).
    public let source: String
    /// Steps (batches, resyncs) a turn may take before the next database's turn.
    public let stepsPerTurn: Int
    private let storeConfiguration: HistoryStore.Configuration
    private let sinkConfiguration: PostgresSink.Configuration
    private let sink = Mutex<PostgresSink?>(nil)
    private let schemaVersion = Mutex<Int?>(nil)

    private init(path: String, pool: PostgresPool, source: String, sink: PostgresSink, stepsPerTurn: Int,
                 storeConfiguration: HistoryStore.Configuration, sinkConfiguration: PostgresSink.Configuration) {
        self.path = path
        self.pool = pool
        self.source = source
        self.stepsPerTurn = max(1, stepsPerTurn)
        self.storeConfiguration = storeConfiguration
        self.sinkConfiguration = sinkConfiguration
        self.sink.withLock { $0 = sink }
    }

    /// Opens the database at `path` (on a thread of its own) and makes its sink: throws for a
    /// database that is missing, not set up or not a database. `sinkConfiguration.source` is
    /// ignored: each database is the source its id names.
    public static func open(path: String, pool: PostgresPool, storeConfiguration: HistoryStore.Configuration = .init(),
                            sinkConfiguration: PostgresSink.Configuration = .init(), stepsPerTurn: Int = 8) async throws(SearchlightError) -> PostgresSinkFleetMember {
        var configuration = sinkConfiguration
        configuration.source = nil
        let sinkConfiguration = configuration
        let sink = try await makeSink(path: path, pool: pool, storeConfiguration: storeConfiguration, sinkConfiguration: sinkConfiguration)
        return PostgresSinkFleetMember(path: path, pool: pool, source: sink.source, sink: sink, stepsPerTurn: stepsPerTurn,
                                       storeConfiguration: storeConfiguration, sinkConfiguration: sinkConfiguration)
    }

    public func hasPendingWork() async throws(SearchlightError) -> Bool {
        try await ConsumerPosition.hasWork(consumer: "searchlight.postgres.\(source)", at: path, store: sink.withLock { $0?.store },
                                           lastSchemaVersion: schemaVersion)
    }

    /// Read under the database's write lock, taken without waiting, while the member holds its
    /// database open (nil otherwise, or while another writer holds the lock).
    public func settledPendingWork() async throws(SearchlightError) -> Bool? {
        guard let store = sink.withLock({ $0?.store }) else { return nil }
        return try await ConsumerPosition.settledWork(consumer: "searchlight.postgres.\(source)", in: store, lastSchemaVersion: schemaVersion)
    }

    public func step() async throws(SearchlightError) -> Bool {
        let sink = try await opened()
        let caughtUp = try await sink.turn(maximumSteps: stepsPerTurn)
        if caughtUp {
            // As the index's member does: a member that caught up keeps no page or statement
            // caches of its turn (a fleet of thousands keeps many open between their turns).
            let store = sink.store
            await DedicatedThread.run(name: "searchlight.fleet.trim") { _ in store.dbPool.releaseMemory() }
        }
        return caughtUp
    }

    /// Checkpoints the WAL into the database and empties it, without waiting for a lock.
    public func writeBack() async {
        guard let store = sink.withLock({ $0?.store }) else { return }
        _ = try? await ConsumerPosition.checkpoint(store)
    }

    public func release() async {
        await letGo()
    }

    public func close() async {
        await letGo()
    }

    /// Drops the sink and its store on a thread of their own.
    private func letGo() async {
        await DedicatedThread.letGo(takingFrom: sink, name: "searchlight.fleet.close")
    }

    /// The sink, its database opened again (on a thread of its own) after a release. A file
    /// replaced meanwhile by another source's is refused: the fleet opens a member of it anew.
    private func opened() async throws(SearchlightError) -> PostgresSink {
        if let current = sink.withLock({ $0 }) { return current }
        let made = try await Self.makeSink(path: path, pool: pool, storeConfiguration: storeConfiguration, sinkConfiguration: sinkConfiguration)
        guard made.source == source else {
            throw SearchlightError(.databaseReplaced, "\(UserText.shown(path, limit: 200)) is source \(made.source) now, not \(source): the file was replaced")
        }
        sink.withLock { $0 = made }
        return made
    }

    private static func makeSink(path: String, pool: PostgresPool, storeConfiguration: HistoryStore.Configuration,
                                 sinkConfiguration: PostgresSink.Configuration) async throws(SearchlightError) -> PostgresSink {
        try await DedicatedThread.run(name: "searchlight.fleet.open") { _ throws(SearchlightError) in
            guard FileManager.default.fileExists(atPath: path) else {
                throw SearchlightError(.databaseNotFound, "no database at \(UserText.shown(path, limit: 200))")
            }
            let store = try HistoryStore(path: path, configuration: storeConfiguration)
            return try PostgresSink(store: store, pool: pool, configuration: sinkConfiguration)
        }
    }
}
