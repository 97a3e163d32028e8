import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

/// `Schemas/` documents our on-disk format; these tests keep it true.
@Suite struct SchemaFilesTests {
    static let schemas = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Schemas")

    static func normalize(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Statements of an SQL file, comments removed.
    static func statements(_ file: String) throws -> [String] {
        let text = try String(contentsOf: schemas.appendingPathComponent(file), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
            .joined(separator: "\n").components(separatedBy: ";")
            .map(normalize).filter { !$0.isEmpty }
    }

    @Test func historySQLMatchesWhatTheLibraryCreates() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let created = try store.dbPool.read { db in
            try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master
                WHERE name LIKE 'searchlight\\_%' ESCAPE '\\' AND type IN ('table', 'index') AND sql IS NOT NULL
                ORDER BY rowid
                """)
        }.map(Self.normalize)
        #expect(created == (try Self.statements("history.sql")))
    }

    @Test func triggerTemplateWritesTheLogRowTypesTheReaderDecodes() {
        let template = CaptureTriggers.template
        #expect(template.contains("VALUES ({{token}}, \(LogRowType.insert.rawValue), {{id}}, NEW.{{key}}, {{timestamp}})"))
        #expect(template.contains("VALUES ({{token}}, \(LogRowType.update.rawValue), {{id}}, NEW.{{key}}, {{updated_columns}}, {{timestamp}})"))
        #expect(template.contains("VALUES ({{token}}, \(LogRowType.delete.rawValue), {{id}}, OLD.{{key}}, {{old_tombstone}}, {{timestamp}})"))
        #expect(LogRowType.insert.changeType == .insert && LogRowType.transactionHeader.changeType == nil)
    }

    @Test func triggersSQLIsTheTemplateTheLibraryRenders() throws {
        let file = try String(contentsOf: Self.schemas.appendingPathComponent("triggers.sql"), encoding: .utf8)
        #expect(file == CaptureTriggers.template + CaptureTriggers.conflictTemplate)
    }

    @Test func installedTriggersAreRenderedFromTheTemplate() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let installed = try store.dbPool.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type IN ('trigger', 'view') AND name GLOB 'searchlight_*' ORDER BY name")
        }
        let perEntity = CaptureTriggers.template.components(separatedBy: "CREATE TRIGGER").count - 1
            + CaptureTriggers.template.components(separatedBy: "CREATE VIEW").count - 1
        let collisions = CaptureTriggers.conflictTemplate.components(separatedBy: "CREATE TRIGGER").count - 1
        // people is a rowid table keyed by TEXT: its rowid is a second unique key.
        #expect(installed.count == 2 * perEntity + collisions, "\(perEntity) triggers and views for each of the 2 entities, \(collisions) more for people")
        let entity = TestDatabase.notesModel.entities[0]
        let rendered = CaptureTriggers.render(entity: entity, entityID: 1,
                                              trackedColumns: entity.trackedColumns ?? entity.fields.map(\.column))
        #expect(Set(rendered.statements.map(\.sql)).isSubset(of: Set(installed)))
    }

    @Test func exampleModelsAreValid() throws {
        let examples = try FileManager.default.contentsOfDirectory(at: Self.schemas.appendingPathComponent("examples"), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
        #expect(!examples.isEmpty)
        for example in examples { _ = try SearchlightModel(contentsOf: example) }
    }
}
