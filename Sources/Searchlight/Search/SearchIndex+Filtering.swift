import GRDB
import SearchlightHistory

/// The attribute conditions of a search (``SearchFilter``) and its ranking hints, as SQL the
/// ranking pass adds to its queries of each entity (and any other pass that walks the matches).
extension SearchIndex {
    /// What a filter does to one entity's matches.
    enum Restriction {
        /// No filter: every match.
        case none
        /// The entity lacks an attribute the filter names: no match.
        case nothing
        /// ` JOIN (SELECT a.rowid AS searchlight_rowid FROM attr a WHERE …) ON …`, with its arguments.
        case join(String, StatementArguments)

        /// The text to put right after `FROM fts` (empty without a filter); its arguments come
        /// before the `MATCH`'s.
        var join: String { if case let .join(sql, _) = self { sql } else { "" } }
        var arguments: StatementArguments { if case let .join(_, arguments) = self { arguments } else { [] } }
        var matchesNothing: Bool { if case .nothing = self { true } else { false } }
    }

    /// The restriction `filter` puts on `entity`'s matches in `fts` (a quoted FTS5 table name):
    /// one join, put after `FROM fts`, that every query of the ranking pass takes:
    ///
    /// ```sql
    /// SELECT count(*) FROM fts
    ///   JOIN (SELECT a.rowid AS searchlight_rowid FROM "searchlight_attr_1_g4" a WHERE ((a."year" >= ?) AND (a."tag" = ?)))
    ///   ON searchlight_rowid = fts.rowid
    /// WHERE fts MATCH ?;
    /// ```
    ///
    /// SQLite flattens it into a join: FTS5 walks the matches, and each one looks its values up
    /// by rowid. (Only `searchlight_rowid` is visible, so no attribute name can clash with a
    /// field or with `rank`.) `AND fts.rowid IN (SELECT …)` gives the same answers but is far
    /// slower: SQLite hands the list to FTS5 as rowids to look up one by one, 0.5 to 140 s on
    /// WordNet where the join takes 0.3 to 60 ms (README, "Filters, facets and ranking hints").
    static func restriction(_ filter: SearchFilter?, entity: IndexedEntity, schema: IndexSchema, fts: String) -> Restriction {
        guard let filter else { return .none }
        guard let (condition, arguments) = filter.sql(column: { name in
            entity.attribute(named: name).map { "a." + SQLQuoting.identifier($0.name) }
        }) else { return .nothing }
        let table = SQLQuoting.identifier(schema.attributeTable(entity.id))
        return .join(" JOIN (SELECT a.rowid AS searchlight_rowid FROM \(table) a WHERE \(condition)) ON searchlight_rowid = \(fts).rowid",
                     StatementArguments(arguments))
    }

    /// Checks that every attribute `filter` names is declared by one of `entities` at least
    /// (an entity that lacks one matches nothing); throws `invalidFilter` naming it otherwise.
    static func validate(_ filter: SearchFilter?, entities: [IndexedEntity]) throws(SearchlightError) {
        guard let filter else { return }
        try filter.validate()
        for name in filter.attributes where !entities.contains(where: { $0.attribute(named: name) != nil }) {
            throw SearchlightError(.invalidFilter, "invalid filter: \(unknownAttribute(name, entities: entities))")
        }
    }

    /// `unknown attribute "x" (declared: year, tag)`, for an error message.
    static func unknownAttribute(_ name: String, entities: [IndexedEntity]) -> String {
        var declared: [String] = []
        for attribute in entities.flatMap(\.attributes) where !declared.contains(where: { $0.caseInsensitiveCompare(attribute.name) == .orderedSame }) {
            declared.append(SearchFilter.shown(attribute.name))
        }
        return "unknown attribute \"\(SearchFilter.shown(name))\" (\(declared.isEmpty ? "the searched entities declare no attributes" : "declared: " + declared.joined(separator: ", ")))"
    }

    /// The score the ranking query orders `entity`'s matches by: FTS5's `rank` (bm25 with the
    /// field weights; negative, lower is better), times `1 + Σ weight × boost` with the
    /// entity's ranking hints (``SearchlightModel/RankingHint``):
    ///
    /// ```sql
    /// rank * (1 + 1.0 * searchlight_boost((SELECT a."popularity" FROM "searchlight_attr_1_g4" a WHERE a.rowid = fts.rowid), NULL, ?))
    /// ```
    ///
    /// `searchlight_boost(value, halfLifeDays, now)` (``RankingBoost``) is registered on the
    /// search's connection; a text date is converted to unix seconds by SQLite
    /// (`(julianday(v) - 2440587.5) * 86400`) before it. The weights and half-lives are numbers
    /// from the model; `now` is an argument.
    static func score(_ entity: IndexedEntity, schema: IndexSchema, fts: String, now: Double, rank: String = "rank") -> (sql: String, arguments: StatementArguments)? {
        let hints = entity.entity.ranking.compactMap { hint in entity.attribute(named: hint.attribute).map { (hint, $0) } }
        guard !hints.isEmpty else { return nil }
        let table = SQLQuoting.identifier(schema.attributeTable(entity.id))
        var terms: [String] = []
        var arguments: StatementArguments = []
        for (hint, attribute) in hints {
            let columns = "(SELECT a.\(SQLQuoting.identifier(attribute.name)) FROM \(table) a WHERE a.rowid = \(fts).rowid)"
            let value = columns
            if let days = hint.halfLifeDays {
                let seconds = "(SELECT CASE typeof(v) WHEN 'text' THEN (julianday(v) - 2440587.5) * 86400.0 ELSE v END FROM (SELECT \(columns) AS v))"
                terms.append("\(hint.weight) * \(RankingBoost.name)(\(seconds), \(days), ?)")
                arguments += [now]
            } else {
                terms.append("\(hint.weight) * \(RankingBoost.name)(\(value), NULL, NULL)")
            }
        }
        return (rank + " * (1 + " + terms.joined(separator: " + ") + ")", arguments)
    }
}
