import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A filtered search selects exactly what the same `WHERE` on the source table selects among a
/// plain FTS5 table's matches: random rows (NULLs, every storage class, REAL, numbers as text,
/// case and trailing-space variants) and random filters, with the ranking cap lowered so that a
/// filter applied after a bounded ranking would lose hits. Seeded: `SEARCHLIGHT_SEED` replays.
@Suite struct FilterOracleTests {
    static let values: [DatabaseValue] = [
        .null, 0.databaseValue, 1.databaseValue, 2.databaseValue, (-3).databaseValue, 1.5.databaseValue, 2.0.databaseValue,
        "2".databaseValue, "2.0".databaseValue, " 2".databaseValue, "abc".databaseValue, "ABC".databaseValue, "abc ".databaseValue,
        "b".databaseValue, "".databaseValue, Data([0x61, 0x62, 0x63]).databaseValue, Data().databaseValue,
    ]
    /// Literal values a filter compares with (SQL literals for the oracle).
    static let literals: [(AttributeValue, String)] = [
        (0, "0"), (1, "1"), (2, "2"), (-3, "-3"), (1.5, "1.5"), (2.0, "2.0"), ("2", "'2'"), ("2.0", "'2.0'"), (" 2", "' 2'"),
        ("abc", "'abc'"), ("ABC", "'ABC'"), ("abc ", "'abc '"), ("b", "'b'"), ("", "''"), ("it's", "'it''s'"),
    ]

