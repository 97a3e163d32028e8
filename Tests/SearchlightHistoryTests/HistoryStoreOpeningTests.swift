import Foundation
import GRDB
import Testing
import SearchlightHistory
import SearchlightTestSupport

/// A store opened `readOnly` changes nothing and never waits for the app's write lock. A store
/// opened for writing, by GRDB's own rule, creates and drops a table when the database has no
/// WAL content yet (every fresh start of a command), which bumps the schema version, takes the
/// write lock and makes capture check itself again: searches did that on every run, and waited
/// 10 s for an app's open write transaction before failing "database is locked".
@Suite struct HistoryStoreOpeningTests {
    /// A set-up database with one recorded write, every connection closed (no WAL left).
    func installed() throws -> TestDatabase {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'one')") }
        try store.databaseWriter.close()
        return db
    }

    func state(_ db: TestDatabase) throws -> [String] {
        try Shell.sqlite3(db.path, "PRAGMA schema_version; SELECT key || '=' || value FROM searchlight_meta ORDER BY key;")
            .split(separator: "\n").map(String.init)
    }

    func readOnly(_ db: TestDatabase, busyTimeout: Duration = .seconds(10)) throws -> HistoryStore {
        var configuration = HistoryStore.Configuration()
        configuration.readOnly = true
        configuration.busyTimeout = busyTimeout
        return try HistoryStore(path: db.path, configuration: configuration)
    }

    @Test func openingAndReadingChangesNothing() throws {
        let db = try installed()
        let before = try state(db)
        for _ in 0..<3 {
            let store = try readOnly(db)
            #expect(store.isReadOnly)
            #expect(try store.fetchTransactions(.all).flatMap(\.changes).map(\.type) == [.insert])
            #expect(try store.healCapture().entities.allSatisfy { $0.state == .capturing })
            try store.databaseWriter.close()
        }
        #expect(try state(db) == before, "schema version and meta as they were")
    }

    @Test func itReadsWhileAnotherConnectionHoldsTheWriteLock() throws {
        let db = try installed()
        let app = try DatabaseQueue(path: db.path)
        try app.writeWithoutTransaction { appDB in
            try appDB.execute(sql: "BEGIN IMMEDIATE; INSERT INTO notes(id, title) VALUES (2, 'two')")
            // A zero busy timeout: any attempt to take the lock fails at once instead of waiting.
            let store = try readOnly(db, busyTimeout: .zero)
            #expect(try store.fetchTransactions(.all).count == 1, "the app's open transaction is not seen")
            try store.databaseWriter.close()
            try appDB.execute(sql: "COMMIT")
        }
        let store = try readOnly(db, busyTimeout: .zero)
        #expect(try store.fetchTransactions(.all).count == 2)
    }

    @Test func itRefusesToWriteOrInstallAndNeedsAFile() throws {
        let db = try installed()
        let store = try readOnly(db)
        let write = #expect(throws: SearchlightError.self) { try store.write(author: "x") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (3)") } }
        #expect(write?.code == .readOnly, "\(String(describing: write))")
        var configuration = HistoryStore.Configuration()
        configuration.readOnly = true
        let install = #expect(throws: SearchlightError.self) { try HistoryStore(path: db.path, model: TestDatabase.notesModel, configuration: configuration) }
        #expect(install?.code == .invalidArgument)
        configuration.createIfMissing = true
        let missing = db.directory.appendingPathComponent("missing.sqlite").path
        let open = #expect(throws: SearchlightError.self) { try HistoryStore(path: missing, configuration: configuration) }
        #expect(open?.code == .databaseNotFound)
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(try Shell.sqlite3(db.path, "SELECT count(*) FROM notes") == "1\n")
    }

    /// A store opened for writing fills an empty WAL with a row of its own: the app's schema
    /// version stays as it was, and capture is not checked again for nothing.
    @Test func openingForWritingLeavesTheSchemaVersionAsItWas() throws {
        let db = try installed()
        let before = try Shell.sqlite3(db.path, "PRAGMA schema_version")
        #expect(!FileManager.default.fileExists(atPath: db.path + "-wal"), "no WAL left: GRDB would create and drop a table")
        for round in 1...3 {
            let store = try db.openStore(model: nil)
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(title) VALUES ('more')") }
            try store.databaseWriter.close()
            #expect(try Shell.sqlite3(db.path, "PRAGMA schema_version") == before, "round \(round)")
        }
        #expect(try Shell.sqlite3(db.path, "SELECT value FROM searchlight_meta WHERE key = 'walFills'") == "3\n")
        // A WAL truncated to nothing by a checkpoint while the file stays open is empty too.
        let app = try DatabaseQueue(path: db.path)
        try app.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try db.openStore(model: nil).databaseWriter.close()
        try app.close()
        #expect(try Shell.sqlite3(db.path, "PRAGMA schema_version") == before)
    }

    /// A database the app set back to a rollback journal: opening it for writing switches it
    /// to WAL again (as the pool always did), and still leaves the schema version as it was.
    @Test func aRollbackJournalDatabaseIsSwitchedBackWithoutAChangeOfSchema() throws {
        let db = try installed()
        try Shell.sqlite3(db.path, "PRAGMA journal_mode=DELETE;")
        let before = try Shell.sqlite3(db.path, "PRAGMA schema_version")
        let store = try db.openStore(model: nil)
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(title) VALUES ('more')") }
        try store.databaseWriter.close()
        #expect(try Shell.sqlite3(db.path, "PRAGMA journal_mode") == "wal\n")
        #expect(try Shell.sqlite3(db.path, "PRAGMA schema_version") == before)
    }

    @Test func anUnsetDatabaseIsNotInstalled() throws {
        let db = try TestDatabase()
        var configuration = HistoryStore.Configuration()
        configuration.readOnly = true
        let open = #expect(throws: SearchlightError.self) { try HistoryStore(path: db.path, configuration: configuration) }
        #expect(open?.code == .notInstalled)
        #expect(try Shell.sqlite3(db.path, "SELECT count(*) FROM sqlite_master WHERE name GLOB 'searchlight_*'") == "0\n")
    }
}
