import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory

/// `Schemas/index.sql` documents the index tables; this keeps it true.
@Suite struct IndexSchemaFileTests {
    @Test func indexSQLIsWhatTheLibraryCreates() throws {
        var directory = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { directory.deleteLastPathComponent() }
        let text = try String(contentsOf: directory.appendingPathComponent("Schemas/index.sql"), encoding: .utf8)
        let normalize = { (sql: String) in sql.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let documented = text.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n")
            .components(separatedBy: ";").map(normalize).filter { !$0.isEmpty }
        let entity = IndexedEntity(entity: SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id",
                                                  fields: [SearchlightModel.Field(column: "title", weight: 10), SearchlightModel.Field(column: "body")]), id: 1,
                                    attributes: [IndexedAttribute(name: "year", column: "year", affinity: .integer),
                                                 IndexedAttribute(name: "tag", column: "tag", affinity: .text, collation: "NOCASE")])
        let created = [normalize(IndexState.createTable)] + IndexSchema(generation: 1).createStatements(for: [entity], tokenizer: SearchlightModel.defaultTokenizer).map(normalize)
        #expect(created == documented)
    }
}
