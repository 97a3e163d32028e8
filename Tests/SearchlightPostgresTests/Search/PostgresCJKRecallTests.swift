import Foundation
import Searchlight
import SearchlightEvaluation
import SearchlightHistory
import SearchlightTestSupport
@testable import SearchlightPostgres
import Testing

/// Where the shared corpora are, when the clone has them beside it (as for the local index's
/// CJK recall tests).
enum SharedCorpora {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static var present: Bool {
        ["manpages-zh.jsonl.gz", "manpages-ja.jsonl.gz"].allSatisfy {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path)
        }
    }

    static var required: Bool { ProcessInfo.processInfo.environment["SEARCHLIGHT_REQUIRE_CORPORA"] == "1" }
}

/// Chinese and Japanese man pages are searchable on PostgreSQL with the default model: recall
/// ≥ 0.99 and precision ≥ 0.98 against substring ground truth (``RecallEvaluation``), for every
/// kind of query, as for the local index. A reduced form by default (240 documents, 40 queries
/// per kind); `SEARCHLIGHT_RECALL_DOCUMENTS=0` takes every document.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason),
       .enabled(if: SharedCorpora.present || SharedCorpora.required,
                "the Chinese and Japanese man pages are not beside this clone (../shared/corpus)"))
struct PostgresCJKRecallTests {
    static func sample(_ name: String) throws -> [RecallEvaluation.Document] {
        let documents = try RecallEvaluation.load(SharedCorpora.directory.appendingPathComponent(name).path)
        let wanted = Int(ProcessInfo.processInfo.environment["SEARCHLIGHT_RECALL_DOCUMENTS"] ?? "") ?? 240
        guard wanted > 0, wanted < documents.count else { return documents }
        let step = Double(documents.count) / Double(wanted)
        return (0..<wanted).map { documents[Int(Double($0) * step)] }
    }

    @Test(arguments: ["manpages-zh.jsonl.gz", "manpages-ja.jsonl.gz"])
    func cjkSearchOnPostgreSQLMeetsRecallAndPrecisionTargets(corpus: String) async throws {
        try #require(FileManager.default.fileExists(atPath: SharedCorpora.directory.appendingPathComponent(corpus).path),
                     "the shared corpora are missing: \(SharedCorpora.directory.path)")
        let (seed, _) = seededGenerator("PostgresCJKRecallTests \(corpus)")
        let documents = try Self.sample(corpus)
        let perKind = Int(ProcessInfo.processInfo.environment["SEARCHLIGHT_RECALL_QUERIES"] ?? "") ?? 40
        let queries = RecallEvaluation.queries(documents, perCategory: perKind, seed: seed)

        // The default model: no setting for CJK text.
        let model = try SearchlightModel(entities: [
            .init(name: "Page", table: "pages", primaryKey: "id",
                  fields: [.init(column: "title", weight: 5, role: .title), .init(column: "body")]),
        ])
        let analyzer = SearchTextAnalyzer(model: model)
        let entity = model.entity(named: "Page")!
        let rows = documents.enumerated().map { offset, document in
            PostgresDocument(source: "pages", entity: entity, objectID: .text(document.id), token: Int64(offset + 1),
                             values: ["title": document.title, "body": document.body], analyzer: analyzer)
        }
        let fixture = try SearchFixture("recall")
        try await PostgresTestServer.withClient { client in
            try await fixture.create(client)
            try await fixture.addSource("pages", model: model, client)
            try await fixture.insert(rows, client)
        }
        var options = PostgresSearch.Options()
        options.snippets = false // ids are what is measured
        let found = try await fixture.search(options: options) { search in
            var found: [String: Set<String>] = [:]
            for query in queries {
                let results = try await search.search(query.text, asYouType: query.asYouType, limit: nil)
                found[query.description] = Set(results.hits.map(\.objectID.description))
            }
            return found
        }
        let (evaluated, misses) = try RecallEvaluation.evaluate(queries) { query in found[query.description] ?? [] }
        for row in evaluated { print("PostgresCJKRecallTests \(corpus): \(row)") }
        for miss in misses { print("PostgresCJKRecallTests \(corpus) miss: \(miss)") }
        #expect(evaluated.count == 9, "every kind of query was drawn: \(evaluated.map(\.category))")
        for row in evaluated {
            #expect(row.queries == perKind, "\(row.category): \(row.queries) queries drawn (seed \(seed))")
            #expect(row.recall >= 0.99, "\(row) (seed \(seed))")
            #expect(row.precision >= 0.98, "\(row) (seed \(seed))")
        }
    }
}
