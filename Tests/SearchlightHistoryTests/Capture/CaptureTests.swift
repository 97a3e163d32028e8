import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct CaptureTests {
    @Test func writeThroughAPIRecordsAuthorContextAndProcess() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app", context: "editor") { db in
            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (1, 'Hello', 'World'), (2, 'Two', 'x')")
        }
        let transactions = try store.fetchTransactions(.all)
        #expect(transactions.count == 1)
        let transaction = try #require(transactions.first)
        #expect(transaction.author == "app")
        #expect(transaction.contextName == "editor")
        #expect(transaction.processID == ProcessInfo.processInfo.processIdentifier)
        #expect(transaction.changes.map(\.objectID) == [.integer(1), .integer(2)])
        #expect(transaction.changes.allSatisfy { $0.type == .insert && $0.entity == "Note" })
    }

    @Test func sqlite3ShellChangeIsCapturedWithNoAuthor() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title) VALUES (7, 'from the shell');")
        let transactions = try store.fetchTransactions(.all)
        #expect(transactions.count == 1)
        #expect(transactions.first?.author == nil)
        #expect(transactions.first?.processID == nil)
        #expect(transactions.first?.changes.first?.objectID == .integer(7))
    }

    @Test func rawWriteThroughThePoolHasNoAuthorAndIsNotAttributedToAnother() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a')") }
        try store.dbPool.write { try $0.execute(sql: "UPDATE notes SET title = 'b' WHERE id = 1") }
        let transactions = try store.fetchTransactions(.all)
        #expect(transactions.map(\.author) == ["app", nil])
        #expect(transactions[0].token < transactions[1].token)
    }

    @Test func multiRowStatementsByAForeignWriterAreAllRecorded() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
            INSERT INTO notes(id, title) SELECT i, 'note ' || i FROM n;
            UPDATE notes SET body = 'bulk' WHERE id <= 20;
            DELETE FROM notes WHERE id > 40;
            """)
        let changes = try store.allChanges()
        #expect(changes.filter { $0.type == .insert }.count == 50)
        #expect(changes.filter { $0.type == .update }.count == 20)
        #expect(changes.filter { $0.type == .delete }.map(\.objectID) == (41...50).map { .integer(Int64($0)) })
    }

    @Test func rolledBackTransactionLeavesNoHistory() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        struct Abort: Error {}
        let error = #expect(throws: SearchlightError.self) {
            try store.write(author: "app") { db in
                try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a')")
                throw Abort()
            }
        }
        // The closure's own error comes back as the cause, under a stable code.
        #expect(error?.code == .bodyFailed)
        #expect(error?.underlyingError is Abort)
        try db.shell("BEGIN; INSERT INTO notes(id, title) VALUES (2, 'b'); ROLLBACK;")
        #expect(try store.fetchTransactions(.all).isEmpty)
        #expect(try store.currentToken() == .zero)
    }

    @Test func writeErrorsMatchLikeGRDBResultCodes() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a')") }
        // A constraint violation inside the body keeps SQLite's error as its cause.
        do {
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'again')") }
            Issue.record("a duplicate key must throw")
        } catch SearchlightError.databaseError {
            // matched by code, like `catch DatabaseError.SQLITE_CONSTRAINT`
        } catch {
            Issue.record("unexpected error \(error)")
        }
        let error = #expect(throws: SearchlightError.self) {
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'again')") }
        }
        #expect(error?.databaseError?.resultCode == .SQLITE_CONSTRAINT)
        // Checkpoints refused inside the caller's transaction throw the same type.
        let checkpoint = #expect(throws: SearchlightError.self) {
            try store.dbPool.write { db in try store.saveCheckpoint(HistoryToken(999), for: "exporter", in: db) }
        }
        #expect(checkpoint?.code == .invalidToken)
        switch checkpoint?.code {
        case SearchlightError.invalidToken?: break
        default: Issue.record("the code must match by pattern")
        }
    }

    @Test func rolledBackSavepointLeavesNoHistory() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'kept')")
            try db.execute(sql: "SAVEPOINT s")
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (2, 'dropped')")
            try db.execute(sql: "ROLLBACK TO s")
            try db.execute(sql: "RELEASE s")
        }
        try db.shell("BEGIN; SAVEPOINT x; INSERT INTO notes(id, title) VALUES (3, 'gone'); ROLLBACK TO x; RELEASE x; COMMIT;")
        let changes = try store.allChanges()
        #expect(changes.map(\.objectID) == [.integer(1)])
    }

    @Test func writeThatChangesNothingTrackedLeavesNoTransaction() throws {
        let db = try TestDatabase(schema: TestDatabase.notesSchema + "CREATE TABLE other(x);")
        let store = try db.openStore()
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO other VALUES (1)") }
        #expect(try store.fetchTransactions(.all).isEmpty)
    }

    @Test func nullTransitionsAreUpdatesAndSameValueUpdatesAreNot() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title, body) VALUES (1, 'a', NULL);")
        let start = try store.currentToken()
        try db.shell("UPDATE notes SET body = 'now set' WHERE id = 1;")   // NULL → value
        try db.shell("UPDATE notes SET title = NULL WHERE id = 1;")       // value → NULL
        try db.shell("UPDATE notes SET title = NULL, body = 'now set' WHERE id = 1;") // no change
        try db.shell("UPDATE notes SET tags = tags WHERE id = 1;")        // NULL → NULL
        let changes = try store.fetchChanges(.after(start))
        #expect(changes.map(\.type) == [.update, .update])
        #expect(changes.map(\.updatedColumns) == [["body"], ["title"]])
    }

    @Test func updateRecordsExactlyTheColumnsThatChanged() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title, body, tags) VALUES (1, 'a', 'b', 'c');")
        let start = try store.currentToken()
        try db.shell("UPDATE notes SET title = 'A', body = 'b', tags = 'C' WHERE id = 1;")
        #expect(try store.fetchChanges(.after(start)).first?.updatedColumns == ["title", "tags"])
    }

    @Test func primaryKeyChangeIsADeleteAndAnInsert() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'moving');")
        let start = try store.currentToken()
        try db.shell("UPDATE notes SET id = 2 WHERE id = 1;")
        let changes = try store.fetchChanges(.after(start))
        #expect(changes.map(\.type) == [.delete, .insert])
        #expect(changes.map(\.objectID) == [.integer(1), .integer(2)])
        #expect(changes.first?.tombstone == ["title": "moving".databaseValue])
    }

    @Test func insertOrReplaceOfAnExistingRowIsADeleteAndAnInsert() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'old');")
        let start = try store.currentToken()
        try db.shell("INSERT OR REPLACE INTO notes(id, title) VALUES (1, 'new');")
        try db.shell("REPLACE INTO notes(id, title) VALUES (2, 'fresh');")
        let changes = try store.fetchChanges(.after(start))
        #expect(changes.map(\.type) == [.delete, .insert, .insert])
        #expect(changes.map(\.objectID) == [.integer(1), .integer(1), .integer(2)])
        #expect(changes.first?.tombstone == ["title": "old".databaseValue])
    }

    @Test func upsertRecordsAnUpdateOrAnInsert() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'old');")
        let start = try store.currentToken()
        try db.shell("""
            INSERT INTO notes(id, title) VALUES (1, 'new') ON CONFLICT(id) DO UPDATE SET title = excluded.title;
            INSERT INTO notes(id, title) VALUES (2, 'two') ON CONFLICT(id) DO UPDATE SET title = excluded.title;
            INSERT INTO notes(id, title) VALUES (1, 'ignored') ON CONFLICT(id) DO NOTHING;
            INSERT OR IGNORE INTO notes(id, title) VALUES (1, 'ignored too');
            """)
        let changes = try store.fetchChanges(.after(start))
        #expect(changes.map(\.type) == [.update, .insert])
        #expect(changes.map(\.objectID) == [.integer(1), .integer(2)])
        // An ignored insert must not leave a stale "replaced" row that a later insert picks up.
        let afterIgnore = try store.currentToken()
        try db.shell("DELETE FROM notes WHERE id = 1; INSERT INTO notes(id, title) VALUES (1, 'again');")
        #expect(try store.fetchChanges(.after(afterIgnore)).map(\.type) == [.delete, .insert])
    }

    @Test func deleteKeepsTheTombstoneValues() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO people(uuid, name, email) VALUES ('6F1C', 'Ada', NULL);")
        try db.shell("DELETE FROM people;")
        let delete = try #require(try store.allChanges().last)
        #expect(delete.type == .delete)
        #expect(delete.objectID == .text("6F1C"))
        #expect(delete.tombstone == ["name": "Ada".databaseValue, "email": .null])
    }

    @Test func trackedColumnsNarrowWhichUpdatesAreRecorded() throws {
        let db = try TestDatabase()
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id", fields: [SearchlightModel.Field(column: "title")], trackedColumns: ["title"]),
        ])
        let store = try db.openStore(model: model)
        try db.shell("INSERT INTO notes(id, title, body) VALUES (1, 'a', 'b');")
        let start = try store.currentToken()
        try db.shell("UPDATE notes SET body = 'ignored';")
        try db.shell("UPDATE notes SET title = 'seen';")
        #expect(try store.fetchChanges(.after(start)).map(\.updatedColumns) == [["title"]])
    }

    /// Regression: `trackedColumns` that left out an indexed field were accepted, and edits
    /// to that field were never captured.
    @Test func indexedFieldsAreTrackedEvenWhenTrackedColumnsLeaveThemOut() throws {
        let db = try TestDatabase()
        let model = try SearchlightModel(entities: [
            .init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "body")], trackedColumns: ["tags"]),
        ])
        let store = try db.openStore(model: model)
        try db.shell("INSERT INTO notes(id, title, body) VALUES (1, 'a', 'b');")
        let start = try store.currentToken()
        try db.shell("UPDATE notes SET title = 'ignored'; UPDATE notes SET body = 'seen'; UPDATE notes SET tags = 'seen';")
        #expect(try store.fetchChanges(.after(start)).map(\.updatedColumns) == [["body"], ["tags"]])
    }

    @Test func reopeningWithAChangedModelUpdatesTheTriggers() throws {
        let db = try TestDatabase()
        _ = try db.openStore()
        let narrowed = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id", fields: [SearchlightModel.Field(column: "title")], trackedColumns: ["title"]),
        ])
        let store = try db.openStore(model: narrowed)
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'a'); UPDATE notes SET body = 'x'; INSERT INTO people(uuid) VALUES ('p');")
        // People is no longer tracked; body is no longer tracked.
        #expect(try store.allChanges().map(\.type) == [.insert])
        // Opening without a model uses the stored one.
        let reopened = try db.openStore(model: nil)
        #expect(reopened.model == narrowed)
    }

    @Test func installingTwiceIsIdempotent() throws {
        let db = try TestDatabase()
        _ = try db.openStore()
        let first = try db.schemaSnapshot()
        _ = try db.openStore()
        #expect(try db.schemaSnapshot() == first)
    }

    @Test(arguments: [
        #"my "quoted" table"#, "select", "tab;le --", "ünïcødé 表", "[bracketed]", "{{id}}",
    ])
    func hostileIdentifiersWork(name: String) throws {
        let column = name + " col"
        let quotedTable = SQLQuoting.identifier(name), quotedColumn = SQLQuoting.identifier(column)
        let db = try TestDatabase(schema: """
            CREATE TABLE \(quotedTable)("key" TEXT PRIMARY KEY NOT NULL, \(quotedColumn) TEXT, "order" TEXT);
            """)
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: name, table: name, primaryKey: "key",
                   fields: [SearchlightModel.Field(column: column), SearchlightModel.Field(column: "order")], preserveOnDelete: [column]),
        ])
        let store = try db.openStore(model: model)
        try db.shell("""
            INSERT INTO \(quotedTable)("key", \(quotedColumn)) VALUES ('k''1', 'v');
            UPDATE \(quotedTable) SET \(quotedColumn) = 'w';
            DELETE FROM \(quotedTable);
            """)
        let changes = try store.allChanges()
        #expect(changes.map(\.type) == [.insert, .update, .delete])
        #expect(changes.allSatisfy { $0.entity == name && $0.objectID == .text("k'1") })
        #expect(changes[1].updatedColumns == [column])
        #expect(changes[2].tombstone == [column: "w".databaseValue])
    }

    @Test func tokensStrictlyIncreaseAcrossConcurrentWritersInTwoProcesses() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let perWriter = 150
        let path = db.path
        // Another process: the sqlite3 shell, one transaction per row.
        let shell = Task.detached {
            let script = (1...perWriter).map { "INSERT INTO notes(id, title) VALUES (\(100_000 + $0), 'shell');" }.joined(separator: "\n")
            try Shell.sqlite3(path, script)
        }
        // This process, through the API.
        for i in 1...perWriter {
            try await store.write(author: "app") { db in
                try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'app')", arguments: [i])
            }
        }
        try await shell.value
        let transactions = try store.fetchTransactions(.all)
        #expect(transactions.count == 2 * perWriter)
        let tokens = transactions.map(\.token)
        #expect(zip(tokens, tokens.dropFirst()).allSatisfy { $0 < $1 })
        #expect(transactions.filter { $0.author == "app" }.count == perWriter)
        #expect(transactions.filter { $0.author == nil }.count == perWriter)
        #expect(Set(transactions.flatMap(\.changes).map(\.objectID)).count == 2 * perWriter)
    }
}

/// Columns and keys with collations, and values that compare equal but are not the same.
@Suite struct CollationCaptureTests {
    static let schema = """
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT COLLATE NOCASE, body TEXT COLLATE RTRIM, tags);
        CREATE TABLE people(uuid TEXT COLLATE NOCASE PRIMARY KEY NOT NULL, name TEXT, email TEXT);
        """

    /// Regression: `OLD.c IS NOT NEW.c` used the column's collation, so an update of a
    /// NOCASE column that only changed case (or of an RTRIM column that only added spaces)
    /// recorded nothing; a value changing from 1 to 1.0 was not an update either.
    @Test func changesInvisibleToTheColumnsCollationAreRecorded() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore()
        try db.shell("INSERT INTO notes(id, title, body, tags) VALUES (1, 'iphone tips', 'a', 1);")
        let start = try store.currentToken()
        try db.shell("UPDATE notes SET title = 'iPhone Tips'; UPDATE notes SET body = 'a  '; UPDATE notes SET tags = 1.0; UPDATE notes SET tags = 1.0;")
        #expect(try store.fetchChanges(.after(start)).map(\.updatedColumns) == [["title"], ["body"], ["tags"]])
    }

    /// Regression: a NOCASE key renamed from `alice` to `Alice` was recorded as an update
    /// of `Alice`, leaving a ghost `alice` document behind.
    @Test func aKeyRenamedOnlyInCaseIsADeleteAndAnInsert() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore()
        try db.shell("INSERT INTO people(uuid, name) VALUES ('alice', 'Alice Liddell');")
        let start = try store.currentToken()
        try db.shell("UPDATE people SET uuid = 'Alice';")
        #expect(try store.fetchChanges(.after(start)).map { "\($0.type) \($0.objectID)" } == ["delete alice", "insert Alice"])
    }

    /// Found while fixing the NOCASE key bug: `INSERT OR REPLACE` of `'Alice'` over `'alice'` in a NOCASE key
    /// recorded the insert but not the delete (the scratch row was looked up byte for byte), so
    /// `alice` stayed in the index for good. Scratch keys now compare with the key's collation.
    @Test func aReplaceOfAKeySpelledDifferentlyUnderItsCollationRecordsTheDelete() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore()
        try db.shell("INSERT INTO people(uuid, name) VALUES ('alice', 'Alice Liddell');")
        let start = try store.currentToken()
        try db.shell("INSERT OR REPLACE INTO people(uuid, name) VALUES ('ALICE', 'Alice L.');")
        let changes = try store.fetchChanges(.after(start))
        #expect(changes.map { "\($0.type) \($0.objectID)" } == ["delete alice", "insert ALICE"])
        #expect(changes.first?.tombstone?["name"] == "Alice Liddell".databaseValue)
        // And a later REPLACE by the first spelling finds only the current row.
        let next = try store.currentToken()
        try db.shell("INSERT OR REPLACE INTO people(uuid, name) VALUES ('alice', 'again');")
        #expect(try store.fetchChanges(.after(next)).map { "\($0.type) \($0.objectID)" } == ["delete ALICE", "insert alice"])
    }

    /// Regression: a NOCASE key replaced under another spelling left its scratch row behind, and
    /// changing the key back to the first spelling recorded one delete too many (the first
    /// spelling's, with its old tombstone). The scratch row now goes once its delete is recorded.
    @Test func aKeyReplacedUnderAnotherSpellingThenChangedBackRecordsEachDeleteOnce() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore()
        try db.shell("INSERT INTO people(uuid, name) VALUES ('alice', 'Alice Liddell');")
        let start = try store.currentToken()
        try db.shell("INSERT OR REPLACE INTO people(uuid, name) VALUES ('ALICE', 'Alice L.'); UPDATE people SET uuid = 'alice' WHERE uuid = 'ALICE';")
        #expect(try store.fetchChanges(.after(start)).map { "\($0.type) \($0.objectID)" } == ["delete alice", "insert ALICE", "delete ALICE", "insert alice"])
    }

    /// `UPDATE OR REPLACE` that renames a key onto an existing one deletes that row without
    /// firing its delete triggers: the delete is now recorded, with its tombstone.
    @Test func anUpdateOrReplaceOntoAnExistingKeyRecordsTheReplacedRow() throws {
        let db = try TestDatabase(schema: Self.schema)
        let store = try db.openStore()
        try db.shell("INSERT INTO people(uuid, name) VALUES ('a', 'first'), ('b', 'second');")
        let start = try store.currentToken()
        try db.shell("UPDATE OR REPLACE people SET uuid = 'B' WHERE uuid = 'a';")
        let changes = try store.fetchChanges(.after(start))
        // (Capture triggers 8 record the rename first and turn its insert into the replaced
        // row's delete: the insert follows both deletes, in the same transaction.)
        #expect(changes.map { "\($0.type) \($0.objectID)" } == ["delete a", "delete b", "insert B"])
        #expect(changes.first { $0.objectID == .text("b") }?.tombstone?["name"] == "second".databaseValue)
        #expect(Set(try store.fetchTransactions(.after(start)).map(\.token)).count == 1)
        #expect(try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM searchlight_replaced") } == 0)
    }

    /// Regression: INSERT OR REPLACE and UPSERT of an existing key left their scratch row
    /// (with the overwritten row's preserved values) in `searchlight_replaced` for good, and a
    /// later insert of that key could record a spurious delete.
    @Test func replaceAndUpsertLeaveNoScratchRowsBehind() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        func scratch() throws -> Int? { try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM searchlight_replaced") } }
        try db.shell("""
            INSERT INTO notes(id, title) VALUES (1, 'secret'), (2, 'other');
            INSERT INTO notes(id, title) VALUES (1, 'upserted') ON CONFLICT(id) DO UPDATE SET title = excluded.title;
            """)
        #expect(try scratch() == 0, "an UPSERT's update removes its scratch row")
        try db.shell("INSERT OR REPLACE INTO notes(id, title) VALUES (2, 'replaced');")
        let changes = try store.fetchChanges(.all).map { "\($0.type) \($0.objectID)" }
        #expect(changes == ["insert 1", "insert 2", "update 1", "delete 2", "insert 2"])
        // Cleanup removes what a REPLACE left, with the replaced row's preserved values.
        try store.registerConsumer("c")
        try store.saveCheckpoint(store.currentToken(), for: "c")
        try HistoryCleaner(store: store, configuration: .init()).clean()
        #expect(try scratch() == 0)
        try db.shell("DELETE FROM notes; INSERT INTO notes(id, title) VALUES (2, 'again');")
        #expect(try store.fetchChanges(.all).suffix(3).map { "\($0.type) \($0.objectID)" } == ["delete 1", "delete 2", "insert 2"], "no spurious delete")
    }

    /// Capture triggers 8 make a REPLACE's delete of the insert recorded last: insert_row must
    /// fire before insert_replaced (SQLite fires the newest first; the installer creates them in
    /// the order of their names). A tool that made them again in another order has them made
    /// again in order, with a capture gap (what they recorded is not trusted); and a foreign
    /// REPLACE is then one transaction: the replaced row's delete, then the insert.
    @Test func triggersMadeAgainOutOfOrderAreReinstalledInOrder() throws {
        let db = try TestDatabase()
        _ = try db.openStore()
        func order() throws -> String {
            try db.shell("SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'searchlight_1_insert_re*' ORDER BY rowid);")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try order() == "searchlight_1_insert_replaced searchlight_1_insert_replaces")
        // Out of order: insert_replaced made again, so newer than insert_row (it fires first).
        let replaced = try db.shell("SELECT sql FROM sqlite_master WHERE name = 'searchlight_1_insert_replaced';").trimmingCharacters(in: .whitespacesAndNewlines)
        try db.shell("DROP TRIGGER searchlight_1_insert_replaced; \(replaced);")
        #expect(try order() == "searchlight_1_insert_replaces searchlight_1_insert_replaced")
        let store = try HistoryStore(path: db.path)
        _ = try store.healCapture()
        #expect(try order() == "searchlight_1_insert_replaced searchlight_1_insert_replaces")
        #expect(try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT value FROM searchlight_meta WHERE key = 'resyncThroughToken'") } != nil,
                "a capture gap: what they recorded is not trusted")
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'first');")
        let start = try store.currentToken()
        try db.shell("INSERT OR REPLACE INTO notes(id, title) VALUES (1, 'second');")
        let transactions = try store.fetchTransactions(.after(start))
        #expect(transactions.count == 1)
        #expect(transactions.first?.changes.map { "\($0.type) \($0.objectID)" } == ["delete 1", "insert 1"])
    }

    /// Capture triggers 8 give another writer's change SQLite's next rowid as its token. A log
    /// that cleanup emptied before them (history schema 3: no placeholder kept its newest id)
    /// would give tokens at or below the purge mark again, and a consumer checkpointed there
    /// would skip those changes: the upgrade puts a placeholder at the mark.
    @Test func anUpgradeOfALogEmptiedByCleanupGivesNoTokenAgain() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        for i in 1...3 { try db.shell("INSERT INTO notes(id, title) VALUES (\(i), 'early');") }
        let head = try store.currentToken()
        // What an older release's cleanup left: an empty log, the purge mark at the head.
        try db.shell("""
            DELETE FROM searchlight_log; INSERT OR REPLACE INTO searchlight_meta(key, value) VALUES ('purgedThroughToken', \(head.rawValue));
            DROP TABLE searchlight_open; UPDATE searchlight_meta SET value = 3 WHERE key = 'schemaVersion';
            """)
        let upgraded = try HistoryStore(path: db.path)
        _ = try upgraded.healCapture()
        try db.shell("INSERT INTO notes(id, title) VALUES (9, 'after the upgrade');")
        let after = try upgraded.fetchTransactions(.after(head))
        #expect(after.map { $0.changes.map(\.objectID) } == [[.integer(9)]])
        #expect(after.allSatisfy { $0.token > head })
    }

    /// Triggers of an older release, or missing ones (a table remade by a migration tool takes
    /// its triggers with it), are reinstalled when a store opens the database.
    @Test func missingOrOlderTriggersAreReinstalledOnOpen() throws {
        let db = try TestDatabase()
        _ = try db.openStore()
        try db.shell("""
            DROP TRIGGER searchlight_1_insert_row; UPDATE searchlight_meta SET value = 1 WHERE key = 'captureVersion';
            """)
        let store = try HistoryStore(path: db.path)
        let start = try store.currentToken()
        try db.shell("INSERT INTO notes(id, title) VALUES (5, 'captured');")
        #expect(try store.fetchChanges(.after(start)).map(\.objectID) == [.integer(5)])
        let version = try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT value FROM searchlight_meta WHERE key = 'captureVersion'") }
        #expect(version == CaptureTriggers.version)
    }
}
