import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Ranking hints multiply bm25 by `1 + weight × boost`, inside the ranking query.
@Suite struct RankingHintTests {
    func order(_ results: SearchResults) -> [Int64] {
        results.hits.compactMap { if case let .integer(id) = $0.objectID { id } else { nil } }
    }

    @Test func popularityLiftsAMatchAsTheFormulaSays() throws {
        let f = try ItemsFixture(model: try ItemsFixture.model(ranking: [.init(attribute: "pop", weight: 1)]))
        // 1 mentions the word twice (the better bm25); 2 once, but is popular.
        try f.write("""
            INSERT INTO items(id, body, pop) VALUES (1, 'kernel kernel panic', 0), (2, 'kernel panic halt', 1000), (3, 'kernel', 'high'), (4, 'panic only', 5000)
            """)
        try f.indexer.indexPendingChanges()
        let plain = try SearchIndex(store: f.store).search("kernel", limit: nil)
        let boosted = try f.index().search("kernel", limit: nil)
        #expect(order(boosted).first == 2, "\(order(plain)) → \(order(boosted))")
        // score = -(bm25 × (1 + ln(1 + pop))): pop 0 and text 'high' leave bm25 as it is.
        let bm25 = try f.store.databaseWriter.read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT rowid, bm25(searchlight_fts_1_g1) FROM searchlight_fts_1_g1 WHERE searchlight_fts_1_g1 MATCH 'kernel'")
                .map { ($0[0] as Int64, $0[1] as Double) })
        }
        let scores = Dictionary(uniqueKeysWithValues: boosted.hits.map { (($0.objectID.description), $0.score) })
        #expect(abs(scores["1"]! - -bm25[1]!) < 1e-12 && abs(scores["3"]! - -bm25[3]!) < 1e-12)
        #expect(abs(scores["2"]! - -bm25[2]! * (1 + log(1001))) < 1e-9)
        // The boost applies inside the bounded ranking: with room for one, the popular one is ranked.
        #expect(order(try f.index().search("kernel", limit: 1)) == [2])
    }

    @Test func recencyHalvesTheBoostEveryHalfLifeForUnixSecondsAndISOText() throws {
        let f = try ItemsFixture(model: try ItemsFixture.model(ranking: [.init(attribute: "updated", weight: 4, halfLifeDays: 30)]))
        let now = Date().timeIntervalSince1970
        let day = 86_400.0
        let old = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: now - 300 * day))
        let recent = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: now - 1 * day))
        try f.write("INSERT INTO items(id, body, updated) VALUES (1, 'kernel kernel', ?), (2, 'kernel x', ?), (3, 'kernel y', ?), (4, 'kernel z', 'not a date')",
                    [old, Int64(now - 30 * day), recent])
        try f.indexer.indexPendingChanges()
        let results = try f.index().search("kernel", limit: nil)
        #expect(order(results) == [3, 2, 1, 4], "\(results.hits.map(\.score))")
        let bm25 = try f.store.databaseWriter.read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT rowid, bm25(searchlight_fts_1_g1) FROM searchlight_fts_1_g1 WHERE searchlight_fts_1_g1 MATCH 'kernel'")
                .map { ($0[0] as Int64, $0[1] as Double) })
        }
        let scores = Dictionary(uniqueKeysWithValues: results.hits.map { (($0.objectID.description), $0.score) })
        #expect(abs(scores["2"]! / -bm25[2]! - (1 + 4 * 0.5)) < 1e-3, "one half-life old: boost ½")
        #expect(abs(scores["4"]! - -bm25[4]!) < 1e-12, "not a date: no boost")
    }
}
