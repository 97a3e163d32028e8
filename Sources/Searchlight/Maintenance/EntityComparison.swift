import GRDB
import SearchlightHistory

/// Compares one entity's source rows with its documents in the index, chunk by chunk, inside
/// the caller's read transaction (``Indexer/verify(_:observe:)``). What it holds at any time is
/// one chunk, whatever the size of the table, plus the objects found to differ.
struct EntityComparison {
    let entity: IndexedEntity
    let schema: IndexSchema
    /// The indexer's reading of the rows, used only for an entity with a ``DocumentBuilder``.
    let source: DocumentSource
    let text: IndexedText
    /// Objects with history after the indexer's checkpoint: left out.
    let skip: Set<ObjectID>
    /// Rows (or keys) per chunk.
    let chunkSize: Int
    let observe: ((Indexer.VerificationChunk) -> Void)?

    /// A chunk of source rows also ends once its text reaches this size (large documents).
    static let chunkTextBytes = 4 << 20

    private var sourceDocuments = 0
    private var indexedDocuments = 0
    private var missing: [ObjectID] = [], stale: [ObjectID] = [], extra: [ObjectID] = []

    init(entity: IndexedEntity, schema: IndexSchema, source: DocumentSource, text: IndexedText, skip: Set<ObjectID>,
         chunkSize: Int, observe: ((Indexer.VerificationChunk) -> Void)?) {
        self.entity = entity
        self.schema = schema
        self.source = source
        self.text = text
        self.skip = skip
        self.chunkSize = chunkSize
        self.observe = observe
    }

    var report: VerificationReport.EntityReport {
        .init(entity: entity.entity.name, sourceDocuments: sourceDocuments, indexedDocuments: indexedDocuments,
              missing: missing.sorted(), stale: stale.sorted(), extra: extra.sorted())
    }

    private var table: String { SQLQuoting.identifier(entity.entity.table) }
    private var key: String { SQLQuoting.identifier(entity.entity.primaryKey) }
    private var fts: String { SQLQuoting.identifier(schema.ftsTable(entity.id)) }
    private var documents: String { SQLQuoting.identifier(schema.documentTable) }
    private var attributeTable: String { SQLQuoting.identifier(schema.attributeTable(entity.id)) }

    /// Reads the source rows in key order with the text they should have: SQLite's own text for
    /// each value, whatever its type (for a builder, every column, as the indexer reads them).
    ///
    /// ```sql
    /// SELECT "id", CAST("title" AS TEXT), CAST("price" AS TEXT) FROM "items" ORDER BY "id"
    /// ```
    ///
    /// (A BLOB is read as its bytes: SQLite's text of it would end at its first NUL byte when read
    /// as a C string, where FTS5 indexes every byte.)
    private var expectedSQL: String {
        guard source.builder == nil else { return source.selectSQL(where: "1") + " ORDER BY \(key)" }
        var columns = entity.fieldColumns.map { column -> String in
            let c = SQLQuoting.identifier(column)
            return "CASE typeof(\(c)) WHEN 'blob' THEN \(c) ELSE CAST(\(c) AS TEXT) END"
        }.joined(separator: ", ")
        // Attribute values as stored, after the fields (as the indexer reads them).
        columns += entity.attributes.map { ", " + SQLQuoting.identifier($0.column) }.joined()
        return "SELECT \(key), \(columns) FROM \(table) ORDER BY \(key)"
    }

    /// The text a value of ``expectedSQL`` should be indexed as: SQLite's text, or a BLOB's
    /// bytes as UTF-8.
    private static func expectedText(_ value: DatabaseValue) -> String {
        switch value.storage {
        case let .blob(data): String(decoding: data, as: UTF8.self)
        case let .string(text): text
        default: ""
        }
    }

