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
/// switches the live generation (``IndexState``) in one transaction; searches read the generation in their own
/// read transaction, so they see either the old index or the new one, never half of one.
/// `Schemas/index.sql` documents these tables for generation 1.
package struct IndexSchema: Sendable {
    package var generation: Int

    package var documentTable: String { "searchlight_document_g\(generation)" }
    package func ftsTable(_ entityID: Int64) -> String { "searchlight_fts_\(entityID)_g\(generation)" }
    /// The vocabulary of this generation (``IndexVocabulary``), with word tokenizers.
    package var termTable: String { "searchlight_terms_g\(generation)" }
    /// The attribute values of an entity's documents (rowid: the FTS rowid), for an entity
    /// with attributes.
    package func attributeTable(_ entityID: Int64) -> String { "searchlight_attr_\(entityID)_g\(generation)" }

    /// The prefix lengths indexed for as-you-type queries. One-letter prefixes are indexed
    /// because expanding `a*` term by term is what made as-you-type slow; four-letter ones are
    /// not, since a four-letter prefix matches few enough terms to expand quickly. (Measured on
    /// WordNet: README, "Benchmarks".) A layout records its prefixes, so a change rebuilds.
    package static let prefixes = "1 2 3"
    /// The prefix lengths of indexes built before `1 2 3` (Searchlight 0.1.0 included).
    package static let legacyPrefixes = "2 3 4"

    /// The statements that create this generation's tables for `entities`.
    package func createStatements(for entities: [IndexedEntity], tokenizer: String, prefixes: String = IndexSchema.prefixes) -> [String] {
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
        if IndexVocabulary.isKept(for: IndexedText(tokenizer: tokenizer)) {
            statements.append("""
                CREATE TABLE \(SQLQuoting.identifier(termTable)) (
                  "term" TEXT PRIMARY KEY NOT NULL,
                  "documents" INTEGER NOT NULL
                ) WITHOUT ROWID
                """)
        }
        for entity in entities {
            let fts = SQLQuoting.identifier(ftsTable(entity.id))
            let columns = entity.fieldColumns.map(SQLQuoting.identifier).joined(separator: ", ")
            statements.append("""
                CREATE VIRTUAL TABLE \(fts) USING fts5(\(columns), \
                tokenize = \(SQLQuoting.literal(tokenizer)), prefix = \(SQLQuoting.literal(prefixes)))
                """)
            // Rank with the fields' weights, so that `ORDER BY rank` uses FTS5's own sorting.
            statements.append("INSERT INTO \(fts)(\(fts), rank) VALUES ('rank', \(SQLQuoting.literal(Self.rankFunction(entity))))")
            if !entity.attributes.isEmpty {
                // Each value as the source row stores it, compared as the source column compares.
                let columns = entity.attributes.map(\.definition).joined(separator: ",\n  ")
                statements.append("CREATE TABLE \(SQLQuoting.identifier(attributeTable(entity.id))) (\n  \(columns)\n)")
            }
        }
        return statements
    }

    /// `bm25(10.0, 1.0)`: the weights are numbers from the model, never user text.
    package static func rankFunction(_ entity: IndexedEntity) -> String {
        "bm25(" + entity.weights.map { String($0) }.joined(separator: ", ") + ")"
    }

    /// Drops every index table whose generation is not `keep` (leftovers of a crashed rebuild,
    /// or the generation a rebuild replaced).
    package static func dropGenerations(except keep: Set<Int>, _ db: Database) throws {
        let names = try String.fetchAll(db, sql: """
            SELECT "name" FROM "sqlite_master" WHERE "type" = 'table'
            AND ("name" GLOB 'searchlight_document_g[0-9]*' OR "name" GLOB 'searchlight_fts_[0-9]*_g[0-9]*'
                 OR "name" GLOB 'searchlight_terms_g[0-9]*' OR "name" GLOB 'searchlight_attr_[0-9]*_g[0-9]*')
            """)
        for name in names {
            guard let suffix = name.split(separator: "_").last, suffix.hasPrefix("g"), let generation = Int(suffix.dropFirst()) else { continue }
            // FTS5 shadow tables (…_g3_data) end in another word and go with their table.
            if !keep.contains(generation) {
                try db.execute(sql: "DROP TABLE IF EXISTS \(SQLQuoting.identifier(name))")
            }
        }
    }
}
