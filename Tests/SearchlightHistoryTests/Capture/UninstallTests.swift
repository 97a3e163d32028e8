import Foundation
import GRDB
import Testing
import SearchlightHistory
import SearchlightTestSupport

/// Uninstalling removes what Searchlight's history added, leaves the app's schema and rows as
/// they were (the `sqlite3` shell's `.dump` is the oracle), and stops stores that opened the
/// database before it.
@Suite struct UninstallTests {
    /// An app schema with what an uninstall must not touch: indexes, a trigger and a view of the
    /// app, an AUTOINCREMENT table (its `sqlite_sequence` row), NOCASE text keys, BLOBs, REALs, NULLs.
    static let appSchema = """
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT, updated REAL);
        CREATE INDEX notes_by_title ON notes(title COLLATE NOCASE);
        CREATE TABLE people(uuid TEXT PRIMARY KEY COLLATE NOCASE NOT NULL, name TEXT, email TEXT UNIQUE, photo BLOB);
        CREATE TABLE audit(id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT);
        CREATE TRIGGER notes_audit AFTER UPDATE OF title ON notes BEGIN INSERT INTO audit(what) VALUES ('title ' || NEW.id); END;
        CREATE VIEW titled AS SELECT id, title FROM notes WHERE title IS NOT NULL;
        INSERT INTO notes VALUES (1, 'Kernel panic', 'The system halted.', NULL, 0.1), (2, NULL, 'no title', 'x', 1e15);
        INSERT INTO people VALUES ('Ada', 'Ada Lovelace', 'ada@example.org', x'00ff10'), ('bob', 'Bob', NULL, NULL);
        INSERT INTO audit(what) VALUES ('created');
        """

