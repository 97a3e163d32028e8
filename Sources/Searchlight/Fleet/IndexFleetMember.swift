import Foundation
import GRDB
import Logging
import SearchlightHistory
import Synchronization

/// The indexer of one database of a ``Fleet``: what `searchlight watch --dbs GLOB` runs for each
/// matching file.
///
/// A member is light until it works: a check reads the head token, the index's checkpoint and
/// the schema version (``ConsumerPosition``), through a read-only connection opened for it
/// unless the member holds its database open; a turn opens the database with the model `init` saved there and indexes at most
/// ``batchesPerTurn`` batches, on a thread of its own; a member idle for a while lets its
/// database go (``release()``), after it wrote the WAL back into the file (``writeBack()``), so
/// that the file alone holds every commit once nobody has it open.
///
/// ```swift
/// let fleet = Fleet(glob: try DatabaseGlob("tenants/*.sqlite")) { path throws(SearchlightError) in
///     try await IndexFleetMember.open(path: path)
/// }
/// ```
public final class IndexFleetMember: FleetMember {
    public let path: String
    /// Batches a turn may index before the next database's turn.
    public let batchesPerTurn: Int
    private let storeConfiguration: HistoryStore.Configuration
    private let indexerConfiguration: Indexer.Configuration
    private struct Open { var store: HistoryStore; var indexer: Indexer }
    private let open = Mutex<Open?>(nil)
    private let schemaVersion = Mutex<Int?>(nil)

    /// Checks that the database has Searchlight set up (a read, nothing opened for good).
    public init(path: String, storeConfiguration: HistoryStore.Configuration = .init(),
                indexerConfiguration: Indexer.Configuration = .init(), batchesPerTurn: Int = 8) throws(SearchlightError) {
        self.path = path
        self.batchesPerTurn = max(1, batchesPerTurn)
        self.storeConfiguration = storeConfiguration
        self.indexerConfiguration = indexerConfiguration
        _ = try ConsumerPosition.read(consumer: indexerConfiguration.author, at: path)
    }

    /// The same, its check made on a thread of its own (what a fleet's `open` closure calls:
    /// it runs on Swift's cooperative pool, which must not wait for SQLite).
    public static func open(path: String, storeConfiguration: HistoryStore.Configuration = .init(),
                            indexerConfiguration: Indexer.Configuration = .init(), batchesPerTurn: Int = 8) async throws(SearchlightError) -> IndexFleetMember {
        try await DedicatedThread.run(name: "searchlight.fleet.open") { _ throws(SearchlightError) in
            try IndexFleetMember(path: path, storeConfiguration: storeConfiguration, indexerConfiguration: indexerConfiguration,
                                 batchesPerTurn: batchesPerTurn)
        }
    }

    public func hasPendingWork() async throws(SearchlightError) -> Bool {
        try await ConsumerPosition.hasWork(consumer: indexerConfiguration.author, at: path, store: open.withLock { $0?.store },
                                           lastSchemaVersion: schemaVersion)
    }

    /// Read under the database's write lock, taken without waiting, while the member holds its
    /// database open (nil otherwise, or while another writer holds the lock).
    public func settledPendingWork() async throws(SearchlightError) -> Bool? {
        guard let store = open.withLock({ $0?.store }) else { return nil }
        return try await ConsumerPosition.settledWork(consumer: indexerConfiguration.author, in: store, lastSchemaVersion: schemaVersion)
    }

    public func step() async throws(SearchlightError) -> Bool {
        let opened = try await opened()
        let summary = try await opened.indexer.indexPendingChanges(maximumBatches: batchesPerTurn)
        if summary.isCaughtUp {
            // Idle from now on, until the next write: its connections keep the schema, not the
            // pages and statements of the turn (a member of a fleet of thousands may stay open
            // for many turns of the others).
            let store = opened.store
            await DedicatedThread.run(name: "searchlight.fleet.trim") { _ in store.dbPool.releaseMemory() }
        }
        return summary.isCaughtUp
    }

    /// Checkpoints the WAL into the database and empties it, without waiting for a lock.
    public func writeBack() async {
        guard let store = open.withLock({ $0?.store }) else { return }
        _ = try? await ConsumerPosition.checkpoint(store)
    }

    /// Lets the database go; the next turn opens it again.
    public func release() async {
        await letGo()
    }

    public func close() async {
        await letGo()
    }

    /// Drops the store and its indexer on a thread of their own.
    private func letGo() async {
        await DedicatedThread.letGo(takingFrom: open, name: "searchlight.fleet.close")
    }

    /// The store and its indexer, opened on a thread of their own the first time.
    private func opened() async throws(SearchlightError) -> Open {
        if let current = open.withLock({ $0 }) { return current }
        let (path, storeConfiguration, indexerConfiguration) = (self.path, self.storeConfiguration, self.indexerConfiguration)
        let made = try await DedicatedThread.run(name: "searchlight.fleet.open") { _ throws(SearchlightError) in
            let store = try HistoryStore(path: path, configuration: storeConfiguration)
            return Open(store: store, indexer: try Indexer(store: store, configuration: indexerConfiguration))
        }
        open.withLock { $0 = made }
        return made
    }
}
