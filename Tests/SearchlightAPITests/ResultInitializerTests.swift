import Foundation
import GRDB
import Testing
// No @testable: these tests see only what an embedder sees.
import Searchlight
import SearchlightHistory

/// An embedder's tests build Searchlight's result types themselves, to feed code that consumes
/// history or reacts to the indexer, with no database.
@Suite struct ResultInitializerTests {
    /// Code an embedder might write: the titles its mirror must forget for a batch.
    static func deletedTitles(in batch: HistoryBatch) -> [String] {
        batch.changes.filter { $0.type == .delete }.compactMap { $0.tombstone?["title"].flatMap(String.fromDatabaseValue) }
    }

    @Test func aHistoryChangeIsBuiltWithItsValues() {
        let change = HistoryChange(changeID: 12, token: HistoryToken(11), entity: "Note", objectID: .text("n1"),
                                   type: .delete, tombstone: ["title": "Groceries".databaseValue, "pinned": .null])
        #expect(change.changeID == 12 && change.token == HistoryToken(11) && change.entity == "Note")
        #expect(change.objectID == .text("n1") && change.type == .delete)
        #expect(change.updatedColumns == nil)
        #expect(change.tombstone == ["title": "Groceries".databaseValue, "pinned": .null])
        let update = HistoryChange(changeID: 13, token: HistoryToken(12), entity: "Note", objectID: .integer(1),
                                   type: .update, updatedColumns: ["title"])
        #expect(update.updatedColumns == ["title"] && update.tombstone == nil)
    }

    @Test func aHistoryTransactionIsBuiltWithItsChanges() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let insert = HistoryChange(changeID: 2, token: HistoryToken(1), entity: "Note", objectID: .integer(1), type: .insert)
        let transaction = HistoryTransaction(token: HistoryToken(1), timestamp: date, author: "app", contextName: "editor",
                                             processID: 42, changes: [insert])
        #expect(transaction.id == HistoryToken(1))
        #expect(transaction.timestamp == date && transaction.author == "app" && transaction.contextName == "editor")
        #expect(transaction.processID == 42 && transaction.changes == [insert])
        let foreign = HistoryTransaction(token: HistoryToken(3), timestamp: date, changes: [])
        #expect(foreign.author == nil && foreign.contextName == nil && foreign.processID == nil)
    }

    @Test func aHistoryBatchFeedsAConsumersCode() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let transactions = [
            HistoryTransaction(token: HistoryToken(5), timestamp: date, changes: [
                HistoryChange(changeID: 6, token: HistoryToken(5), entity: "Note", objectID: .integer(1), type: .delete,
                              tombstone: ["title": "Groceries".databaseValue]),
                HistoryChange(changeID: 7, token: HistoryToken(5), entity: "Note", objectID: .integer(2), type: .insert),
            ]),
            HistoryTransaction(token: HistoryToken(9), timestamp: date, changes: [
                HistoryChange(changeID: 10, token: HistoryToken(9), entity: "Note", objectID: .integer(3), type: .delete,
                              tombstone: ["title": "Taxes".databaseValue]),
            ]),
        ]
        let batch = HistoryBatch(consumer: "mirror", previousToken: HistoryToken(4), token: HistoryToken(12), transactions: transactions)
        #expect(batch.consumer == "mirror" && batch.previousToken == HistoryToken(4) && batch.token == HistoryToken(12))
        #expect(batch.changes.map(\.changeID) == [6, 7, 10])
        #expect(Self.deletedTitles(in: batch) == ["Groceries", "Taxes"])
    }

    @Test func anIndexerUpdateIsBuiltWithItsCounts() {
        let update = Indexer.Update(token: HistoryToken(42), changes: 3, upserted: 2, removed: 1)
        #expect(update.token == HistoryToken(42) && update.changes == 3 && update.upserted == 2 && update.removed == 1)
        #expect(!update.rebuilt)
        let rebuilt = Indexer.Update(token: HistoryToken(43), upserted: 1000, rebuilt: true)
        #expect(rebuilt.rebuilt && rebuilt.changes == 0 && rebuilt.removed == 0)
    }

    @Test func aVerificationReportIsBuiltAndSaysWhetherTheIndexIsConsistent() throws {
        let clean = VerificationReport(entities: [.init(entity: "Note", sourceDocuments: 2, indexedDocuments: 2)],
                                       token: HistoryToken(42))
        #expect(clean.isConsistent && clean.differences == 0 && clean.pending == 0)
        #expect(clean.integrityErrors.isEmpty && clean.notIndexed.isEmpty)
        let report = VerificationReport(
            entities: [.init(entity: "Note", sourceDocuments: 3, indexedDocuments: 2,
                             missing: [.integer(2)], stale: [.text("n1")], extra: [.integer(9)])],
            integrityErrors: ["malformed inverted index"], pending: 1, token: HistoryToken(42), notIndexed: ["Person: …"])
        #expect(!report.isConsistent && report.differences == 3 && report.entities[0].differences == 3)
        #expect(report.pending == 1 && report.integrityErrors == ["malformed inverted index"] && report.notIndexed == ["Person: …"])
        #expect(try JSONDecoder().decode(VerificationReport.self, from: JSONEncoder().encode(report)) == report)
        let setAside = VerificationReport(entities: [], token: HistoryToken(42), notIndexed: ["Person: …"])
        #expect(!setAside.isConsistent, "an entity set aside is a difference")
    }

    @Test func aModelFoldsChineseVariantsWhenItsInitializerSaysSo() throws {
        let entities = [SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id",
                                                fields: [SearchlightModel.Field(column: "body")])]
        #expect(try SearchlightModel(entities: entities, foldChineseVariants: true).foldChineseVariants)
        #expect(try !SearchlightModel(entities: entities).foldChineseVariants)
    }
}
