import Foundation
import Synchronization
import GRDB
import Testing
import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// `Indexer.uninstall(from:)` removes the index and the history, leaves the app's schema and
/// rows as they were (the `sqlite3` shell's `.dump` is the oracle), stops indexers that opened
/// the database before it, and `init` afterwards starts from scratch.
@Suite struct UninstallTests {
    static let seed = """
        INSERT INTO notes(id, title, body, tags) VALUES (1, 'Kernel panic', 'The system halted.', 'os'), (2, 'Hacker ethic', 'Information wants to be free.', NULL);
        INSERT INTO people VALUES ('p1', 'Ada Lovelace', 'ada@example.org'), ('P2', 'Bob', NULL);
        CREATE INDEX notes_by_tags ON notes(tags);
        CREATE TRIGGER notes_touch AFTER UPDATE OF body ON notes BEGIN UPDATE notes SET tags = coalesce(tags, '') || '+' WHERE id = NEW.id; END;
        CREATE VIEW named AS SELECT uuid, name FROM people;
        """

    @Test func uninstallRemovesTheIndexAndHistoryAndInitStartsFromScratch() throws {
        let db = try TestDatabase()
        try db.shell(Self.seed)
        let before = try db.dump()
        do {
            let store = try db.openStore()
            let indexer = try Indexer(store: store)
            try indexer.indexPendingChanges()
            try indexer.reindex() // a second generation, so that the first one's leftovers are exercised too
            try store.write(author: "app") { try $0.execute(sql: "UPDATE notes SET body = 'rebooted' WHERE id = 1") }
            try indexer.indexPendingChanges()
            #expect(try db.searchlightObjects().contains { $0.hasSuffix("_g2_data") }, "FTS5 shadow tables exist")

            // History alone refuses: the index would be left behind.
            let error = #expect(throws: SearchlightError.self) { try store.uninstall() }
            #expect(error?.code == .schemaMismatch)

            try Indexer.uninstall(from: store)
        }
        #expect(try db.searchlightObjects() == [])
        let reference = try TestDatabase()
        try reference.shell(Self.seed + "UPDATE notes SET body = 'rebooted' WHERE id = 1;")
        #expect(try db.dump() == reference.dump(), "the app's schema and rows, and nothing else")
        #expect(try db.dump() != before, "(the app's own write and trigger show)")

        // `init` again: from scratch, and everything works.
        let store = try db.openStore()
        let indexer = try Indexer(store: store)
        let summary = try indexer.indexPendingChanges()
        #expect(summary.rebuildReason == .notBuilt)
        #expect(try store.fetchChanges(.all).isEmpty, "no history from before")
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (3, 'Fresh start')") }
        try indexer.indexPendingChanges()
        let index = SearchIndex(store: store)
        #expect(try index.search("rebooted").hits.map(\.objectID) == [.integer(1)])
        #expect(try index.search("fresh").hits.map(\.objectID) == [.integer(3)])
        #expect(try index.search("lovelace").hits.map(\.objectID) == [.text("p1")])
    }

    @Test func uninstallOfADatabaseWithNoSetupThrowsAndChangesNothing() throws {
        let db = try TestDatabase()
        try db.shell(Self.seed)
        let before = try db.dump()
        let store = try db.openStore()
        try Indexer.uninstall(from: store)
        let error = #expect(throws: SearchlightError.self) { try Indexer.uninstall(from: store) }
        #expect(error?.code == .notInstalled)
        #expect(try db.dump() == before)
    }

    /// The app renames a tracked column and a tracked table, and remakes another one, while
    /// captured; Searchlight follows. After the uninstall the database is what the same migration
    /// gives on a copy that never had Searchlight.
    @Test func afterFollowedRenamesAndRemakesUninstallLeavesWhatTheMigrationAloneWould() throws {
        let migration = """
            ALTER TABLE notes RENAME COLUMN body TO content;
            ALTER TABLE notes RENAME TO memos;
            BEGIN;
            CREATE TABLE people_new(uuid TEXT PRIMARY KEY NOT NULL, name TEXT, email TEXT UNIQUE, joined TEXT);
            INSERT INTO people_new(uuid, name, email) SELECT uuid, name, email FROM people;
            DROP VIEW named; DROP TABLE people; ALTER TABLE people_new RENAME TO people;
            CREATE VIEW named AS SELECT uuid, name FROM people;
            COMMIT;
            INSERT INTO memos(id, title, content) VALUES (9, 'After migration', 'renamed content');
            UPDATE memos SET content = 'still indexed' WHERE id = 2;
            INSERT INTO people(uuid, name) VALUES ('p3', 'Grace Hopper');
            """
        let db = try TestDatabase()
        try db.shell(Self.seed)
        let store = try db.openStore()
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try db.shell(migration)
        try indexer.indexPendingChanges()
        let status = try store.healCapture()
        #expect(status.entities.map(\.table) == ["memos", "people"])
        #expect(status.notCapturing.isEmpty, "\(status)")
        #expect(!status.followed.isEmpty, "the renames were followed")
        let index = SearchIndex(store: store)
        #expect(try index.search("renamed").hits.map(\.objectID) == [.integer(9)])
        #expect(try index.search("hopper").hits.map(\.objectID) == [.text("p3")])
        #expect(try db.shell("SELECT sql FROM sqlite_master WHERE name GLOB 'searchlight_*' AND type = 'trigger';").contains("content"),
                "the capture triggers now name the renamed column")

