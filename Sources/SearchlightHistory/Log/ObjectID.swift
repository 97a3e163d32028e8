import GRDB

/// The primary-key value of a tracked row: an integer or a text (a UUID string, say).
public enum ObjectID: Hashable, Sendable, Comparable, CustomStringConvertible, DatabaseValueConvertible, Codable {
    case integer(Int64)
    case text(String)

    public var description: String {
        switch self {
        case let .integer(value): String(value)
        case let .text(value): value
        }
    }

    public var databaseValue: DatabaseValue {
        switch self {
        case let .integer(value): value.databaseValue
        case let .text(value): value.databaseValue
        }
    }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> ObjectID? {
        switch dbValue.storage {
        case let .int64(value): .integer(value)
        case let .string(value): .text(value)
        case let .double(value): .text(String(value))
        case let .blob(data): .text(data.map { String(format: "%02X", $0) }.joined())
        case .null: nil
        }
    }

    /// Integers sort before texts, like SQLite does.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): a < b
        case let (.text(a), .text(b)): a < b
        case (.integer, .text): true
        case (.text, .integer): false
        }
    }

    /// Encodes as a JSON number or string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) { self = .integer(value) } else { self = .text(try container.decode(String.self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .integer(value): try container.encode(value)
        case let .text(value): try container.encode(value)
        }
    }
}
