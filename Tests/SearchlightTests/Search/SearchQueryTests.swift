import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory

@Suite struct SearchQueryTests {
    func expression(_ text: String, asYouType: Bool = false) -> String? {
        SearchQuery(userText: text, asYouType: asYouType)?.expression
    }

    @Test func wordsAreANDedAndQuotedTextIsAPhrase() {
        #expect(expression("kernel panic") == #""kernel" AND "panic""#)
        #expect(expression(#"say "kernel panic" now"#) == #""say" AND "kernel panic" AND "now""#)
    }

    @Test func prefixes() {
        #expect(expression("kern*") == #""kern" *"#)
        #expect(expression("kernel pan", asYouType: true) == #""kernel" AND "pan" *"#)
        #expect(expression("kernel pan ", asYouType: true) == #""kernel" AND "pan""#, "a finished word is not a prefix")
    }

    @Test func orAndExclusion() {
        #expect(expression("hacker OR cracker") == #"("hacker" OR "cracker")"#)
        #expect(expression("bug -feature") == #"("bug") NOT ("feature")"#)
        #expect(expression("bug NOT feature") == #"("bug") NOT ("feature")"#)
        #expect(expression("bug AND NOT feature") == #"("bug") NOT ("feature")"#)
        #expect(expression(#"bug -"a feature""#) == #"("bug") NOT ("a feature")"#)
        #expect(expression("or and not") == #""or" AND "and" AND "not""#, "lower-case operators are words")
    }

    /// A symbol that this SQLite's unicode61 keeps in tokens (an emoji newer than Unicode 6.1,
    /// `₽`, private use) is a word of its own, as in stored text; one it drops separates words.
    @Test func symbolsTheTokenizerKeepsAreWordsOfTheirOwn() {
        #expect(expression(#""great job 🙂 thanks""#) == #""great job 🙂 thanks""#)
        #expect(expression("abc🙂def") == #""abc 🙂 def""#)
        #expect(expression("logo\u{F8FF}brand") == "\"logo \u{F8FF} brand\"")
        #expect(expression("100₽") == #""100 ₽""#)
        #expect(expression("🤔") == #""🤔""#)
        #expect(expression("hacker™ 👍") == #""hacker""#, "™ and 👍 (Unicode 6.0) separate words")
        #expect(expression("™ 👍") == nil)
    }

    @Test func punctuationLoneQuotesColonsAndEmptyInput() {
        #expect(expression("") == nil)
        #expect(expression("   ") == nil)
        #expect(expression("!!! ??? ...") == nil)
        #expect(expression(#"""#) == nil)
        #expect(expression("-feature") == nil, "exclusion alone matches nothing")
        #expect(expression("OR OR") == nil)
        #expect(expression(#"unbalanced "quote here"#) == #""unbalanced" AND "quote here""#)
        #expect(expression("title:kernel") == #""title kernel""#)
        #expect(expression("e-mail") == #""e mail""#)
        // `^` is a symbol: unicode61 separates on it, and so does the parser.
        #expect(expression("(a) ^b {c} NEAR(d)") == #""a" AND "b" AND "c" AND "NEAR d""#)
        #expect(expression("same © | words 🎉") == #""same" AND "words""#)
    }

    @Test func cjkRunsArePhrasesOfTheirCharacters() {
        #expect(expression("数据库") == #""数 据 库""#)
        #expect(expression("CoreData持久化") == #""CoreData 持 久 化""#)
        #expect(expression("数据 备份") == #""数 据" AND "备 份""#)
        #expect(expression("データベ", asYouType: true) == #""デ ー タ ベ" *"#)
        #expect(expression("엔진") == #""엔 진""#)
        #expect(expression("ＣｏｒｅＤａｔａ ﬁle Straße") == #""CoreData" AND "file" AND "Strasse""#)
    }

    @Test func fieldFiltersNameKnownFieldsOnly() {
        let columns: Set<String> = ["title", "body"]
        func filtered(_ text: String) -> String? { SearchQuery(userText: text, columns: columns)?.expression }
        #expect(filtered("title:kernel") == #""title" : "kernel""#)
        #expect(filtered("Title:kernel panic") == #""title" : "kernel" AND "panic""#, "field names ignore case")
        #expect(filtered(#"title:"kernel panic" -body:oops"#) == #"("title" : "kernel panic") NOT ("body" : "oops")"#)
        #expect(filtered(#"-title:"kernel panic" x"#) == #"("x") NOT ("title" : "kernel panic")"#)
        #expect(filtered("title:kern*") == #""title" : "kern" *"#)
        #expect(filtered("author:bob") == #""author bob""#, "not a field: plain words")
        #expect(filtered("10:30 http://x") == #""10 30" AND "http x""#)
        #expect(filtered("title:") == nil, "a filter with nothing to search")
        #expect(filtered(#"title:"数据""#) == #""title" : "数 据""#)
        // Regression: a CJK field name.
        #expect(SearchQuery(userText: "标题:数据库 -标题:备份", columns: ["标题"])?.expression == #"("标题" : "数 据 库") NOT ("标题" : "备 份")"#)
    }

    @Test func aTermOnAFieldAnEntityLacksCannotMatchThere() throws {
        let query = try #require(SearchQuery(userText: "name:bob OR kernel -email:x", columns: ["name", "email"]))
        #expect(query.expression(for: .standard, columns: ["title", "body"]) == #""kernel""#, "OR keeps the other term; the exclusion excludes nothing")
        #expect(SearchQuery(userText: "name:bob", columns: ["name"])?.expression(for: .standard, columns: ["title"]) == nil)
    }

    @Test func longInputIsBounded() {
        let text = Array(repeating: "word", count: 10_000).joined(separator: " ")
        let terms = expression(text)!.components(separatedBy: " AND ").count
        #expect(terms == SearchQuery.maximumTerms)
    }

    @Test func rawQueriesPassThrough() throws {
        #expect(try SearchQuery(raw: "title: kernel NEAR(a b)").expression == "title: kernel NEAR(a b)")
        #expect(throws: SearchlightError.self) { try SearchQuery(raw: "  ") }
    }
}
