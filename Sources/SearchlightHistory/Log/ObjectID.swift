import Foundation
import GRDB

/// The primary-key value of a tracked row, with the storage class SQLite gave it: usually an
/// integer or a text (a UUID string, say), and a REAL or a BLOB where the key column's
/// affinity lets one through (a BLOB in a TEXT column; anything in a column with no type).
/// Lookups bind the value as it is, so every key finds its row.
public enum ObjectID: Hashable, Sendable, Comparable, CustomStringConvertible, DatabaseValueConvertible, Codable {
    case integer(Int64)
    case text(String)
    case real(Double)
    case blob(Data)

    /// For people: the number, the text, or a BLOB as `x'…'` hex.
    public var description: String {
        switch self {
        case let .integer(value): String(value)
        case let .text(value): value
        case let .real(value): String(value)
        case let .blob(data): "x'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    public var databaseValue: DatabaseValue {
        switch self {
        case let .integer(value): value.databaseValue
        case let .text(value): value.databaseValue
        case let .real(value): value.databaseValue
        case let .blob(data): data.databaseValue
        }
    }

    /// The ids someone may mean by typing `text` (a command line's `--id`): a text that reads as
    /// an integer names an INTEGER key or a TEXT one (`"42"` gives `.integer(42)` and
    /// `.text("42")`), one that reads as a decimal number a REAL key or a TEXT one (`"8.5"`,
    /// `"0.30000000000000004"`, as search prints REAL keys); any other text names a TEXT key.
    public static func candidates(typed text: String) -> [ObjectID] {
        if let integer = Int64(text) { return [.integer(integer), .text(text)] }
        if let real = Double(text), real.isFinite { return [.real(real), .text(text)] }
        return [.text(text)]
    }

    /// `nil` for NULL: a row whose key is NULL has no identity.
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> ObjectID? {
        switch dbValue.storage {
        case let .int64(value): .integer(value)
        case let .string(value): .text(value)
        case let .double(value): .real(value)
        case let .blob(data): .blob(data)
        case .null: nil
        }
    }

    /// SQLite's equality: an integer and a real of the same value are the same key (`1` and
    /// `1.0` cannot both be in a primary key), so they are equal here too, and hash alike. Texts
    /// compare byte for byte, as SQLite's BINARY collation does: `"café"` composed (NFC) and
    /// decomposed (NFD) are two keys to SQLite, where Swift's `==` on `String` finds them equal.
    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): a == b
        case let (.real(a), .real(b)): a == b
        case let (.integer(a), .real(b)), let (.real(b), .integer(a)): Self.integer(exactly: b) == a
        case let (.text(a), .text(b)): a.utf8.elementsEqual(b.utf8)
        case let (.blob(a), .blob(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case let .integer(value): hasher.combine(0); hasher.combine(value)
        case let .real(value):
            if let integer = Self.integer(exactly: value) {
                hasher.combine(0); hasher.combine(integer)
            } else {
                hasher.combine(1); hasher.combine(value)
            }
        case let .text(value):
            hasher.combine(2)
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        case let .blob(value): hasher.combine(3); hasher.combine(value)
        }
    }

    /// The integer a real equals, if it equals one.
    private static func integer(exactly value: Double) -> Int64? {
        Int64(exactly: value)
    }

    /// SQLite's order: numbers (integers and reals by value), then texts (byte for byte, as
    /// BINARY), then BLOBs.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        func rank(_ id: ObjectID) -> Int {
            switch id {
            case .integer, .real: 0
            case .text: 1
            case .blob: 2
            }
        }
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): return a < b
        case let (.integer(a), .real(b)): return Double(a) < b
        case let (.real(a), .integer(b)): return a < Double(b)
        case let (.real(a), .real(b)): return a < b
        case let (.text(a), .text(b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
        case let (.blob(a), .blob(b)): return a.lexicographicallyPrecedes(b)
        default: return rank(lhs) < rank(rhs)
        }
    }

    /// Decodes a JSON number (an integer, else a real) or string (a text).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .real(value)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    /// Encodes as a JSON number or string; a BLOB as its ``description`` (`x'…'`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .integer(value): try container.encode(value)
        case let .text(value): try container.encode(value)
        case let .real(value): try container.encode(value)
        case .blob: try container.encode(description)
        }
    }
}
