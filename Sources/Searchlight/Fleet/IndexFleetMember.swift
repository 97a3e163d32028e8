import Foundation
import GRDB
import Logging
import SearchlightHistory
import Synchronization

/// The indexer of one database of a ``Fleet``: what `searchlight watch --dbs GLOB` runs for each
/// matching file.
///
/// Opening it opens the database with the model `init` saved there (a file that is not set up
/// fails, and the fleet tries it again later). A check reads the head token, the index's
/// checkpoint and the schema version (a remade table has no new history but must be healed); a
/// turn indexes at most ``batchesPerTurn`` batches, on a thread of its own.
///
/// ```swift
/// let fleet = Fleet(glob: try DatabaseGlob("tenants/*.sqlite")) { path throws(SearchlightError) in
///     try IndexFleetMember(path: path)
/// }
/// ```
public final class IndexFleetMember: FleetMember {
    public let store: HistoryStore
    public let indexer: Indexer
    /// Batches a turn may index before the next database's turn.
    public let batchesPerTurn: Int
    private let schemaVersion = Mutex<Int?>(nil)

    public init(path: String, storeConfiguration: HistoryStore.Configuration = .init(),
                indexerConfiguration: Indexer.Configuration = .init(), batchesPerTurn: Int = 8) throws(SearchlightError) {
        self.batchesPerTurn = max(1, batchesPerTurn)
        store = try HistoryStore(path: path, configuration: storeConfiguration)
        indexer = try Indexer(store: store, configuration: indexerConfiguration)
    }

    public func hasPendingWork() async throws(SearchlightError) -> Bool {
        let (head, indexed, version) = try await IndexFollower.run(name: "searchlight.fleet.check") { [store, indexer] _ throws(SearchlightError) in
            let version = try SearchlightError.catching("cannot read the schema version of \(store.databaseWriter.path)") {
                try store.databaseWriter.read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") }
            }
            return (try store.currentToken(), try indexer.indexedToken(), version)
        }
        let schemaChanged = schemaVersion.withLock { last in
            defer { last = version }
            return last != nil && last != version
        }
        return head > indexed || schemaChanged
    }

    public func step() async throws(SearchlightError) -> Bool {
        let summary = try await indexer.indexPendingChanges(maximumBatches: batchesPerTurn)
        return summary.isCaughtUp
    }

    public func close() async {}
}
