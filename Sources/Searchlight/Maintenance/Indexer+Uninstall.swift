import Foundation
import GRDB
import SearchlightHistory

extension Indexer {
    /// Removes Searchlight from the database, in one write transaction: the search index (every
    /// generation of its FTS5 tables, with their shadow tables, the document map and
    /// `searchlight_index_state`), then everything the history created
    /// (``SearchlightHistory/HistoryStore/uninstall(in:)``: the capture triggers and the history
    /// tables). The app's tables, rows, indexes and triggers are left as they are. The
    /// counterpart of Core Spotlight's `deleteSpotlightIndex`.
    ///
    /// Indexers and consumers in other processes (`searchlight watch`) stop at their next write
    /// with ``SearchlightHistory/SearchlightError/Code-swift.struct/notInstalled`` and never
    /// create what was removed; stop this process's own indexers first. Only an install
    /// (`HistoryStore(path:model:)`, `searchlight init`) sets Searchlight up again, from scratch.
    ///
    /// ```swift
    /// let store = try HistoryStore(path: "notes.sqlite")
    /// try Indexer.uninstall(from: store)
    /// ```
    ///
    /// SQL it runs:
    /// ```sql
    /// DROP TABLE "searchlight_fts_1_g2";       -- each generation's FTS5 tables (their shadow tables go with them)
    /// DROP TABLE "searchlight_document_g2";
    /// DROP TABLE "searchlight_index_state";
    /// DROP TRIGGER "searchlight_1_insert";     -- then the history's objects: every capture trigger,
    /// DROP TABLE "searchlight_log";            -- and each history table
    /// ```
    ///
    /// - Throws: ``SearchlightHistory/SearchlightError``: `notInstalled` if the database has no
    ///   Searchlight setup. On error nothing is removed.
    public static func uninstall(from store: HistoryStore) throws(SearchlightError) {
        try SearchlightError.catching("cannot uninstall Searchlight from \(store.databaseWriter.path)") {
            try store.databaseWriter.write { db in
                try IndexSchema.dropGenerations(except: [], db)
                try db.execute(sql: IndexState.dropTable)
                try store.uninstall(in: db)
            }
        }
    }
}
