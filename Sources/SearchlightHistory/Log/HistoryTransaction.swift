import Foundation
import GRDB

/// One change recorded by the capture triggers.
public struct HistoryChange: Hashable, Sendable {
    /// The change's position in the log; orders changes inside a transaction.
    public var changeID: Int64
    /// The token of the transaction that made the change.
    public var token: HistoryToken
    /// The entity name (from the model).
    public var entity: String
    /// The primary key of the changed row.
    public var objectID: ObjectID
    public var type: HistoryChange.ChangeType
    /// For updates: the tracked columns whose value changed (NULL transitions included).
    public var updatedColumns: [String]?
    /// For deletes: the tombstone as stored (a JSON object); see ``tombstone``.
    public var tombstoneJSON: String?

    /// For deletes: the `preserveOnDelete` values of the deleted row. BLOBs are kept as hex
    /// text. Decoded on access: most consumers never read it.
    public var tombstone: [String: DatabaseValue]? {
        tombstoneJSON.flatMap { try? JSONDecoder().decode([String: JSONScalar].self, from: Data($0.utf8)).mapValues(\.databaseValue) }
    }
}

/// A JSON scalar of a tombstone, read back as the SQLite value it was.
struct JSONScalar: Decodable {
    var databaseValue: DatabaseValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            databaseValue = .null
        } else if let value = try? container.decode(Int64.self) {
            databaseValue = value.databaseValue
        } else if let value = try? container.decode(Double.self) {
            databaseValue = value.databaseValue
        } else {
            databaseValue = try container.decode(String.self).databaseValue
        }
    }
}

/// A committed transaction that changed tracked tables.
public struct HistoryTransaction: Hashable, Sendable, Identifiable {
    /// Strictly increasing in commit order.
    public var token: HistoryToken
    /// When the transaction was recorded. Informational: never use it to order or checkpoint.
    public var timestamp: Date
    /// Who wrote it, for writes made through ``HistoryStore/write(author:context:_:)``;
    /// `nil` for every other writer (raw SQL, other programs, the `sqlite3` shell).
    public var author: String?
    /// The context name given to ``HistoryStore/write(author:context:_:)``.
    public var contextName: String?
    /// The writing process, for writes made through this library.
    public var processID: Int32?
    /// The transaction's changes (only those that match the request's filters), in order.
    public var changes: [HistoryChange]

    public var id: HistoryToken { token }
}

/// The size of the history a request selects.
public struct HistoryCount: Hashable, Sendable {
    public var transactions: Int
    public var changes: Int

    public init(transactions: Int, changes: Int) {
        self.transactions = transactions
        self.changes = changes
    }
}

extension HistoryChange {
    /// What happened to an object in a change.
    public enum ChangeType: Int, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
        case insert = 1
        case update = 2
        case delete = 3

        public var description: String {
            switch self {
            case .insert: "insert"
            case .update: "update"
            case .delete: "delete"
            }
        }

        /// Parses `insert`, `update` or `delete`.
        public init?(name: String) {
            guard let type = Self.allCases.first(where: { $0.description == name }) else { return nil }
            self = type
        }
    }
}
