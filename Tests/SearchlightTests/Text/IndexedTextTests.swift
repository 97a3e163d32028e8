import Foundation
import GRDB
import Testing
@testable import Searchlight
@testable import SearchlightHistory
import SearchlightTestSupport

/// Text is prepared the same way for documents and queries (``IndexedText``): NFKC for letters
/// and numbers, `ß` as `ss`, and CJK runs as one token per character. Checked through indexing
/// and search, on notes with id = row number.
@Suite struct IndexedTextTests {
    func indexed(_ texts: [String], model: SearchlightModel = TestDatabase.notesModel) throws -> Fixture {
        let f = try Fixture(model: model)
        for (offset, text) in texts.enumerated() { try f.insertNote(offset + 1, title: "", body: text) }
        try f.runIndexer()
        return f
    }

    @Test func compatibilityFormsCaseAndDiacriticsMatchTheirPlainForms() throws {
        let f = try indexed(["ＣｏｒｅＤａｔａ full width", "the ﬁle ligature", "Straße und STRASSE", "café naïve résumé İstanbul", "ｶﾞｲﾄﾞ half width", "① circled"])
        #expect(try f.ids("coredata") == [.integer(1)])
        #expect(try f.ids("ＦＵＬＬ") == [.integer(1)], "a full-width query matches too")
        #expect(try f.ids("file") == [.integer(2)])
        #expect(try f.ids("strasse") == [.integer(3)])
        #expect(try f.ids("straße") == [.integer(3)])
        #expect(try f.ids("cafe naive resume istanbul") == [.integer(4)])
        #expect(try f.ids("ガイド") == [.integer(5)], "half-width katakana and its sound marks")
        #expect(try f.ids("1 circled") == [.integer(6)])
        #expect(try f.ids("cafe*") == [.integer(4)])
    }

    @Test func symbolsStaySeparatorsAfterNormalization() throws {
        let f = try indexed(["hacker™ culture", "x² plus"])
        #expect(try f.ids("hacker") == [.integer(1)], "™ is a symbol: NFKC must not glue TM to the word")
        #expect(try f.ids("x2") == [.integer(2)], "a superscript digit is a number: it normalizes")
    }

    /// Regression: this SQLite's unicode61 keeps characters assigned
    /// after Unicode 6.1 (most emoji, `₽`, `₿`) and private-use characters in tokens, so
    /// `job🙂` was one token that neither `job` nor `job🙂` found.
    @Test func newerEmojiPrivateUseCharactersAndCurrencySignsSeparateWords() throws {
        let f = try indexed(["Great job🙂", "think🤔 hard", "Apple\u{F8FF} iPhone", "数据🥰", "abc🙂def", "price 100₽", "₿bitcoin", "kernel🏻 panic", "引🙂"])
        for (query, id) in [("job", 1), ("job🙂", 1), ("think", 2), ("think hard", 2), ("apple", 3), ("数据", 4), ("abc", 5), ("def", 5),
                            ("100", 6), ("bitcoin", 7), ("kernel panic", 8), ("引", 9)] {
            #expect(try f.ids(query) == [.integer(Int64(id))], "\(query)")
        }
        // `₽` is a token of its own in the text and in the query (`100₽` is the phrase `100 ₽`).
        let snippet = try f.index.search("price 100₽").hits.first?.snippet
        #expect(snippet == "[price] [100₽]", "\(String(describing: snippet))")
    }

    /// A phrase holding a symbol that this SQLite's unicode61 keeps in tokens (an emoji newer
    /// than Unicode 6.1, `₽`, a private-use character) finds the text it was copied from, and
    /// not the same words without the symbol: the query holds the symbol as a token of its own,
    /// where the stored text has it. (The query used to drop it, so the phrase missed its text
    /// and found the text without the symbol.)
    @Test func aPhraseHoldingASymbolFindsTheTextItWasCopiedFrom() throws {
        let f = try indexed(["great job 🙂 thanks", "great job thanks", "costs 100 ₽ per month", "costs 100 per month",
                             "think 🤔 so", "think so", "abc🙂def", "abc def", "logo\u{F8FF}brand", "logo brand"])
        for (query, id) in [("\"great job 🙂 thanks\"", 1), ("\"costs 100 ₽ per month\"", 3), ("\"think 🤔 so\"", 5),
                            ("abc🙂def", 7), ("\"abc🙂def\"", 7), ("logo\u{F8FF}brand", 9), ("\"logo\u{F8FF}brand\"", 9)] {
            #expect(try f.ids(query) == [.integer(Int64(id))], "\(query)")
        }
        #expect(Set(try f.ids("🙂")) == [.integer(1), .integer(7)], "a symbol the tokenizer keeps is a word of its own")
        #expect(Set(try f.ids("great job")) == [.integer(1), .integer(2)])
    }

