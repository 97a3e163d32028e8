import Foundation

extension TestDatabase {
    /// The database as the `sqlite3` shell's `.dump` prints it (schema and rows, in a separate
    /// process that loads no Searchlight code): two databases with equal dumps hold the same
    /// tables, rows, indexes, triggers and views, to the byte of their SQL text.
    public func dump() throws -> String {
        try Shell.run("/usr/bin/env", ["sqlite3", "-cmd", ".timeout 10000", path, ".dump"])
    }

    /// Every schema object whose name starts with `searchlight_` (FTS5 shadow tables included).
    public func searchlightObjects() throws -> [String] {
        try shell("SELECT type || ' ' || name FROM sqlite_master WHERE name GLOB 'searchlight_*' ORDER BY name;")
            .split(separator: "\n").map(String.init)
    }
}
