import Foundation
import GRDB
import Testing
@testable import Searchlight
@testable import SearchlightHistory
import SearchlightTestSupport

/// Databases made by earlier releases open, migrate and keep working.
@Suite struct UpgradeTests {
    /// `searchlight init` of release 0.1.0 on a notes/people database (5 documents), then, with
    /// no indexer running, an update, a delete and an insert by the `sqlite3` shell: 3 changes
    /// the index has not seen.
    static let release010 = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/searchlight-0.1.0.sqlite")

    static func copyOfRelease010() throws -> (TestDatabase, String) {
        let db = try TestDatabase(schema: "")
        try FileManager.default.removeItem(atPath: db.path)
        try FileManager.default.copyItem(atPath: release010.path, toPath: db.path)
        return (db, db.path)
    }

    @Test func aDatabaseOfRelease010KeepsItsIndexAndCatchesUp() throws {
        let (db, path) = try Self.copyOfRelease010()
        let store = try HistoryStore(path: path)
        // Searching first migrates the index's bookkeeping and answers from the old generation.
        #expect(try SearchIndex(store: store).search("halted", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try SearchIndex(store: store).search("magic", limit: nil).total == 1, "not indexed yet: still found")

        // The migration kept the 0.1.0 index as it was built; its prefix indexes ('2 3 4') are
        // not today's ('1 2 3'), so the indexer rebuilds it once, online.
        let kept = try store.dbPool.read { db in try IndexState.get(db, .layout, as: String.self) }.map(IndexLayout.init(json:))
        #expect(kept?.prefixes == IndexSchema.legacyPrefixes)
        let summary = try Indexer(store: store).indexPendingChanges()
        #expect(summary.rebuildReason == .modelChanged)
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == nil, "once")
        let index = SearchIndex(store: store)
        #expect(try index.search("trap", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try index.search("magic", limit: nil).total == 0)
        #expect(try index.search("grace", limit: nil).hits.map(\.objectID) == [.text("u3")])
        #expect(try Indexer(store: store).verify().isConsistent)
        // The index's state left History's table for its own.
        let (legacyKeys, generation) = try store.dbPool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_meta WHERE key LIKE 'index.%'"),
             try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'"))
        }
        #expect(legacyKeys == 0)
        #expect(generation == 2)
        _ = db
    }

    @Test func aDatabaseOfRelease010WithAChangedModelRebuildsOnce() throws {
        let (db, path) = try Self.copyOfRelease010()
        var model = try HistoryStore(path: path).model
        model.entities[0].fields[0].weight = 5
        let store = try HistoryStore(path: path, model: model)
        let summary = try Indexer(store: store).indexPendingChanges()
        #expect(summary.rebuildReason == .modelChanged)
        #expect(try SearchIndex(store: store).search("trap OR grace", limit: nil).total == 2)
        #expect(try Indexer(store: store).verify().isConsistent)
        _ = db
    }

    /// An index built with other prefix lengths (by an earlier release: `'2 3 4'`) is rebuilt
    /// once with today's, since its layout records them.
    @Test func anIndexWithOtherPrefixIndexesIsRebuiltOnce() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'Kernel panic')") }
        try Indexer(store: store).indexPendingChanges()
        func ftsSQL() throws -> String? {
            try store.dbPool.read { db in try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name GLOB 'searchlight_fts_*_g*' AND sql LIKE '%fts5%' ORDER BY name LIMIT 1") }
        }
        #expect(try ftsSQL()?.contains("prefix = '\(IndexSchema.prefixes)'") == true)
        // What an earlier release left: the same tables, with a layout that records '2 3 4'.
        try store.dbPool.write { db in
            var layout = try IndexLayout(json: try #require(try IndexState.get(db, .layout, as: String.self)))
            layout.prefixes = IndexSchema.legacyPrefixes
            try IndexState.set(db, .layout, layout.json)
        }
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == .modelChanged)
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == nil, "once")
        #expect(try ftsSQL()?.contains("prefix = '\(IndexSchema.prefixes)'") == true)
        #expect(try SearchIndex(store: store).search("k", asYouType: true).hits.map(\.objectID) == [.integer(1)])
        _ = db
    }

    /// An index whose text was prepared by layout version 4 (symbols beyond Unicode 6.1 set apart,
    /// but not newer punctuation) is rebuilt once, online, with today's preparation.
    @Test func anIndexOfTextLayoutVersion4IsRebuiltOnce() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(id, body) VALUES (1, 'abc\u{2E3C}def great job 🙂 thanks')") }
        try Indexer(store: store).indexPendingChanges()
        #expect(IndexLayout.currentVersion == 6)
        try store.dbPool.write { db in
            var layout = try IndexLayout(json: try #require(try IndexState.get(db, .layout, as: String.self)))
            layout.version = 4
            try IndexState.set(db, .layout, layout.json)
        }
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == .modelChanged)
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == nil, "once")
        let index = SearchIndex(store: store)
        #expect(try index.search("abc", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try index.search("\"job 🙂 thanks\"", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try Indexer(store: store).verify().isConsistent)
        _ = db
    }

    /// An index built when REAL values were indexed as Swift prints them (`0.30000000000000004`,
    /// layout version 4) is rebuilt once, online, with the text SQLite gives them (`0.3`).
    @Test func anIndexWithSwiftsDigitsForRealValuesIsRebuiltOnce() throws {
        let db = try TestDatabase(schema: RealValueTests.schema)
        try db.shell(RealValueTests.rows)
        let store = try db.openStore(model: RealValueTests.model)
        try Indexer(store: store).indexPendingChanges()
        let fts = try RealValueTests.ftsTable(store)
        // What an earlier release left: Swift's digits, in a layout of version 4.
        try store.dbPool.write { db in
            var layout = try IndexLayout(json: try #require(try IndexState.get(db, .layout, as: String.self)))
            layout.version = 4
            try IndexState.set(db, .layout, layout.json)
            try db.execute(sql: "UPDATE \(fts) SET price = '0.30000000000000004' WHERE rowid = 1")
        }
        #expect(try SearchIndex(store: store).search("0.3", limit: nil).total == 0)
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == .modelChanged)
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == nil, "once")
        #expect(try SearchIndex(store: store).search("0.3", limit: nil).hits.map(\.objectID) == [.integer(1)])
        #expect(try Indexer(store: store).verify().isConsistent)
        _ = db
    }

    /// Made by the build before capture triggers v6 (triggers version 5, history schema 2):
    /// users(id INTEGER PRIMARY KEY, email UNIQUE, name) and notes, `searchlight init`, then by
    /// the `sqlite3` shell `INSERT OR REPLACE INTO users(email, name)` of Ada's email, which
    /// deleted user 1 unrecorded (those triggers did not watch other unique keys), and `index`:
    /// the index still finds "Lovelace" (user 1), and verify reports it extra.
    static let triggersV5 = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/searchlight-triggers-v5.sqlite")

    @Test func aDatabaseOfTriggersV5IsUpgradedAndForgetsTheRowItsReplaceDisplaced() throws {
        let db = try TestDatabase(schema: "")
        try FileManager.default.removeItem(atPath: db.path)
        try FileManager.default.copyItem(atPath: Self.triggersV5.path, toPath: db.path)
        let store = try HistoryStore(path: db.path)
        #expect(try SearchIndex(store: store).search("lovelace", limit: nil).total == 1, "the row lost before the upgrade")
        // Opening upgraded the triggers and, since they now watch a unique key they did not,
        // recorded a capture gap: the indexer rebuilds once, and the lost delete is made good.
        let summary = try Indexer(store: store).indexPendingChanges()
        #expect(summary.rebuildReason != nil)
        #expect(try Indexer(store: store).indexPendingChanges().rebuildReason == nil, "once")
        #expect(try SearchIndex(store: store).search("lovelace", limit: nil).total == 0)
        #expect(try SearchIndex(store: store).search("augusta", limit: nil).total == 1)
        let (version, watching) = try store.dbPool.read { db in
            (try Int.fetchOne(db, sql: "SELECT value FROM searchlight_meta WHERE key = 'captureVersion'"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND (name LIKE '%collide%' OR name LIKE '%vanished' OR name LIKE '%unwatches')"))
        }
        #expect(version == CaptureTriggers.version)
        #expect(watching == 5)
        // And now a REPLACE by email is recorded.
        _ = try db.shell("INSERT OR REPLACE INTO users(email, name) VALUES ('bob@example.com', 'Charles Babbage');")
        _ = try Indexer(store: store).indexPendingChanges()
        #expect(try SearchIndex(store: store).search("babbage", limit: nil).hits.map(\.objectID) == [.integer(4)], "Bob (2) displaced by Charles (4)")
        #expect(try Indexer(store: store).verify().isConsistent)
    }

    /// A database of capture triggers 7 (made with the release before them: `init`, `index`,
    /// then with the `sqlite3` shell an insert, an update, an `INSERT OR REPLACE` of note 1, a
    /// delete and a transaction of two inserts, all still to index): each of those changes was a
    /// header row and its change rows. Opening it installs triggers 8 with no capture gap (the
    /// upgrade lost nothing); the old history reads as it did, whole, with its tokens; new
    /// changes follow it, with greater tokens; and the index catches up without a rebuild.
    static let triggersV7 = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/searchlight-triggers-v7.sqlite")

    @Test func aDatabaseOfTriggersV7IsUpgradedAndItsHistoryReadsAsItDid() throws {
        let db = try TestDatabase(schema: "")
        try FileManager.default.removeItem(atPath: db.path)
        try FileManager.default.copyItem(atPath: Self.triggersV7.path, toPath: db.path)
        let store = try HistoryStore(path: db.path)
        let old = try store.fetchTransactions(.all)
        #expect(old.map(\.token.rawValue) == [1, 3, 5, 8, 10, 12])
        #expect(old.map { $0.changes.map { "\($0.type) \($0.objectID)" } } == [
            ["insert 4"], ["update 2"], ["delete 1", "insert 1"], ["delete 3"], ["insert 5"], ["insert 6"],
        ])
        let (version, resync, schema) = try store.dbPool.read { db in
            (try Int.fetchOne(db, sql: "SELECT value FROM searchlight_meta WHERE key = 'captureVersion'"),
             try Int.fetchOne(db, sql: "SELECT value FROM searchlight_meta WHERE key = 'resyncThroughToken'"),
             try Int.fetchOne(db, sql: "SELECT value FROM searchlight_meta WHERE key = 'schemaVersion'"))
        }
        #expect(version == CaptureTriggers.version)
        #expect(schema == HistorySchema.currentVersion)
        #expect(resync == nil, "an upgrade is no interruption")
        // New changes, of another writer and of the API, follow the old ones.
        _ = try db.shell("INSERT OR REPLACE INTO notes(id, title, body, tags) VALUES (2, 'Bravo again', 'replaced', 'b'); DELETE FROM notes WHERE id = 4;")
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (7, 'Golf', 'seventh', 'g')") }
        let new = try store.fetchTransactions(.after(HistoryToken(12)))
        #expect(new.map { $0.changes.map { "\($0.type) \($0.objectID)" } } == [["delete 2", "insert 2"], ["delete 4"], ["insert 7"]])
        #expect(new.map(\.author) == [nil, nil, "app"])
        #expect(new.allSatisfy { $0.token.rawValue > 12 })
        #expect(new.first?.changes.first?.tombstone?["title"] == "Bravo".databaseValue)
        let summary = try Indexer(store: store).indexPendingChanges()
        #expect(summary.rebuildReason == nil)
        let index = try SearchIndex(store: store)
        #expect(try index.search("replaced", limit: nil).hits.map(\.objectID).sorted { "\($0)" < "\($1)" } == [.integer(1), .integer(2)])
        #expect(try index.search("charlie", limit: nil).total == 0)
        #expect(try index.search("delta", limit: nil).total == 0)
        #expect(try index.search("golf", limit: nil).total == 1)
        #expect(try Indexer(store: store).verify().isConsistent)
    }
}
