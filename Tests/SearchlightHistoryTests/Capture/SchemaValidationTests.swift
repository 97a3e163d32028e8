import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct SchemaValidationTests {
    func expectRefused(_ entity: SearchlightModel.Entity, schema: String = TestDatabase.notesSchema, mentioning text: String) throws {
        let db = try TestDatabase(schema: schema)
        let before = try db.schemaSnapshot()
        let model = try SearchlightModel(entities: [entity])
        let error = try #require(throws: SearchlightError.self) { try db.openStore(model: model) }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains(text), "message: \(error.message)")
        #expect(try db.schemaSnapshot() == before, "a refused model must change nothing")
    }

    @Test func unknownTableIsRefusedAndNothingChanges() throws {
        try expectRefused(SearchlightModel.Entity(name: "Ghost", table: "ghosts", primaryKey: "id"), mentioning: "no table named \"ghosts\"")
    }

    @Test func unknownFieldColumnIsRefused() throws {
        try expectRefused(SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id", fields: [SearchlightModel.Field(column: "titel")]),
                          mentioning: "\"titel\" is not a column")
    }

    @Test func unknownPreserveOnDeleteColumnIsRefused() throws {
        try expectRefused(SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id", preserveOnDelete: ["nope"]), mentioning: "\"nope\"")
    }

    @Test func wrongPrimaryKeyIsRefused() throws {
        try expectRefused(SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "title"), mentioning: "is not the primary key")
    }

    @Test func compositePrimaryKeyIsRefused() throws {
        try expectRefused(SearchlightModel.Entity(name: "Pair", table: "pairs", primaryKey: "a"),
                          schema: "CREATE TABLE pairs(a, b, PRIMARY KEY(a, b));", mentioning: "composite primary key")
    }

    @Test func tableWithoutPrimaryKeyIsRefused() throws {
        try expectRefused(SearchlightModel.Entity(name: "Log", table: "log", primaryKey: "rowid"),
                          schema: "CREATE TABLE log(line TEXT);", mentioning: "no declared primary key")
    }

    @Test func viewIsRefused() throws {
        try expectRefused(SearchlightModel.Entity(name: "V", table: "v", primaryKey: "id"),
                          schema: TestDatabase.notesSchema + "CREATE VIEW v AS SELECT * FROM notes;", mentioning: "is a view")
    }

    @Test func secondEntityFailingLeavesTheFirstUninstalled() throws {
        let db = try TestDatabase()
        let before = try db.schemaSnapshot()
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id"),
            SearchlightModel.Entity(name: "Ghost", table: "ghosts", primaryKey: "id"),
        ])
        #expect(throws: SearchlightError.self) { try db.openStore(model: model) }
        #expect(try db.schemaSnapshot() == before)
    }

    @Test func missingDatabaseIsAClearErrorAndCreatesNoFile() throws {
        let db = try TestDatabase()
        let path = db.directory.appendingPathComponent("missing.sqlite").path
        let error = try #require(throws: SearchlightError.self) { try HistoryStore(path: path, model: TestDatabase.notesModel) }
        #expect(error.code == .databaseNotFound)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func nonSQLiteFileIsAClearError() throws {
        let db = try TestDatabase()
        let path = db.directory.appendingPathComponent("notes.txt").path
        try Data("this is not a database, just some text that is long enough to fill a header.".utf8).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SearchlightError.self) { try HistoryStore(path: path, model: TestDatabase.notesModel) }
        #expect(error.code == .notADatabase)
    }

    @Test func openingWithoutModelOnAnUninstalledDatabaseSaysSo() throws {
        let db = try TestDatabase()
        let error = try #require(throws: SearchlightError.self) { try db.openStore(model: nil) }
        #expect(error.code == .notInstalled)
    }
}
