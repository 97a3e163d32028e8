import GRDB

/// A point in history: the token of a committed transaction.
///
/// Tokens strictly increase in commit order: SQLite serializes writers, and each transaction's
/// token is the largest token so far plus one, assigned inside the writing transaction. A reader
/// that sees token N has seen every token below N. Consumers checkpoint tokens, never
/// timestamps: clocks jump and tie.
public struct HistoryToken: RawRepresentable, Hashable, Comparable, Sendable, Codable,
    CustomStringConvertible, DatabaseValueConvertible
{
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// The point before any history.
    public static let zero = HistoryToken(0)

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(rawValue: try container.decode(Int64.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var databaseValue: DatabaseValue { rawValue.databaseValue }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> HistoryToken? {
        Int64.fromDatabaseValue(dbValue).map { HistoryToken(rawValue: $0) }
    }
}
