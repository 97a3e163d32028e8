import Foundation
import GRDB

/// A value of an attribute (``SearchlightHistory/SearchlightModel/Attribute``), with its SQLite
/// storage class: what a ``SearchFilter`` compares with, and what a ``SearchFacet`` counts.
///
/// Literals make one: `2020` is `.integer(2020)`, `1.5` is `.real(1.5)`, `"swift"` is
/// `.text("swift")`.
public enum AttributeValue: Hashable, Sendable, Codable, CustomStringConvertible,
                            ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    /// NULL (in a filter, a comparison with it is never true: use `IS NULL`).
    case null
    /// An INTEGER.
    case integer(Int64)
    /// A REAL (NaN binds as NULL, as SQLite stores it).
    case real(Double)
    /// A TEXT.
    case text(String)
    /// A BLOB.
    case blob(Data)

    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }

    /// The value as SQLite stores it.
    public init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case let .int64(number): self = .integer(number)
        case let .double(number): self = .real(number)
        case let .string(text): self = .text(text)
        case let .blob(data): self = .blob(data)
        }
    }

    /// How `self` and `other` compare in SQLite's order of values with the BINARY collation:
    /// numbers (INTEGER and REAL by their exact values) before text (by bytes of UTF-8) before
    /// BLOBs (by bytes); nil when either is NULL (which a comparison never orders).
    public func binaryOrder(_ other: AttributeValue) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult { a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame }
        func kind(_ value: AttributeValue) -> Int {
            switch value {
            case .null: 3
            case .integer, .real: 0
            case .text: 1
            case .blob: 2
            }
        }
        switch (self, other) {
        case (.null, _), (_, .null): return nil
        case let (.integer(a), .integer(b)): return order(a, b)
        case let (.integer(a), .real(b)): return Self.order(a, b)
        case let (.real(a), .integer(b)): return Self.order(b, a).reversed
        case let (.real(a), .real(b)): return order(a, b)
        case let (.text(a), .text(b)):
            return Array(a.utf8).lexicographicallyPrecedes(b.utf8) ? .orderedAscending : a.utf8.elementsEqual(b.utf8) ? .orderedSame : .orderedDescending
        case let (.blob(a), .blob(b)): return a.lexicographicallyPrecedes(b) ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
        default: return order(kind(self), kind(other))
        }
    }

    /// An INTEGER against a REAL, exactly (as SQLite compares them): a double beyond 2^53 is
    /// not rounded to the integer's neighbour.
    private static func order(_ integer: Int64, _ real: Double) -> ComparisonResult {
        if real.isNaN { return .orderedDescending }
        if real >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if real < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = real.rounded(.towardZero)
        let truncated = Int64(whole)
        if integer != truncated { return integer < truncated ? .orderedAscending : .orderedDescending }
        let fraction = real - whole
        return fraction > 0 ? .orderedAscending : fraction < 0 ? .orderedDescending : .orderedSame
    }

    /// The value to bind as an SQL argument.
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case let .integer(number): number.databaseValue
        case let .real(number): number.databaseValue
        case let .text(text): text.databaseValue
        case let .blob(data): data.databaseValue
        }
    }

    /// As a filter would spell it: `NULL`, `2020`, `1.5`, `"swift"` (a BLOB as `x'…'`).
    public var description: String {
        switch self {
        case .null: "NULL"
        case let .integer(number): String(number)
        case let .real(number): String(number)
        case let .text(text): "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        case let .blob(data): "x'" + data.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// JSON: null, a number, a string, or a BLOB as `{"blob": "<hex>"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .integer(number): try container.encode(number)
        case let .real(number): try container.encode(number)
        case let .text(text): try container.encode(text)
        case let .blob(data): try container.encode(["blob": data.map { String(format: "%02x", $0) }.joined()])
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let number = try? container.decode(Int64.self) { self = .integer(number) }
        else if let number = try? container.decode(Double.self) { self = .real(number) }
        else if let text = try? container.decode(String.self) { self = .text(text) }
        else {
            let hex = try container.decode([String: String].self)["blob"] ?? ""
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), let byte = UInt8(hex[index..<next], radix: 16) {
                bytes.append(byte)
                index = next
            }
            self = .blob(Data(bytes))
        }
    }
}

private extension ComparisonResult {
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }
}
