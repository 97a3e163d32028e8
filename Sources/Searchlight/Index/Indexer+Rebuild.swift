import Foundation
import GRDB
import SearchlightHistory

extension Indexer {
    /// Progress of a rebuild: documents read from the source so far, out of the total.
    public struct Progress: Hashable, Sendable {
        public var done: Int
        public var total: Int
    }

    /// Rebuilds the index from scratch, online: the new index is built beside the live one
    /// and swapped in atomically, so searches keep answering from the old index until the
    /// swap; changes committed during the rebuild are applied right after it.
    @discardableResult
    public func reindex(progress: (@Sendable (Progress) -> Void)? = nil) throws(SearchlightError) -> Summary {
        var summary = Summary()
        summary.rebuildReason = "requested"
        summary.add(try rebuild(reason: "requested", progress: progress))
        let rest = try indexPendingChanges()
        summary.changes += rest.changes
        summary.upserted += rest.upserted
        summary.removed += rest.removed
        summary.token = rest.token
        return summary
    }

    /// Makes the index match the current rows of these objects, whatever history says.
    @discardableResult
    public func reindex(ids: [ObjectID], entity name: String) throws(SearchlightError) -> Summary {
        guard store.model.entity(named: name) != nil else {
            throw SearchlightError(.unknownEntity, "unknown entity \"\(name)\" (the model declares: \(store.model.entities.map(\.name).joined(separator: ", ")))")
        }
        return try SearchlightError.catching("cannot reindex \(name) objects") {
            try store.dbPool.write { db in
                guard let schema = try IndexSchema.live(db) else {
                    throw SearchlightError(.indexNotBuilt, "the index has not been built yet; run a full reindex first")
                }
                let entities = try IndexedEntity.resolve(store.model, db)
                guard let entity = entities.first(where: { $0.entity.name == name }) else { return Summary() }
                let counts = try makeWriter(schema, entities).apply(ids, entityID: entity.id, db)
                return Summary(changes: 0, upserted: counts.upserted, removed: counts.removed, token: try HistoryLog.headToken(db))
            }
        }
    }

    /// Builds a new generation of the index from the source tables and swaps it in.
    func rebuild(reason: String, progress: (@Sendable (Progress) -> Void)?) throws(SearchlightError) -> Update {
        logger.notice("rebuilding the index from scratch: \(reason)")
        let model = store.model
        let tokenizer = model.tokenizer
        // 1. Create the next generation's tables; note where history stands.
        let (schema, startToken, entities, total) = try SearchlightError.catching("cannot start the rebuild") {
            try store.dbPool.write { db -> (IndexSchema, HistoryToken, [IndexedEntity], Int) in
                let live = try IndexSchema.live(db)
                try IndexSchema.dropGenerations(except: live?.generation, db)
                let schema = IndexSchema(generation: (live?.generation ?? 0) + 1)
                let entities = try IndexedEntity.resolve(model, db)
                for statement in schema.createStatements(for: entities, tokenizer: tokenizer) {
                    do {
                        try db.execute(sql: statement)
                    } catch let error as DatabaseError where statement.contains("USING fts5") {
                        throw SearchlightError(.invalidModel, "cannot create the full-text index (tokenizer \"\(tokenizer)\"): \(error.message ?? "\(error)")", underlyingError: error)
                    }
                }
                var total = 0
                for entity in entities {
                    total += try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLQuoting.identifier(entity.entity.table))") ?? 0
                }
                return (schema, try HistoryLog.headToken(db), entities, total)
            }
        }
        // 2. Fill it in chunks, each a short write transaction: writers and searches go on.
        let writer = makeWriter(schema, entities)
        var done = 0
        var upserted = 0
        progress?(Progress(done: 0, total: total))
        for entity in entities {
            let source = writer.sources[entity.id]!
            let key = SQLQuoting.identifier(entity.entity.primaryKey)
            var after: DatabaseValue?
            while true {
                let (count, last, inserted) = try SearchlightError.catching("cannot rebuild the index") {
                    try store.dbPool.write { db -> (Int, DatabaseValue?, Int) in
                        let condition = after == nil ? "1" : "\(key) > ?"
                        let rows = try Row.fetchAll(db, sql: source.selectSQL(where: condition) + " ORDER BY \(key) LIMIT ?",
                                                    arguments: StatementArguments(after.map { [$0] } ?? []) + [configuration.rebuildChunkSize])
                        var inserted = 0
                        for row in rows {
                            guard let id = ObjectID.fromDatabaseValue(row[0]), let fields = try source.fields(of: row, db) else { continue }
                            try writer.insertNew(id, fields: fields, entityID: entity.id, db)
                            inserted += 1
                        }
                        return (rows.count, rows.last?[0], inserted)
                    }
                }
                done += count
                upserted += inserted
                progress?(Progress(done: min(done, max(total, done)), total: max(total, done)))
                guard count == configuration.rebuildChunkSize, let last else { break }
                after = last
            }
        }
        // 3. Swap: the new generation becomes live, and the checkpoint moves to where the
        // rebuild started (changes since then are applied next, idempotently).
        try SearchlightError.catching("cannot swap in the rebuilt index") {
            try store.dbPool.write { db in
                try Meta.set(db, "index.generation", schema.generation)
                try Meta.set(db, "index.fingerprint", IndexSchema.fingerprint(model, entities))
                try IndexSchema.dropGenerations(except: schema.generation, db)
                try store.saveCheckpoint(startToken, for: configuration.author, in: db)
            }
        }
        let update = Update(token: startToken, changes: 0, upserted: upserted, removed: 0, rebuilt: true)
        publish(update)
        logger.notice("rebuilt the index: \(upserted) documents, generation \(schema.generation), from token \(startToken)")
        return update
    }
}
