import GRDB
import SearchlightHistory

extension Indexer {
    /// Reindexes the objects whose attributes satisfy `filter`, in the index or in the tables:
    /// those the index holds with matching values (their values may be stale) and those whose
    /// rows match now (they may be missing from the index). The way to reindex by a grouping
    /// key (an account, a folder) after, say, a `DocumentBuilder` started reading other data
    /// for it: `try indexer.reindex(matching: SearchFilter.Attribute("account") == 7)`.
    ///
    /// Only entities that declare every attribute the filter names are reindexed; the rows are
    /// selected by the same condition on the source columns:
    ///
    /// ```sql
    /// SELECT a.rowid FROM "searchlight_attr_1_g4" a WHERE ((a."account" = ?));   -- the index (or through the document map)
    /// SELECT s."id" FROM "notes" s WHERE ((s."acct_id" = ?));                   -- the table
    /// ```
    ///
    /// then reindexes those ids as ``reindex(ids:entity:)`` does, a chunk per transaction.
    ///
    /// - Throws: `invalidFilter` when no (given) entity declares an attribute the filter names;
    ///   `unknownEntity`; `indexNotBuilt`.
    @discardableResult
    public func reindex(matching filter: SearchFilter, entity name: String? = nil) throws(SearchlightError) -> Summary {
        try reindex(matching: filter, entity: name, until: { false })
    }

    /// ``reindex(matching:entity:)`` from async code: on a thread of its own (the calling task
    /// holds no cooperative thread). Cancelling the task stops it between chunks with
    /// ``SearchlightError/Code-swift.struct/cancelled``; the chunks committed stay.
    @discardableResult
    public func reindexAsync(matching filter: SearchFilter, entity name: String? = nil) async throws(SearchlightError) -> Summary {
        try await DedicatedThread.run(name: "searchlight.indexer") { [self] shouldStop throws(SearchlightError) in
            try reindex(matching: filter, entity: name, until: shouldStop)
        }
    }

    /// ``reindex(matching:entity:)``, stopping between chunks once `shouldStop` says so.
    @discardableResult
    func reindex(matching filter: SearchFilter, entity name: String?, until shouldStop: () -> Bool) throws(SearchlightError) -> Summary {
        try filter.validate()
        let selected = try SearchlightError.catching("cannot select the objects to reindex") {
            try store.databaseWriter.read { db -> [(String, [ObjectID])] in
                guard let live = try IndexState.live(db), let json = live.layout else {
                    throw SearchlightError(.indexNotBuilt, "the index has not been built yet; run a full reindex first")
                }
                let layout = try IndexLayout(json: json)
                if let name, !layout.entities.contains(where: { $0.entity.name == name }) {
                    throw SearchlightError(.unknownEntity, "unknown entity \"\(name)\" (the index holds: \(layout.entities.map(\.entity.name).joined(separator: ", ")))")
                }
                let entities = layout.entities.filter { name == nil || $0.entity.name == name }
                try SearchIndex.validate(filter, entities: entities)
                var selected: [(String, [ObjectID])] = []
                for entity in entities where !entity.isSuspended {
                    guard let inIndex = filter.sql(column: { entity.attribute(named: $0).map { "a." + SQLQuoting.identifier($0.name) } }),
                          let inTable = filter.sql(column: { entity.attribute(named: $0).map { "s." + SQLQuoting.identifier($0.column) } })
                    else { continue }
                    let table = SQLQuoting.identifier(live.schema.attributeTable(entity.id))
                    var condition = inIndex.sql
                    let indexed = entity.usesRowidKeys
                        ? "SELECT a.rowid FROM \(table) a WHERE \(condition)"
                        : "SELECT d.\"object_id\" FROM \(SQLQuoting.identifier(live.schema.documentTable)) d JOIN \(table) a ON a.rowid = d.\"id\" WHERE d.\"entity_id\" = ? AND \(condition)"
                    var ids = Set(try DatabaseValue.fetchAll(db, sql: indexed, arguments: StatementArguments((entity.usesRowidKeys ? [] : [entity.id.databaseValue]) + inIndex.arguments))
                        .compactMap(ObjectID.fromDatabaseValue))
                    if try db.tableExistsInCurrentSchema(entity.entity.table) {
                        condition = inTable.sql
                        let rows = "SELECT s.\(SQLQuoting.identifier(entity.entity.primaryKey)) FROM \(SQLQuoting.identifier(entity.entity.table)) s WHERE \(condition)"
                        ids.formUnion(try DatabaseValue.fetchAll(db, sql: rows, arguments: StatementArguments(inTable.arguments)).compactMap(ObjectID.fromDatabaseValue))
                    }
                    selected.append((entity.entity.name, ids.sorted()))
                }
                return selected
            }
        }
        var total = Summary()
        for (entity, ids) in selected where !ids.isEmpty {
            let summary = try reindex(ids: ids, entity: entity, until: shouldStop)
            total.upserted += summary.upserted
            total.removed += summary.removed
            total.token = summary.token
        }
        return total
    }
}
