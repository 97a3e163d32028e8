import GRDB
import SearchlightHistory

/// Writes documents into one generation of the index. State-based and idempotent: applying
/// an object id reads the object's current row and makes the index match it.
package struct IndexWriter {
    package var schema: IndexSchema
    package var sources: [Int64: DocumentSource]

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

    package func upsert(_ id: ObjectID, fields: [String], entityID: Int64, _ db: Database) throws {
        let fts = SQLQuoting.identifier(schema.ftsTable(entityID))
        let documents = SQLQuoting.identifier(schema.documentTable)
        let columns = sources[entityID]!.entity.fieldColumns.map(SQLQuoting.identifier)
        if let rowid = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT "id" FROM \(documents) WHERE "entity_id" = ? AND "object_id" = ?
            """), arguments: [entityID, id]) {
            let assignments = columns.map { "\($0) = ?" }.joined(separator: ", ")
            try db.cachedStatement(sql: "UPDATE \(fts) SET \(assignments) WHERE rowid = ?")
                .execute(arguments: StatementArguments(fields) + [rowid])
        } else {
            try db.cachedStatement(sql: "INSERT INTO \(documents)(\"entity_id\", \"object_id\") VALUES (?, ?)")
                .execute(arguments: [entityID, id])
            let rowid = db.lastInsertedRowID
            try db.cachedStatement(sql: """
                INSERT INTO \(fts)(rowid, \(columns.joined(separator: ", "))) VALUES (?, \(databaseQuestionMarks(count: columns.count)))
                """).execute(arguments: [rowid] + StatementArguments(fields))
        }
    }

    /// Removes an object; false if it was not indexed.
    @discardableResult
    package func remove(_ id: ObjectID, entityID: Int64, _ db: Database) throws -> Bool {
        let documents = SQLQuoting.identifier(schema.documentTable)
        guard let rowid = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT "id" FROM \(documents) WHERE "entity_id" = ? AND "object_id" = ?
            """), arguments: [entityID, id]) else { return false }
        try db.cachedStatement(sql: "DELETE FROM \(SQLQuoting.identifier(schema.ftsTable(entityID))) WHERE rowid = ?").execute(arguments: [rowid])
        try db.cachedStatement(sql: "DELETE FROM \(documents) WHERE \"id\" = ?").execute(arguments: [rowid])
        return true
    }
}
