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
