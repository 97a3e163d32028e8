import Foundation
import GRDB
import PostgresNIO
import Searchlight
import SearchlightHistory
@testable import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// Search on PostgreSQL finds what the local index finds: the same documents in two sources,
/// each also indexed by a local Searchlight store (SQLite FTS5, which shares no code with the
/// tsquery compiler), searched with every query form; the matches of each source, and of
/// both, must be the same objects.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresSearchTests {
    static let latin = ["kernel", "panic", "Café", "résumé", "hacker", "cracker", "ethic", "network", "net", "data", "Database", "oops", "Straße"]
    static let cjk = ["数据库", "文件系统", "持久化", "网络", "命令", "数据", "ファイル", "日本語", "検索"]

    /// A random text of the corpus: Latin words, CJK words (written apart, glued to a Latin
    /// word, or after CJK punctuation).
    static func text(_ random: inout SplitMix, words: ClosedRange<Int>) -> String {
        var text = ""
        for _ in 0..<Int.random(in: words, using: &random) {
            let useCJK = Int.random(in: 0..<3, using: &random) == 0
            let word = useCJK ? cjk.randomElement(using: &random)! : latin.randomElement(using: &random)!
            let joiner = text.isEmpty ? "" : useCJK ? ["", " ", "。", "、"].randomElement(using: &random)! : [" ", " ", ", "].randomElement(using: &random)!
            text += joiner + word
        }
        return text
    }

    /// One source: its rows in a local store (indexed) and as PostgreSQL documents.
    struct Source {
        var name: String
        var database: TestDatabase
        var index: SearchIndex
        var documents: [PostgresDocument]
    }

    static func makeSource(_ name: String, notes: Int, people: Int, firstToken: Int64, _ random: inout SplitMix) throws -> Source {
        let database = try TestDatabase()
        let model = TestDatabase.notesModel
        let store = try database.openStore(model: model)
        let analyzer = SearchTextAnalyzer(model: model)
        var documents: [PostgresDocument] = []
        var token = firstToken
        var rows: [(Int, String, String, String)] = []
        for id in 1...notes {
            rows.append((id, text(&random, words: 1...3), text(&random, words: 3...14), text(&random, words: 0...2)))
        }
        var persons: [(String, String)] = []
        for id in 1...people { persons.append(("p\(id)", text(&random, words: 1...2))) }
        try store.write(author: "fixture") { db in
            for row in rows { try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)", arguments: [row.0, row.1, row.2, row.3]) }
            for person in persons { try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: [person.0, person.1]) }
        }
        try Indexer(store: store).indexPendingChanges()
        for row in rows {
            token += 1
            documents.append(PostgresDocument(source: name, entity: model.entity(named: "Note")!, objectID: .integer(Int64(row.0)), token: token,
                                              values: ["title": row.1, "body": row.2, "tags": row.3], analyzer: analyzer))
        }
        for person in persons {
            token += 1
            documents.append(PostgresDocument(source: name, entity: model.entity(named: "Person")!, objectID: .text(person.0), token: token,
                                              values: ["name": person.1], analyzer: analyzer))
        }
        return Source(name: name, database: database, index: SearchIndex(store: store), documents: documents)
    }

    /// Queries of every form, drawn from the corpus' words.
    static func queries(_ random: inout SplitMix, perForm: Int) -> [(form: String, text: String, asYouType: Bool)] {
        func word() -> String { latin.randomElement(using: &random)! }
        func han() -> String { cjk.randomElement(using: &random)! }
        func part(_ word: String) -> String {
            let characters = Array(word)
            let length = Int.random(in: 1...characters.count, using: &random)
            let start = Int.random(in: 0...(characters.count - length), using: &random)
            return String(characters[start..<start + length])
        }
        var queries: [(String, String, Bool)] = []
        for _ in 0..<perForm {
            queries.append(("word", [word(), word().uppercased(), word().folding(options: .diacriticInsensitive, locale: nil)].randomElement(using: &random)!, false))
            queries.append(("words", "\(word()) \(word())", false))
            queries.append(("phrase", "\"\(word()) \(word())\"", false))
            queries.append(("or", "\(word()) OR \(han())", false))
            queries.append(("exclusion", ["\(word()) -\(word())", "\(word()) NOT \(han())", "\(han()) -\"\(word()) \(word())\""].randomElement(using: &random)!, false))
            queries.append(("prefix", String(word().prefix(Int.random(in: 1...3, using: &random))) + "*", false))
            queries.append(("as you type", "\(word()) " + String(word().prefix(Int.random(in: 1...4, using: &random))), true))
            queries.append(("field", ["title:\(word())", "tags:\(han())", "body:\"\(word()) \(word())\"", "name:\(part(han()))", "-title:\(word()) \(word())"].randomElement(using: &random)!, false))
            queries.append(("cjk", part(han()), false))
            queries.append(("cjk words", "\(part(han())) \(part(han()))", false))
            queries.append(("glued", word() + part(han()), false))
            queries.append(("cjk punctuation", "\"" + han() + "。" + han() + "\"", false))
            queries.append(("cjk exclusion", "\(word()) -\(part(han()))", false))
        }
        return queries
    }

    struct Key: Hashable, CustomStringConvertible {
        var source: String
        var entity: String
        var id: String
        var description: String { "\(source)/\(entity)/\(id)" }
    }

    @Test func everyQueryFormFindsWhatTheLocalIndexFinds() async throws {
        var (seed, random) = seededGenerator("PostgresSearchTests.everyQueryForm")
        let sources = [try Self.makeSource("alpha", notes: 70, people: 15, firstToken: 0, &random),
                       try Self.makeSource("beta", notes: 50, people: 10, firstToken: 1_000, &random)]
        let fixture = try SearchFixture("forms")
        try await PostgresTestServer.withClient { client in
            try await fixture.create(client)
            for source in sources {
                try await fixture.addSource(source.name, model: TestDatabase.notesModel, client)
                try await fixture.insert(source.documents, client)
            }
        }
        let queries = Self.queries(&random, perForm: 6)
        var mismatches: [String] = []
        var matched = 0
        for query in queries {
            var expected: Set<Key> = []
            for source in sources {
                let local = try source.index.search(query.text, asYouType: query.asYouType, limit: nil)
                let keys = Set(local.hits.map { Key(source: source.name, entity: $0.entity, id: $0.objectID.description) })
                expected.formUnion(keys)
                let remote = try await fixture.search { search in
                    try await search.search(query.text, asYouType: query.asYouType, sources: [source.name], limit: nil)
                }
                let found = Set(remote.hits.map { Key(source: $0.source, entity: $0.entity, id: $0.objectID.description) })
                // (Locally, an entity without the field a query names has no count; here it counts 0.)
                if found != keys || remote.total != local.total || remote.countsByEntity.filter({ $0.value > 0 }) != local.countsByEntity.filter({ $0.value > 0 }) {
                    mismatches.append("\(query.form) \(query.text) in \(source.name): local \(local.total) \(keys.subtracting(found).sorted { $0.description < $1.description }), PostgreSQL \(remote.total) extra \(found.subtracting(keys).sorted { $0.description < $1.description })")
                }
            }
            let all = try await fixture.search { search in try await search.search(query.text, asYouType: query.asYouType, limit: nil) }
            let found = Set(all.hits.map { Key(source: $0.source, entity: $0.entity, id: $0.objectID.description) })
            if found != expected || all.total != expected.count || all.countsBySource.values.reduce(0, +) != all.total {
                mismatches.append("\(query.form) \(query.text) across sources: expected \(expected.count), found \(found.count) of \(all.total)")
            }
            for source in sources {
                #expect(all.countsBySource[source.name] == expected.filter { $0.source == source.name }.count, "\(query.text): counts of \(source.name)")
            }
            if !expected.isEmpty { matched += 1 }
        }
        #expect(mismatches.isEmpty, "seed \(seed): \(mismatches.count) of \(queries.count) queries differ:\n\(mismatches.joined(separator: "\n"))")
        #expect(matched > queries.count / 2, "most queries match something (seed \(seed)): \(matched) of \(queries.count)")
    }

    @Test func snippetsAndTitlesHighlightTheMatchesAsTheLocalIndexDoes() async throws {
        let model = TestDatabase.notesModel
        let analyzer = SearchTextAnalyzer(model: model)
        let filler = (1...40).map { "word\($0)" }.joined(separator: " ")
        let documents = [
            PostgresDocument(source: "s", entity: model.entity(named: "Note")!, objectID: .integer(1), token: 1,
                             values: ["title": "Kernel Panic 数据库", "body": filler + " the kernel oops happened in the 数据库 engine " + filler, "tags": "x"],
                             analyzer: analyzer),
            PostgresDocument(source: "s", entity: model.entity(named: "Note")!, objectID: .integer(2), token: 2,
                             values: ["title": "Café", "body": "résumé of the café", "tags": ""], analyzer: analyzer),
            PostgresDocument(source: "s", entity: model.entity(named: "Person")!, objectID: .text("p"), token: 3,
                             values: ["name": "数据 person"], analyzer: analyzer),
        ]
        let fixture = try SearchFixture("snippets")
        try await PostgresTestServer.withClient { [documents] client in
            try await fixture.create(client)
            try await fixture.addSource("s", model: model, client)
            try await fixture.insert(documents, client)
        }
        let results = try await fixture.search { search in try await search.search("kernel 数据库") }
        let hit = try #require(results.hits.first)
        #expect(results.hits.count == 1)
        #expect(hit.title == "Kernel Panic 数据库")
        #expect(hit.titleHighlight == "[Kernel] Panic [数据库]")
        #expect(hit.snippet.hasPrefix("…") && hit.snippet.hasSuffix("…"), "\(hit.snippet)")
        #expect(hit.snippet.contains("[kernel] oops") && hit.snippet.contains("[数据库]"), "\(hit.snippet)")
        #expect(!hit.snippet.unicodeScalars.contains { $0 == "\u{1F}" || $0 == "\u{2}" || $0 == "\u{3}" })

        // A CJK run inside a longer one; a folded word; prefix; a title-only entity.
        let part = try await fixture.search { search in try await search.search("数据", entities: ["Note"]) }
        #expect(part.hits.first?.titleHighlight == "Kernel Panic [数据]库")
        let folded = try await fixture.search { search in try await search.search("CAFE resu", asYouType: true) }
        #expect(folded.hits.map(\.objectID) == [.integer(2)])
        #expect(folded.hits.first?.titleHighlight == "[Café]")
        #expect(folded.hits.first?.snippet == "[résumé] of the [café]")
        let person = try await fixture.search { search in try await search.search("name:数据") }
        #expect(person.hits.map(\.objectID) == [.text("p")])
        #expect(person.hits.first?.snippet == "[数据] person")

        var options = PostgresSearch.Options()
        (options.highlightStart, options.highlightEnd, options.ellipsis, options.snippets) = ("<b>", "</b>", "...", true)
        let custom = try await fixture.search(options: options) { search in try await search.search("kernel") }
        #expect(custom.hits.first?.titleHighlight == "<b>Kernel</b> Panic 数据库")
        #expect(custom.hits.first?.snippet.hasPrefix("...") == true)
    }

    @Test func pagesAndCountsAreBoundedAndSaySo() async throws {
        let model = TestDatabase.notesModel
        let analyzer = SearchTextAnalyzer(model: model)
        var random = SplitMix(seed: 7)
        var documents: [PostgresDocument] = []
        for (source, base) in [("a", Int64(0)), ("b", Int64(30))] {
            for id in 1...30 {
                let body = "common " + (0..<Int.random(in: 0...6, using: &random)).map { _ in "common filler" }.joined(separator: " ")
                documents.append(PostgresDocument(source: source, entity: model.entity(named: "Note")!, objectID: .integer(Int64(id)), token: base + Int64(id),
                                                  values: ["title": "t\(id)", "body": body, "tags": ""], analyzer: analyzer))
            }
        }
        let fixture = try SearchFixture("paging")
        try await PostgresTestServer.withClient { [documents] client in
            try await fixture.create(client)
            try await fixture.addSource("a", model: model, client)
            try await fixture.addSource("b", model: model, client)
            try await fixture.insert(documents, client)
        }
        var options = PostgresSearch.Options()
        options.maximumRankedMatches = 20
        options.maximumHits = 7
        let results = try await fixture.search(options: options) { search in try await search.search("common", limit: nil) }
        #expect(results.total == 60)
        #expect(results.countsBySource == ["a": 30, "b": 30])
        #expect(results.countsByEntity == ["Note": 60, "Person": 0])
        #expect(results.rankedMatches == 20 && results.isRankingCapped)
        #expect(results.hits.count == 7 && results.isTruncated)
        var pages: [PostgresSearchHit] = []
        for offset in stride(from: 0, to: 28, by: 7) {
            let page = try await fixture.search(options: options) { search in try await search.search("common", limit: 7, offset: offset) }
            #expect(!page.isTruncated, "a limit within the bound")
            pages += page.hits
        }
        #expect(pages.count == 20, "the ranked matches, page by page")
        #expect(Set(pages.map { "\($0.source)\($0.objectID)" }).count == 20)
        // The newest 20 by history token: source b's ids 11…30.
        #expect(pages.allSatisfy { $0.source == "b" && ($0.objectID.description as NSString).integerValue >= 11 }, "\(pages.map { "\($0.source)\($0.objectID)" })")
        #expect(zip(pages, pages.dropFirst()).allSatisfy { $0.score >= $1.score }, "best first")
        #expect(pages.prefix(7).map(\.objectID) == results.hits.map(\.objectID))
        // One tenant; one entity; unknown names are errors that say so.
        let one = try await fixture.search(options: options) { search in try await search.search("common", sources: ["a"], limit: 3) }
        #expect(one.total == 30 && one.countsBySource == ["a": 30] && one.hits.allSatisfy { $0.source == "a" } && one.rankedMatches == 20)
        let people = try await fixture.search { search in try await search.search("common", entities: ["Person"]) }
        #expect(people.total == 0 && people.hits.isEmpty)
        await #expect(throws: SearchlightError.self) { try await fixture.search { search in try await search.search("common", sources: ["nope"]) } }
        await #expect(throws: SearchlightError.self) { try await fixture.search { search in try await search.search("common", entities: ["Nope"]) } }
        await #expect(throws: SearchlightError.self) { try await fixture.search { search in try await search.search("common", limit: -1) } }
        let nothing = try await fixture.search { search in try await search.search("  ?!  ") }
        #expect(nothing.total == 0 && nothing.countsBySource == ["a": 0, "b": 0])

        // Counting stops past its bound and says so; the ranking and the page do not change.
        for counted in [1, 7, 59] {
            var bounded = options
            bounded.maximumCountedMatches = counted
            let page = try await fixture.search(options: bounded) { search in try await search.search("common", limit: 7) }
            #expect(page.total == counted && page.totalRelation == .atLeast && page.countsByEntity == ["Note": counted, "Person": 0], "counted \(counted)")
            #expect(page.countsBySource == ["a": 0, "b": 20], "by source: those of the ranked matches")
            #expect(page.rankedMatches == 20 && page.isRankingCapped)
            #expect(page.hits.map(\.objectID) == results.hits.map(\.objectID) && page.hits.map(\.source) == results.hits.map(\.source))
        }
        var exactly = options
        exactly.maximumCountedMatches = 60
        #expect(try await fixture.search(options: exactly) { search in try await search.search("common", limit: 7) }.totalRelation == .equal)
        #expect(results.totalRelation == .equal)
        // Fewer matches than the ranking cap: the ranking walks them all, so they are counted.
        var walked = PostgresSearch.Options()
        walked.maximumCountedMatches = 5
        let all = try await fixture.search(options: walked) { search in try await search.search("common", limit: 3) }
        #expect(all.total == 60 && all.totalRelation == .equal && all.countsBySource == ["a": 30, "b": 30] && all.rankedMatches == 60)
        let oneSource = try await fixture.search(options: walked) { search in try await search.search("common", sources: ["b"], limit: 3) }
        #expect(oneSource.total == 30 && oneSource.totalRelation == .equal && oneSource.hits.allSatisfy { $0.source == "b" })
    }

    /// Past the counting bound, the newest `maximumRankedMatches` matches are ranked, newest
    /// by (token, source, key), whether the search walks the newest documents or reads GIN and
    /// sorts (which the table's statistics choose: none before ANALYZE, then a walk for a word
    /// in every document and GIN for one in a seventh). The oracle orders the documents in Swift.
    @Test func theNewestMatchesAreRankedWhicheverWayTheyAreRead() async throws {
        let model = TestDatabase.notesModel
        let analyzer = SearchTextAnalyzer(model: model)
        let note = model.entity(named: "Note")!
        var documents: [PostgresDocument] = []
        for id in 1...150 {
            let words = "common" + (id % 7 == 0 ? " mid" : "") + String(repeating: " filler", count: id % 5)
            // Source a: a token per row; source b: one token for all (as a snapshot writes).
            documents.append(PostgresDocument(source: "a", entity: note, objectID: .integer(Int64(id)), token: Int64(id),
                                              values: ["title": "a\(id)", "body": words, "tags": ""], analyzer: analyzer))
            documents.append(PostgresDocument(source: "b", entity: note, objectID: .integer(Int64(id)), token: 100,
                                              values: ["title": "b\(id)", "body": words, "tags": ""], analyzer: analyzer))
        }
        let fixture = try SearchFixture("newest")
        try await PostgresTestServer.withClient { [documents] client in
            try await fixture.create(client)
            try await fixture.addSource("a", model: model, client)
            try await fixture.addSource("b", model: model, client)
            try await fixture.insert(documents, client)
        }
        var options = PostgresSearch.Options()
        options.maximumRankedMatches = 20
        options.maximumCountedMatches = 10
        func newest(_ word: String, sources: Set<String>) -> Set<String> {
            let matches = documents.filter { sources.contains($0.source) && $0.body.contains(word) }
            let ordered = matches.sorted { a, b in
                if a.token != b.token { return a.token > b.token }
                if a.source != b.source { return a.source > b.source }
                return Array(b.objectKey.utf8).lexicographicallyPrecedes(Array(a.objectKey.utf8))
            }
            return Set(ordered.prefix(20).map { "\($0.source) \($0.objectKey)" })
        }
        func searchAll(_ word: String, sources: Set<String>?) async throws -> PostgresSearchResults {
            try await fixture.search(options: options) { search in try await search.search(word, sources: sources, limit: nil) }
        }
        var before: [String: PostgresSearchResults] = [:]
        for analyzed in [false, true] {
            if analyzed {
                try await PostgresTestServer.withClient { client in try await client.query(PostgresQuery(unsafeSQL: "ANALYZE \(fixture.table)")) }
            }
            for word in ["common", "mid"] {
                for sources in [nil, Set(["b"])] as [Set<String>?] {
                    let results = try await searchAll(word, sources: sources)
                    let label = "\(word) \(sources?.sorted() ?? []) analyzed \(analyzed)"
                    #expect(results.total == 10 && results.totalRelation == .atLeast && results.rankedMatches == 20, "\(label)")
                    let expected = newest(word, sources: sources ?? ["a", "b"])
                    #expect(Set(results.hits.map { "\($0.source) \(PostgresDocument.key($0.objectID))" }) == expected, "\(label)")
                    #expect(zip(results.hits, results.hits.dropFirst()).allSatisfy { $0.score >= $1.score }, "\(label)")
                    let key = "\(word) \(sources?.sorted() ?? [])"
                    if let earlier = before[key] { #expect(earlier.hits == results.hits, "\(label): the same page either way") }
                    before[key] = results
                }
            }
        }
    }

    /// A TEXT key holding a NUL is stored as `T:` and its UTF-8 in hex (PostgreSQL's text holds
    /// no NUL): search gives the key back as it was, beside keys that only look alike.
    @Test func aTextKeyWithANulCharacterComesBackAsItWas() async throws {
        let model = TestDatabase.notesModel
        let analyzer = SearchTextAnalyzer(model: model)
        let people = model.entity(named: "Person")!
        let ids: [ObjectID] = [.text("a\u{0}b"), .text("\u{0}"), .text("é\u{0}数"), .text("T:6100"), .blob(Data([0, 0xFF])), .integer(-3)]
        let documents = ids.enumerated().map { index, id in
            PostgresDocument(source: "s", entity: people, objectID: id, token: Int64(index + 1), values: ["name": "nulkey person"], analyzer: analyzer)
        }
        #expect(documents[0].objectKey == "T:610062")
        let fixture = try SearchFixture("nulkey")
        try await PostgresTestServer.withClient { [documents] client in
            try await fixture.create(client)
            try await fixture.addSource("s", model: model, client)
            try await fixture.insert(documents, client)
        }
        let results = try await fixture.search { search in try await search.search("nulkey") }
        #expect(results.total == ids.count)
        #expect(Set(results.hits.map(\.objectID)) == Set(ids), "\(results.hits.map(\.objectID))")
    }

    /// PostgreSQL failing under a search is `postgresError`, as the sink says (`databaseError`
    /// is SQLite's), with the server's message.
    @Test func aPostgresFailureInSearchIsAPostgresError() async throws {
        let model = TestDatabase.notesModel
        let analyzer = SearchTextAnalyzer(model: model)
        let document = PostgresDocument(source: "s", entity: model.entity(named: "Note")!, objectID: .integer(1), token: 1,
                                        values: ["title": "kernel", "body": "panic", "tags": ""], analyzer: analyzer)
        let fixture = try SearchFixture("pgerror")
        try await PostgresTestServer.withClient { client in
            try await fixture.create(client)
            try await fixture.addSource("s", model: model, client)
            try await fixture.insert([document], client)
            // A column the search reads is gone: the server refuses the query (SQLSTATE 42703).
            try await client.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(fixture.table) RENAME COLUMN vector TO vector_gone"))
        }
        do {
            _ = try await fixture.search { search in try await search.search("kernel") }
            Issue.record("the search did not fail")
        } catch let error as SearchlightError {
            #expect(error.code == .postgresError, "\(error.code): \(error.message)")
            #expect(error.message.contains("vector") && error.message.contains("42703"), "\(error.message)")
        }
    }

    /// A schema a newer release migrated is refused, as the sink and status refuse it: its
    /// tables may mean something else now.
    @Test func aSchemaNewerThanThisReleaseIsRefused() async throws {
        let fixture = try SearchFixture("newer")
        try await PostgresTestServer.withClient { client in
            try await fixture.create(client)
            try await fixture.addSource("s", model: TestDatabase.notesModel, client)
            let meta = PostgresSchema.quoted(fixture.schema) + ".meta"
            try await client.query(PostgresQuery(unsafeSQL: "INSERT INTO \(meta)(key, value) VALUES ('schema_version', '\(PostgresSchema.currentVersion + 1)')"))
        }
        do {
            _ = try await fixture.search { search in try await search.search("kernel") }
            Issue.record("the search did not refuse a newer schema")
        } catch let error as SearchlightError {
            #expect(error.code == .postgresError && error.message.contains("newer than this release"), "\(error.code): \(error.message)")
        }
    }

    @Test func anyUserTextIsSafe() async throws {
        var (seed, random) = seededGenerator("PostgresSearchTests.anyUserTextIsSafe")
        let model = TestDatabase.notesModel
        let analyzer = SearchTextAnalyzer(model: model)
        var documents: [PostgresDocument] = []
        for id in 1...40 {
            documents.append(PostgresDocument(source: "s", entity: model.entity(named: "Note")!, objectID: .integer(Int64(id)), token: Int64(id),
                                              values: ["title": Self.text(&random, words: 1...3), "body": Self.text(&random, words: 3...20), "tags": "it's a \\ test"],
                                              analyzer: analyzer))
        }
        let fixture = try SearchFixture("fuzz")
        try await PostgresTestServer.withClient { [documents] client in
            try await fixture.create(client)
            try await fixture.addSource("s", model: model, client)
            try await fixture.insert(documents, client)
        }
        let pieces = ["\"", "'", "''", "\\", "\\'", ":", "*", "-", "OR", "NOT", "AND", "(", ")", "&", "|", "!", "<->", "<2>", ":*", "🙂", "👩‍👩‍👧",
                      "数据", "の", "。", "\0", "\u{1}", "\u{2}", "\u{1D}", "\u{1E}", "\u{1F}", "\u{7F}", "\u{10FFFD}", "\u{FFFD}", " ", "\t", "\n",
                      "title:", "body:", "tags:", "name:", "kernel", "Café", "e\u{301}", "\u{301}", "ß", "ﬁ", "%", "_", "[", "]", "$1", ";", "--",
                      "/*", "E'", "{", "}", "\u{200B}", "\u{202E}", "Ω", "ǅ", "٣", "x", "cjk数据kernel", "'kernel':*"]
        let total = Int(ProcessInfo.processInfo.environment["SEARCHLIGHT_FUZZ_QUERIES"] ?? "") ?? 1_500
        var texts: [String] = []
        for round in 0..<total {
            var text = ""
            if round % 300 == 299 {
                // Very long input: many terms, a huge word, a huge phrase.
                text = [String(repeating: "kernel ", count: 5_000), String(repeating: "数", count: 40_000),
                        "\"" + String(repeating: "a b ", count: 3_000) + "\"", String(repeating: "x", count: 100_000)].randomElement(using: &random)!
            } else {
                for _ in 0..<Int.random(in: 1...24, using: &random) {
                    if Int.random(in: 0..<5, using: &random) == 0 {
                        text.unicodeScalars.append(Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &random)) ?? "?")
                    } else {
                        text += pieces.randomElement(using: &random)!
                    }
                }
            }
            texts.append(text)
        }
        let failures = try await fixture.search { [texts] search in
            var failures: [String] = []
            for (index, text) in texts.enumerated() {
                do {
                    _ = try await search.search(text, asYouType: index % 2 == 0, limit: [1, 5, nil].randomElement()!)
                } catch {
                    failures.append("\(text.debugDescription.prefix(200)): \(error)")
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "seed \(seed): \(failures.count) of \(texts.count) texts failed:\n\(failures.prefix(10).joined(separator: "\n"))")
    }
}
