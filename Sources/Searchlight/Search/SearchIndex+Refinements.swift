import Foundation
import GRDB
import SearchlightHistory

extension SearchIndex {
    /// What a search asks beside its text: a filter on attributes, and facets.
    struct Refinements {
        var filter: SearchFilter? = nil
        var facets: [String] = []
        var facetLimit = 10

        /// Checks them against the searched entities of the live layout, puts the filter in
        /// `scope`, and registers the ranking hints' function when an entity has hints.
        func prepare(_ scope: inout SearchScope, _ db: Database) throws {
            try SearchIndex.validate(filter, entities: scope.entities)
            try SearchIndex.validate(facets: facets, limit: facetLimit, entities: scope.entities)
            scope.filter = filter
            if scope.entities.contains(where: { !$0.entity.ranking.isEmpty }) { db.add(function: RankingBoost.function) }
        }
    }

    /// Checks a filter and facets when there is no query to run (the text had nothing to search
    /// for): bad arguments are errors all the same.
    func validateRefinements(filter: SearchFilter?, facets: [String], facetLimit: Int, entities names: Set<String>?) throws(SearchlightError) {
        guard filter != nil || !facets.isEmpty else { return }
        try migrateIfNeeded()
        let entities = try SearchlightError.catching("search failed") {
            try store.databaseWriter.read { db in try liveEntities(db)?.1 ?? [] }
        }.filter { names?.contains($0.entity.name) ?? true }
        try Self.validate(filter, entities: entities)
        try Self.validate(facets: facets, limit: facetLimit, entities: entities)
    }
}
