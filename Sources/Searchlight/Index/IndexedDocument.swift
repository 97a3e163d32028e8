import Foundation
import GRDB
import SearchlightHistory

/// The text the index keeps for one object: a value for each of its entity's fields.
public struct IndexedDocument: Hashable, Sendable {
    /// Values by field column. A missing field is indexed as empty text.
    public var values: [String: String]
    /// The attributes' values as the row stores them, by attribute name: what
    /// ``DocumentReader`` read (an absent attribute is NULL). Attributes always come from the
    /// row's columns: a ``DocumentBuilder``'s are not read.
    public var attributes: [String: AttributeValue] = [:]

    public init(_ values: [String: String]) { self.values = values }
}

/// Computes the indexed text of an object from its source row (the `attributeSet` hook).
///
/// It receives every column of the row (`SELECT *`) and the database, so it can join related
/// rows or strip markup. Return `nil` to keep the object out of the index.
///
/// ```swift
/// configuration.documentBuilders["Note"] = { row, db in
///     guard row["archived"] == false else { return nil }
///     let tags = try String.fetchAll(db, sql: "SELECT name FROM tags WHERE note_id = ?", arguments: [row["id"]])
///     return IndexedDocument(["title": row["title"], "body": row["body"], "tags": tags.joined(separator: " ")])
/// }
/// ```
///
/// History only knows about the entity's own table: when a builder reads other tables, changes
/// to those do not reindex the object by themselves (reindex it by id, or touch its row).
public typealias DocumentBuilder = @Sendable (_ row: Row, _ db: Database) throws -> IndexedDocument?

