import Foundation
import GRDB

/// The identity of a database as a source of history, for consumers that gather several
/// databases in one place (the PostgreSQL sink): the counterpart of Core Data's store UUID.
extension HistoryStore {
    /// A random id that `init` gives the database, stable for as long as Searchlight is set up
    /// in it (an uninstall and a new `init` give a new one). A copy of the file carries the same
    /// id: a consumer that gathers sources tells copies apart by their diverging histories.
    ///
    /// A database set up by an earlier release gets its id the first time it is asked for (one
    /// write transaction; concurrent callers all read the same id).
    ///
    /// ```swift
    /// let source = try store.sourceID() // "6F1C…-…"
    /// ```
    public func sourceID() throws(SearchlightError) -> String {
        try SearchlightError.catching("cannot read the source id of \(dbPool.path)") {
            if let id = try dbPool.read({ db -> String? in
                try checkInstalled(db)
                return try Meta.get(db, .sourceID, as: String.self)
            }) { return id }
            return try dbPool.write { db in
                try checkInstalled(db)
                try db.execute(sql: #"INSERT OR IGNORE INTO "searchlight_meta"("key", "value") VALUES (?, ?)"#,
                               arguments: [MetaKey.sourceID, UUID().uuidString])
                return try Meta.get(db, .sourceID, as: String.self) ?? ""
            }
        }
    }
}
