/// The one place where Searchlight turns names and constants into SQL text.
///
/// Values are always bound as statement arguments. Only DDL (triggers, which cannot take
/// arguments) embeds constants, and it does so through ``literal(_:)``. Identifiers are always
/// quoted through ``identifier(_:)``, so hostile table and column names (quotes, spaces,
/// keywords, unicode) are safe.
package enum SQLQuoting {
    /// `my "table"` → `"my ""table"""`
    ///
    /// GRDB's `quotedDatabaseIdentifier` does not double embedded quotes, so it is not used.
    package static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `it's` → `'it''s'`
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
