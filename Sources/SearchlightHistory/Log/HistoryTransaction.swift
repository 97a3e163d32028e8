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
    /// For deletes: the `preserveOnDelete` values of the deleted row, as SQLite values
    /// (INTEGER, REAL, TEXT or NULL; a BLOB is kept as its hex text, as `hex()` writes it).
    /// `nil` for inserts, updates, and deletes of entities that preserve nothing.
    ///
    /// The capture triggers store it as a JSON object (`json_object(…)`); it is read back with
    /// SQLite's own JSON functions when the change is fetched, so that each value keeps the type
    /// SQLite gave it (`1.0` stays REAL), and a tombstone that cannot be read is an error of the
    /// fetch, never a silent `nil`.
    public var tombstone: [String: DatabaseValue]?

    /// Creates a change, for instance to test code that consumes history without a database:
    ///
    /// ```swift
    /// let change = HistoryChange(
    ///     changeID: 12, token: HistoryToken(rawValue: 11), entity: "Note", objectID: .integer(1),
    ///     type: .delete, tombstone: ["title": "Groceries".databaseValue])
    /// ```
    public init(
        changeID: Int64,
        token: HistoryToken,
        entity: String,
        objectID: ObjectID,
        type: HistoryChange.ChangeType,
        updatedColumns: [String]? = nil,
        tombstone: [String: DatabaseValue]? = nil
    ) {
        self.changeID = changeID
        self.token = token
        self.entity = entity
        self.objectID = objectID
        self.type = type
        self.updatedColumns = updatedColumns
        self.tombstone = tombstone
    }

    /// Reads a tombstone as the capture triggers stored it (a JSON object of scalars), with
    /// SQLite's `json_each`, so that each value comes back with the type SQLite gave it:
    ///
    /// ```sql
    /// SELECT json_type(?1), "key", "value", "type" FROM (SELECT 1) LEFT JOIN json_each(?1)
    /// ```
    ///
    /// `nil` for NULL (no tombstone). Throws `databaseError`, naming the change, for anything
    /// but such an object.
    package static func decodeTombstone(_ value: DatabaseValue, changeID: Int64, _ db: Database) throws(SearchlightError) -> [String: DatabaseValue]? {
        func unreadable(_ reason: String, _ error: (any Error)? = nil) -> SearchlightError {
            SearchlightError(.databaseError, "history change \(changeID) holds an unreadable tombstone (\(reason)): \(String(describing: value).prefix(200))", underlyingError: error)
        }
        let json: String
        switch value.storage {
        case .null: return nil
        case .string(let text): json = text
        default: throw unreadable("not text")
        }
        var tombstone: [String: DatabaseValue] = [:]
        do {
            let statement = try db.cachedStatement(sql: #"SELECT json_type(?1), "key", "value", "type" FROM (SELECT 1) LEFT JOIN json_each(?1)"#)
            let rows = try Row.fetchCursor(statement, arguments: [json])
            while let row = try rows.next() {
                guard (row[0] as String?) == "object" else { throw unreadable("not a JSON object") }
                // An empty object: the LEFT JOIN's one row has no key.
                guard let key = row[1] as String? else { continue }
                if let type = row[3] as String?, type == "object" || type == "array" {
                    throw unreadable("the value of \"\(key)\" is not a scalar")
                }
                tombstone[key] = row[2] as DatabaseValue
            }
        } catch let error as SearchlightError {
            throw error
        } catch let error as DatabaseError {
            throw unreadable(error.message ?? "\(error.resultCode)", error)
        } catch {
            throw unreadable("\(error)", error)
        }
        return tombstone
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

    /// Creates a transaction, for instance to test code that consumes history without a
    /// database:
    ///
    /// ```swift
    /// let transaction = HistoryTransaction(
    ///     token: HistoryToken(rawValue: 11), timestamp: Date(), author: "app",
    ///     changes: [HistoryChange(changeID: 12, token: HistoryToken(rawValue: 11), entity: "Note",
    ///                             objectID: .integer(1), type: .insert)])
    /// ```
    public init(
        token: HistoryToken,
        timestamp: Date,
        author: String? = nil,
        contextName: String? = nil,
        processID: Int32? = nil,
        changes: [HistoryChange]
    ) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.changes = changes
    }
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
