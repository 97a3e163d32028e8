import Foundation
import Testing
import SearchlightTestSupport

/// `searchlight search --filter/--facet` and `searchlight reindex --filter`.
@Suite struct FilterCommandTests {
    func indexed() async throws -> TestDatabase {
        let db = try TestDatabase(schema: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, year INTEGER, tag TEXT COLLATE NOCASE, account INTEGER);
            INSERT INTO notes VALUES (1, 'Kernel panic', 'old', 2019, 'Swift', 7), (2, 'Kernel halt', 'new', 2021, 'swift', 7),
              (3, 'Kernel oops', 'newer', 2022, 'rust', 8), (4, 'Kernel trap', 'text year', '2020', 'Go', 8);
            """)
        let model = db.directory.appendingPathComponent("model.json").path
        try Data("""
            {"entities": [{"name": "Note", "table": "notes", "primaryKey": "id",
              "fields": [{"column": "title", "role": "title"}, {"column": "body"}],
              "attributes": [{"column": "year"}, {"column": "tag"}, {"column": "account"}]}]}
            """.utf8).write(to: URL(fileURLWithPath: model))
        let result = try await CLI.run(["init", "--db", db.path, "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        return db
    }

    @Test func filterAndFacetsInJSONAndInTheTableFooter() async throws {
        let db = try await indexed()
        let result = try await CLI.run(["search", "--db", db.path, "kernel", "--filter", #"year >= 2020 AND tag = "SWIFT" OR tag = 'go'"#,
                                        "--facet", "tag", "--facet", "account", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect((page["hits"] as! [[String: Any]]).compactMap { $0["id"] as? Int }.sorted() == [2, 4], "'2020' is stored as 2020 in an INTEGER column")
        let facets = page["facets"] as! [[String: Any]]
        #expect(facets.map { $0["attribute"] as? String } == ["tag", "account"])
        #expect((facets[0]["buckets"] as! [[String: Any]]).map { "\($0["value"]!) \($0["count"]!)" } == ["Go 1", "swift 1"])
        #expect((facets[1]["buckets"] as! [[String: Any]]).map { "\($0["value"]!) \($0["count"]!)" } == ["7 1", "8 1"])
        let table = try await CLI.run(["search", "--db", db.path, "kernel", "--facet", "tag", "--facet-limit", "1"])
        #expect(table.status == 0 && table.stdout.contains("4 of 4 matches (Note 4)\ntag: Swift 2 (and 2 more values)"), "\(table.stdout)")
        let plain = try await CLI.run(["search", "--db", db.path, "kernel", "--format", "json"])
        #expect(!plain.stdout.contains("facets"), "no facets key without --facet")
    }

    @Test func aBadFilterIsOneLineAndExitsOne() async throws {
        let db = try await indexed()
        let syntax = try await CLI.run(["search", "--db", db.path, "kernel", "--filter", "year >= AND"])
        #expect(syntax.status == 1 && syntax.stdout.isEmpty)
        #expect(syntax.stderr == "searchlight: error: invalid filter at character 9: expected a value: a number, or text in quotes (\"swift\" or 'swift'), found \"AND\"\n", "\(syntax.stderr)")
        let unknown = try await CLI.run(["search", "--db", db.path, "kernel", "--filter", "colour = 'red'"])
        #expect(unknown.status == 1 && unknown.stderr == "searchlight: error: invalid filter: unknown attribute \"colour\" (declared: year, tag, account)\n", "\(unknown.stderr)")
        let facet = try await CLI.run(["search", "--db", db.path, "kernel", "--facet", "colour"])
        #expect(facet.status == 1 && facet.stderr.split(separator: "\n").count == 1, "\(facet.stderr)")
        let limit = try await CLI.run(["search", "--db", db.path, "kernel", "--facet", "tag", "--facet-limit", "0"])
        #expect(limit.status == 2, "\(limit.stderr)")
    }

    @Test func reindexByAGroupingKey() async throws {
        let db = try await indexed()
        // Damage the index for both accounts: documents 1 (account 7) and 3 (account 8) lose their text.
        try db.shell("DELETE FROM searchlight_fts_1_g1 WHERE rowid IN (1, 3); DELETE FROM searchlight_attr_1_g1 WHERE rowid IN (1, 3);")
        let result = try await CLI.run(["reindex", "--db", db.path, "--filter", "account = 7"])
        #expect(result.status == 0 && result.stdout.contains("Reindexed the objects matching the filter: 2 documents upserted, 0 removed."), "\(result.stdout)\(result.stderr)")
        let verify = try await CLI.run(["verify", "--db", db.path, "--format", "json"])
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as! [String: Any]
        let entity = (report["entities"] as! [[String: Any]])[0]
        #expect(entity["missing"] as? [Int] == [3] && (entity["stale"] as? [Int])?.isEmpty == true, "account 8 was left alone: \(verify.stdout)")
        let hits = try await CLI.run(["search", "--db", db.path, "kernel", "--filter", "account = 7", "--format", "jsonl"])
        #expect(hits.stdout.split(separator: "\n").count == 2, "\(hits.stdout)")
    }
}
