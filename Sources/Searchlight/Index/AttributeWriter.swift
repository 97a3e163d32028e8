import GRDB
import SearchlightHistory

/// Writes the attribute values of an entity's documents into its attribute table
/// (``IndexSchema/attributeTable(_:)``), beside the text, in the caller's transaction. Values
/// are written as read from the source row (``DocumentSource/attributeValues(of:)``): the
/// table's columns have the source columns' affinity, so they stay what they are.
///
/// ```sql
/// INSERT OR REPLACE INTO "searchlight_attr_1_g1"(rowid, "year", "tag") VALUES (?, ?, ?);
/// DELETE FROM "searchlight_attr_1_g1" WHERE rowid = ?;
/// ```
struct AttributeWriter {
    private let upsertSQL: String?
    private let deleteSQL: String?

    init(schema: IndexSchema, entity: IndexedEntity) {
        guard !entity.attributes.isEmpty else { upsertSQL = nil; deleteSQL = nil; return }
        let table = SQLQuoting.identifier(schema.attributeTable(entity.id))
        let columns = entity.attributes.map { SQLQuoting.identifier($0.name) }.joined(separator: ", ")
        upsertSQL = "INSERT OR REPLACE INTO \(table)(rowid, \(columns)) VALUES (?, \(databaseQuestionMarks(count: entity.attributes.count)))"
        deleteSQL = "DELETE FROM \(table) WHERE rowid = ?"
    }

    /// Sets the values of the document `rowid` (nothing for an entity without attributes).
    func upsert(_ rowid: Int64, _ values: [DatabaseValue], _ db: Database) throws {
        guard let upsertSQL else { return }
        var arguments: [DatabaseValue] = [rowid.databaseValue]
        arguments.append(contentsOf: values)
        try db.cachedStatement(sql: upsertSQL).execute(arguments: StatementArguments(arguments))
    }

    /// Removes the values of the document `rowid`.
    func delete(_ rowid: Int64, _ db: Database) throws {
        guard let deleteSQL else { return }
        try db.cachedStatement(sql: deleteSQL).execute(arguments: [rowid])
    }
}