    /// Pass 1: the source rows, chunk by chunk, each chunk compared with its documents (found
    /// by key): missing, stale, and excluded by a builder but indexed (extra).
    mutating func compareSourceRows(_ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: expectedSQL)
        var chunk: [(id: ObjectID, fields: [String]?, attributes: [DatabaseValue])] = []
        var bytes = 0
        while let row = try rows.next() {
            guard let id = ObjectID.fromDatabaseValue(row[0]), !skip.contains(id) else { continue }
            let fields: [String]? = source.builder == nil
                ? (0..<entity.fieldColumns.count).map { text.prepare(Self.expectedText(row[$0 + 1])) }
                : try source.fields(of: row, db)
            bytes += fields?.reduce(0) { $0 + $1.utf8.count } ?? 0
            chunk.append((id, fields, source.attributeValues(of: row)))
            if chunk.count >= chunkSize || bytes >= Self.chunkTextBytes {
                try compare(chunk, expectedBytes: bytes, db)
                chunk.removeAll(keepingCapacity: true)
                bytes = 0
            }
        }
        if !chunk.isEmpty { try compare(chunk, expectedBytes: bytes, db) }
    }

    private mutating func compare(_ chunk: [(id: ObjectID, fields: [String]?, attributes: [DatabaseValue])], expectedBytes: Int, _ db: Database) throws {
        var columns = entity.fieldColumns.map { "f.\(SQLQuoting.identifier($0))" }.joined(separator: ", ")
        // Attributes: whether the document has its row of values, then the values.
        var join = ""
        if !entity.attributes.isEmpty {
            columns += ", a.rowid IS NOT NULL" + entity.attributes.map { ", a." + SQLQuoting.identifier($0.name) }.joined()
            join = " LEFT JOIN \(attributeTable) a ON a.rowid = " + (entity.usesRowidKeys ? "f.rowid" : "d.\"id\"")
        }
        let placeholders = databaseQuestionMarks(count: chunk.count)
        let ids = StatementArguments(chunk.map(\.id))
        let rows = entity.usesRowidKeys
            ? try Row.fetchCursor(db, sql: "SELECT f.rowid, 1, \(columns) FROM \(fts) f\(join) WHERE f.rowid IN (\(placeholders))", arguments: ids)
            : try Row.fetchCursor(db, sql: """
                SELECT d."object_id", f.rowid IS NOT NULL, \(columns)
                FROM \(documents) d LEFT JOIN \(fts) f ON f.rowid = d."id"\(join)
                WHERE d."entity_id" = ? AND d."object_id" IN (\(placeholders))
                """, arguments: [entity.id] + ids)
        /// Indexed text by object; an empty array for a document without text.
        var indexed: [ObjectID: [String]] = [:]
        /// Indexed attribute values by object; nil for a document without its row of values.
        var indexedAttributes: [ObjectID: [DatabaseValue]?] = [:]
        var bytes = expectedBytes
        let fieldCount = entity.fieldColumns.count
        while let row = try rows.next() {
            guard let id = ObjectID.fromDatabaseValue(row[0]) else { continue }
            let hasText: Bool = row[1]
            let fields = hasText ? (0..<fieldCount).map { (row[$0 + 2] as String?) ?? "" } : []
            bytes += fields.reduce(0) { $0 + $1.utf8.count }
            indexed[id] = fields
            if !entity.attributes.isEmpty {
                let hasValues: Bool = row[fieldCount + 2]
                indexedAttributes[id] = hasValues ? entity.attributes.indices.map { row[fieldCount + 3 + $0] } : nil
            }
        }
        observe?(.init(entity: entity.entity.name, documents: chunk.count, textBytes: bytes))
        for (id, expected, attributes) in chunk {
            let found = indexed[id]
            guard let expected else {
                if found != nil { extra.append(id) }
                continue
            }
            sourceDocuments += 1
            guard let found else { missing.append(id); continue }
            // No entity has zero fields, so an empty array is never the text of a document.
            if found != expected || !entity.attributes.isEmpty && !Self.same(indexedAttributes[id] ?? nil, attributes) { stale.append(id) }
        }
    }

    /// Whether indexed attribute values are the row's: the same storage classes and values
    /// (`1` and `1.0` differ).
    private static func same(_ indexed: [DatabaseValue]?, _ expected: [DatabaseValue]) -> Bool {
        guard let indexed, indexed.count == expected.count else { return false }
        return zip(indexed, expected).allSatisfy { a, b in
            switch (a.storage, b.storage) {
            case (.null, .null): true
            case let (.int64(x), .int64(y)): x == y
            case let (.double(x), .double(y)): x == y
            case let (.string(x), .string(y)): x.utf8.elementsEqual(y.utf8)
            case let (.blob(x), .blob(y)): x == y
            default: false
            }
        }
    }

    /// Pass 2: the documents, chunk by chunk; those whose row does not exist are extra (a
    /// suspended entity should have none at all).
    mutating func findDocumentsWithoutRows(_ db: Database) throws {
        let rows = entity.usesRowidKeys
            ? try DatabaseValue.fetchCursor(db, sql: "SELECT rowid FROM \(fts)")
            : try DatabaseValue.fetchCursor(db, sql: "SELECT \"object_id\" FROM \(documents) WHERE \"entity_id\" = ?", arguments: [entity.id])
        var chunk: [ObjectID] = []
        while let value = try rows.next() {
            guard let id = ObjectID.fromDatabaseValue(value) else { continue }
            indexedDocuments += 1
            if skip.contains(id) { continue }
            chunk.append(id)
            if chunk.count >= chunkSize {
                try findRows(chunk, db)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        if !chunk.isEmpty { try findRows(chunk, db) }
    }

    private mutating func findRows(_ chunk: [ObjectID], _ db: Database) throws {
        observe?(.init(entity: entity.entity.name, documents: chunk.count, textBytes: 0))
        guard !entity.isSuspended else { extra += chunk; return }
        let rows = try DatabaseValue.fetchCursor(
            db, sql: "SELECT \(key) FROM \(table) WHERE \(key) IN (\(databaseQuestionMarks(count: chunk.count)))",
            arguments: StatementArguments(chunk))
        var found = Set<ObjectID>()
        while let value = try rows.next() {
            if let id = ObjectID.fromDatabaseValue(value) { found.insert(id) }
        }
        extra += chunk.filter { !found.contains($0) }
    }
}