        try Indexer.uninstall(from: store)
        let reference = try TestDatabase()
        try reference.shell(Self.seed)
        try reference.shell(migration)
        #expect(try db.searchlightObjects() == [])
        #expect(try db.dump() == reference.dump())
    }

    /// Another connection (as another process would) uninstalls while an indexer follows:
    /// following ends by itself with `notInstalled`, and nothing comes back.
    @Test func aFollowingIndexerStopsForGoodWhenAnotherConnectionUninstalls() async throws {
        let db = try TestDatabase()
        try db.shell(Self.seed)
        let reference = try TestDatabase()
        try reference.shell(Self.seed)
        let store = try db.openStore()
        let indexer = try Indexer(store: store)
        indexer.start()
        defer { Task { await indexer.stop() } }
        try db.shell("INSERT INTO notes(id, title) VALUES (4, 'followed');")
        try await withTimeout(600) { try await indexer.waitUntilCaughtUp() }
        #expect(try SearchIndex(store: store).search("followed").hits.count == 1)

        try Indexer.uninstall(from: HistoryStore(path: db.path))
        let failure = try await withTimeout(600) { () async -> SearchlightError? in
            do { try await indexer.waitUntilFollowingEnds() } catch let error as SearchlightError { return error } catch { Issue.record(error) }
            return nil
        }
        #expect(failure?.code == .notInstalled, "\(failure?.message ?? "following did not fail")")
        #expect(failure?.message.contains("uninstalled") == true)
        // The app goes on writing; nothing of Searchlight's reappears.
        try db.shell("INSERT INTO notes(id, title) VALUES (5, 'after');")
        try reference.shell("INSERT INTO notes(id, title) VALUES (4, 'followed'); INSERT INTO notes(id, title) VALUES (5, 'after');")
        let again = #expect(throws: SearchlightError.self) { try indexer.indexPendingChanges() }
        #expect(again?.code == .notInstalled)
        let search = #expect(throws: SearchlightError.self) { try SearchIndex(store: store).search("followed") }
        #expect(search?.code == .notInstalled, "\(search?.message ?? "-")")
        #expect(try db.searchlightObjects() == [])
        #expect(try db.dump() == reference.dump())
    }

    /// A search index that already searched, then another connection (as another process would)
    /// uninstalls: its next search says `notInstalled`, not that the user's query is bad, for
    /// plain and raw queries alike.
    @Test func aSearchAfterAnotherConnectionUninstalledSaysNotInstalled() throws {
        let db = try TestDatabase()
        try db.shell(Self.seed)
        let store = try db.openStore()
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        #expect(try index.search("kernel").hits.count == 1)

        try Indexer.uninstall(from: HistoryStore(path: db.path))
        for query in [SearchQuery(userText: "kernel")!, try SearchQuery(raw: "kernel")] {
            let error = #expect(throws: SearchlightError.self) { try index.search(query) }
            #expect(error?.code == .notInstalled, "\(error?.message ?? "-")")
            #expect(error?.message.contains("uninstalled") == true, "\(error?.message ?? "-")")
        }
    }

    /// An uninstall between two chunks of a rebuild: the next chunk stops with `notInstalled`
    /// and creates nothing (the rebuild's tables and lease are gone with the rest).
    @Test func aRebuildUnderWayStopsAtItsNextChunkAfterAnUninstall() throws {
        let db = try TestDatabase()
        try db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
            INSERT INTO notes(id, title, body) SELECT i, 'note ' || i, 'body' FROM n;
            """)
        let before = try db.dump()
        let store = try db.openStore()
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 100
        let indexer = try Indexer(store: store, configuration: configuration)
        let uninstalled = Mutex(false)
        let path = db.path
        // Progress is reported between chunks, outside any transaction.
        let error = #expect(throws: SearchlightError.self) {
            try indexer.reindex { progress in
                guard progress.done >= 300, !uninstalled.withLock({ $0 }) else { return }
                uninstalled.withLock { $0 = true }
                try! Indexer.uninstall(from: HistoryStore(path: path))
            }
        }
        #expect(uninstalled.withLock { $0 }, "the uninstall ran mid-rebuild")
        #expect(error?.code == .notInstalled, "\(error?.message ?? "-")")
        #expect(try db.searchlightObjects() == [])
        #expect(try db.dump() == before)
    }
}