    /// After CJK text and punctuation, a symbol kept as a token gets the break before it (where
    /// the punctuation is), not after it: a phrase copied from the symbol on holds no break.
    @Test func aPhraseStartingAtASymbolAfterCJKTextFindsItsText() throws {
        let f = try indexed(["数据。🙂 thanks", "数 🙂 Data", "数🙂据"])
        #expect(try f.ids("\"🙂 thanks\"") == [.integer(1)])
        #expect(try f.ids("\"数据。🙂\"") == [.integer(1)])
        #expect(try f.ids("\"🙂 Data\"") == [.integer(2)])
        #expect(try f.ids("🙂据") == [.integer(3)])
        #expect(try f.ids("数据") == [.integer(1)], "a symbol between CJK characters separates them")
    }

    /// Symbols the tokenizer drops (`™`, `👍`, assigned before Unicode 6.1) stay separators in a
    /// phrase, as in the stored text; alone, they leave nothing to search for.
    @Test func aPhraseHoldingASymbolTheTokenizerDropsMatchesWithoutIt() throws {
        let f = try indexed(["hacker™ culture", "hacker culture", "thumbs 👍 up"])
        #expect(Set(try f.ids("\"hacker™ culture\"")) == [.integer(1), .integer(2)])
        #expect(Set(try f.ids("hacker ™ culture")) == [.integer(1), .integer(2)])
        #expect(try f.ids("\"thumbs 👍 up\"") == [.integer(3)])
        let alone = try f.index.search("™ 👍")
        #expect(alone.total == 0 && alone.explanation?.reason == .nothingToSearch, "\(String(describing: alone.explanation))")
    }

    /// Punctuation and format characters newer than this SQLite's Unicode tables (`⸼` U+2E3C,
    /// U+2066) are kept in tokens by it: stored text sets them apart too, so the words beside
    /// them are found, and a phrase holding them finds its text.
    @Test func newerPunctuationAndFormatCharactersSeparateWordsInTextAndQueries() throws {
        let f = try indexed(["abc\u{2E3C}def", "ghi\u{2066}jkl", "abc def"])
        #expect(try f.ids("\"abc\u{2E3C}def\"") == [.integer(1)])
        #expect(try f.ids("ghi\u{2066}jkl") == [.integer(2)])
        #expect(try f.ids("ghi") == [.integer(2)])
        #expect(Set(try f.ids("abc")) == [.integer(1), .integer(3)])
    }

