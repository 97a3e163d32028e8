import Foundation
import GRDB

/// How an attribute's source column compares values, as SQLite compares them in a `WHERE` on
/// that column: its type affinity (applied to the other operand of a comparison) and its
/// collation (for text). A ``SearchFilter`` means what the same condition would select on the
/// source table; another engine that filters the same values (the PostgreSQL sink's documents)
/// follows these rules to mean the same.
///
/// SQLite's order of values, which every comparison follows: NULL, then numbers (INTEGER and
/// REAL compared by value), then text (by the collation), then BLOBs (by bytes); a comparison
/// with NULL is never true.
///
/// ```swift
/// let year = AttributeComparison(affinity: .integer, collation: .binary)
/// year.operand(.text("2020"))   // .integer(2020): `year = "2020"` matches 2020
/// let tag = AttributeComparison(affinity: .text, collation: .nocase)
/// tag.collationKey("Swift")     // the bytes of "swift"
/// ```
public struct AttributeComparison: Codable, Hashable, Sendable {
    /// A column's type affinity (SQLite's five).
    public enum Affinity: String, Codable, Hashable, Sendable, CaseIterable {
        case integer = "INTEGER", real = "REAL", numeric = "NUMERIC", text = "TEXT"
        /// No conversion (a column declared `BLOB`, with no type, or `ANY` in a STRICT table).
        case blob = "BLOB"
    }

    /// The collations filters compare with: SQLite's built-in three (a collation the app
    /// defines compares as `binary`).
    public enum Collation: String, Codable, Hashable, Sendable, CaseIterable {
        /// Bytes of UTF-8.
        case binary = "BINARY"
        /// Bytes of UTF-8 with ASCII letters folded to lower case (only ASCII).
        case nocase = "NOCASE"
        /// Bytes of UTF-8 without trailing spaces (U+0020).
        case rtrim = "RTRIM"
    }

    public var affinity: Affinity
    public var collation: Collation

    public init(affinity: Affinity = .blob, collation: Collation = .binary) {
        self.affinity = affinity
        self.collation = collation
    }

    /// A filter's value as a comparison with the column sees it: SQLite applies the column's
    /// affinity to a value that has none. INTEGER, REAL and NUMERIC columns turn text that is a
    /// well-formed number into that number (`"2020"` → 2020, `" 1.5"` → 1.5, `"abc"` stays text);
    /// a TEXT column turns numbers into their text as SQLite writes it (`1.5` → `"1.5"`); a
    /// BLOB column changes nothing. A REAL that is NaN is NULL, and text ends at its first NUL
    /// character, as a value is bound to SQLite.
    public func operand(_ value: AttributeValue) -> AttributeValue {
        if case let .real(number) = value, number.isNaN { return .null }
        if case let .text(text) = value, let nul = text.utf8.firstIndex(of: 0) { return operand(.text(String(text[..<nul]))) }
        switch (affinity, value) {
        case (.blob, _), (_, .null), (_, .blob): return value
        case (.text, .text), (.integer, .integer), (.real, .integer), (.numeric, .integer),
             (.integer, .real), (.real, .real), (.numeric, .real): return value
        case (.text, _), (_, .text): return Self.converted(value, text: affinity == .text)
        }
    }

    /// The bytes that the collation compares for `text`: its UTF-8, with ASCII letters in lower
    /// case (NOCASE) or trailing spaces removed (RTRIM). Two texts compare as these bytes do.
    public func collationKey(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        switch collation {
        case .binary: break
        case .nocase:
            for index in bytes.indices where bytes[index] >= 0x41 && bytes[index] <= 0x5A { bytes[index] += 0x20 }
        case .rtrim:
            while bytes.last == 0x20 { bytes.removeLast() }
        }
        return bytes
    }

    /// SQLite's own conversion: a value stored into a NUMERIC column (numeric affinity, the one
    /// a comparison applies for INTEGER, REAL and NUMERIC columns) or a TEXT column.
    private static func converted(_ value: AttributeValue, text: Bool) -> AttributeValue {
        do {
            return try converter.write { db in
                try db.execute(sql: "DELETE FROM c")
                try db.execute(sql: "INSERT INTO c(n, t) VALUES (?, ?)", arguments: [value.databaseValue, value.databaseValue])
                let stored = try Row.fetchOne(db, sql: "SELECT n, t FROM c")
                return AttributeValue((stored?[text ? 1 : 0] as DatabaseValue?) ?? .null)
            }
        } catch {
            // An in-memory table of two columns does not fail; if it did, no conversion.
            return value
        }
    }

    /// An in-memory database with a NUMERIC and a TEXT column: SQLite converts, not a copy of its rules.
    private static let converter: DatabaseQueue = {
        // An in-memory database always opens.
        let queue = try! DatabaseQueue()
        try? queue.write { try $0.execute(sql: "CREATE TABLE c(n NUMERIC, t TEXT)") }
        return queue
    }()
}

extension IndexedAttribute {
    /// The affinity and collation as ``AttributeComparison`` names them.
    package var comparison: AttributeComparison {
        let affinity: AttributeComparison.Affinity = switch self.affinity {
        case .integer: .integer
        case .real: .real
        case .numeric: .numeric
        case .text: .text
        case .none: .blob
        }
        return AttributeComparison(affinity: affinity, collation: AttributeComparison.Collation(rawValue: Self.builtInCollation(collation)) ?? .binary)
    }
}
