import Foundation
import GRDB
import Testing
@testable import Searchlight
@testable import SearchlightHistory
import SearchlightTestSupport

/// Facets count attribute values among all the matches (filter applied), exactly, grouped by
/// the column's collation.
@Suite struct FacetTests {
    @Test func aNocaseColumnGivesOneBucketShownAsItsSmallestSpelling() throws {
        let f = try ItemsFixture()
        try f.write("""
            INSERT INTO items(id, body, t, k) VALUES (1, 'common', 'swift', 'a'), (2, 'common', 'Swift', 'a  '), (3, 'common', 'SWIFT', 'b'),
              (4, 'common', 'rust', NULL), (5, 'other', 'rust', 'b'), (6, 'common', NULL, 'b')
            """)
        try f.indexer.indexPendingChanges()
        let results = try f.index().search("common", facets: ["t", "K"])
        #expect(results.facets == [
            SearchFacet(attribute: "t", buckets: [.init(value: "SWIFT", count: 3), .init(value: .null, count: 1), .init(value: "rust", count: 1)]),
            SearchFacet(attribute: "k", buckets: [.init(value: "a", count: 2), .init(value: "b", count: 2), .init(value: .null, count: 1)]),
        ], "RTRIM: 'a' and 'a  ' are one value; ties by value, NULL first")
        let limited = try f.index().search("common", facets: ["t"], facetLimit: 1)
        #expect(limited.facets?.first == SearchFacet(attribute: "t", buckets: [.init(value: "SWIFT", count: 3)], distinctValues: 3))
        let filtered = try f.index().search("common", filter: try SearchFilter(parsing: "t <> 'swift'"), facets: ["t"])
        #expect(filtered.facets?.first?.buckets == [.init(value: "rust", count: 1)])
    }

    @Test func countsAreExactBeyondTheRankingCapAndSummedAcrossEntities() throws {
        let schema = ItemsFixture.schema + "CREATE TABLE posts(uuid TEXT PRIMARY KEY, body TEXT, tag TEXT COLLATE NOCASE);"
        var model = try ItemsFixture.model()
        model.entities.append(.init(name: "Post", table: "posts", primaryKey: "uuid", fields: [.init(column: "body")], attributes: [.init(column: "tag", name: "t")]))
        let f = try ItemsFixture(model: model, schema: schema)
        try f.store.write(author: "app") { db in
            for id in 1...300 {
                try db.execute(sql: "INSERT INTO items(id, body, t, n) VALUES (?, 'common', ?, ?)", arguments: [id, ["a", "b", "C"][id % 3], id % 2])
                try db.execute(sql: "INSERT INTO posts(uuid, body, tag) VALUES (?, 'common', ?)", arguments: ["p\(id)", id % 10 == 0 ? "c" : "d"])
            }
        }
        try f.indexer.indexPendingChanges()
        let results = try f.index(maximumRankedMatches: 10).search("common", limit: 5, facets: ["t"])
        #expect(results.rankedMatches == 20 && results.total == 600)
        #expect(results.facets?.first?.buckets == [.init(value: "d", count: 270), .init(value: "C", count: 130), .init(value: "a", count: 100), .init(value: "b", count: 100)],
                "C (items) and c (posts) in one NOCASE bucket, shown as C")
        // Entities that lack an attribute of the filter match nothing, and are left out of facets.
        let filtered = try f.index(maximumRankedMatches: 10).search("common", limit: 5, filter: try SearchFilter(parsing: "n = 1"), facets: ["t"])
        #expect(filtered.total == 150 && filtered.countsByEntity == ["Item": 150, "Post": 0])
        #expect(filtered.facets?.first?.buckets.map(\.count) == [50, 50, 50])
        // Through the document map (TEXT keys) too: one NOCASE value in both entities.
        let both = try f.index(maximumRankedMatches: 10).search("common", limit: nil, filter: try SearchFilter(parsing: "t = 'c'"))
        #expect(both.countsByEntity == ["Item": 100, "Post": 30] && both.hits.count == 20 && both.rankedMatches == 20)
        #expect(both.hits.filter { $0.entity == "Post" }.allSatisfy { if case let .text(id) = $0.objectID { Int(id.dropFirst())! % 10 == 0 } else { false } })
    }

    @Test func anUnknownFacetOrFilterAttributeIsAnErrorNamingTheDeclaredOnes() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body) VALUES (1, 'common')")
        try f.indexer.indexPendingChanges()
        #expect { try f.index().search("common", facets: ["colour"]) } throws: { error in
            (error as? SearchlightError)?.message == #"invalid facet: unknown attribute "colour" (declared: n, r, t, u, x, k, pop, updated)"#
        }
        #expect { try f.index().search("common", filter: .compare("colour", .equal, 1)) } throws: { error in
            (error as? SearchlightError)?.code == .invalidFilter
        }
        #expect(throws: SearchlightError.self, "checked even when the text has nothing to search for") {
            try f.index().search("©", filter: .compare("colour", .equal, 1))
        }
        #expect(try f.index().search("©", facets: ["t"]).facets == [SearchFacet(attribute: "t", buckets: [])])
    }
}