/// Reads source rows and turns them into the field values the index stores.
package struct DocumentSource: Sendable {
    package var entity: IndexedEntity
    package var builder: DocumentBuilder?
    /// How field values are prepared for the index.
    package var text: IndexedText = .standard

    /// Field values as the index stores them (``IndexedText``), in field order; nil if the object is excluded.
    package func fields(of row: Row, _ db: Database) throws -> [String]? {
        try values(of: row, db)?.map(text.prepare)
    }

    /// Field values as read (before preparation), in field order; nil if the object is excluded.
    package func values(of row: Row, _ db: Database) throws -> [String]? {
        let columns = entity.fieldColumns
        if let builder {
            guard let document = try builder(row, db) else { return nil }
            return columns.map { document.values[$0] ?? "" }
        }
        return try columns.indices.map { try Self.text(row[$0 + 1], db) }
    }

    /// The SQL that reads rows: the key first, then the fields (or every column for a builder),
    /// then the attributes' columns as stored (``attributeValues(of:)``).
    ///
    /// A REAL field is read as SQLite writes it as text (`CAST(x AS TEXT)`: `0.1+0.2` is
    /// `0.3`, `1e15` is `1.0e+15`), the text a plain FTS5 table over the column would index;
    /// Swift would print other digits. Other values are read as stored:
    ///
    /// ```sql
    /// SELECT "id", CASE typeof("price") WHEN 'real' THEN CAST("price" AS TEXT) ELSE "price" END
    /// FROM "items" WHERE ...
    /// ```
    package func selectSQL(where condition: String) -> String {
        let table = SQLQuoting.identifier(entity.entity.table)
        let key = SQLQuoting.identifier(entity.entity.primaryKey)
        var columns = builder == nil
            ? entity.fieldColumns.map(SQLQuoting.identifier)
                .map { "CASE typeof(\($0)) WHEN 'real' THEN CAST(\($0) AS TEXT) ELSE \($0) END" }
                .joined(separator: ", ")
            : "*"
        if builder == nil { columns += entity.attributes.map { ", " + SQLQuoting.identifier($0.column) }.joined() }
        return "SELECT \(key), \(columns) FROM \(table) WHERE \(condition)"
    }

    /// The attribute values of a row of ``selectSQL(where:)``, exactly as stored: after the
    /// fields, or by name among a builder's columns.
    package func attributeValues(of row: Row) -> [DatabaseValue] {
        if builder != nil { return entity.attributes.map { (row[$0.column] as DatabaseValue?) ?? .null } }
        let first = entity.fieldColumns.count + 1
        return entity.attributes.indices.map { row[first + $0] }
    }

    /// ``documents(for:_:)`` with each present object's attribute values.
    package func documentsWithAttributes(for ids: [ObjectID], _ db: Database) throws -> [(ObjectID, [String]?, [DatabaseValue])] {
        guard !entity.attributes.isEmpty else { return try documents(for: ids, db).map { ($0.0, $0.1, []) } }
        var attributes: [ObjectID: [DatabaseValue]] = [:]
        let documents = try documents(for: ids, db) { row, db in
            let fields = try fields(of: row, db)
            if fields != nil, let id = ObjectID.fromDatabaseValue(row[0]) { attributes[id] = attributeValues(of: row) }
            return fields
        }
        return documents.map { ($0.0, $0.1, attributes[$0.0] ?? []) }
    }

    /// Reads the current rows of `ids` and returns their documents in key order (which keeps
    /// the index's page accesses local); a missing or excluded object maps to nil.
    package func documents(for ids: [ObjectID], _ db: Database) throws -> [(ObjectID, [String]?)] {
        try documents(for: ids, db, fields: fields(of:_:))
    }

    /// ``documents(for:_:)`` with the values as read, before preparation.
    package func unpreparedDocuments(for ids: [ObjectID], _ db: Database) throws -> [(ObjectID, [String]?)] {
        try documents(for: ids, db, fields: values(of:_:))
    }

    /// ``unpreparedDocuments(for:_:)`` with each present object's attribute values.
    package func unpreparedDocumentsWithAttributes(for ids: [ObjectID], _ db: Database) throws -> [(ObjectID, [String]?, [DatabaseValue])] {
        guard !entity.attributes.isEmpty else { return try unpreparedDocuments(for: ids, db).map { ($0.0, $0.1, []) } }
        var attributes: [ObjectID: [DatabaseValue]] = [:]
        let documents = try documents(for: ids, db) { row, db in
            let values = try values(of: row, db)
            if values != nil, let id = ObjectID.fromDatabaseValue(row[0]) { attributes[id] = attributeValues(of: row) }
            return values
        }
        return documents.map { ($0.0, $0.1, attributes[$0.0] ?? []) }
    }

    private func documents(for ids: [ObjectID], _ db: Database, fields: (Row, Database) throws -> [String]?) throws -> [(ObjectID, [String]?)] {
        var result: [ObjectID: [String]?] = [:]
        for id in ids { result[id] = .some(nil) }
        let key = SQLQuoting.identifier(entity.entity.primaryKey)
        let ids = ids.sorted()
        for start in stride(from: 0, to: ids.count, by: KeyList.maximumCount) {
            let chunk = KeyList(ids[start..<min(start + KeyList.maximumCount, ids.count)])
            let rows = try Row.fetchCursor(db.cachedStatement(sql: selectSQL(where: "\(key) IN (\(chunk.placeholders))")), arguments: chunk.arguments)
            while let row = try rows.next() {
                guard let id = ObjectID.fromDatabaseValue(row[0]) else { continue }
                result[id] = .some(try fields(row, db))
            }
        }
        return ids.map { ($0, result[$0] ?? nil) }
    }

    /// The text of a field's value (``selectSQL(where:)`` has SQLite convert REAL values).
    private static func text(_ value: DatabaseValue, _ db: Database) throws -> String {
        switch value.storage {
        case .null: ""
        case let .string(text): text
        case let .int64(number): String(number)
        // Not reached through selectSQL; SQLite's conversion all the same.
        case .double: try String.fetchOne(db, sql: "SELECT CAST(? AS TEXT)", arguments: [value]) ?? ""
        case let .blob(data): String(decoding: data, as: UTF8.self)
        }
    }
}

extension DocumentSource {
    /// A document of field values (in ``IndexedEntity/fieldColumns`` order) and attribute values
    /// (in ``IndexedEntity/attributes`` order).
    package func document(columns: [String], values: [String], attributes: [DatabaseValue]) -> IndexedDocument {
        var document = IndexedDocument(Dictionary(zip(columns, values), uniquingKeysWith: { first, _ in first }))
        for (attribute, value) in zip(entity.attributes, attributes) { document.attributes[attribute.name] = AttributeValue(value) }
        return document
    }
}
