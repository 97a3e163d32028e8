import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Sorting by a source column (newest first), then by relevance, across pages and entities.
@Suite struct SearchOrderTests {
    static let schema = """
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT, updated_at TEXT);
        CREATE TABLE people(uuid TEXT PRIMARY KEY NOT NULL, name TEXT, email TEXT UNIQUE, updated_at TEXT);
        """

    func populated() throws -> Fixture {
        let f = try Fixture(schema: Self.schema)
        try f.store.write(author: "app") { db in
            try db.execute(sql: """
                INSERT INTO notes(id, title, body, updated_at) VALUES
                  (1, 'kernel', 'kernel kernel kernel', '2026-01-01'),
                  (2, 'other', 'a kernel note', '2026-03-01'),
                  (3, 'kernel again', 'kernel', NULL),
                  (4, 'older', 'kernel', '2025-12-31');
                INSERT INTO people(uuid, name, updated_at) VALUES ('p1', 'Kernel Sanders', '2026-02-01');
                """)
        }
        try f.runIndexer()
        return f
    }

    @Test func newestFirstAcrossEntitiesWithNullsLast() throws {
        let f = try populated()
        let hits = try f.index.search("kernel", limit: nil, order: .column("updated_at")).hits
        #expect(hits.map(\.objectID) == [.integer(2), .text("p1"), .integer(1), .integer(4), .integer(3)])
        let oldest = try f.index.search("kernel", limit: nil, order: .column("updated_at", descending: false)).hits
        #expect(oldest.map(\.objectID) == [.integer(4), .integer(1), .text("p1"), .integer(2), .integer(3)])
        #expect(oldest.allSatisfy { $0.snippet.contains("[") }, "sorted hits have snippets too")
    }

    @Test func pagesOfASortedSearchFollowEachOther() throws {
        let f = try populated()
        let all = try f.index.search("kernel", limit: nil, order: .column("updated_at")).hits.map(\.objectID)
        var paged: [ObjectID] = []
        for offset in stride(from: 0, to: 5, by: 2) {
            paged += try f.index.search("kernel", limit: 2, offset: offset, order: .column("updated_at")).hits.map(\.objectID)
        }
        #expect(paged == all)
    }

    /// Regression: ascending order put NULLs first in SQL
    /// (`ORDER BY 3 IS NULL` is a constant), so each page took the wrong rows.
    @Test func ascendingPagesPutNullsLastAndFollowEachOther() throws {
        let f = try Fixture(schema: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT, n INTEGER); CREATE TABLE people(uuid TEXT PRIMARY KEY NOT NULL, name TEXT, email TEXT UNIQUE, n INTEGER);")
        try f.db.shell("INSERT INTO notes(id, title, n) VALUES (1, 'apple', 3), (2, 'apple', NULL), (3, 'apple', 1), (4, 'apple', 2), (5, 'apple', NULL);")
        try f.runIndexer()
        for descending in [false, true] {
            let all = try f.index.search("apple", limit: nil, order: .column("n", descending: descending)).hits.map(\.objectID)
            #expect(all == (descending ? [1, 4, 3, 2, 5] : [3, 4, 1, 2, 5]).map { ObjectID.integer($0) })
            for size in [1, 2] {
                var paged: [ObjectID] = []
                for offset in stride(from: 0, to: 5, by: size) {
                    paged += try f.index.search("apple", limit: size, offset: offset, order: .column("n", descending: descending)).hits.map(\.objectID)
                }
                #expect(paged == all, "pages of \(size), descending \(descending)")
            }
        }
    }

    /// Regression: a table renamed since the last indexing
    /// made a sorted search fail as an "invalid query".
    @Test func sortingATableRenamedSinceIndexingIsAClearError() throws {
        let f = try populated()
        try f.db.shell("ALTER TABLE notes RENAME TO notes_v2;")
        let error = try #require(throws: SearchlightError.self) { try f.index.search("kernel", entities: ["Note"], order: .column("updated_at")) }
        #expect(error.code == .invalidArgument && error.message.contains("is not there"), "\(error.message)")
        try f.runIndexer()
        #expect(try f.index.search("kernel", entities: ["Note"], limit: nil, order: .column("updated_at")).hits.first?.objectID == .integer(2))
    }

    @Test func aColumnMissingFromASearchedTableIsAClearError() throws {
        let f = try populated()
        let error = try #require(throws: SearchlightError.self) { try f.index.search("kernel", order: .column("tags")) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("people") && error.message.contains("tags"), "\(error.message)")
        #expect(try f.index.search("kernel", entities: ["Note"], order: .column("tags")).total == 4)
    }

    @Test func sortingReadsTheCurrentRowAndKeepsHitsWhoseRowIsGone() throws {
        let f = try populated()
        // A change not indexed yet: the order follows the table, the hit stays until indexed.
        try f.db.shell("UPDATE notes SET updated_at = '2027-01-01' WHERE id = 4; DELETE FROM notes WHERE id = 2;")
        let hits = try f.index.search("kernel", limit: nil, order: .column("updated_at")).hits.map(\.objectID)
        #expect(hits == [.integer(4), .text("p1"), .integer(1), .integer(3), .integer(2)])
    }
}
