import GRDB
import SearchlightHistory

/// Writes documents into one generation of the index. State-based and idempotent: applying
/// an object id reads the object's current row and makes the index match it.
package struct IndexWriter {
    package var schema: IndexSchema
    package var sources: [Int64: DocumentSource]
    /// The statements of each entity, built once per writer (not once per document).
    private var statements: [Int64: SQLText] = [:]

    private struct SQLText {
        var insertDocument: String
        var insertText: String
        var updateText: String
        var findDocument: String
        var deleteText: String
        var deleteDocument: String
    }

    package init(schema: IndexSchema, sources: [Int64: DocumentSource]) {
        self.schema = schema
        self.sources = sources
        let documents = SQLQuoting.identifier(schema.documentTable)
        for (entityID, source) in sources {
            let fts = SQLQuoting.identifier(schema.ftsTable(entityID))
            let quoted = source.entity.fieldColumns.map(SQLQuoting.identifier)
            let columns = quoted.joined(separator: ", ")
            let placeholders = databaseQuestionMarks(count: quoted.count)
            let assignments = quoted.map { $0 + " = ?" }.joined(separator: ", ")
            statements[entityID] = SQLText(
                insertDocument: "INSERT INTO \(documents)(\"entity_id\", \"object_id\") VALUES (?, ?)",
                insertText: "INSERT INTO \(fts)(rowid, \(columns)) VALUES (?, \(placeholders))",
                updateText: "UPDATE \(fts) SET \(assignments) WHERE rowid = ?",
                findDocument: "SELECT \"id\" FROM \(documents) WHERE \"entity_id\" = ? AND \"object_id\" = ?",
                deleteText: "DELETE FROM \(fts) WHERE rowid = ?",
                deleteDocument: "DELETE FROM \(documents) WHERE \"id\" = ?")
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
        var counts = Counts()
        for (id, fields) in try source.documents(for: ids, db) {
            if let fields {
                try upsert(id, fields: fields, entityID: entityID, db)
                counts.upserted += 1
            } else if try remove(id, entityID: entityID, db) {
                counts.removed += 1
            }
        }
        return counts
    }

    /// Stores an object's text, replacing what the index held for it.
    package func upsert(_ id: ObjectID, fields: [String], entityID: Int64, _ db: Database) throws {
        let sql = statements[entityID]!
        if let rowid = try Int64.fetchOne(db.cachedStatement(sql: sql.findDocument), arguments: [entityID, id]) {
            try db.cachedStatement(sql: sql.updateText).execute(arguments: StatementArguments(fields) + [rowid])
        } else {
            try insertNew(id, fields: fields, entityID: entityID, db)
        }
    }

    /// Adds an object the index does not hold yet (a rebuild fills empty tables this way).
    package func insertNew(_ id: ObjectID, fields: [String], entityID: Int64, _ db: Database) throws {
        let sql = statements[entityID]!
        try db.cachedStatement(sql: sql.insertDocument).execute(arguments: [entityID, id])
        try db.cachedStatement(sql: sql.insertText).execute(arguments: [db.lastInsertedRowID] + StatementArguments(fields))
    }

    /// Removes an object; false if it was not indexed.
    @discardableResult
    package func remove(_ id: ObjectID, entityID: Int64, _ db: Database) throws -> Bool {
        let sql = statements[entityID]!
        guard let rowid = try Int64.fetchOne(db.cachedStatement(sql: sql.findDocument), arguments: [entityID, id]) else { return false }
        try db.cachedStatement(sql: sql.deleteText).execute(arguments: [rowid])
        try db.cachedStatement(sql: sql.deleteDocument).execute(arguments: [rowid])
        return true
    }
}
