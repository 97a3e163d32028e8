import Foundation
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct SearchlightModelTests {
    func refusal(_ json: String) -> String? {
        do {
            _ = try SearchlightModel(jsonData: Data(json.utf8))
            return nil
        } catch {
            #expect(error.code == .invalidModel)
            return error.message
        }
    }

    @Test func exampleFromTheIssueParsesWithDefaults() throws {
        let model = try SearchlightModel(jsonData: Data("""
            {"entities": [{"name": "Note", "table": "notes", "primaryKey": "id",
              "fields": [{"column": "title", "weight": 10, "role": "title"}, {"column": "body"}]}]}
            """.utf8))
        #expect(model.tokenizer == "unicode61 remove_diacritics 2")
        #expect(model.entities[0].fields[1].weight == 1)
        #expect(model.entities[0].titleField?.column == "title")
        #expect(model.history.maximumDurationSeconds == nil)
    }

    @Test func modelRoundTripsThroughJSON() throws {
        let model = TestDatabase.notesModel
        #expect(try SearchlightModel(jsonData: model.jsonData()) == model)
    }

    @Test func theInitializerSetsFoldChineseVariantsAndTheJSONKeepsIt() throws {
        let entities = TestDatabase.notesModel.entities
        #expect(try SearchlightModel(entities: entities).foldChineseVariants == false, "off by default")
        let model = try SearchlightModel(entities: entities, foldChineseVariants: true)
        #expect(model.foldChineseVariants)
        let json = String(decoding: model.jsonData(), as: UTF8.self)
        #expect(json.contains(#""foldChineseVariants" : true"#), "\(json)")
        #expect(try SearchlightModel(jsonData: model.jsonData()) == model)
    }

    @Test func invalidJSONIsRefused() {
        #expect(refusal("{\"entities\": [") == "invalid model: not valid JSON")
    }

    @Test func wrongTypesNameTheirPath() {
        #expect(refusal(#"{"entities": [{"name": "N", "table": "t", "primaryKey": "id", "fields": [{"column": "a", "weight": "heavy"}]}]}"#)
            == "invalid model: entities[0].fields[0].weight: expected a number")
        #expect(refusal(#"{"entities": {}}"#)?.contains("entities: expected an array") == true)
    }

    @Test func missingPrimaryKeyIsRefused() {
        #expect(refusal(#"{"entities": [{"name": "N", "table": "t"}]}"#) == "invalid model: entities[0].primaryKey is missing")
        #expect(refusal(#"{"entities": [{"name": "N", "table": "t", "primaryKey": ""}]}"#)?.contains("needs a primary key") == true)
    }

    @Test func duplicateEntityNamesAreRefused() {
        #expect(refusal(#"{"entities": [{"name": "N", "table": "a", "primaryKey": "id"}, {"name": "N", "table": "b", "primaryKey": "id"}]}"#)
            == #"invalid model: duplicate entity name "N""#)
    }

    @Test func unknownKeysAreRefused() {
        #expect(refusal(#"{"entities": [{"name": "N", "table": "a", "primaryKey": "id", "feilds": []}]}"#)?.contains("entities[0].feilds: unknown key") == true)
    }

    @Test func badValuesAreRefused() {
        #expect(refusal(#"{"entities": []}"#)?.contains("is empty") == true)
        #expect(refusal(#"{"entities": [{"name": "N", "table": "a", "primaryKey": "id", "fields": [{"column": "x", "weight": 0}]}]}"#)?.contains("positive") == true)
        #expect(refusal(#"{"entities": [{"name": "N", "table": "a", "primaryKey": "id", "fields": [{"column": "x"}, {"column": "X"}]}]}"#)?.contains("listed twice") == true)
        #expect(refusal(#"{"entities": [{"name": "N", "table": "searchlight_change", "primaryKey": "id"}]}"#)?.contains("reserved") == true)
        #expect(refusal(#"{"entities": [{"name": "N", "table": "a", "primaryKey": "id", "fields": [{"column": "x", "role": "subtitle"}]}]}"#) != nil)
    }
}
