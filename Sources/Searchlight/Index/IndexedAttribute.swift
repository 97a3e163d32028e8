import Foundation
import GRDB
import GRDBSQLite
import SearchlightHistory

/// An attribute as a generation of the index keeps it: its name (what filters say), the source
/// column it is read from, and how the source column compares values: its type affinity and
/// its collation. The attribute table's column gets the same ones, so that a filter on it
/// selects what the same `WHERE` would select on the source table. Recorded in the layout: a
/// change of either rebuilds the index.
package struct IndexedAttribute: Codable, Hashable, Sendable {
    /// A column's type affinity (SQLite's five, "Determination Of Column Affinity").
    package enum Affinity: String, Codable, Hashable, Sendable {
        case integer = "INTEGER", real = "REAL", numeric = "NUMERIC", text = "TEXT"
        /// BLOB affinity: values are stored as given, with no conversion.
        case none = "BLOB"

        /// The affinity of a declared type, by SQLite's rules in their order: `INT` → INTEGER;
        /// `CHAR`, `CLOB` or `TEXT` → TEXT; `BLOB` or no type → none; `REAL`, `FLOA` or `DOUB` →
        /// REAL; anything else → NUMERIC. In a STRICT table, `ANY` has none.
        package init(declaredType: String, strict: Bool) {
            let type = declaredType.uppercased()
            if strict && type == "ANY" { self = .none }
            else if type.contains("INT") { self = .integer }
            else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { self = .text }
            else if type.contains("BLOB") || type.trimmingCharacters(in: .whitespaces).isEmpty { self = .none }
            else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { self = .real }
            else { self = .numeric }
        }

        /// The type the attribute column is declared with (a fixed word, never the source's text):
        /// a column declared with no type has BLOB affinity.
        var declaredType: String { self == .none ? "" : " " + rawValue }
    }

    package var name: String
    package var column: String
    package var affinity: Affinity
    /// `BINARY`, `NOCASE` or `RTRIM` (a collation the app defines compares as `BINARY`).
    package var collation: String

    package init(name: String, column: String, affinity: Affinity = .none, collation: String = "BINARY") {
        self.name = name
        self.column = column
        self.affinity = affinity
        self.collation = collation
    }

    /// The attribute's column definition in the attribute table: `"year" INTEGER COLLATE BINARY`.
    var definition: String {
        SQLQuoting.identifier(name) + affinity.declaredType + " COLLATE " + Self.builtInCollation(collation)
    }

    /// `NOCASE` or `RTRIM` as such, anything else `BINARY`: the only collation names SQL is built with.
    static func builtInCollation(_ name: String) -> String {
        switch name.uppercased() {
        case "NOCASE": "NOCASE"
        case "RTRIM": "RTRIM"
        default: "BINARY"
        }
    }

    /// Reads the affinity and collation of `attribute`'s column in `table` with
    /// `sqlite3_table_column_metadata` (which resolves the column as SQLite does, for
    /// generated columns too). A column that is missing keeps no affinity and BINARY.
    package static func describe(_ attribute: SearchlightModel.Attribute, table: String, _ db: Database) throws -> IndexedAttribute {
        var type: UnsafePointer<CChar>?, collation: UnsafePointer<CChar>?
        var notNull: Int32 = 0, primaryKey: Int32 = 0, autoincrement: Int32 = 0
        let code = sqlite3_table_column_metadata(db.sqliteConnection, "main", table, attribute.column,
                                                 &type, &collation, &notNull, &primaryKey, &autoincrement)
        guard code == SQLITE_OK else { return IndexedAttribute(name: attribute.name, column: attribute.column) }
        let declared = type.map { String(cString: $0) } ?? ""
        let collationName = (collation.map { String(cString: $0) } ?? "BINARY").uppercased()
        // (pragma_table_list needs SQLite 3.37; an older one has no STRICT tables.)
        let strict = (try? Bool.fetchOne(db, sql: "SELECT strict FROM pragma_table_list WHERE name = ? AND schema = 'main'", arguments: [table])) ?? false
        return IndexedAttribute(
            name: attribute.name, column: attribute.column,
            affinity: Affinity(declaredType: declared, strict: strict),
            collation: ["BINARY", "NOCASE", "RTRIM"].contains(collationName) ? collationName : "BINARY")
    }
}