    /// Regression: the characters Searchlight inserts, found in the
    /// text itself, are not taken for its own.
    @Test func separatorAndBreakCharactersInTheTextAreNotSearchlights() throws {
        let f = try indexed(["るの", "る。の", "る\u{10FFFD}の", "る\u{1F}の"])
        #expect(try f.ids("るの") == [.integer(1)])
        #expect(Set(try f.ids("る。の")) == [.integer(2), .integer(3), .integer(4)], "punctuation in a query matches any separator there")
        let shown = try f.index.search("る", limit: nil).hits.first { $0.objectID == .integer(3) }?.snippet ?? ""
        #expect(shown == "[る]\u{FFFD}の", "\(shown.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    /// Regression.
    @Test func cjkCompatibilitySymbolsAndFinalSigma() throws {
        let f = try indexed(["㍻の年号", "⼀つ", "ΣΊΣΥΦΟΣ"])
        #expect(try f.ids("平成") == [.integer(1)])
        #expect(try f.ids("一") == [.integer(2)])
        #expect(try f.ids("σίσυφος") == [.integer(3)], "a final sigma matches Σ")
        #expect(try f.ids("Σίσυφος") == [.integer(3)])
    }

    /// Regression: the query parser splits words as the tokenizer's
    /// own `tokenchars` say, and a tokenizer that keeps U+001F in tokens is refused.
    @Test func tokenizerOptionsShapeWordsAndATokenizerKeepingControlsIsRefused() throws {
        let model = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "unicode61 remove_diacritics 2 tokenchars '.:/'")
        let f = try indexed(["meet at 10:30 on http://x.org", "meet at 10 then 30"], model: model)
        #expect(try f.ids("10:30") == [.integer(1)])
        #expect(try f.ids("http://x.org") == [.integer(1)])
        #expect(try f.ids("数据") == [], "CJK still works with tokenchars (no CJK text here)")
        let keepsControls = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "unicode61 categories 'L* N* Co Cc'")
        let error = try #require(throws: SearchlightError.self) { try Indexer.validate(model: keepsControls) }
        #expect(error.code == .invalidModel && error.message.contains("U+001F"), "\(error.message)")
    }

    @Test func cjkTextIsFoundByAnySubstringWithTheDefaultModel() throws {
        let f = try indexed(["使用CoreData持久化数据", "数据库的备份", "엔진을 시작합니다", "データベースを作成する", "数，据 库"])
        #expect(try f.ids("持久化") == [.integer(1)])
        #expect(try f.ids("CoreData持久化") == [.integer(1)], "Latin glued to CJK")
        #expect(try f.ids("coredata 数据") == [.integer(1)], "a query that mixes Latin and CJK")
        #expect(try f.ids("CoreData持久", asYouType: true) == [.integer(1)])
        #expect(Set(try f.ids("数据")) == [.integer(1), .integer(2)])
        #expect(try f.ids("数") .count == 3, "a single character")
        #expect(try f.ids("엔진") == [.integer(3)], "a Korean word inside a word with its particle")
        #expect(try f.ids("データベ", asYouType: true) == [.integer(4)])
        #expect(try f.ids("ベース") == [.integer(4)])
        #expect(try f.ids("数据库") == [.integer(2)], "scattered characters are no match: punctuation breaks a phrase")
        #expect(try f.ids("据 库") .contains(.integer(5)), "separate words still match separately")
        #expect(try f.ids("备数").isEmpty)
        #expect(try f.ids("数，据") == [.integer(5)], "punctuation inside a query matches punctuation in the text")
    }

    @Test func snippetsAndTitlesShowTheOriginalTextWithTheRunHighlightedAsOne() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "数据指南", body: "本文介绍如何使用CoreData持久化数据。")
        try f.runIndexer()
        let hit = try #require(try f.index.search("持久化").hits.first)
        #expect(hit.title == "数据指南")
        #expect(hit.snippet.contains("使用CoreData[持久化]数据"), "\(hit.snippet)")
        #expect(!hit.snippet.unicodeScalars.contains { $0 == IndexedText.separator || $0 == IndexedText.breakToken })
    }

    @Test func aPhraseAsWrittenRanksAboveTheSameCharactersApart() throws {
        let f = try indexed(["数据 and 库 are words here", "数据库 数据库 数据库", "数据库 once, in a longer text about other things", "数据\n    库 (a line break inside the word)"])
        let ids = try f.ids("数据库")
        #expect(ids.first == .integer(2))
        #expect(Set(ids) == [.integer(2), .integer(3), .integer(4)], "other words between the characters: no match; white space alone: a match")
    }

    @Test func chineseVariantsFoldOnlyWhenTheModelSaysSo() throws {
        let plain = try indexed(["資料庫設定", "资料库设定"])
        #expect(try plain.ids("资料库") == [.integer(2)])
        var model = TestDatabase.notesModel
        model.foldChineseVariants = true
        let folded = try indexed(["資料庫設定", "资料库设定"], model: model)
        #expect(Set(try folded.ids("资料库")) == [.integer(1), .integer(2)])
        #expect(Set(try folded.ids("資料庫")) == [.integer(1), .integer(2)])
        let hit = try #require(try folded.index.search("资料库", limit: 1).hits.first)
        #expect(hit.snippet.contains("[") && hit.snippet.contains("设定"), "snippets show the folded text: \(hit.snippet)")
    }

    @Test func theTrigramTokenizerIndexesUnsegmentedText() throws {
        let model = try SearchlightModel(entities: TestDatabase.notesModel.entities, tokenizer: "trigram")
        let f = try indexed(["数据库的备份", "CoreData持久化", "see example.com", "meeting at 10:30"], model: model)
        // Regression: trigram keeps punctuation in terms.
        #expect(try f.ids("example.com") == [.integer(3)])
        #expect(try f.ids("ample.co") == [.integer(3)])
        #expect(try f.ids("10:30") == [.integer(4)])
        #expect(try f.ids("数据库") == [.integer(1)])
        #expect(try f.ids("Data持久") == [.integer(2)], "trigram matches inside words")
        let short = try f.index.search("数据")
        #expect(short.total == 0 && short.explanation?.reason == .termTooShort, "\(String(describing: short.explanation))")
    }

    /// The index uses SQLite's own tokenizers: the sqlite3 shell, with no Searchlight code, can
    /// check, vacuum and query it.
    @Test func theSqlite3ShellCanCheckVacuumAndQueryTheIndex() throws {
        let f = try indexed(["使用CoreData持久化数据"])
        let table = try f.store.dbPool.read { db in
            try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name GLOB 'searchlight_fts_*_g*' AND sql LIKE 'CREATE VIRTUAL%' LIMIT 1")
        }
        let fts = try #require(table)
        #expect(try f.db.shell("PRAGMA integrity_check;").trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        try f.db.shell("VACUUM;")
        #expect(try f.db.shell("INSERT INTO \(fts)(\(fts)) VALUES ('integrity-check'); SELECT count(*) FROM \(fts) WHERE \(fts) MATCH '\"持 久 化\"';")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        #expect(try f.ids("持久化") == [.integer(1)])
    }
}
