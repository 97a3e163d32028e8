import Foundation
import GRDB
import Testing
import Searchlight
import SearchlightEvaluation
import SearchlightHistory
import SearchlightTestSupport

/// Chinese and Japanese man pages are searchable with the default model: recall ≥ 0.99 and
/// precision ≥ 0.98 against substring ground truth (``RecallEvaluation``), for every kind of
/// query. CI runs a reduced form (a sample of documents and queries); the full corpora run in
/// `searchlight-bench --scenario 7`, or here with `SEARCHLIGHT_RECALL_DOCUMENTS=0` (all).
///
/// Where the shared corpora are, when the clone has them beside it.
enum SharedCorpora {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static var present: Bool {
        ["manpages-zh.jsonl.gz", "manpages-ja.jsonl.gz"].allSatisfy {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path)
        }
    }

    /// `.ci/run` sets it whenever `../shared` is there.
    static var required: Bool { ProcessInfo.processInfo.environment["SEARCHLIGHT_REQUIRE_CORPORA"] == "1" }
}

/// The corpora are not part of the package: they sit beside the clone, in `../shared/corpus`. A
/// clone with nothing beside it skips this suite and says why; `SEARCHLIGHT_REQUIRE_CORPORA=1`
/// (which `.ci/run` sets whenever `../shared` is there) runs it anyway, so a missing corpus fails.
///
/// Environment: `SEARCHLIGHT_SEED` (queries drawn), `SEARCHLIGHT_RECALL_DOCUMENTS` (documents
/// per corpus, 0 for all; default 240), `SEARCHLIGHT_RECALL_QUERIES` (per kind; default 40).
@Suite(.enabled(if: SharedCorpora.present || SharedCorpora.required,
                "the Chinese and Japanese man pages are not beside this clone (../shared/corpus)"))
struct CJKRecallTests {
    static var corpora: URL { SharedCorpora.directory }

    static func sample(_ name: String) throws -> [RecallEvaluation.Document] {
        let documents = try RecallEvaluation.load(corpora.appendingPathComponent(name).path)
        let wanted = Int(ProcessInfo.processInfo.environment["SEARCHLIGHT_RECALL_DOCUMENTS"] ?? "") ?? 240
        guard wanted > 0, wanted < documents.count else { return documents }
        // Spread over the corpus: both scripts of the Chinese pages, every section.
        let step = Double(documents.count) / Double(wanted)
        return (0..<wanted).map { documents[Int(Double($0) * step)] }
    }

    @Test(arguments: ["manpages-zh.jsonl.gz", "manpages-ja.jsonl.gz"])
    func cjkSearchMeetsRecallAndPrecisionTargetsOnRealManPages(corpus: String) throws {
        try #require(FileManager.default.fileExists(atPath: Self.corpora.appendingPathComponent(corpus).path),
                     "the shared corpora are missing: \(Self.corpora.path)")
        let (seed, _) = seededGenerator("CJKRecallTests \(corpus)")
        let documents = try Self.sample(corpus)
        let perKind = Int(ProcessInfo.processInfo.environment["SEARCHLIGHT_RECALL_QUERIES"] ?? "") ?? 40
        let queries = RecallEvaluation.queries(documents, perCategory: perKind, seed: seed)

        let db = try TestDatabase(schema: "CREATE TABLE pages(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT);")
        // The default model: no setting for CJK text.
        let model = try SearchlightModel(entities: [
            .init(name: "Page", table: "pages", primaryKey: "id",
                  fields: [.init(column: "title", weight: 5, role: .title), .init(column: "body")]),
        ])
        let store = try db.openStore(model: model)
        try store.write(author: "import") { db in
            for document in documents {
                try db.execute(sql: "INSERT INTO pages VALUES (?, ?, ?)", arguments: [document.id, document.title, document.body])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)

        let (rows, misses) = try RecallEvaluation.evaluate(queries) { query in
            Set(try index.search(query.text, asYouType: query.asYouType, limit: nil).hits.map(\.objectID.description))
        }
        for row in rows { print("CJKRecallTests \(corpus): \(row)") }
        for miss in misses { print("CJKRecallTests \(corpus) miss: \(miss)") }
        #expect(rows.count == 9, "every kind of query was drawn: \(rows.map(\.category))")
        for row in rows {
            #expect(row.queries == perKind, "\(row.category): \(row.queries) queries drawn (seed \(seed))")
            #expect(row.recall >= 0.99, "\(row) (seed \(seed))")
            #expect(row.precision >= 0.98, "\(row) (seed \(seed))")
        }
    }
}
