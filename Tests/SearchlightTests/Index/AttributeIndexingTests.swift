import Foundation
import GRDB
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// Attribute values in the index: kept as the row stores them, with the source column's
/// affinity and collation, following every write, rebuilds, repairs and renames.
@Suite struct AttributeIndexingTests {
    func ids(_ results: SearchResults) -> [Int64] {
        results.hits.compactMap { if case let .integer(id) = $0.objectID { id } else { nil } }.sorted()
    }

    @Test func valuesKeepTheRowsStorageClassAndFollowInsertsUpdatesAndDeletes() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, n, r, t, u, x) VALUES (1, 'common', '5', 1, 'Swift', x'00ff', '2.0'), (2, 'common', 7, NULL, 'go', '1', 'abc')")
        try f.indexer.indexPendingChanges()
        let one = try #require(try f.indexedValues(1))
        #expect(one["n"] == 5.databaseValue && one["r"] == 1.0.databaseValue && one["t"] == "Swift".databaseValue)
        #expect(one["u"] == Data([0, 255]).databaseValue && one["x"] == 2.databaseValue, "NUMERIC: '2.0' is stored as the integer 2, in the row as in the index")
        if case .double = one["r"]!.storage {} else { Issue.record("REAL affinity keeps 1 as 1.0: \(one["r"]!)") }
        #expect(try f.indexedValues(2)?["u"] == "1".databaseValue, "no affinity: text stays text")
        // An attribute that is not a field: its update alone reaches the index (it is tracked).
        try f.write("UPDATE items SET n = 8 WHERE id = 2")
        try f.indexer.indexPendingChanges()
        #expect(try f.indexedValues(2)?["n"] == 8.databaseValue)
        #expect(ids(try f.index().search("common", filter: try SearchFilter(parsing: "n = 8"))) == [2])
        try f.write("DELETE FROM items WHERE id = 2")
        try f.indexer.indexPendingChanges()
        #expect(try f.indexedValues(2) == nil)
        // A rebuild writes the same values.
        try f.indexer.reindex()
        #expect(try f.indexedValues(1) == one)
    }

    /// An update of attributes only leaves the document's text alone: FTS5 writes no new
    /// segment for it (it used to delete and insert every word again), and the new values are
    /// indexed. A text change still writes one.
    @Test func anUpdateOfAttributesOnlyDoesNotRewriteTheText() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, n) VALUES (1, 'alpha bravo', 1), (2, 'charlie', 2)")
        try f.indexer.indexPendingChanges()
        func segments() throws -> Int64 {
            try f.store.databaseWriter.read { try Int64.fetchOne($0, sql: "SELECT max(rowid) FROM searchlight_fts_1_g1_data") ?? 0 }
        }
        let before = try segments()
        try f.write("UPDATE items SET n = 10 WHERE id = 1")
        try f.indexer.indexPendingChanges()
        #expect(try segments() == before, "no segment written for an attribute")
        #expect(try f.indexedValues(1)?["n"] == 10.databaseValue)
        #expect(try f.index().search("alpha", filter: try SearchFilter(parsing: "n = 10")).total == 1)
        try f.write("UPDATE items SET body = 'alpha delta' WHERE id = 1")
        try f.indexer.indexPendingChanges()
        #expect(try segments() > before, "a text change is written")
        #expect(try f.index().search("delta").total == 1 && f.index().search("bravo").total == 0)
        #expect(try f.indexer.verify().isConsistent)
    }

    @Test func verifyFindsAWrongValueOrStorageClassAndRepairFixesIt() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, n, u) VALUES (1, 'common', 5, 1), (2, 'common', 6, 2), (3, 'common', 7, 3)")
        try f.indexer.indexPendingChanges()
        #expect(try f.indexer.verify().isConsistent)
        try f.store.databaseWriter.write { db in
            try db.execute(sql: "UPDATE searchlight_attr_1_g1 SET n = 50 WHERE rowid = 1")
            try db.execute(sql: "UPDATE searchlight_attr_1_g1 SET u = '2' WHERE rowid = 2") // same digits, another class
            try db.execute(sql: "DELETE FROM searchlight_attr_1_g1 WHERE rowid = 3")
        }
        let report = try f.indexer.verify()
        #expect(report.entities.first?.stale == [.integer(1), .integer(2), .integer(3)])
        let repair = try f.indexer.repair()
        #expect(repair.repaired && repair.isConsistent)
        #expect(try f.indexedValues(1)?["n"] == 5.databaseValue && f.indexedValues(2)?["u"] == 2.databaseValue && f.indexedValues(3)?["n"] == 7.databaseValue)
        // Values of no document are damage: verify says so, and repair rebuilds.
        try f.store.databaseWriter.write { db in try db.execute(sql: "INSERT INTO searchlight_attr_1_g1(rowid, n) VALUES (99, 1)") }
        #expect(try f.indexer.verify().integrityErrors == ["Item: 1 rows of attribute values have no document"])
        #expect(try f.indexer.repair().isConsistent)
    }

    @Test func attributeTableHasTheSourceAffinityAndCollationAndAChangeOfThemRebuilds() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, t) VALUES (1, 'common', 'Swift')")
        try f.indexer.indexPendingChanges()
        func ddl() throws -> String {
            try f.store.databaseWriter.read { db in
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name GLOB 'searchlight_attr_1_g*'")!
            }
        }
        #expect(try ddl().contains(#""t" TEXT COLLATE NOCASE"#) && ddl().contains(#""u" COLLATE BINARY"#) && ddl().contains(#""k" TEXT COLLATE RTRIM"#))
        #expect(try ddl().contains(#""n" INTEGER COLLATE BINARY"#) && ddl().contains(#""r" REAL COLLATE BINARY"#) && ddl().contains(#""x" NUMERIC COLLATE BINARY"#))
        #expect(ids(try f.index().search("common", filter: try SearchFilter(parsing: "t = 'SWIFT'"))) == [1])
        // The app remakes the table with t compared byte for byte: the index follows.
        try f.db.shell("""
            BEGIN; CREATE TABLE items_new(id INTEGER PRIMARY KEY, body TEXT, n INTEGER, r REAL, t TEXT, u, x NUMERIC, k TEXT COLLATE RTRIM, pop REAL, updated);
            INSERT INTO items_new SELECT * FROM items; DROP TABLE items; ALTER TABLE items_new RENAME TO items; COMMIT;
            """)
        try f.indexer.indexPendingChanges()
        let remade = try ddl()
        #expect(remade.contains(#""t" TEXT COLLATE BINARY"#), "\(remade)")
        #expect(ids(try f.index().search("common", filter: try SearchFilter(parsing: "t = 'SWIFT'"))) == [])
        #expect(ids(try f.index().search("common", filter: try SearchFilter(parsing: "t = 'Swift'"))) == [1])
    }

    @Test func uninstallDropsTheAttributeTables() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, n) VALUES (1, 'common', 1)")
        try f.indexer.indexPendingChanges()
        try f.indexer.reindex()
        try Indexer.uninstall(from: f.store)
        #expect(try f.db.shell("SELECT name FROM sqlite_master WHERE name LIKE 'searchlight%'").isEmpty)
    }

    @Test func affinityFollowsSQLitesFiveRules() {
        typealias A = IndexedAttribute.Affinity
        let cases: [(String, A)] = [("INT", .integer), ("BIGINT UNSIGNED", .integer), ("point", .integer), ("VARCHAR(10)", .text), ("CLOB", .text),
                                    ("text", .text), ("BLOB", .none), ("", .none), ("REAL", .real), ("FLOAT", .real), ("DOUBLE PRECISION", .real),
                                    ("NUMERIC", .numeric), ("DECIMAL(10,5)", .numeric), ("BOOLEAN", .numeric), ("DATE", .numeric), ("STRING", .numeric),
                                    ("CHARINT", .integer), ("FLOATING POINT", .integer)]
        for (type, affinity) in cases { #expect(A(declaredType: type, strict: false) == affinity, "\(type)") }
        #expect(A(declaredType: "ANY", strict: true) == .none)
        #expect(A(declaredType: "ANY", strict: false) == .numeric)
    }

    @Test func aRenamedAttributeColumnKeepsItsNameInFiltersAndItsUpdatesReachTheIndex() throws {
        let f = try ItemsFixture()
        try f.write("INSERT INTO items(id, body, n) VALUES (1, 'common', 1), (2, 'common', 2)")
        try f.indexer.indexPendingChanges()
        try f.db.shell("ALTER TABLE items RENAME COLUMN n TO amount")
        try f.write("UPDATE items SET amount = 20 WHERE id = 2")
        try f.indexer.indexPendingChanges()
        // Capture followed the rename: the installed model reads "amount" under the name "n".
        let model = try f.store.databaseWriter.read { db in try f.store.installedModel(in: db) }
        #expect(model.entities[0].attributes.first == SearchlightModel.Attribute(column: "amount", name: "n"))
        let index = f.index()
        #expect(ids(try index.search("common", filter: try SearchFilter(parsing: "n = 20"))) == [2])
        #expect(throws: SearchlightError.self) { try index.search("common", filter: try SearchFilter(parsing: "amount = 20")) }
        try f.write("UPDATE items SET amount = 30 WHERE id = 1")
        try f.indexer.indexPendingChanges()
        #expect(ids(try index.search("common", filter: try SearchFilter(parsing: "n >= 20"))) == [1, 2])
        #expect(try f.indexer.verify().isConsistent)
    }

    @Test func layoutsAndModelsWithoutAttributesKeepTheirText() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "kernel")
        try f.runIndexer()
        let json = try f.store.databaseWriter.read { db in try String.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'layout'")! }
        #expect(!json.contains("attributes") && !json.contains("ranking"))
        #expect(try IndexLayout(json: json).json == json)
        let model = String(decoding: TestDatabase.notesModel.jsonData(), as: UTF8.self)
        #expect(!model.contains("attributes") && !model.contains("ranking"))
        let withAttributes = try SearchlightModel(jsonData: Data(#"{"entities": [{"name": "N", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}], "attributes": [{"column": "tags"}]}]}"#.utf8))
        let text = String(decoding: withAttributes.jsonData(), as: UTF8.self)
        #expect(text.contains(#""column" : "tags""#) && !text.contains(#""name" : "tags""#), "a name equal to the column is not written")
        #expect(try SearchlightModel(jsonData: withAttributes.jsonData()) == withAttributes)
    }

    @Test func modelKeysAreValidated() {
        func message(_ json: String) -> String {
            do { _ = try SearchlightModel(jsonData: Data(json.utf8)); return "no error" } catch { return error.message }
        }
        let entity = #""name": "N", "table": "notes", "primaryKey": "id", "fields": [{"column": "title"}]"#
        #expect(message(#"{"entities": [{\#(entity), "attributes": [{"column": "year", "colour": 1}]}]}"#).contains("entities[0].attributes[0].colour: unknown key"))
        #expect(message(#"{"entities": [{\#(entity), "attributes": [{"column": "year"}, {"column": "Year"}]}]}"#) == #"invalid model: entities[0].attributes[1]: attribute "Year" is declared twice"#)
        #expect(message(#"{"entities": [{\#(entity), "attributes": [{"column": "x", "name": "rowid"}]}]}"#).contains("is reserved by SQLite"))
        #expect(message(#"{"entities": [{\#(entity), "attributes": [{"column": "year"}], "ranking": [{"attribute": "pop"}]}]}"#) == #"invalid model: entities[0].ranking[0].attribute "pop" is not an attribute of the entity (attributes: year)"#)
        #expect(message(#"{"entities": [{\#(entity), "attributes": [{"column": "d"}], "ranking": [{"attribute": "d", "halfLifeDays": 0}]}]}"#) == "invalid model: entities[0].ranking[0].halfLifeDays must be a positive number, got 0.0")
        #expect(message(#"{"entities": [{"name": "N", "table": "notes", "primaryKey": "id", "attributes": [{"column": "year"}]}]}"#).contains("attributes needs fields"))
    }

    @Test func anAttributeColumnMustExist() throws {
        let db = try TestDatabase(schema: ItemsFixture.schema)
        let model = try SearchlightModel(entities: [.init(name: "Item", table: "items", primaryKey: "id", fields: [.init(column: "body")], attributes: [.init(column: "yeer")])])
        #expect {
            _ = try db.openStore(model: model)
        } throws: { error in
            (error as? SearchlightError)?.message.contains(#"attribute column "yeer" is not a column of table "items""#) == true
        }
    }
}
