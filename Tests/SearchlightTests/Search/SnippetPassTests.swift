import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Where a page's snippets are computed: inline in the ranking query, or by a second pass over
/// the page's rows. Long documents take the second pass, since every snippet the ranking query
/// computes beyond the page reads a whole document (the Chinese man pages' top 20 for `文件`
/// computed about 65).
@Suite struct SnippetPassTests {
    /// The averages FTS5 keeps for bm25, read back, equal what a plain count of the words gives.
    @Test func averageTokensAreFTS5sOwnTotals() throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        var words = 0
        try store.write(author: "app") { db in
            for i in 1...300 {
                let title = "title \(i)", body = Array(repeating: "word\(i % 7)", count: i % 50 + 1).joined(separator: " "), tags = i.isMultiple(of: 3) ? "a b c" : ""
                words += [title, body, tags].map { $0.split(separator: " ").count }.reduce(0, +)
                try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)", arguments: [i, title, body, tags])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let average = try DatabaseQueue(path: database.path).read { db -> Double? in
            let fts = try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name GLOB 'searchlight_fts_*_g*' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name LIMIT 1")!
            return try SearchIndex.averageTokens(fts: fts, db)
        }
        #expect(average == Double(words) / 300)
    }

    @Test func longDocumentsTakeTheSecondPassAndShortOnesStayInline() {
        // Every match on the page: inline, whatever the length.
        #expect(SearchIndex.inlinesSnippets(matches: 20, needed: 20, averageTokens: 100_000))
        // A few hundred matches of man pages (about 2,500 tokens each): the second pass.
        #expect(!SearchIndex.inlinesSnippets(matches: 600, needed: 20, averageTokens: 2_500))
        #expect(!SearchIndex.inlinesSnippets(matches: 60, needed: 20, averageTokens: 2_500))
        // The same matches of glosses (about 15 tokens): inline, as before.
        #expect(SearchIndex.inlinesSnippets(matches: 600, needed: 20, averageTokens: 15))
        #expect(SearchIndex.inlinesSnippets(matches: 60, needed: 20, averageTokens: 15))
        // More than 200 snippets expected inline, short documents or not: the second pass.
        #expect(SearchIndex.inlinesSnippets(matches: 100_000, needed: 20, averageTokens: 15)) // about 190
        #expect(!SearchIndex.inlinesSnippets(matches: 100_000, needed: 200, averageTokens: 15))
        #expect(!SearchIndex.inlinesSnippets(matches: 5_000, needed: 200, averageTokens: nil))
    }

    /// The second pass gives the page the ranking query would have given: the same hits in the
    /// same order, with the same snippets and highlighted titles (a page of every match is
    /// computed inline).
    @Test func theSecondPassGivesTheSnippetsTheInlinePathGives() throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        try store.write(author: "app") { db in
            for i in 1...120 {
                // Long documents: a few hundred words each, the searched word once or twice at
                // places that vary, and CJK text around it.
                var words = (0..<(300 + i * 7)).map { "w\(($0 * 31 + i) % 997)" }
                words.insert("kernel", at: (i * 13) % words.count)
                if i.isMultiple(of: 3) { words.insert("文件系统 kernel", at: (i * 29) % words.count) }
                try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                               arguments: [i, "kernel note \(i)", words.joined(separator: " ")])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        for query in ["kernel", "文件", "kern*"] {
            let page = try index.search(query, limit: 20)
            let all = try index.search(query, limit: 200)
            #expect(page.total == all.total && page.hits.count == min(20, all.total), "\(query)")
            #expect(page.hits == Array(all.hits.prefix(20)), "\(query)")
        }
    }
}
