import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import Testing
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// How much work a search makes SQLite do, counted in virtual-machine instructions (those of
/// FTS5's own statements and blob reads included), never timed: the counts are the same on a
/// loaded machine.
@Suite struct SearchWorkTests {
    /// 2,000 notes, each with 31 words of its own that start with "quasi": a prefix longer than
    /// any prefix index, so FTS5 expands `quasi*` by reading the index pages of all 62,000
    /// such terms.
    func manyPrefixMatches(_ counter: StepCounter) throws -> (TestDatabase, SearchIndex) {
        let db = try TestDatabase()
        var configuration = HistoryStore.databaseConfiguration()
        configuration.prepareDatabase { db in counter.install(db) }
        let store = try HistoryStore(dbPool: DatabasePool(path: db.path, configuration: configuration), model: TestDatabase.notesModel)
        try store.write(author: "app") { db in
            for i in 1...2_000 {
                let word = "quasi" + String(i, radix: 36)
                let body = (1...30).map { "\(word)x\($0)" }.joined(separator: " ")
                try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [i, word, body])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        return (db, SearchIndex(store: store))
    }

    /// Regression: with more than 200 matches, a page's snippets came from
    /// `WHERE fts MATCH ? AND rowid IN (…)`, for which FTS5 runs the whole query again for
    /// each id, prefix expansion included: `search 't*' --limit 1000` took 3.7 s on WordNet.
    /// A page of 1,000 hits must now cost about what ranking costs, plus its snippets: less
    /// than three times the work of a one-hit page (which ranks the same 2,000 matches).
    /// Measured with SQLite 3.40: the one-hit page 36,000 instructions, the 1,000-hit page
    /// 81,000; with the old code 638,000.
    @Test func aLargePageDoesNotRunTheQueryAgainForEachHit() throws {
        let counter = StepCounter()
        let (database, index) = try manyPrefixMatches(counter)
        defer { withExtendedLifetime(database) {} }
        _ = try index.search("quasi*", entities: ["Note"], limit: 1) // opens connections, reads the layout
        var hits = 0
        let one = try counter.count { hits = try index.search("quasi*", entities: ["Note"], limit: 1).hits.count }
        #expect(hits == 1)
        let page = try counter.count { hits = try index.search("quasi*", entities: ["Note"], limit: 1_000).hits.count }
        #expect(hits == 1_000)
        #expect(page < 3 * one, "a page of 1,000 hits ran \(page) VM instructions, a page of 1 hit \(one)")
    }
}
