import Foundation
import GRDB
import SearchlightHistory

/// What a generation of the index holds: its tokenizer and, for each indexed entity, its id,
/// table, key and fields. Stored with the generation (``IndexState/Key/layout``), it is what
/// searches read (so a model installed since never sends them to tables that do not exist),
/// and a change of it (fields, weights, tokenizer, prefix indexes, a table's key) forces a rebuild.
package struct IndexLayout: Codable, Hashable, Sendable {
    /// 4: text is prepared by ``IndexedText`` (NFKC, `ß`, CJK segmentation).
    /// 5: every symbol, punctuation, format or private-use character beyond ASCII has
    /// separators around it, and REAL values are indexed as SQLite converts them to text (`0.3`,
    /// not Swift's `0.30000000000000004`).
    /// 6: a word tokenizer's index keeps its vocabulary (``IndexVocabulary``).
    /// An index of an earlier version is rebuilt once, online.
    package var version = IndexLayout.currentVersion
    /// The version of the index that this build writes.
    package static let currentVersion = 6
    package var tokenizer: String
    /// Traditional Chinese folded to simplified (the model's `foldChineseVariants`).
    package var foldsChineseVariants = false
    package var prefixes = IndexSchema.prefixes
    package var entities: [IndexedEntity]

    /// The layout `model` asks for in this database, where `capture` says which entities'
    /// tables are there to index (the others are suspended: their documents leave the index).
    package init(model: SearchlightModel, capture: CaptureStatus, store: HistoryStore, _ db: Database) throws {
        let ids = try store.entityIDs(in: db)
        tokenizer = model.tokenizer
        foldsChineseVariants = model.foldChineseVariants
        let notCapturing = Set(capture.notCapturing.map(\.name))
        // GRDB caches the schema per connection, and a pool's writer does not notice another
        // process's migration: the tables' keys are read afresh.
        db.clearSchemaCache()
        entities = try model.entities.filter { !$0.fields.isEmpty }.map { entity in
            guard let id = ids[entity.name] else {
                throw SearchlightError(.indexNotBuilt, "entity \"\(entity.name)\" is not installed in this database")
            }
            if notCapturing.contains(entity.name) {
                return IndexedEntity(entity: entity, id: id, isSuspended: true,
                                     attributes: entity.attributes.map { IndexedAttribute(name: $0.name, column: $0.column) })
            }
            // GRDB tells a true rowid alias apart (`INTEGER PRIMARY KEY DESC` is not one). Its
            // schema queries do not quote every name safely: any failure keeps the document map.
            // A WITHOUT ROWID table has no rowid alias, whatever its key's declared type: an
            // `INTEGER PRIMARY KEY` there holds text too.
            // (pragma_table_list needs SQLite 3.37; an older one falls back to reading the DDL.)
            let withoutRowid = try (try? Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'",
                                                       arguments: [entity.table]))
                ?? String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [entity.table])
                    .map { $0.uppercased().replacingOccurrences(of: " ", with: "").hasSuffix("WITHOUTROWID") } ?? false
            let rowidColumn = withoutRowid ? nil : (try? db.primaryKey(entity.table))?.rowIDColumn
            let usesRowidKeys = rowidColumn?.caseInsensitiveCompare(entity.primaryKey) == .orderedSame
            return IndexedEntity(entity: entity, id: id, usesRowidKeys: usesRowidKeys && !entity.table.contains("\""),
                                 attributes: try entity.attributes.map { try IndexedAttribute.describe($0, table: entity.table, db) })
        }
    }

    /// Whether this generation keeps a vocabulary (``IndexVocabulary``): one of version 6 or
    /// later, with a word tokenizer. Read from the layout, not from the schema: a connection's
    /// cached schema does not see the tables another process's rebuild created.
    package var keepsVocabulary: Bool { version >= 6 && IndexVocabulary.isKept(for: text) }

    /// How this generation's text is prepared, for documents and queries.
    package var text: IndexedText { IndexedText(tokenizer: tokenizer, foldsChineseVariants: foldsChineseVariants) }

    private enum CodingKeys: String, CodingKey { case version, tokenizer, foldsChineseVariants, prefixes, entities }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        tokenizer = try container.decode(String.self, forKey: .tokenizer)
        foldsChineseVariants = try container.decodeIfPresent(Bool.self, forKey: .foldsChineseVariants) ?? false
        prefixes = try container.decode(String.self, forKey: .prefixes)
        entities = try container.decode([IndexedEntity].self, forKey: .entities)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(tokenizer, forKey: .tokenizer)
        if foldsChineseVariants { try container.encode(true, forKey: .foldsChineseVariants) }
        try container.encode(prefixes, forKey: .prefixes)
        try container.encode(entities, forKey: .entities)
    }

    package init(json: String) throws {
        self = try JSONDecoder().decode(IndexLayout.self, from: Data(json.utf8))
    }

    /// Stable JSON (sorted keys): equal layouts have equal text.
    package var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The fingerprint Searchlight 0.1.0 stored for this layout (to migrate its databases; its
    /// indexes had the legacy prefix lengths).
    package var legacyFingerprint: String {
        struct Part: Encodable { var entity: String; var table: String; var key: String; var rowidKeys: Bool; var fields: [SearchlightModel.Field] }
        struct Print: Encodable { var version = 2; var tokenizer: String; var prefixes: String; var entities: [Part] }
        let print = Print(tokenizer: tokenizer, prefixes: IndexSchema.legacyPrefixes, entities: entities.map {
            Part(entity: $0.entity.name, table: $0.entity.table, key: $0.entity.primaryKey, rowidKeys: $0.usesRowidKeys, fields: $0.entity.fields)
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(print)) ?? Data(), as: UTF8.self)
    }
}

