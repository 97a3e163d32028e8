import Foundation
import Testing
// No @testable: these tests see only what an embedder sees.
import Searchlight
import SearchlightHistory

/// Every error code can be caught by name, as GRDB's result codes can (`catch
/// SearchlightError.invalidFilter`): a code without its shortcut does not compile here.
@Suite struct ErrorMatchingTests {
    @Test func anInvalidFilterIsCaughtByItsName() {
        var caught = false
        do {
            _ = try SearchFilter(parsing: "year >=")
        } catch SearchlightError.invalidFilter {
            caught = true
        } catch {
            Issue.record("not caught as invalidFilter: \(error)")
        }
        #expect(caught)
    }

    @Test func everyCodeHasItsShortcut() {
        let shortcuts: [SearchlightError.Code] = [
            SearchlightError.invalidModel, SearchlightError.schemaMismatch, SearchlightError.databaseNotFound,
            SearchlightError.notADatabase, SearchlightError.readOnly, SearchlightError.notInstalled,
            SearchlightError.historyExpired, SearchlightError.invalidToken, SearchlightError.invalidArgument,
            SearchlightError.invalidFilter, SearchlightError.unknownEntity, SearchlightError.invalidQuery,
            SearchlightError.indexNotBuilt, SearchlightError.cancelled, SearchlightError.timedOut, SearchlightError.bodyFailed,
            SearchlightError.databaseReplaced, SearchlightError.databaseError,
        ]
        #expect(Set(shortcuts.map(\.rawValue)).count == shortcuts.count)
    }
}

/// A model value is always valid: the initializer refuses what install would refuse.
@Suite struct ModelContractTests {
    @Test func attributesWithoutFieldsAreRefusedByTheInitializer() {
        let error = #expect(throws: SearchlightError.self) {
            try SearchlightModel(entities: [.init(name: "Note", table: "notes", primaryKey: "id", attributes: [.init(column: "year")])])
        }
        #expect(error?.code == .invalidModel)
        #expect(error?.message.contains("attributes needs fields") == true, "\(error?.message ?? "-")")
    }
}
