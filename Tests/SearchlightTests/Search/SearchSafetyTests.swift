import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// No user text ever surfaces an FTS5 error, with CJK segmentation, normalization and field
/// filters in play. Seeded: `SEARCHLIGHT_SEED` replays a run.
@Suite struct SearchSafetyTests {
    @Test func randomUserTextWithCJKAndFieldFiltersNeverRaises() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "数据库 kernel", body: "使用CoreData持久化数据。データベース、엔진을", tags: "ＡＢＣ ﬁle Straße")
        try f.insertNote(2, title: "Kernel panic", body: "The system halted.", tags: "hacker")
        try f.store.write(author: "app") { db in try db.execute(sql: "INSERT INTO people(uuid, name) VALUES ('p1', '李小龍')") }
        try f.runIndexer()
        let (seed, _) = seededGenerator("SearchSafetyTests")
        var random = SplitMix(seed: seed)
        let pieces: [String] = ["数", "据", "库", "データ", "엔진", "을", "Core", "Data", "kernel", "ＡＢＣ", "ﬁ", "ß", "é", "e\u{301}",
                                "ｶﾞ", "。", "、", "，", "・", "\u{1F}", "\u{10FFFD}", "\u{E000}", "\u{0}", "\u{200B}", "😀", "™", "①",
                                "title:", "body:", "tags:", "name:", "Title:", "title:\"", "-title:", "uuid:", ":", "::", "\"", "-", "*",
                                "OR", "AND", "NOT", "NEAR(", "(", ")", "^", "{", "}", "+", " ", " ", "\t", "\n"]
        for iteration in 0..<3_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 12) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            let entities: Set<String>? = iteration % 3 == 0 ? ["Person"] : nil
            let results = try f.index.search(text, asYouType: iteration % 2 == 0, entities: entities, limit: 5)
            #expect(results.hits.count <= 5, "\(text.debugDescription) (seed \(seed))")
            if results.total == 0 { #expect(results.explanation != nil, "\(text.debugDescription) (seed \(seed))") }
            for hit in results.hits {
                #expect(!hit.snippet.unicodeScalars.contains { $0 == IndexedText.separator || $0 == IndexedText.breakToken }, "\(hit.snippet)")
            }
        }
    }

    /// Errors that quote user text escape it, for an embedder that prints or logs the message:
    /// a raw query and an entity name holding a carriage return and a terminal escape.
    @Test func errorsQuotingUserTextEscapeIt() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "Kernel panic", body: "The system halted.", tags: "os")
        try f.runIndexer()
        let raw = #expect(throws: SearchlightError.self) { try f.index.search(SearchQuery(raw: "kern ^ \r\u{1b}[2Kgone\u{2028}")) }
        let entity = #expect(throws: SearchlightError.self) { try f.index.search("kernel", entities: ["No\u{0B}te\u{1b}[2K"]) }
        for error in [raw, entity] {
            let message = error?.message ?? ""
            #expect(!message.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{2028}" }, "\(message.debugDescription)")
            #expect(message.contains(#"\u{1b}[2K"#), "\(message.debugDescription)")
        }
        #expect(raw?.code == .invalidQuery && entity?.code == .unknownEntity)
    }
}
