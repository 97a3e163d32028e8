import GRDB
import SearchlightHistory

extension Indexer {
    /// Checks that the index can be built for `model` (the tokenizer exists, no field is named
    /// like an FTS5 reserved column) without touching any database: call it before installing.
    public static func validate(model: SearchlightModel) throws(SearchlightError) {
        for entity in model.entities {
            for field in entity.fields where ["rank", "rowid"].contains(field.column.lowercased()) {
                throw SearchlightError(.invalidModel, "entity \"\(entity.name)\": a field cannot be named \"\(field.column)\" (reserved by FTS5)")
            }
        }
        do {
            let scratch = try DatabaseQueue()
            try scratch.write { db in
                for (index, entity) in model.entities.enumerated() where !entity.fields.isEmpty {
                    let indexed = IndexedEntity(entity: entity, id: Int64(index + 1))
                    for statement in IndexSchema(generation: 1).createStatements(for: [indexed], tokenizer: model.tokenizer)
                    where !statement.hasPrefix("CREATE TABLE") {
                        try db.execute(sql: statement)
                    }
                }
            }
        } catch let error as DatabaseError {
            throw SearchlightError(.invalidModel, "the model cannot be indexed (tokenizer \"\(model.tokenizer)\"): \(error.message ?? "\(error)")", underlyingError: error)
        } catch {
            throw SearchlightError(wrapping: error, doing: "cannot check the model")
        }
    }
}

extension SearchIndex {
    /// Documents in the index, by entity name (empty before the first indexing).
    public func documentCounts() throws(SearchlightError) -> [String: Int] {
        try migrateIfNeeded()
        return try SearchlightError.catching("cannot count indexed documents") {
            try store.dbPool.read { db in
                guard let (schema, entities) = try liveEntities(db) else { return [:] }
                var counts: [String: Int] = [:]
                for entity in entities {
                    counts[entity.entity.name] = entity.usesRowidKeys
                        ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLQuoting.identifier(schema.ftsTable(entity.id)))") ?? 0
                        : try Int.fetchOne(db, sql: """
                            SELECT count(*) FROM \(SQLQuoting.identifier(schema.documentTable)) WHERE "entity_id" = ?
                            """, arguments: [entity.id]) ?? 0
                }
                return counts
            }
        }
    }
}
