import Foundation
import GRDB
import Logging
import SearchlightHistory
import Synchronization

/// The indexer of one database of a ``Fleet``: what `searchlight watch --dbs GLOB` runs for each
/// matching file.
///
/// A member is light until it works: a check reads the head token, the index's checkpoint and
/// the schema version through a read-only connection opened for it (``ConsumerPosition``); a
/// turn opens the database with the model `init` saved there and indexes at most
/// ``batchesPerTurn`` batches, on a thread of its own; a member idle for a while lets its
/// database go (``release()``).
///
/// ```swift
/// let fleet = Fleet(glob: try DatabaseGlob("tenants/*.sqlite")) { path throws(SearchlightError) in
///     try IndexFleetMember(path: path)
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

    public func hasPendingWork() async throws(SearchlightError) -> Bool {
        let author = indexerConfiguration.author
        let path = self.path
        let position = try await DedicatedThread.run(name: "searchlight.fleet.check") { _ throws(SearchlightError) in
            try ConsumerPosition.read(consumer: author, at: path)
        }
        let schemaChanged = schemaVersion.withLock { last in
            defer { last = position.schemaVersion }
            return last != nil && last != position.schemaVersion
        }
        return position.isBehind || schemaChanged
    }

    public func step() async throws(SearchlightError) -> Bool {
        let indexer = try await opened().indexer
        let summary = try await indexer.indexPendingChanges(maximumBatches: batchesPerTurn)
        return summary.isCaughtUp
    }

    /// Lets the database go; the next turn opens it again.
    public func release() async {
        open.withLock { $0 = nil }
    }

    public func close() async {
        open.withLock { $0 = nil }
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
