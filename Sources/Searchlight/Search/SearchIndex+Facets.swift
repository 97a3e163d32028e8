import GRDB
import SearchlightHistory

/// The facets pass of a search: exact counts of attribute values among all the matches.
extension SearchIndex {
    /// The most facets a search may ask for, and the largest `facetLimit`.
    static let maximumFacets = SearchFacet.maximumFacets
    static let maximumFacetLimit = SearchFacet.maximumLimit

    /// Checks the facets asked for: each one an attribute of a searched entity.
    static func validate(facets: [String], limit: Int, entities: [IndexedEntity]) throws(SearchlightError) {
        if facets.count > maximumFacets { throw SearchlightError(.invalidArgument, "\(facets.count) facets; at most \(maximumFacets) are allowed") }
        if !(1...maximumFacetLimit).contains(limit) {
            throw SearchlightError(.invalidArgument, "invalid facet limit \(limit): it must be between 1 and \(maximumFacetLimit)")
        }
        for name in facets where !entities.contains(where: { $0.attribute(named: name) != nil }) {
            throw SearchlightError(.invalidArgument, "invalid facet: \(unknownAttribute(name, entities: entities))")
        }
    }

    /// Counts the values of each facet among the matches of every entity that has matches and
    /// declares the attribute, in one query per facet:
    ///
    /// ```sql
    /// SELECT min(v COLLATE BINARY) AS value, count(*) AS n, count(*) OVER () FROM (
    ///   SELECT a."tag" AS v FROM "searchlight_fts_1_g4" JOIN "searchlight_attr_1_g4" a ON a.rowid = "searchlight_fts_1_g4".rowid
    ///   WHERE "searchlight_fts_1_g4" MATCH ? AND ((a."year" >= ?))   -- the filter, if any
    ///   UNION ALL SELECT … FROM "searchlight_attr_2_g4" a …          -- each other entity
    /// ) GROUP BY v COLLATE NOCASE ORDER BY n DESC, value LIMIT ?;   -- the column's collation
    /// ```
    func facets(_ names: [String], limit: Int, in scope: SearchScope, ranking: Ranking, _ db: Database) throws -> [SearchFacet] {
        var facets: [SearchFacet] = []
        for name in names {
            var branches: [String] = []
            var arguments: StatementArguments = []
            var collations = Set<String>()
            var declaredName = name
            for entity in scope.entities where (ranking.counts[entity.entity.name] ?? 0) > 0 {
                guard let attribute = entity.attribute(named: name), let expression = ranking.expressions[entity.id] else { continue }
                declaredName = attribute.name
                collations.insert(attribute.collation)
                let fts = scope.fts(entity)
                // Each match looks its value up by rowid, as in the ranking pass.
                var branch = "SELECT a.\(SQLQuoting.identifier(attribute.name)) AS v FROM \(fts) JOIN \(SQLQuoting.identifier(scope.schema.attributeTable(entity.id))) a "
                    + "ON a.rowid = \(fts).rowid WHERE \(fts) MATCH ?"
                arguments += [expression]
                if let filter = scope.filter {
                    // The entity has matches, so it declares every attribute the filter names.
                    guard let (condition, values) = filter.sql(column: { entity.attribute(named: $0).map { "a." + SQLQuoting.identifier($0.name) } }) else { continue }
                    branch += " AND \(condition)"
                    arguments += StatementArguments(values)
                }
                branches.append(branch)
            }
            guard !branches.isEmpty else {
                facets.append(SearchFacet(attribute: declaredName, buckets: []))
                continue
            }
            // One of three constant names (a layout's text is never spliced in).
            let collation = collations.count == 1 ? IndexedAttribute.builtInCollation(collations.first!) : "BINARY"
            let sql = "SELECT min(v COLLATE BINARY) AS value, count(*) AS n, count(*) OVER () FROM ("
                + branches.joined(separator: " UNION ALL ")
                + ") GROUP BY v COLLATE \(collation) ORDER BY n DESC, value LIMIT ?"
            arguments += [limit]
            var buckets: [SearchFacet.Bucket] = []
            var distinct = 0
            for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
                buckets.append(.init(value: AttributeValue(row[0] as DatabaseValue), count: row[1]))
                distinct = row[2]
            }
            facets.append(SearchFacet(attribute: declaredName, buckets: buckets, distinctValues: distinct))
        }
        return facets
    }
}
