import Foundation
import GRDB
import SearchlightHistory

/// The tables of the search index, and which generation of them is live.
///
/// The index keeps its own copy of the indexed text: one regular (contentful) FTS5 table per
/// entity. An object whose table has an `INTEGER PRIMARY KEY` uses its id as the FTS rowid;
/// other keys go through a document table that maps (entity, object id) to the rowid. It never
/// reads the source tables at query time, so a deleted or changed row can never leave a stale
/// match behind (external-content FTS5 cannot delete correctly once its source row changed).
///
/// Tables carry a generation number. A rebuild fills generation N+1 beside the live one and
/// switches `index.generation` in one transaction; searches read the generation in their own
/// read transaction, so they see either the old index or the new one, never half of one.
/// `Schemas/index.sql` documents these tables for generation 1.
package struct IndexSchema: Sendable {
    package var generation: Int

    package var documentTable: String { "searchlight_document_g\(generation)" }
    package func ftsTable(_ entityID: Int64) -> String { "searchlight_fts_\(entityID)_g\(generation)" }

    /// The prefix lengths indexed for as-you-type queries.
    package static let prefixes = "2 3 4"

    /// The statements that create this generation's tables for `entities`.
    package func createStatements(for entities: [IndexedEntity], tokenizer: String) -> [String] {
        var statements = [
            """
            CREATE TABLE \(SQLQuoting.identifier(documentTable)) (
              "id" INTEGER PRIMARY KEY,
              "entity_id" INTEGER NOT NULL,
              "object_id" NOT NULL,
              UNIQUE ("entity_id", "object_id")
            )
            """,
        ]
        for entity in entities {
            let fts = SQLQuoting.identifier(ftsTable(entity.id))
            let columns = entity.fieldColumns.map(SQLQuoting.identifier).joined(separator: ", ")
            statements.append("""
                CREATE VIRTUAL TABLE \(fts) USING fts5(\(columns), \
                tokenize = \(SQLQuoting.literal(tokenizer)), prefix = \(SQLQuoting.literal(Self.prefixes)))
                """)
            // Rank with the fields' weights, so that `ORDER BY rank` uses FTS5's own sorting.
            statements.append("INSERT INTO \(fts)(\(fts), rank) VALUES ('rank', \(SQLQuoting.literal(Self.rankFunction(entity))))")
        }
        return statements
    }

    /// `bm25(10.0, 1.0)`: the weights are numbers from the model, never user text.
    package static func rankFunction(_ entity: IndexedEntity) -> String {
        "bm25(" + entity.weights.map { String($0) }.joined(separator: ", ") + ")"
    }

    /// The live generation, or nil if the index was never built.
    package static func live(_ db: Database) throws -> IndexSchema? {
        try Meta.get(db, "index.generation", as: Int.self).map(IndexSchema.init(generation:))
    }

    /// Drops every index table whose generation is not `keep` (leftovers of a crashed rebuild,
    /// or the generation a rebuild replaced).
    package static func dropGenerations(except keep: Int?, _ db: Database) throws {
        let names = try String.fetchAll(db, sql: """
            SELECT "name" FROM "sqlite_master" WHERE "type" = 'table'
            AND ("name" GLOB 'searchlight_document_g[0-9]*' OR "name" GLOB 'searchlight_fts_[0-9]*_g[0-9]*')
            """)
        for name in names {
            guard let suffix = name.split(separator: "_").last, suffix.hasPrefix("g"), let generation = Int(suffix.dropFirst()) else { continue }
            // FTS5 shadow tables (…_g3_data) end in another word and go with their table.
            if generation != keep {
                try db.execute(sql: "DROP TABLE IF EXISTS \(SQLQuoting.identifier(name))")
            }
        }
    }

    /// What the index was built for: a change forces a rebuild.
    package static func fingerprint(_ model: SearchlightModel, _ entities: [IndexedEntity]) -> String {
        struct Part: Encodable { var entity: String; var table: String; var key: String; var rowidKeys: Bool; var fields: [Field] }
        struct Print: Encodable { var version = 2; var tokenizer: String; var prefixes = IndexSchema.prefixes; var entities: [Part] }
        let rowid = Set(entities.filter(\.usesRowidKeys).map(\.entity.name))
        let print = Print(tokenizer: model.tokenizer, entities: model.entities.map {
            Part(entity: $0.name, table: $0.table, key: $0.primaryKey, rowidKeys: rowid.contains($0.name), fields: $0.fields)
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(print)) ?? Data(), as: UTF8.self)
    }
}

/// An entity as the index sees it: its id in history and its indexed columns.
package struct IndexedEntity: Sendable {
    package var entity: Entity
    package var id: Int64
    /// The table's key is a rowid alias (`INTEGER PRIMARY KEY`): object ids are integers that
    /// SQLite enforces, so they serve as the FTS rowids directly, with no document map.
    package var usesRowidKeys = false
    package var fieldColumns: [String] { entity.fields.map(\.column) }
    package var weights: [Double] { entity.fields.map(\.weight) }
    /// The position of the title field among the fields (the first field if none has the role).
    package var titleIndex: Int? {
        entity.fields.firstIndex { $0.role == .title } ?? (entity.fields.isEmpty ? nil : 0)
    }

    /// The model's entities that have indexed fields, with their history ids.
    package static func resolve(_ model: SearchlightModel, _ db: Database) throws -> [IndexedEntity] {
        let ids = try HistoryLog.EntityNames.fetch(db).ids
        return try model.entities.filter { !$0.fields.isEmpty }.map { entity in
            guard let id = ids[entity.name] else {
                throw SearchlightError(.indexNotBuilt, "entity \"\(entity.name)\" is not installed in this database")
            }
            // GRDB tells a true rowid alias apart (`INTEGER PRIMARY KEY DESC` is not one). Its
            // schema queries do not quote every name safely: any failure keeps the document map.
            let rowidColumn = (try? db.primaryKey(entity.table))?.rowIDColumn
            let usesRowidKeys = rowidColumn?.caseInsensitiveCompare(entity.primaryKey) == .orderedSame
            return IndexedEntity(entity: entity, id: id, usesRowidKeys: usesRowidKeys && !entity.table.contains("\""))
        }
    }
}
