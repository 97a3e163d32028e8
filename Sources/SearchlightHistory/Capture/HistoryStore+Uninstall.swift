import Foundation
import GRDB

extension HistoryStore {
    /// Throws ``SearchlightError/Code-swift.struct/notInstalled`` if the setup this store opened
    /// is no longer in the database: another process uninstalled Searchlight (and perhaps set it
    /// up again with `init`, which is another setup) since the store opened it.
    ///
    /// Searchlight's write transactions check it first, in the transaction itself: consumer
    /// batches, resynchronizations, consumer registrations and checkpoints, capture healing, the
    /// indexer's batches, rebuild chunks and swap (``write(author:context:_:)`` checks when its
    /// history row cannot be written; cleanup only deletes, and fails on the missing tables). A
    /// process that opened the database before an uninstall stops with this error and never
    /// creates what the uninstall removed: only an install does. Call it at the start of your own
    /// write transactions that touch Searchlight's tables.
    ///
    /// Costs one `PRAGMA schema_version` when the schema did not change since the last check
    /// (an uninstall changes it); otherwise one lookup in `sqlite_master` and one in
    /// `searchlight_meta`.
    public func checkInstalled(in db: Database) throws(SearchlightError) {
        try SearchlightError.catching("cannot read the Searchlight setup of \(dbPool.path)") { try checkInstalled(db) }
    }

    /// The `notInstalled` error that explains `error`, when `error` is SQLite's plain
    /// `SQLITE_ERROR` (a table of ours is gone) and Searchlight was uninstalled meanwhile, here
    /// or in another process; nil otherwise (the error is reported as it is). Reads (a search,
    /// a history feed) do not check first: they ask, in a read of their own, only when they fail.
    package func uninstall(explaining error: any Error, in db: Database) -> SearchlightError? {
        guard let database = error as? DatabaseError, database.resultCode == .SQLITE_ERROR else { return nil }
        do { try checkInstalled(db) } catch let notInstalled as SearchlightError where notInstalled.code == .notInstalled {
            return notInstalled
        } catch {}
        return nil
    }

    func checkInstalled(_ db: Database) throws {
        let version = try Int64.fetchOne(db, sql: "PRAGMA schema_version")
        if installedAtSchemaVersion.withLock({ $0 == version }) { return }
        guard try HistorySchema.isInstalled(db), try Meta.get(db, .model, as: String.self) != nil else {
            throw SearchlightError(.notInstalled, "Searchlight was uninstalled from \(dbPool.path) after this process opened it; set it up again with init")
        }
        guard try Meta.get(db, .installationID, as: String.self) == installationID else {
            throw SearchlightError(.notInstalled, "Searchlight was uninstalled from \(dbPool.path) and set up again after this process opened it; open the database again")
        }
        installedAtSchemaVersion.withLock { $0 = version }
    }

    /// Removes everything Searchlight's history created in the database, in one write
    /// transaction: the capture triggers on the tracked tables, then the history tables (the
    /// log, the consumers and their checkpoints, the entities, `searchlight_meta` with the
    /// stored model). The app's tables, rows, indexes and triggers are left as they are.
    ///
    /// Every schema object whose name starts with `searchlight_` is Searchlight's: if any other
    /// than History's remains (the tables of the search index), nothing is removed and this
    /// throws; `Indexer.uninstall(from:)` of the `Searchlight` library removes the index too,
    /// then calls ``uninstall(in:)`` in the same transaction.
    ///
    /// Processes that have the database open stop at their next write with
    /// ``SearchlightError/Code-swift.struct/notInstalled`` (see ``checkInstalled(in:)``); only
    /// an install (`HistoryStore(path:model:)`, `searchlight init`) sets Searchlight up again.
    ///
    /// ```swift
    /// let store = try HistoryStore(path: "notes.sqlite")
    /// try store.uninstall()
    /// ```
    ///
    /// SQL it runs:
    /// ```sql
    /// DROP TRIGGER "searchlight_1_insert_row"; -- each trigger named searchlight_*
    /// DROP VIEW "searchlight_1_replacing"; -- each view of the capture triggers
    /// DROP TABLE "searchlight_conflict";
    /// DROP TABLE "searchlight_replaced";
    /// DROP TABLE "searchlight_consumer";
    /// DROP TABLE "searchlight_log";
    /// DROP TABLE "searchlight_entity";
    /// DROP TABLE "searchlight_meta";
    /// ```
    ///
    /// It does not `VACUUM` (that could renumber the rowids of the app's tables): the pages
    /// freed are reused by SQLite. The database stays in WAL mode.
    ///
    /// - Throws: ``SearchlightError``: `notInstalled` if there is no Searchlight setup;
    ///   `schemaMismatch` if the index's tables remain. On error nothing is removed.
    public func uninstall() throws(SearchlightError) {
        try SearchlightError.catching("cannot uninstall Searchlight from \(dbPool.path)") {
            try dbPool.write { db in try uninstall(db) }
        }
    }

    /// ``uninstall()`` inside the caller's write transaction, after the caller removed objects
    /// of its own (the search index does).
    public func uninstall(in db: Database) throws(SearchlightError) {
        try SearchlightError.catching("cannot uninstall Searchlight from \(dbPool.path)") { try uninstall(db) }
    }

    private func uninstall(_ db: Database) throws {
        guard try HistorySchema.isInstalled(db) else {
            throw SearchlightError(.notInstalled, "\(dbPool.path) has no Searchlight setup: nothing to uninstall")
        }
        let triggers = try HistorySchema.searchlightObjects(db, type: "trigger")
        for trigger in triggers { try db.execute(sql: "DROP TRIGGER \(SQLQuoting.identifier(trigger))") }
        for view in try HistorySchema.searchlightObjects(db, type: "view") { try db.execute(sql: "DROP VIEW \(SQLQuoting.identifier(view))") }
        for table in HistorySchema.tables { try db.execute(sql: "DROP TABLE IF EXISTS \(SQLQuoting.identifier(table))") }
        let remaining = try HistorySchema.searchlightObjects(db)
        if !remaining.isEmpty {
            throw SearchlightError(.schemaMismatch, """
                cannot uninstall Searchlight from \(dbPool.path): \(remaining.count) other Searchlight objects remain \
                (\(remaining.prefix(3).joined(separator: ", "))\(remaining.count > 3 ? ", …" : "")); \
                remove the search index with it (searchlight uninstall, or Indexer.uninstall(from:))
                """)
        }
        installedAtSchemaVersion.withLock { $0 = nil }
        configuration.logger.notice("uninstalled Searchlight's history from \(dbPool.path): \(triggers.count) triggers and \(HistorySchema.tables.count) tables removed")
    }
}