/// An entity as the index sees it: its id in history and its indexed columns.
package struct IndexedEntity: Codable, Hashable, Sendable {
    package var entity: SearchlightModel.Entity
    package var id: Int64
    /// The table's key is a rowid alias (`INTEGER PRIMARY KEY`): object ids are integers that
    /// SQLite enforces, so they serve as the FTS rowids directly, with no document map.
    package var usesRowidKeys = false
    /// Its table is missing or no longer fits the model (``CaptureStatus``): it has no documents.
    package var isSuspended = false
    /// The attributes, with their columns' affinity and collation (``IndexedAttribute``).
    package var attributes: [IndexedAttribute] = []
    package var fieldColumns: [String] { entity.fields.map(\.column) }
    /// The columns the index reads from a row: the fields', then the attributes'.
    package var indexedColumns: [String] { fieldColumns + attributes.map(\.column) }
    package var weights: [Double] { entity.fields.map(\.weight) }
    /// The position of the title field among the fields (the first field if none has the role).
    package var titleIndex: Int? {
        entity.fields.firstIndex { $0.role == .title } ?? (entity.fields.isEmpty ? nil : 0)
    }

    package init(entity: SearchlightModel.Entity, id: Int64, usesRowidKeys: Bool = false, isSuspended: Bool = false,
                 attributes: [IndexedAttribute]? = nil) {
        self.entity = entity
        self.id = id
        self.usesRowidKeys = usesRowidKeys
        self.isSuspended = isSuspended
        self.attributes = attributes ?? entity.attributes.map { IndexedAttribute(name: $0.name, column: $0.column) }
    }

    /// The attribute named `name` (names compare case-insensitively, as SQL's).
    package func attribute(named name: String) -> IndexedAttribute? {
        attributes.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    private enum CodingKeys: String, CodingKey { case name, table, primaryKey, fields, id, rowidKeys, suspended, attributes, ranking }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entity = SearchlightModel.Entity(
            name: try container.decode(String.self, forKey: .name), table: try container.decode(String.self, forKey: .table),
            primaryKey: try container.decode(String.self, forKey: .primaryKey),
            fields: try container.decode([SearchlightModel.Field].self, forKey: .fields))
        id = try container.decode(Int64.self, forKey: .id)
        usesRowidKeys = try container.decode(Bool.self, forKey: .rowidKeys)
        isSuspended = try container.decodeIfPresent(Bool.self, forKey: .suspended) ?? false
        attributes = try container.decodeIfPresent([IndexedAttribute].self, forKey: .attributes) ?? []
        entity.attributes = attributes.map { SearchlightModel.Attribute(column: $0.column, name: $0.name) }
        entity.ranking = try container.decodeIfPresent([SearchlightModel.RankingHint].self, forKey: .ranking) ?? []
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entity.name, forKey: .name)
        try container.encode(entity.table, forKey: .table)
        try container.encode(entity.primaryKey, forKey: .primaryKey)
        try container.encode(entity.fields, forKey: .fields)
        try container.encode(id, forKey: .id)
        try container.encode(usesRowidKeys, forKey: .rowidKeys)
        // Written only when set: layouts stored before it existed keep their text.
        if isSuspended { try container.encode(true, forKey: .suspended) }
        if !attributes.isEmpty { try container.encode(attributes, forKey: .attributes) }
        if !entity.ranking.isEmpty { try container.encode(entity.ranking, forKey: .ranking) }
    }
}
