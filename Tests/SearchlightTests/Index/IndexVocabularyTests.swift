import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// The vocabulary the indexer keeps (``IndexVocabulary``), against an oracle that shares no code
/// with it: FTS5's own `fts5vocab` counts of the index's tables.
@Suite struct IndexVocabularyTests {
    /// The vocabulary as stored.
    static func stored(_ store: HistoryStore) throws -> [String: Int] {
        try store.databaseWriter.read { db in
            let generation = try #require(try IndexState.get(db, .generation, as: Int.self))
            return try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT term, documents FROM searchlight_terms_g\(generation)").map {
                ($0[0] as String, $0[1] as Int)
            })
        }
    }

    /// What FTS5 itself counts: each term's documents in every entity's table, summed, for the
    /// terms the vocabulary keeps (no CJK character, at most 64 bytes).
    static func oracle(_ store: HistoryStore) throws -> [String: Int] {
        try store.databaseWriter.write { db in
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'searchlight_fts_[0-9]*_g[0-9]*'
                AND name NOT LIKE '%\\_data' ESCAPE '\\' AND name NOT LIKE '%\\_idx' ESCAPE '\\' AND name NOT LIKE '%\\_content' ESCAPE '\\'
                AND name NOT LIKE '%\\_docsize' ESCAPE '\\' AND name NOT LIKE '%\\_config' ESCAPE '\\'
                """)
            var counts: [String: Int] = [:]
            for (index, table) in tables.enumerated() {
                try db.execute(sql: "CREATE VIRTUAL TABLE temp.oracle_\(index) USING fts5vocab(main, '\(table)', 'row')")
                for row in try Row.fetchAll(db, sql: "SELECT term, doc FROM temp.oracle_\(index)") {
                    let term: String = row[0]
                    let cjk = term.unicodeScalars.contains { (0x2E80...0x9FFF).contains($0.value) || (0xAC00...0xD7AF).contains($0.value) || (0xF900...0xFAFF).contains($0.value) || $0.value >= 0x20000 && $0.value < 0x30000 || $0.value == 0x10FFFD }
                    if !cjk, term.utf8.count <= 64 { counts[term, default: 0] += row[1] as Int }
                }
                try db.execute(sql: "DROP TABLE temp.oracle_\(index)")
            }
            return counts
        }
    }

    @Test func aDocumentCountsEachOfItsWordsOnce() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "Kernel kernel KERNEL", body: "kernel panic Café")
        try f.insertNote(2, title: "panic", body: "")
        try f.runIndexer()
        let vocabulary = try Self.stored(f.store)
        #expect(vocabulary["kernel"] == 1 && vocabulary["panic"] == 2)
        #expect(vocabulary["cafe"] == 1, "folded as the tokenizer folds it")
        #expect(vocabulary == (try Self.oracle(f.store)))
    }

    @Test func theVocabularyFollowsRandomWritesAndRebuildsAsFTS5CountsThem() throws {
        var (_, random) = seededGenerator("IndexVocabularyTests.randomWrites")
        let words = ["kernel", "panic", "数据库", "café", "ÉCOLE", "x" + String(repeating: "y", count: 70), "🙂", "naïve", "Straße", "photo", "2024", "v1.2"]
        let f = try Fixture()
        func text() -> String { (0..<Int.random(in: 0...6, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ") }
        for round in 0..<6 {
            try f.store.write(author: "app") { db in
                for _ in 0..<40 {
                    let id = Int.random(in: 1...30, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [id])
                    case 1: try db.execute(sql: "UPDATE notes SET body = ? WHERE id = ?", arguments: [text(), id])
                    default: try db.execute(sql: "INSERT OR REPLACE INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)", arguments: [id, text(), text(), text()])
                    }
                }
                // People too: the vocabulary counts the documents of every entity.
                try db.execute(sql: "INSERT OR REPLACE INTO people(uuid, name) VALUES (?, ?)", arguments: ["p\(Int.random(in: 1...5, using: &random))", text()])
            }
            // A writer outside the API (the sqlite3 shell) too.
            try f.db.shell("UPDATE notes SET title = 'kernel panic café' WHERE id = \(Int.random(in: 1...30, using: &random));")
            try f.runIndexer()
            #expect(try Self.stored(f.store) == Self.oracle(f.store), "round \(round)")
            #expect(try f.indexer.verify().vocabularyDifferences == nil)
        }
        try f.indexer.reindex()
        #expect(try Self.stored(f.store) == Self.oracle(f.store), "after a rebuild")
        try f.db.shell("DELETE FROM notes; DELETE FROM people;")
        try f.runIndexer()
        #expect(try Self.stored(f.store).isEmpty, "no document, no word")
    }

    @Test func anIndexWithoutAVocabularyIsRebuiltOnceWithOne() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "kernel panic")
        try f.runIndexer()
        // An index as the previous release left it: layout version 5, no vocabulary.
        try f.store.dbPool.write { db in
            var layout = try IndexLayout(json: try #require(try IndexState.get(db, .layout, as: String.self)))
            layout.version = 5
            try IndexState.set(db, .layout, layout.json)
            try db.execute(sql: "DROP TABLE searchlight_terms_g1")
        }
        #expect(try f.ids("kernal", typos: .on) == [], "no vocabulary: exact matches only, no error")
        let summary = try f.runIndexer()
        #expect(summary.rebuildReason != nil)
        #expect(try Self.stored(f.store) == ["kernel": 1, "panic": 1])
        #expect(try f.ids("kernal", typos: .on) == [.integer(1)])
    }

    @Test func wordTokenizersKeepAVocabularyAndTrigramAndPorterDoNot() {
        #expect(IndexVocabulary.isKept(for: IndexedText(tokenizer: "unicode61 remove_diacritics 2")))
        #expect(IndexVocabulary.isKept(for: IndexedText(tokenizer: "ascii")))
        #expect(!IndexVocabulary.isKept(for: IndexedText(tokenizer: "trigram")))
        #expect(!IndexVocabulary.isKept(for: IndexedText(tokenizer: "porter unicode61")))
    }
}

extension IndexVocabularyTests {
    @Test func verifyFindsADamagedVocabularyAndRepairRebuildsIt() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "kernel panic")
        try f.insertNote(2, title: "kernel")
        try f.runIndexer()
        #expect(try f.indexer.verify().isConsistent)
        try f.store.dbPool.write { db in
            try db.execute(sql: "UPDATE searchlight_terms_g1 SET documents = 7 WHERE term = 'kernel'")
            try db.execute(sql: "DELETE FROM searchlight_terms_g1 WHERE term = 'panic'")
            try db.execute(sql: "INSERT INTO searchlight_terms_g1 VALUES ('ghost', 1)")
        }
        let report = try f.indexer.verify()
        #expect(report.vocabularyDifferences == #"3 words differ from the counts of the index's text ("ghost" 1 (the text: 0), "kernel" 7 (the text: 2), "panic" 0 (the text: 1))"#)
        #expect(report.differences == 0 && report.integrityErrors.isEmpty, "the documents are right")
        #expect(!report.isConsistent, "a vocabulary that differs makes the index inconsistent")
        let repair = try f.indexer.repair()
        #expect(repair.repaired && repair.isConsistent)
        #expect(try Self.stored(f.store) == ["kernel": 2, "panic": 1])
    }

    /// Regression (an outsider): words stored as BLOBs or with a NUL read back as the right
    /// words, so verify passed while typo tolerance no longer found them; a count that is no
    /// integer is a difference too.
    @Test func verifyFindsWordsThatAreNoTextAndCountsThatAreNoIntegers() throws {
        for damage in ["INSERT INTO searchlight_terms_g1 VALUES ('zzz', 0)",  // outsider, stop 41: a word no document holds, counted 0
                       "UPDATE searchlight_terms_g1 SET term = CAST(term AS BLOB)",
                       "UPDATE searchlight_terms_g1 SET term = 'kernel' || char(0) WHERE term = 'kernel'",
                       "UPDATE searchlight_terms_g1 SET documents = 'abc' WHERE term = 'kernel'",
                       "UPDATE searchlight_terms_g1 SET documents = 2.5 WHERE term = 'kernel'"] {
            let f = try Fixture()
            try f.insertNote(1, title: "kernel panic")
            try f.insertNote(2, title: "kernel")
            try f.runIndexer()
            try f.db.shell(damage + ";")
            let report = try f.indexer.verify()
            #expect(report.vocabularyDifferences != nil && !report.isConsistent, "\(damage)")
            #expect(try f.indexer.repair().isConsistent, "\(damage)")
            #expect(try f.index.search("kernal").total == 2, "\(damage)")
        }
    }
}

extension IndexVocabularyTests {
    /// The writes of the multi-process simulation, on its odd keys (NOCASE text in any case,
    /// BLOBs, REALs) and unique titles, in one process: the vocabulary stays FTS5's count.
    @Test func theVocabularyFollowsEveryKindOfWriteOnOddKeys() throws {
        var (_, random) = seededGenerator("IndexVocabularyTests.oddKeys")
        let schema = """
            CREATE TABLE notes(k INTEGER PRIMARY KEY, title TEXT UNIQUE, body TEXT, extra TEXT);
            CREATE TABLE tags(k TEXT PRIMARY KEY COLLATE NOCASE, title TEXT, body TEXT, extra TEXT);
            CREATE TABLE blobs(k BLOB PRIMARY KEY NOT NULL, title TEXT UNIQUE, body TEXT, extra TEXT) WITHOUT ROWID;
            CREATE TABLE reals(k REAL PRIMARY KEY, title TEXT, body TEXT, extra TEXT);
            """
        let tables = ["notes", "tags", "blobs", "reals"]
        let model = try SearchlightModel(entities: tables.map {
            .init(name: $0.capitalized, table: $0, primaryKey: "k", fields: [.init(column: "title", role: .title), .init(column: "body")])
        })
        let f = try Fixture(schema: schema, model: model)
        func key(_ table: String, _ n: Int) -> DatabaseValue {
            switch table {
            case "notes": n.databaseValue
            case "tags": (Bool.random(using: &random) ? "TAG\(n)" : "tag\(n)").databaseValue
            case "blobs": Data([0xB0, UInt8(n)]).databaseValue
            default: (Double(n) + 0.5).databaseValue
            }
        }
        for round in 0..<40 {
            for counter in 0..<25 {
                let table = tables.randomElement(using: &random)!
                let (k, other) = (key(table, Int.random(in: 0..<12, using: &random)), key(table, Int.random(in: 0..<12, using: &random)))
                let word = "w\(round)n\(counter)"
                let q = "\"\(table)\""
                let (sql, arguments): (String, StatementArguments) = switch Int.random(in: 0..<12, using: &random) {
                case 0: ("INSERT INTO \(q)(k, title, body) VALUES (?, ?, 'plain')", [k, word])
                case 1: ("INSERT OR REPLACE INTO \(q)(k, title, body) VALUES (?, ?, 'replaced')", [k, word])
                case 2: ("INSERT INTO \(q)(k, title, body) VALUES (?, ?, 'upserted') ON CONFLICT(k) DO UPDATE SET title = excluded.title", [k, word])
                case 3: ("UPDATE \(q) SET title = ? WHERE k = ?", [word, k])
                case 4: ("UPDATE \(q) SET body = ? WHERE k = ?", ["body " + word, k])
                case 5: ("UPDATE \(q) SET extra = ? WHERE k = ?", [word, k])
                case 6: ("DELETE FROM \(q) WHERE k = ?", [k])
                case 7: ("UPDATE \(q) SET k = ?, title = ? WHERE k = ?", [other, word, k])
                case 8: ("UPDATE OR REPLACE \(q) SET k = ?, title = ? WHERE k = ?", [other, word, k])
                case 9: ("INSERT OR IGNORE INTO \(q)(k, title, body) VALUES (?, ?, 'ignored')", [k, word])
                case 10: ("INSERT OR REPLACE INTO \(q)(k, title, body) SELECT ?, title, 'displaced' FROM \(q) WHERE k = ?", [k, other])
                default: ("UPDATE OR REPLACE \(q) SET title = (SELECT title FROM \(q) WHERE k = ?) WHERE k = ?", [other, k])
                }
                do {
                    if Bool.random(using: &random) {
                        try f.store.write(author: "app") { db in try db.execute(sql: sql, arguments: arguments) }
                    } else {
                        try f.store.dbPool.write { db in try db.execute(sql: sql, arguments: arguments) }
                    }
                } catch {} // a constraint
            }
            try f.runIndexer()
            let report = try f.indexer.verify()
            #expect(report.isConsistent && report.vocabularyDifferences == nil, "round \(round): \(report.vocabularyDifferences ?? "") \(report.differences)")
            if !report.isConsistent || report.vocabularyDifferences != nil { break }
        }
    }
}

extension IndexVocabularyTests {
    /// Regression (an outsider's attack): an indexer that had already run (`watch`) kept
    /// indexing after another process rebuilt the index, and its connection's cached schema did
    /// not list the new generation's vocabulary table: it wrote the text and not the words.
    @Test func anIndexerKeepsTheVocabularyAfterAnotherProcessRebuilt() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "kernel panic")
        try f.runIndexer()
        // Another process (its own connections) rebuilds the index.
        let other = try f.db.openStore()
        try Indexer(store: other).reindex()
        try f.insertNote(2, title: "kernel widget")
        try f.runIndexer()
        #expect(try Self.stored(f.store) == Self.oracle(f.store))
        #expect(try f.indexer.verify().isConsistent)
        #expect(try f.index.suggest("widg").map(\.word) == ["widget"])
    }
}
