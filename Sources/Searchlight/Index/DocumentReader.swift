import Foundation
import GRDB
import SearchlightHistory

/// Reads the documents of a model's objects from their rows, as the indexer reads them (the
/// same SQL, the same ``DocumentBuilder`` hooks), for consumers that index elsewhere (the
/// PostgreSQL sink) or compare another index with the rows.
///
/// Values are returned as read, before ``SearchTextAnalyzer/prepare(_:)``: REAL values as
/// SQLite writes them as text (`CAST(x AS TEXT)`), NULL as empty text. Attribute values
/// (``IndexedDocument/attributes``) are returned as stored.
///
/// ```swift
/// let reader = DocumentReader(model: store.model)
/// let documents = try store.databaseWriter.read { db in
///     try reader.documents(entity: "Note", ids: [.integer(1), .integer(2)], in: db)
/// }
/// // [(.integer(1), IndexedDocument(["title": "…", "body": "…"])), (.integer(2), nil)]  (2 was deleted)
/// ```
public struct DocumentReader: Sendable {
    public let model: SearchlightModel
    private let sources: [String: DocumentSource]

    /// A reader of `model`'s entities; `builders` are the indexer's hooks, by entity name.
    public init(model: SearchlightModel, builders: [String: DocumentBuilder] = [:]) {
        self.model = model
        let text = IndexedText(tokenizer: model.tokenizer, foldsChineseVariants: model.foldChineseVariants)
        var sources: [String: DocumentSource] = [:]
        for (index, entity) in model.entities.enumerated() {
            sources[entity.name] = DocumentSource(entity: IndexedEntity(entity: entity, id: Int64(index + 1)),
                                                  builder: builders[entity.name], text: text)
        }
        self.sources = sources
    }

    /// The current documents of `ids`, in key order; nil for an object whose row is missing or
    /// that its builder excludes.
    ///
    /// Reads `SELECT key, fields FROM table WHERE key IN (…)`, 500 keys per statement.
    public func documents(entity: String, ids: [ObjectID], in db: Database) throws(SearchlightError) -> [(ObjectID, IndexedDocument?)] {
        let source = try source(entity)
        let columns = source.entity.fieldColumns
        return try SearchlightError.catchingCallbacks("cannot read documents of \(entity)") {
            try source.unpreparedDocumentsWithAttributes(for: ids, db).map { id, values, attributes in
                (id, values.map { source.document(columns: columns, values: $0, attributes: attributes) })
            }
        }
    }

    /// Calls `body` with every present document of `entity`, in key order (rows with a NULL key
    /// have no identity and are skipped, as the indexer skips them).
    ///
    /// Reads `SELECT key, fields FROM table WHERE key IS NOT NULL ORDER BY key` as a cursor.
    public func forEachDocument(entity: String, in db: Database,
                                _ body: (ObjectID, IndexedDocument) throws -> Void) throws(SearchlightError) {
        let source = try source(entity)
        let columns = source.entity.fieldColumns
        let key = SQLQuoting.identifier(source.entity.entity.primaryKey)
        try SearchlightError.catchingCallbacks("cannot read documents of \(entity)") {
            let rows = try Row.fetchCursor(db, sql: source.selectSQL(where: "\(key) IS NOT NULL") + " ORDER BY \(key)")
            while let row = try rows.next() {
                guard let id = ObjectID.fromDatabaseValue(row[0]), let values = try source.values(of: row, db) else { continue }
                try body(id, source.document(columns: columns, values: values, attributes: source.attributeValues(of: row)))
            }
        }
    }

    /// How each attribute of `entity` compares values (its source column's affinity and
    /// collation, as the table is now), by attribute name.
    public func attributeComparisons(entity: String, in db: Database) throws(SearchlightError) -> [String: AttributeComparison] {
        let source = try source(entity)
        return try SearchlightError.catching("cannot read the columns of \(entity)") {
            var comparisons: [String: AttributeComparison] = [:]
            for attribute in source.entity.entity.attributes {
                comparisons[attribute.name] = try IndexedAttribute.describe(attribute, table: source.entity.entity.table, db).comparison
            }
            return comparisons
        }
    }

    /// The numbers `entity`'s ranking hints (``SearchlightHistory/SearchlightModel/RankingHint``)
    /// read from a document's attribute values, one per hint in the model's order, as the local
    /// search reads them: a popularity hint's INTEGER or REAL value; a date hint's value in unix
    /// seconds (an INTEGER or REAL as it is, text as SQLite's `julianday()` reads it); nil where
    /// the hint reads nothing (its boost is 0).
    public func rankingInputs(entity: String, attributes: [String: AttributeValue], in db: Database) throws(SearchlightError) -> [Double?] {
        let source = try source(entity)
        return try SearchlightError.catching("cannot read the ranking hints of \(entity)") {
            try source.entity.entity.ranking.map { hint -> Double? in
                let value = attributes.first { $0.key.caseInsensitiveCompare(hint.attribute) == .orderedSame }?.value ?? .null
                switch value {
                case let .integer(number): return Double(number)
                case let .real(number): return number.isNaN ? nil : number
                case let .text(text) where hint.halfLifeDays != nil:
                    return try Double.fetchOne(db.cachedStatement(sql: "SELECT (julianday(?) - 2440587.5) * 86400.0"), arguments: [text])
                default: return nil
                }
            }
        }
    }

    private func source(_ entity: String) throws(SearchlightError) -> DocumentSource {
        guard let source = sources[entity] else { throw SearchlightError(.invalidArgument, "unknown entity \"\(entity)\"") }
        return source
    }
}
