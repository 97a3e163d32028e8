import GRDB
import GRDBSQLite
import Synchronization

/// Counts the SQLite VM instructions run on every connection it is installed on (a progress
/// handler with a period of one instruction): work counted, never timed, so that a test of
/// cost holds on a loaded machine.
///
/// ```swift
/// let counter = StepCounter()
/// var configuration = HistoryStore.databaseConfiguration()
/// configuration.prepareDatabase { db in counter.install(db) }
/// let steps = try counter.count { try search() }
/// ```
public final class StepCounter: Sendable {
    private let steps = Atomic<Int>(0)

    public init() {}

    public func install(_ db: Database) {
        sqlite3_progress_handler(db.sqliteConnection, 1, { context in
            Unmanaged<StepCounter>.fromOpaque(context!).takeUnretainedValue().steps.add(1, ordering: .relaxed)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The instructions counted so far.
    public var count: Int { steps.load(ordering: .relaxed) }

    /// The instructions that `body` ran.
    public func count(_ body: () throws -> Void) rethrows -> Int {
        let start = count
        try body()
        return count - start
    }
}
