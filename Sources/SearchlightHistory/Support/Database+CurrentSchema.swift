import GRDB

extension Database {
    /// Whether a table of this name (compared as SQLite compares names: without regard to case)
    /// exists in this transaction's schema, read from `sqlite_master`.
    ///
    /// GRDB's `tableExists(_:)` answers from a per-connection cache, and the writer connection
    /// of a `DatabasePool` does not clear it when another process changes the schema: a
    /// long-lived writer (`watch`) would not see the tables another process's rebuild created,
    /// nor a table the host app dropped or created again.
    package func tableExistsInCurrentSchema(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: """
            SELECT EXISTS (SELECT 1 FROM "sqlite_master" WHERE "type" = 'table' AND "name" = ? COLLATE NOCASE)
            """, arguments: [name]) ?? false
    }
}
