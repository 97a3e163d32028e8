import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

/// A REPLACE that collides on a unique key other than the primary key deletes the row that
/// held it, and SQLite fires no delete trigger for that row (unless the writer turned
/// `recursive_triggers` on). `INSERT OR REPLACE INTO users(email, name)` on a table keyed by an
/// autoincrementing id (the classic upsert by natural key) deleted the old id unrecorded: its
/// document stayed in the index forever. Each test writes from the `sqlite3` shell, a foreign
/// process, and checks history against the rows.
struct UniqueKeyReplaceTests {
    func open(_ schema: String, preserve: [String] = []) throws -> (TestDatabase, HistoryStore) {
        let database = try TestDatabase(schema: schema)
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "User", table: "users", primaryKey: "id",
                                    fields: [SearchlightModel.Field(column: "name")], preserveOnDelete: preserve),
        ])
        return (database, try database.openStore(model: model))
    }

    /// (type, object id) of the changes after `token`.
    func changes(_ store: HistoryStore, after token: HistoryToken) throws -> [String] {
        try store.fetchChanges(.after(token)).map { "\($0.type) \($0.objectID)" }
    }

    /// Found by the outsider of stop 40 (and so in every release before): a unique index on an
    /// expression was not watched, and a REPLACE that displaced a row through it lost the
    /// delete; the row stayed in the index. The index's terms are read from its CREATE INDEX.
    @Test func aReplaceThroughAUniqueIndexOnAnExpressionRecordsTheDelete() throws {
        let (db, store) = try open("""
            CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT, name TEXT, team TEXT);
            CREATE UNIQUE INDEX users_email ON users(lower(email));
            CREATE UNIQUE INDEX users_team ON users("team" COLLATE NOCASE DESC, substr(name, 1, 3) ASC) WHERE team IS NOT NULL;
            """, preserve: ["name"])
        _ = try db.shell("INSERT INTO users VALUES (1, 'a@x', 'zebra', NULL), (2, 'b@x', 'yak', 'red');")
        let start = try store.currentToken()
        _ = try db.shell("INSERT OR REPLACE INTO users VALUES (3, 'A@x', 'newt', NULL);")
        let recorded = try store.fetchChanges(.after(start))
        #expect(recorded.map { "\($0.type) \($0.objectID)" } == ["delete \(ObjectID.integer(1))", "insert \(ObjectID.integer(3))"])
        #expect(recorded.first?.tombstone == ["name": "zebra".databaseValue])
        let next = try store.currentToken()
        // The second index: the same team (NOCASE) and the same first three letters of the name.
        _ = try db.shell("UPDATE OR REPLACE users SET team = 'RED', name = 'yaks' WHERE id = 3;")
        #expect(try changes(store, after: next) == ["delete \(ObjectID.integer(2))", "update \(ObjectID.integer(3))"])
        #expect(EntitySchemaCheck.identifiers(in: #"lower("E ""mail""") || [b] || `c` || 'not a column' || d2 || f(x)"#)
                == ["lower", "e \"mail\"", "b", "c", "d2", "f", "x"])
        #expect(EntitySchemaCheck.indexTerms(#"CREATE UNIQUE INDEX "i" ON "t"("a" COLLATE NOCASE DESC, lower("b, c"), f(x, (y)) ASC) WHERE z"#)
                == [#""a""#, #"lower("b, c")"#, "f(x, (y))"])
    }

    /// Found by the second outsider of stop 40: the watch of an expression key listed every
    /// column of the table, and `ALTER TABLE … DROP COLUMN` of any other column then failed
    /// ("error in trigger … no such column"). It names only the columns the expression reads.
    @Test func anExpressionKeysWatchNamesOnlyTheColumnsItReads() throws {
        let (db, store) = try open("""
            CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT, name TEXT, spare TEXT);
            CREATE UNIQUE INDEX users_email ON users(lower(email));
            """, preserve: ["name"])
        _ = try db.shell("ALTER TABLE users DROP COLUMN spare;")
        _ = try store.healCapture()
        _ = try db.shell("INSERT INTO users VALUES (1, 'a@x', 'zebra'); INSERT OR REPLACE INTO users VALUES (2, 'A@X', 'newt');")
        #expect(try store.fetchChanges(.all).suffix(2).map { "\($0.type) \($0.objectID)" } == ["delete \(ObjectID.integer(1))", "insert \(ObjectID.integer(2))"])
    }

    /// Found by the outsider of stop 40: a writer with `recursive_triggers` on has SQLite fire
    /// the delete triggers for the row a REPLACE deletes through another unique key, and the
    /// conflict watch recorded that delete a second time. (So did triggers 7.) Also a plain
    /// REPLACE of the same key with the pragma on: a delete and an insert, never twice.
    @Test func aWriterWithRecursiveTriggersGetsEachDisplacedRowDeletedOnce() throws {
        let (db, store) = try open("CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);", preserve: ["name"])
        _ = try db.shell("INSERT INTO users(id, email, name) VALUES (2, 'e2', 'up');")
        let start = try store.currentToken()
        _ = try db.shell("PRAGMA recursive_triggers = ON; INSERT OR REPLACE INTO users(id, email, name) VALUES (20, 'e2', 'via email');")
        #expect(try changes(store, after: start) == ["delete \(ObjectID.integer(2))", "insert \(ObjectID.integer(20))"])
        let next = try store.currentToken()
        _ = try db.shell("PRAGMA recursive_triggers = ON; INSERT OR REPLACE INTO users(id, email, name) VALUES (20, 'e3', 'again');")
        #expect(try changes(store, after: next) == ["delete \(ObjectID.integer(20))", "insert \(ObjectID.integer(20))"])
        #expect(try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT (SELECT count(*) FROM searchlight_conflict) + (SELECT count(*) FROM searchlight_replaced)") } == 0)
    }

    @Test func anInsertOrReplaceByAUniqueColumnRecordsTheDeleteOfTheRowItDisplaced() throws {
        let (db, store) = try open("CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);", preserve: ["name"])
        _ = try db.shell("INSERT INTO users(id, email, name) VALUES (1, 'ada@example.com', 'Ada'), (2, 'bob@example.com', 'Bob');")
        let start = try store.currentToken()
        _ = try db.shell("INSERT OR REPLACE INTO users(email, name) VALUES ('ada@example.com', 'Ada L.');")
        let recorded = try store.fetchChanges(.after(start))
        #expect(recorded.map { "\($0.type) \($0.objectID)" } == ["delete \(ObjectID.integer(1))", "insert \(ObjectID.integer(3))"])
        #expect(recorded.first?.tombstone == ["name": "Ada".databaseValue])
    }

    @Test func updateOrReplaceOfAUniqueColumnRecordsTheDisplacedRow() throws {
        let (db, store) = try open("CREATE TABLE users(id TEXT PRIMARY KEY, email TEXT UNIQUE, name TEXT) WITHOUT ROWID;")
        _ = try db.shell("INSERT INTO users VALUES ('a', 'ada@example.com', 'Ada'), ('b', 'bob@example.com', 'Bob');")
        let start = try store.currentToken()
        _ = try db.shell("UPDATE OR REPLACE users SET email = 'ada@example.com' WHERE id = 'b';")
        let recorded = try changes(store, after: start)
        #expect(recorded == ["delete \(ObjectID.text("a"))"])
        #expect(try db.shell("SELECT group_concat(id) FROM users;").trimmingCharacters(in: .whitespacesAndNewlines) == "b")
    }

    /// A unique key of two columns, compared NOCASE by its index; a column that replaces on
    /// conflict by its own declaration (a plain INSERT then replaces); a partial unique index.
    @Test func everyKindOfUniqueKeyIsWatched() throws {
        let (db, store) = try open("""
            CREATE TABLE users(id INTEGER PRIMARY KEY, first TEXT, last TEXT, handle TEXT UNIQUE ON CONFLICT REPLACE, code TEXT, name TEXT);
            CREATE UNIQUE INDEX users_names ON users(first COLLATE NOCASE, last);
            CREATE UNIQUE INDEX users_code ON users(code) WHERE code IS NOT NULL;
            """)
        _ = try db.shell("""
            INSERT INTO users(id, first, last, handle, code, name) VALUES
              (1, 'Ada', 'Lovelace', 'ada', 'A', 'one'), (2, 'Bob', 'Smith', 'bob', 'B', 'two'), (3, 'Cy', 'Young', 'cy', 'C', 'three');
            """)
        let start = try store.currentToken()
        _ = try db.shell("""
            INSERT OR REPLACE INTO users(id, first, last, name) VALUES (10, 'ADA', 'Lovelace', 'ten');
            INSERT INTO users(id, handle, name) VALUES (11, 'bob', 'eleven');
            INSERT OR REPLACE INTO users(id, code, name) VALUES (12, 'C', 'twelve');
            INSERT OR REPLACE INTO users(id, first, last, name) VALUES (13, 'Ada', 'Other', 'thirteen');
            """)
        #expect(try changes(store, after: start) == [
            "delete \(ObjectID.integer(1))", "insert \(ObjectID.integer(10))",
            "delete \(ObjectID.integer(2))", "insert \(ObjectID.integer(11))",
            "delete \(ObjectID.integer(3))", "insert \(ObjectID.integer(12))",
            "insert \(ObjectID.integer(13))",
        ])
    }

    /// A rowid table keyed by TEXT: an `INSERT OR REPLACE` naming the rowid of another row
    /// deletes that row.
    @Test func aReplaceNamingTheRowidOfAnotherRowRecordsItsDelete() throws {
        let (db, store) = try open("CREATE TABLE users(id TEXT PRIMARY KEY, name TEXT);")
        _ = try db.shell("INSERT INTO users(rowid, id, name) VALUES (5, 'a', 'Ada');")
        let start = try store.currentToken()
        _ = try db.shell("INSERT OR REPLACE INTO users(rowid, id, name) VALUES (5, 'b', 'Bob');")
        #expect(try changes(store, after: start) == ["delete \(ObjectID.text("a"))", "insert \(ObjectID.text("b"))"])
        let moved = try store.currentToken()
        _ = try db.shell("INSERT INTO users(rowid, id, name) VALUES (6, 'c', 'Cy'); UPDATE OR REPLACE users SET rowid = 6 WHERE id = 'b';")
        #expect(try changes(store, after: moved) == ["insert \(ObjectID.text("c"))", "delete \(ObjectID.text("c"))"])
    }

    /// Ignored and failed statements leave nothing a later statement would record.
    @Test func ignoredAndUpsertedCollisionsRecordNothingFalse() throws {
        let (db, store) = try open("CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);")
        _ = try db.shell("INSERT INTO users(id, email, name) VALUES (1, 'ada@example.com', 'Ada');")
        let start = try store.currentToken()
        _ = try db.shell("""
            INSERT OR IGNORE INTO users(id, email, name) VALUES (2, 'ada@example.com', 'ignored');
            INSERT INTO users(id, email, name) VALUES (3, 'ada@example.com', 'x') ON CONFLICT(email) DO UPDATE SET name = 'Ada 2';
            INSERT INTO users(id, email, name) VALUES (4, 'new@example.com', 'New');
            DELETE FROM users WHERE id = 4;
            INSERT INTO users(id, email, name) VALUES (5, 'five@example.com', 'Five');
            """)
        #expect((try? db.shell("INSERT INTO users(id, email, name) VALUES (6, 'ada@example.com', 'fails');")) == nil)
        #expect(try changes(store, after: start) == [
            "update \(ObjectID.integer(1))", "insert \(ObjectID.integer(4))", "delete \(ObjectID.integer(4))", "insert \(ObjectID.integer(5))",
        ])
        #expect(try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM searchlight_conflict") } == 0)
    }

    /// A unique index the app adds to a captured table: the next heal watches it, and records a
    /// capture gap (a REPLACE in between could have gone unrecorded), so consumers resync.
    @Test func aUniqueIndexAddedByTheAppIsWatchedAfterAGap() throws {
        let (db, store) = try open("CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT, name TEXT);")
        _ = try db.shell("INSERT INTO users(id, email, name) VALUES (1, 'ada@example.com', 'Ada');")
        #expect(try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE '%collide%'") } == 0)
        _ = try db.shell("CREATE UNIQUE INDEX users_email ON users(email);")
        _ = try store.healCapture()
        #expect(try store.dbPool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE '%collide%' OR name LIKE '%vanished' OR name LIKE '%unwatches'") } == 5)
        #expect(try store.dbPool.read { try Meta.get($0, .resyncThroughToken, as: Int64.self) } != nil)
        let start = try store.currentToken()
        _ = try db.shell("INSERT OR REPLACE INTO users(id, email, name) VALUES (2, 'ada@example.com', 'Ada 2');")
        #expect(try changes(store, after: start) == ["delete \(ObjectID.integer(1))", "insert \(ObjectID.integer(2))"])
    }
}
