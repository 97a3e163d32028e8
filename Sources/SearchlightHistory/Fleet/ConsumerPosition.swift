import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Where a consumer stands in a database's history, read without opening a ``HistoryStore``:
/// what a fleet reads to decide whether a database it keeps closed has work.
public struct ConsumerPosition: Sendable, Hashable {
    /// The newest committed token.
    public var head: HistoryToken
    /// The consumer's checkpoint, if it saved one.
    public var checkpoint: HistoryToken?
    /// SQLite's `PRAGMA schema_version`: it changes with every schema change (a table the app
    /// remade must be healed though it brought no history).
    public var schemaVersion: Int

    /// Whether history follows the checkpoint (or there is no checkpoint).
    public var isBehind: Bool { checkpoint.map { $0 < head } ?? true }

    /// Reads the position of `consumer` in the database at `path` through a read-only
    /// connection opened and closed for it (it takes no lock a writer waits for, and never
    /// changes the file).
    ///
    /// - Throws: ``SearchlightError/Code-swift.struct/databaseNotFound``,
    ///   ``SearchlightError/Code-swift.struct/notADatabase``, or
    ///   ``SearchlightError/Code-swift.struct/notInstalled`` for a database without history.
    public static func read(consumer: String, at path: String) throws(SearchlightError) -> ConsumerPosition {
        guard FileManager.default.fileExists(atPath: path) else {
            throw SearchlightError(.databaseNotFound, "no database at \(UserText.shown(path, limit: 200))")
        }
        return try SearchlightError.catching("cannot read the history position of \(path)") {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(10)
            // A read-only connection opened just as the last writer closes (and removes the -wal
            // and -shm files) can get an I/O error: tried again, twice.
            var attempt = 0
            while true {
                do {
                    let queue = try DatabaseQueue(path: path, configuration: configuration)
                    return try queue.read { db in try read(consumer: consumer, path: path, db) }
                } catch let error as DatabaseError where error.resultCode == .SQLITE_IOERR && attempt < 2 {
                    attempt += 1
                    usleep(10_000)
                }
            }
        }
    }

    /// The position, read in `db` (in a read transaction).
    private static func read(consumer: String, path: String, _ db: Database) throws -> ConsumerPosition {
        guard try HistorySchema.isInstalled(db) else {
            throw SearchlightError(.notInstalled, "\(path) has no Searchlight setup; install it with a model first")
        }
        return ConsumerPosition(head: try HistoryLog.headToken(db), checkpoint: try ConsumerLog.token(for: consumer, db),
                                schemaVersion: try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0)
    }

    /// The position, read through the writer connection of an open store (a read transaction:
    /// no write lock is taken). A fleet member's turn uses it: after a release of its caches
    /// the store's readers are closed, and its writer stays open.
    package static func read(consumer: String, in store: HistoryStore) throws(SearchlightError) -> ConsumerPosition {
        let path = store.dbPool.path
        return try SearchlightError.catching("cannot read the history position of \(path)") {
            try store.dbPool.writeWithoutTransaction { db in
                var position = ConsumerPosition(head: .zero, checkpoint: nil, schemaVersion: 0)
                try db.inTransaction(.deferred) {
                    position = try read(consumer: consumer, path: path, db)
                    return .commit
                }
                return position
            }
        }
    }

    /// The position, read through the writer connection of an open store inside a write
    /// transaction (taken without waiting, and rolled back): any commit whose write happened
    /// before the call is visible, since a writer holds the lock until its commit is. nil when
    /// another writer holds the lock now.
    package static func readSettled(consumer: String, in store: HistoryStore) throws(SearchlightError) -> ConsumerPosition? {
        let path = store.dbPool.path
        return try SearchlightError.catching("cannot read the history position of \(path)") {
            try withoutWaiting(store) { db -> ConsumerPosition? in
                var position: ConsumerPosition?
                do {
                    try db.inTransaction(.immediate) {
                        position = try read(consumer: consumer, path: path, db)
                        return .rollback
                    }
                } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                    return nil
                }
                return position
            }
        }
    }

    /// Writes the WAL of an open store back into its database and empties it
    /// (`wal_checkpoint(TRUNCATE)`), without waiting for a lock, on a thread of its own: a fleet
    /// member does it before it lets its database go, so that the file alone holds every commit
    /// (a copy or a move of it loses nothing, and no -wal is left to be replayed over another
    /// file moved in under its name). Returns whether it completed (another connection reading
    /// or writing can keep it from it: SQLite's checkpoint when the last connection closes then
    /// does it).
    package static func checkpoint(_ store: HistoryStore) async throws(SearchlightError) -> Bool {
        try await DedicatedThread.run(name: "searchlight.fleet.checkpoint") { _ throws(SearchlightError) in
            let path = store.dbPool.path
            return try SearchlightError.catching("cannot checkpoint \(path)") {
                try withoutWaiting(store) { db -> Bool in
                    do {
                        let (log, done) = try db.checkpoint(.truncate)
                        return log == done
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                        return false
                    }
                }
            }
        }
    }

    /// Runs `body` on the writer connection of `store` with SQLite's busy timeout at zero (a
    /// lock held elsewhere fails at once with `SQLITE_BUSY`), and the store's own timeout back
    /// after it.
    private static func withoutWaiting<T>(_ store: HistoryStore, _ body: (Database) throws -> T) throws -> T {
        let busyTimeout = Int32(clamping: Int64(store.configuration.busyTimeout.seconds * 1000))
        return try store.dbPool.writeWithoutTransaction { db in
            sqlite3_busy_timeout(db.sqliteConnection, 0)
            defer { sqlite3_busy_timeout(db.sqliteConnection, busyTimeout) }
            return try body(db)
        }
    }

    /// A fleet member's settled check (``FleetMember/settledPendingWork()``), on a thread of
    /// its own: nil when another writer holds the lock.
    package static func settledWork(consumer: String, in store: HistoryStore,
                                    lastSchemaVersion: borrowing Mutex<Int?>) async throws(SearchlightError) -> Bool? {
        let read = try await DedicatedThread.run(name: "searchlight.fleet.check") { _ throws(SearchlightError) in
            try readSettled(consumer: consumer, in: store)
        }
        guard let position = read else { return nil }
        return isWork(position, lastSchemaVersion: lastSchemaVersion)
    }

    private static func isWork(_ position: ConsumerPosition, lastSchemaVersion: borrowing Mutex<Int?>) -> Bool {
        let schemaChanged = lastSchemaVersion.withLock { last in
            defer { last = position.schemaVersion }
            return last != nil && last != position.schemaVersion
        }
        return position.isBehind || schemaChanged
    }

    /// A fleet member's cheap check, on a thread of its own: whether `consumer` may have work in
    /// the database at `path` (history follows its checkpoint, or the schema changed since the
    /// version `lastSchemaVersion` holds, which it then records).
    /// With `store` (the member holds its database open), through that store's writer
    /// connection; without, through a read-only connection opened for the check.
    package static func hasWork(consumer: String, at path: String, store: HistoryStore? = nil,
                                lastSchemaVersion: borrowing Mutex<Int?>) async throws(SearchlightError) -> Bool {
        let position = try await DedicatedThread.run(name: "searchlight.fleet.check") { _ throws(SearchlightError) in
            if let store { return try read(consumer: consumer, in: store) }
            return try read(consumer: consumer, at: path)
        }
        return isWork(position, lastSchemaVersion: lastSchemaVersion)
    }
}
