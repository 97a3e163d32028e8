import GRDB
import SearchlightHistory

/// Writes documents into one generation of the index. State-based and idempotent: applying
/// an object id reads the object's current row and makes the index match it.
package struct IndexWriter {
    package var schema: IndexSchema
    package var sources: [Int64: DocumentSource]
    /// The statements of each entity, built once per writer (not once per document).
    private var statements: [Int64: SQLText] = [:]
    /// Each entity's attribute values (``AttributeWriter``).
    private var attributeWriters: [Int64: AttributeWriter] = [:]

    private struct SQLText {
        /// Nil when object ids are the FTS rowids (no document map).
        var insertDocument: String?
        var insertText: String
        var updateText: String
        var deleteText: String
        var deleteDocument: String?
        /// Reads a document's stored text (the vocabulary subtracts its words; the same text is
        /// not written again).
        var selectText: String
        var findDocumentsPrefix: String
    }

    /// Whether this generation keeps a vocabulary (``IndexLayout/keepsVocabulary``).
    package var keepsVocabulary: Bool

    package init(schema: IndexSchema, keepsVocabulary: Bool, sources: [Int64: DocumentSource]) {
        self.keepsVocabulary = keepsVocabulary
        self.schema = schema
        self.sources = sources
        let documents = SQLQuoting.identifier(schema.documentTable)
        for (entityID, source) in sources {
            attributeWriters[entityID] = AttributeWriter(schema: schema, entity: source.entity)
            let fts = SQLQuoting.identifier(schema.ftsTable(entityID))
            let quoted = source.entity.fieldColumns.map(SQLQuoting.identifier)
            let columns = quoted.joined(separator: ", ")
            let placeholders = databaseQuestionMarks(count: quoted.count)
            let assignments = quoted.map { $0 + " = ?" }.joined(separator: ", ")
            let mapped = !source.entity.usesRowidKeys
            statements[entityID] = SQLText(
                insertDocument: mapped ? "INSERT INTO \(documents)(\"entity_id\", \"object_id\") VALUES (?, ?)" : nil,
                insertText: "INSERT INTO \(fts)(rowid, \(columns)) VALUES (?, \(placeholders))",
                updateText: "UPDATE \(fts) SET \(assignments) WHERE rowid = ?",
                deleteText: "DELETE FROM \(fts) WHERE rowid = ?",
                deleteDocument: mapped ? "DELETE FROM \(documents) WHERE \"id\" = ?" : nil,
                selectText: "SELECT \(columns) FROM \(fts) WHERE rowid = ?",
                findDocumentsPrefix: mapped
                    ? "SELECT \"object_id\", \"id\" FROM \(documents) WHERE \"entity_id\" = ? AND \"object_id\" IN ("
                    : "SELECT rowid, rowid FROM \(fts) WHERE rowid IN (")
        }
    }

    /// What a write did.
    package struct Counts: Sendable, Hashable {
        package var upserted = 0
        package var removed = 0
        package static func + (a: Counts, b: Counts) -> Counts { Counts(upserted: a.upserted + b.upserted, removed: a.removed + b.removed) }
    }

    /// Makes the index match the current rows of `ids` (missing or excluded objects are removed).
    package func apply(_ ids: [ObjectID], entityID: Int64, _ db: Database) throws -> Counts {
        guard let source = sources[entityID] else { return Counts() }
        let sql = statements[entityID]!
        var counts = Counts()
        var vocabulary = try makeVocabulary(db)
        let documents = try source.documentsWithAttributes(for: ids, db)
        let attributes = attributeWriters[entityID]!
        for start in stride(from: 0, to: documents.count, by: KeyList.maximumCount) {
            let chunk = documents[start..<min(start + KeyList.maximumCount, documents.count)]
            // One lookup for the chunk's existing documents, not one per object.
            var rowids: [ObjectID: Int64] = [:]
            let ids = KeyList(chunk.map(\.0), after: sql.insertDocument == nil ? [] : [entityID])
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql.findDocumentsPrefix + ids.placeholders + ")"), arguments: ids.arguments)
            while let row = try rows.next() {
                if let id = ObjectID.fromDatabaseValue(row[0]) { rowids[id] = row[1] }
            }
            for (id, fields, values) in chunk {
                switch (fields, rowids[id]) {
                case let (fields?, rowid?):
                    let old = try storedText(rowid, sql, db)
                    // The same text (an attribute or a preserved column changed, or the row was
                    // written as it was): FTS5 would delete and insert every word of it again.
                    if old == fields {
                        try attributes.upsert(rowid, values, db)
                        counts.upserted += 1
                        continue
                    }
                    if try RawStatement(sql.updateText, db).execute(Self.values(fields, then: rowid)) == 0 {
                        // A document whose text is missing (a damaged index being repaired).
                        try RawStatement(sql.insertText, db).execute(Self.values(rowid, then: fields))
                    }
                    vocabulary?.replace(old ?? [], with: fields)
                    try attributes.upsert(rowid, values, db)
                    counts.upserted += 1
                case let (fields?, nil):
                    try insertNew(id, fields: fields, attributes: values, entityID: entityID, vocabulary: &vocabulary, db)
                    counts.upserted += 1
                case let (nil, rowid?):
                    if vocabulary != nil, let old = try storedText(rowid, sql, db) { vocabulary?.count(old, sign: -1) }
                    try RawStatement(sql.deleteText, db).execute([.integer(rowid)])
                    try attributes.delete(rowid, db)
                    if let deleteDocument = sql.deleteDocument { try db.cachedStatement(sql: deleteDocument).execute(arguments: [rowid]) }
                    counts.removed += 1
                case (nil, nil):
                    break
                }
            }
        }
        try vocabulary?.flush(db)
        return counts
    }

    /// A writer of this generation's vocabulary (``IndexVocabulary``), nil when the index keeps
    /// none (a trigram or porter tokenizer, or a generation built before it existed).
    package func makeVocabulary(_ db: Database) throws -> IndexVocabulary? {
        guard keepsVocabulary, let text = sources.values.first?.text else { return nil }
        return try IndexVocabulary(table: schema.termTable, text: text, db)
    }

    /// The text the index holds for `rowid` (nil if none).
    private func storedText(_ rowid: Int64, _ sql: SQLText, _ db: Database) throws -> [String]? {
        try RawStatement(sql.selectText, db).firstRowText([.integer(rowid)])
    }

    /// A text statement's values, bound through SQLite's C API (``RawStatement``): GRDB's
    /// `StatementArguments` boxed each value, about 6,000 instructions a WordNet document.
    private static func values(_ rowid: Int64, then fields: [String]) -> [RawStatement.RawValue] {
        var values: [RawStatement.RawValue] = [.integer(rowid)]
        values.reserveCapacity(fields.count + 1)
        for field in fields { values.append(.text(field)) }
        return values
    }

    private static func values(_ fields: [String], then rowid: Int64) -> [RawStatement.RawValue] {
        var values: [RawStatement.RawValue] = []
        values.reserveCapacity(fields.count + 1)
        for field in fields { values.append(.text(field)) }
        values.append(.integer(rowid))
        return values
    }

    /// Adds an object the index does not hold yet (a rebuild fills empty tables this way),
    /// with its attribute values, counting its words in `vocabulary` (written by its
    /// ``IndexVocabulary/flush(_:)``).
    package func insertNew(_ id: ObjectID, fields: [String], attributes: [DatabaseValue] = [], entityID: Int64,
                           vocabulary: inout IndexVocabulary?, _ db: Database) throws {
        let sql = statements[entityID]!
        let rowid: Int64
        if let insertDocument = sql.insertDocument {
            try db.cachedStatement(sql: insertDocument).execute(arguments: [entityID, id])
            rowid = db.lastInsertedRowID
        } else if case let .integer(value) = id {
            rowid = value
        } else {
            throw SearchlightError(.databaseError, "object id \(id) of an INTEGER PRIMARY KEY table is not an integer")
        }
        try RawStatement(sql.insertText, db).execute(Self.values(rowid, then: fields))
        try attributeWriters[entityID]!.upsert(rowid, attributes, db)
        vocabulary?.count(fields, sign: 1)
    }
}
