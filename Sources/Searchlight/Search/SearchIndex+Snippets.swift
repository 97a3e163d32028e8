import Foundation
import GRDB
import SearchlightHistory

/// The snippets pass of a search: what the page shows of each hit (snippet, title, highlighted
/// title, object id), computed by the ranking query when few rows would, otherwise here, for
/// the page's rows only.
extension SearchIndex {
    /// Computes the hits of `page` that the ranking query left without one: one walk of each
    /// entity's matches, computing them for the page's rows only. (`rowid IN (…)` beside MATCH
    /// would make FTS5 run the whole query again for every id, prefix expansion included; the
    /// `+` keeps it a filter.)
    /// Hits of the typo tier take their snippets from the corrected query (`typoExpressions`),
    /// so that the words it matched are highlighted.
    func addSnippets(to page: inout [Candidate], in scope: SearchScope, expressions: [Int64: String],
                     typoExpressions: [Int64: String] = [:], _ db: Database) throws {
        for entity in scope.entities {
            for tier in [false, true] {
                let missing = page.indices.filter { page[$0].hit == nil && page[$0].entity.id == entity.id && (page[$0].typos > 0) == tier }
                guard !missing.isEmpty else { continue }
                try addSnippets(to: &page, missing, of: entity, in: scope,
                                expression: tier ? typoExpressions[entity.id] : expressions[entity.id], db)
            }
        }
    }

    /// Computes the hits of `page` at `missing`, all of `entity`, with `expression`.
    private func addSnippets(to page: inout [Candidate], _ missing: [Int], of entity: IndexedEntity, in scope: SearchScope,
                             expression: String?, _ db: Database) throws {
        let fts = scope.fts(entity)
        let rowids = missing.map { page[$0].rowid }
        let columns = Self.hitColumns(entity, fts: fts, documents: scope.documents)
        let sql = """
            SELECT \(fts).rowid, \(columns)
            FROM \(fts) WHERE \(fts) MATCH ? AND \(fts).rowid BETWEEN ? AND ?
            AND +\(fts).rowid IN (SELECT value FROM json_each(?))
            """
        let list = "[" + rowids.map(String.init).joined(separator: ",") + "]"
        let rows = try Row.fetchAll(db.cachedStatement(sql: sql),
                                    arguments: hitArguments(entity, in: scope) + [expression, rowids.min(), rowids.max(), list])
        var byRowid: [Int64: Row] = [:]
        for row in rows { byRowid[row[0]] = row }
        for index in missing {
            guard let row = byRowid[page[index].rowid] else {
                throw SearchlightError(.databaseError, "the index lost document \(page[index].rowid) during a search")
            }
            page[index].hit = try hit(row, at: 1, entity: entity, score: page[index].score)
        }
    }

    /// The arguments of ``hitColumns(_:fts:documents:)``: highlight markers, ellipsis, snippet tokens.
    func hitArguments(_ entity: IndexedEntity, in scope: SearchScope) -> StatementArguments {
        let markers: StatementArguments = [options.highlightStart, options.highlightEnd]
        return markers + [options.ellipsis, min(max(scope.snippetTokens, 1), 64)] + (entity.titleIndex == nil ? [] : markers)
    }

    /// The columns of a hit, after the rowid: snippet, title, highlighted title, object id
    /// (arguments: start, end, ellipsis, tokens, and start, end if the entity has a title).
    static func hitColumns(_ entity: IndexedEntity, fts: String, documents: String) -> String {
        let title = entity.titleIndex.map { "\(fts).\(SQLQuoting.identifier(entity.fieldColumns[$0]))" } ?? "NULL"
        let highlight = entity.titleIndex.map { "highlight(\(fts), \($0), ?, ?)" } ?? "NULL"
        return "snippet(\(fts), -1, ?, ?, ?, ?), \(title), \(highlight), \(objectID(entity, fts: fts, documents: documents))"
    }

    /// A hit from the columns of ``hitColumns`` that start at `column`; `score` is the rank. Stored
    /// text is shown as people read it (``IndexedText/display(_:highlightStart:highlightEnd:)``).
    func hit(_ row: Row, at column: Int, entity: IndexedEntity, score: Double) throws -> SearchHit {
        guard let objectID = ObjectID.fromDatabaseValue(row[column + 3]) else {
            throw SearchlightError(.databaseError, "the index lost a document of \(entity.entity.name) during a search")
        }
        let title: String? = row[column + 1]
        let titleHighlight: String? = row[column + 2]
        let snippet: String = row[column] ?? ""
        return SearchHit(entity: entity.entity.name, objectID: objectID, title: title.map { IndexedText.display($0) },
                         titleHighlight: titleHighlight.map { IndexedText.display($0, highlightStart: options.highlightStart, highlightEnd: options.highlightEnd) },
                         snippet: IndexedText.display(snippet, highlightStart: options.highlightStart, highlightEnd: options.highlightEnd),
                         score: -score)
    }
}