    static let model = try! SearchlightModel(entities: [
        SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id",
                                fields: [SearchlightModel.Field(column: "title", role: .title), SearchlightModel.Field(column: "body")],
                                preserveOnDelete: ["title"]),
        SearchlightModel.Entity(name: "Person", table: "people", primaryKey: "uuid",
                                fields: [SearchlightModel.Field(column: "name", role: .title)], preserveOnDelete: ["name", "email"]),
    ])

    static func store(_ db: TestDatabase, model: SearchlightModel? = UninstallTests.model) throws -> HistoryStore {
        try HistoryStore(path: db.path, model: model)
    }

    @Test func uninstallLeavesTheDatabaseExactlyAsItWasBeforeInstall() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let before = try db.dump()
        let store = try Self.store(db)
        #expect(try db.searchlightObjects().count > 5, "installed: triggers and tables")
        // History, consumers, scratch rows: everything Searchlight keeps.
        try store.write(author: "app") { try $0.execute(sql: "UPDATE notes SET title = 'Panic' WHERE id = 1") }
        try db.shell("INSERT OR REPLACE INTO people VALUES ('ADA', 'Ada King', 'ada@example.org', x'01'); DELETE FROM notes WHERE id = 2;")
        try store.resynchronize(as: "exporter") { _, _ in }
        // The same app writes, on a copy that never had Searchlight: the expected result.
        let reference = try TestDatabase(schema: Self.appSchema)
        try reference.shell("""
            UPDATE notes SET title = 'Panic' WHERE id = 1;
            INSERT OR REPLACE INTO people VALUES ('ADA', 'Ada King', 'ada@example.org', x'01'); DELETE FROM notes WHERE id = 2;
            """)
        #expect(try reference.dump() != before, "the app's writes show in the dump")

        try store.uninstall()
        #expect(try db.searchlightObjects() == [])
        #expect(try db.dump() == reference.dump())
    }

    /// The app's own objects that bear the prefix are the app's: uninstall leaves them, capture
    /// never drops them, and a first install refuses names that Searchlight would take over.
    @Test func anAppsObjectsNamedLikeSearchlightsAreLeftAlone() throws {
        let schema = Self.appSchema + """
            CREATE TABLE searchlight_prefs(key TEXT PRIMARY KEY, value);
            INSERT INTO searchlight_prefs VALUES ('theme', 'dark');
            CREATE TRIGGER searchlight_audit AFTER INSERT ON notes BEGIN INSERT INTO audit(what) VALUES ('note ' || NEW.id); END;
            """
        let db = try TestDatabase(schema: schema)
        let reference = try TestDatabase(schema: schema)
        let store = try Self.store(db)
        // Created after the install, with names close to Searchlight's own: still the app's.
        let later = """
            CREATE TRIGGER searchlight_1_custom AFTER DELETE ON notes BEGIN INSERT INTO audit(what) VALUES ('gone ' || OLD.id); END;
            CREATE INDEX searchlight_1_idx ON notes(body);
            CREATE TABLE searchlight_fts_1_g1_extra(x);
            INSERT INTO notes(id, title) VALUES (3, 'third');
            """
        try db.shell(later)
        try reference.shell(later)
        #expect(try store.healCapture().notCapturing.isEmpty)
        _ = try store.write(author: "app") { _ in } // a write checks capture again, and heals nothing of the app's
        #expect(try db.shell("SELECT count(*) FROM audit WHERE what = 'note 3';").trimmingCharacters(in: .whitespacesAndNewlines) == "1",
                "the app's trigger still fires beside ours")
        try store.uninstall()
        #expect(try db.dump() == reference.dump())

        let taken = try TestDatabase(schema: Self.appSchema + "CREATE TABLE searchlight_document_g1(x); INSERT INTO searchlight_document_g1 VALUES (1);")
        let before = try taken.dump()
        let error = #expect(throws: SearchlightError.self) { try Self.store(taken) }
        #expect(error?.code == .schemaMismatch && error?.message.contains("searchlight_document_g1") == true, "\(error?.message ?? "")")
        #expect(try taken.dump() == before, "nothing installed")
    }

    @Test func uninstallRightAfterInstallGivesBackTheSameDump() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let before = try db.dump()
        try Self.store(db).uninstall()
        #expect(try db.dump() == before)
    }

    @Test func aStoreOpenedBeforeAnUninstallStopsAtItsNextWriteAndCreatesNothing() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let before = try db.dump()
        let store = try Self.store(db)
        try store.registerConsumer("exporter")
        try store.resynchronize(as: "exporter") { _, _ in }
        // Another store (its own connections, as another process has) uninstalls.
        try Self.store(db, model: nil).uninstall()
        let attempts: [(String, () throws -> Void)] = [
            ("consume", { _ = try store.consumeNextBatch(as: "exporter") { _, _ in } }),
            ("resynchronize", { _ = try store.resynchronize(as: "exporter") { _, _ in } }),
            ("register", { try store.registerConsumer("other") }),
            ("checkpoint", { try store.saveCheckpoint(.zero, for: "exporter") }),
            ("unregister", { try store.unregisterConsumer("exporter") }),
            ("write", { try store.write(author: "app") { try $0.execute(sql: "UPDATE notes SET body = 'b' WHERE id = 1") } }),
            ("check", { try store.dbPool.read { db in try store.checkInstalled(in: db) } }),
        ]
        for (name, attempt) in attempts {
            let error = #expect(throws: SearchlightError.self, "\(name)") { try attempt() }
            #expect(error?.code == .notInstalled, "\(name): \(error?.message ?? "-")")
            #expect(error?.message.contains("uninstalled") == true, "\(name): \(error?.message ?? "-")")
        }
        #expect(try db.searchlightObjects() == [], "nothing was created again")
        #expect(try db.dump() == before, "and the app's failed write rolled back")
    }

    @Test func aStoreOpenedBeforeAnUninstallRefusesTheSetupThatReplacedIt() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let store = try Self.store(db)
        try store.resynchronize(as: "exporter") { _, _ in }
        try Self.store(db, model: nil).uninstall()
        let fresh = try Self.store(db) // `init` again
        let error = #expect(throws: SearchlightError.self) { try store.consumeNextBatch(as: "exporter") { _, _ in } }
        #expect(error?.code == .notInstalled)
        #expect(error?.message.contains("set up again") == true, "\(error?.message ?? "-")")
        #expect(try fresh.consumers().isEmpty, "the old store registered nothing in the new setup")
        // The new setup starts from scratch and works.
        try db.shell("UPDATE notes SET body = 'new' WHERE id = 1;")
        #expect(try fresh.fetchChanges(.all).map(\.objectID) == [.integer(1)])
    }

    @Test func uninstallingADatabaseWithNoSetupSaysSoAndChangesNothing() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let before = try db.dump()
        let opening = #expect(throws: SearchlightError.self) { try Self.store(db, model: nil) }
        #expect(opening?.code == .notInstalled)
        let store = try Self.store(db)
        try store.uninstall()
        let again = #expect(throws: SearchlightError.self) { try store.uninstall() }
        #expect(again?.code == .notInstalled)
        #expect(again?.message.contains("nothing to uninstall") == true)
        #expect(try db.dump() == before)
    }

    @Test func uninstallRefusesToLeaveOtherSearchlightObjectsBehindAndRemovesNothing() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let store = try Self.store(db)
        // A table of the search index (the Searchlight library creates such tables).
        try db.shell("CREATE VIRTUAL TABLE searchlight_fts_1_g1 USING fts5(title);")
        let installed = try db.searchlightObjects()
        let error = #expect(throws: SearchlightError.self) { try store.uninstall() }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("searchlight_fts_1_g1") == true, "\(error?.message ?? "-")")
        #expect(try db.searchlightObjects() == installed, "all or nothing")
        try db.shell("INSERT INTO notes(id, title) VALUES (5, 'still captured');")
        #expect(try store.fetchChanges(.all).map(\.objectID) == [.integer(5)])
    }

    @Test func anUninstallInsideATransactionThatRollsBackRemovesNothing() throws {
        let db = try TestDatabase(schema: Self.appSchema)
        let store = try Self.store(db)
        let installed = try db.searchlightObjects()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.dbPool.write { db in
                try store.uninstall(in: db)
                throw Abort()
            }
        }
        #expect(try db.searchlightObjects() == installed)
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (6, 'kept')") }
        #expect(try store.fetchChanges(.all).map(\.objectID) == [.integer(6)])
    }
}