    /// A random filter and its oracle SQL, over `columns`.
    static func randomFilter(_ random: inout SplitMix, depth: Int = 0) -> (SearchFilter, String) {
        let columns = ItemsFixture.attributeColumns
        func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }
        let choice = depth >= 3 ? random.next() % 3 : random.next() % 6
        switch choice {
        case 0:
            let column = pick(columns)
            let (value, literal) = pick(literals)
            let comparison = pick(SearchFilter.Comparison.allCases)
            return (.compare(column, comparison, value), "\(column) \(comparison.rawValue) \(literal)")
        case 1:
            let column = pick(columns)
            let chosen = (0...(random.next() % 3)).map { _ in pick(literals) }
            return (.oneOf(column, chosen.map(\.0)), "\(column) IN (\(chosen.map(\.1).joined(separator: ", ")))")
        case 2:
            let column = pick(columns)
            return (.isNull(column), "\(column) IS NULL")
        case 3:
            let (filter, sql) = randomFilter(&random, depth: depth + 1)
            return (.not(filter), "NOT (\(sql))")
        case 4:
            let (a, x) = randomFilter(&random, depth: depth + 1), (b, y) = randomFilter(&random, depth: depth + 1)
            return (.and(a, b), "(\(x)) AND (\(y))")
        default:
            let (a, x) = randomFilter(&random, depth: depth + 1), (b, y) = randomFilter(&random, depth: depth + 1)
            return (.or(a, b), "(\(x)) OR (\(y))")
        }
    }

    @Test func filteredSearchesMatchTheSameWhereOnTheSourceTableBeyondTheRankingCap() throws {
        let f = try ItemsFixture()
        var (seed, random) = seededGenerator("FilterOracleTests")
        let words = ["alpha", "beta", "gamma"]
        try f.store.write(author: "app") { db in
            for id in 1...120 {
                var arguments: [DatabaseValue] = [id.databaseValue, ("common " + words[Int(random.next() % 3)]).databaseValue]
                for _ in ItemsFixture.attributeColumns { arguments.append(Self.values[Int(random.next() % UInt64(Self.values.count))]) }
                try db.execute(sql: "INSERT INTO items(id, body, n, r, t, u, x, k) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", arguments: StatementArguments(arguments))
            }
        }
        try f.indexer.indexPendingChanges()
        // The oracle: a plain FTS5 table of the same text, and the WHERE run on the source rows.
        try f.store.databaseWriter.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE oracle_fts USING fts5(body); INSERT INTO oracle_fts(rowid, body) SELECT id, body FROM items")
        }
        let capped = f.index(maximumRankedMatches: 7)
        let uncapped = f.index()
        var nonTrivial = 0
        for _ in 0..<400 {
            let (filter, sql) = Self.randomFilter(&random)
            let word = ["common", "alpha", "beta OR gamma"][Int(random.next() % 3)]
            let expected = try f.store.databaseWriter.read { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM items WHERE id IN (SELECT rowid FROM oracle_fts WHERE oracle_fts MATCH ?) AND (\(sql)) ORDER BY id",
                                   arguments: [word])
            }
            if !expected.isEmpty && expected.count < 60 { nonTrivial += 1 }
            // The filter as text, parsed: the grammar's rendering goes through the parser too.
            let parsed = try SearchFilter(parsing: filter.description)
            let all = try uncapped.search(word, limit: nil, filter: parsed)
            #expect(all.total == expected.count, "seed \(seed): \(sql)")
            #expect(all.hits.compactMap { if case let .integer(id) = $0.objectID { id } else { nil } }.sorted() == expected, "seed \(seed): \(sql)")
            // Ranked among the newest 7 *filtered* matches: a post-filter would find fewer.
            let page = try capped.search(word, limit: nil, filter: filter)
            #expect(page.total == expected.count, "seed \(seed): \(sql)")
            let ids = page.hits.compactMap { if case let .integer(id) = $0.objectID { id } else { nil } }.sorted()
            #expect(ids == Array(expected.suffix(7)), "seed \(seed): \(sql)")
        }
        #expect(nonTrivial > 50, "the random filters select something, not everything (\(nonTrivial))")
    }

    @Test func randomFilterTextNeverCrashesAndNeverSurfacesAnSQLiteError() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, n, t) VALUES (1, 'common', 1, 'a'), (2, 'common', 2, 'B')")
        try f.indexer.indexPendingChanges()
        let index = f.index()
        var (seed, random) = seededGenerator("FilterOracleTests.garbage")
        let pieces = ["n", "t", "u", "zz", "`n`", "`", "=", "==", "!=", "<>", "<", "<=", ">", ">=", "IN", "in", "NOT", "IS", "NULL",
                      "AND", "OR", "(", ")", ",", "'", "\"", "''", "1", "-1", "+", "-", "1.5", "1e", "1e9999", ".", "9223372036854775808",
                      "'x'", "\"y\"", ";", "--", "/*", "?", "?1", ":a", "$a", "@a", "x'00'", "\u{0}", "é", "数", "😀", " ", " ", "\t", "\n"]
        var parsedCount = 0
        for _ in 0..<5_000 {
            var text = ""
            if random.next() % 2 == 0 {
                for _ in 0..<Int(random.next() % 10) { text += pieces[Int(random.next() % UInt64(pieces.count))] + (random.next() % 2 == 0 ? " " : "") }
            } else {
                // A valid filter, damaged at one place (a piece inserted, or characters cut).
                var characters = Array(Self.randomFilter(&random).0.description)
                let at = Int(random.next() % UInt64(characters.count + 1))
                if random.next() % 2 == 0 {
                    characters.insert(contentsOf: pieces[Int(random.next() % UInt64(pieces.count))], at: at)
                } else {
                    characters.removeSubrange(at..<min(characters.count, at + Int(random.next() % 3)))
                }
                text = String(characters)
            }
            do {
                let filter = try SearchFilter(parsing: text)
                parsedCount += 1
                _ = try index.search("common", filter: filter)
            } catch {
                #expect(error.code == .invalidFilter, "seed \(seed): \(text.debugDescription): \(error)")
                #expect(!error.message.contains("\n"), "seed \(seed): \(text.debugDescription)")
            }
        }
        #expect(parsedCount > 100, "some garbage is a valid filter (\(parsedCount))")
    }
}
