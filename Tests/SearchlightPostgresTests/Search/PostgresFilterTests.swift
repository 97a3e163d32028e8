import Foundation
import GRDB
import PostgresNIO
import Searchlight
import SearchlightHistory
@testable import SearchlightPostgres
import SearchlightTestSupport
import Testing

/// Filters and facets on PostgreSQL mean what they mean locally: the same rows (every storage
/// class, NULLs, numbers as text, integers beyond 2^53 beside the reals around them, case and
/// trailing-space variants, a NUL inside text, BLOBs) in columns of every affinity and the
/// three collations, synced by the sink and indexed locally, then random filters (and their
/// text, parsed) run on both: the same matches, the same counts, the same facets. The local
/// search is the oracle here; its own oracle is a `WHERE` on the source table
/// (FilterOracleTests). Seeded: `SEARCHLIGHT_SEED` replays.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresFilterTests {
    static let schema = """
        CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT, n INTEGER, r REAL, t TEXT COLLATE NOCASE, u, x NUMERIC,
                           k TEXT COLLATE RTRIM, c TEXT);
        """
    static let columns = ["n", "r", "t", "u", "x", "k", "c"]

    static func model() throws -> SearchlightModel {
        try SearchlightModel(entities: [
            .init(name: "Item", table: "items", primaryKey: "id", fields: [.init(column: "body")],
                  attributes: columns.map { .init(column: $0) }),
        ])
    }

    static let values: [DatabaseValue] = [
        .null, 0.databaseValue, 1.databaseValue, 2.databaseValue, (-3).databaseValue, 1.5.databaseValue, 2.0.databaseValue,
        9_007_199_254_740_993.databaseValue, 9_007_199_254_740_992.0.databaseValue, Int64.max.databaseValue, 1e300.databaseValue,
        "2".databaseValue, "2.0".databaseValue, " 2".databaseValue, "abc".databaseValue, "ABC".databaseValue, "abc ".databaseValue,
        "Abc".databaseValue, "b".databaseValue, "".databaseValue, "a\u{0}b".databaseValue, "a".databaseValue, "é".databaseValue, "É".databaseValue,
        Data([0x61, 0x62, 0x63]).databaseValue, Data().databaseValue, Data([0]).databaseValue,
    ]
    static let literals: [AttributeValue] = [
        0, 1, 2, -3, 1.5, 2.0, 9_007_199_254_740_992, 9_007_199_254_740_993, .real(9_007_199_254_740_992), 1e300, "2", "2.0", " 2",
        "abc", "ABC", "abc ", "b", "", "a", "a\u{0}b", "é", "it's", .blob(Data([0x61, 0x62, 0x63])), .blob(Data()), .null,
    ]

    static func randomFilter(_ random: inout SplitMix, depth: Int = 0) -> SearchFilter {
        func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }
        switch depth >= 3 ? random.next() % 3 : random.next() % 6 {
        case 0: return .compare(pick(columns), pick(SearchFilter.Comparison.allCases), pick(literals))
        case 1: return .oneOf(pick(columns), (0...(random.next() % 3)).map { _ in pick(literals) })
        case 2: return .isNull(pick(columns))
        case 3: return .not(randomFilter(&random, depth: depth + 1))
        case 4: return .and(randomFilter(&random, depth: depth + 1), randomFilter(&random, depth: depth + 1))
        default: return .or(randomFilter(&random, depth: depth + 1), randomFilter(&random, depth: depth + 1))
        }
    }

    /// A facet bucket's value compared as SQLite groups it: an INTEGER and a REAL of the same
    /// value are one bucket, shown as either.
    static func comparable(_ value: AttributeValue) -> AttributeValue {
        if case let .real(number) = value, let integer = Int64(exactly: number) { return .integer(integer) }
        return value
    }


    @Test func filtersAndFacetsSelectAndCountWhatTheLocalSearchDoes() async throws {
        var (seedValue, random) = seededGenerator("PostgresFilterTests")
        let seed = seedValue
        let database = try TestDatabase(schema: Self.schema)
        let store = try database.openStore(model: Self.model())
        let words = ["alpha", "beta", "gamma"]
        var rows: [StatementArguments] = []
        for id in 1...150 {
            var arguments: [DatabaseValue] = [id.databaseValue, ("common " + words[Int(random.next() % 3)]).databaseValue]
            for _ in Self.columns { arguments.append(Self.values[Int(random.next() % UInt64(Self.values.count))]) }
            rows.append(StatementArguments(arguments))
        }
        try await store.write(author: "app") { [rows] db in
            for row in rows { try db.execute(sql: "INSERT INTO items(id, body, n, r, t, u, x, k, c) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", arguments: row) }
            // Text with a NUL inside, as another writer can store it (a bound value ends at its NUL).
            try db.execute(sql: "UPDATE items SET c = CAST(x'610062' AS TEXT), u = CAST(x'00' AS TEXT) WHERE id % 17 = 0")
        }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("filters")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        let sink = try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
        _ = try await sink.runOnce()
        // Half the rows changed again, through batches: the upsert path carries attributes too.
        let updates = stride(from: 1, through: 150, by: 2).map { id in
            (id, Self.columns[Int(random.next() % UInt64(Self.columns.count))], Self.values[Int(random.next() % UInt64(Self.values.count))])
        }
        try await store.write(author: "app") { db in
            for (id, column, value) in updates { try db.execute(sql: "UPDATE items SET \(column) = ? WHERE id = ?", arguments: [value, id]) }
        }
        try Indexer(store: store).indexPendingChanges()
        _ = try await sink.runOnce()
        let index = SearchIndex(store: store)
        let endpoint = try PostgresEndpoint(url: url)
        // Each item's values as stored, by column: what a sort orders.
        let values = try await store.databaseWriter.read { db in
            var values: [ObjectID: [String: AttributeValue]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, \(Self.columns.joined(separator: ", ")) FROM items") {
                values[.integer(row[0])] = Dictionary(uniqueKeysWithValues: Self.columns.map { ($0, AttributeValue(row[$0] as DatabaseValue)) })
            }
            return values
        }
        let cases = (0..<300).map { _ in (Self.randomFilter(&random), ["common", "alpha", "beta OR gamma"][Int(random.next() % 3)]) }
        // Bounds low enough that a common word's count stops and its ranking takes the probe, the
        // walk and the GIN paths: the filter is in each.
        var bounded = PostgresSearch.Options()
        bounded.maximumCountedMatches = 10
        bounded.maximumRankedMatches = 7
        let options = bounded
        let (nonTrivial, compared) = try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            let small = PostgresSearch(client: search.client, schema: search.schema, options: options, logger: search.logger)
            var nonTrivial = 0, compared = 0, sorted = 0
            for (round, (filter, word)) in cases.enumerated() {
                // Its text, parsed, where the grammar can say it (it has no BLOB or NULL literal).
                let parsed = (try? SearchFilter(parsing: filter.description)) ?? filter
                let facets = round % 5 == 0 ? [Self.columns[round / 5 % Self.columns.count]] : []
                let local = try index.search(word, limit: nil, typos: .off, filter: filter, facets: facets)
                let remote = try await search.search(word, limit: nil, filter: parsed, facets: facets)
                let localIDs = local.hits.map(\.objectID).sorted(), remoteIDs = remote.hits.map(\.objectID).sorted()
                #expect(remoteIDs == localIDs, "seed \(seed): \(word) filter \(filter): PostgreSQL \(remoteIDs.count), local \(localIDs.count)")
                #expect(remote.total == local.total, "seed \(seed): \(filter)")
                let capped = try await small.search(word, limit: nil, filter: parsed)
                let cappedIDs = capped.hits.map(\.objectID)
                #expect(Set(cappedIDs).isSubset(of: localIDs) && cappedIDs.count == min(7, localIDs.count),
                        "seed \(seed): \(word) filter \(filter), bounded: \(cappedIDs.count) of \(localIDs.count)")
                #expect(capped.totalRelation == (localIDs.count > 10 ? .atLeast : .equal), "seed \(seed): \(filter)")
                if !localIDs.isEmpty && localIDs.count < 100 { nonTrivial += 1 }
                // Sorted by a column, each direction: the same values in the same order (matches
                // of equal values may come in another order: the engines' scores differ).
                if round % 3 == 0 {
                    let column = Self.columns[round / 3 % Self.columns.count]
                    let order = SearchOrder.column(column, descending: round % 2 == 0)
                    let localSorted = try index.search(word, limit: nil, order: order, typos: .off, filter: filter)
                    let remoteSorted = try await search.search(word, limit: nil, order: order, filter: parsed)
                    let a = localSorted.hits.map { Self.comparable(values[$0.objectID]?[column] ?? .null) }
                    let b = remoteSorted.hits.map { Self.comparable(values[$0.objectID]?[column] ?? .null) }
                    #expect(a == b, "seed \(seed): sorted by \(order) of \(word) filter \(filter)")
                    sorted += a.isEmpty ? 0 : 1
                }
                if !facets.isEmpty {
                    let a = (local.facets ?? []).map { facet in facet.buckets.map { [Self.comparable($0.value).description, String($0.count)] } }
                    let b = (remote.facets ?? []).map { facet in facet.buckets.map { [Self.comparable($0.value).description, String($0.count)] } }
                    #expect(a == b, "seed \(seed): facet \(facets[0]) of \(word) filter \(filter)")
                    #expect(local.facets?.map(\.distinctValues) == remote.facets?.map(\.distinctValues), "seed \(seed): \(facets[0])")
                    compared += 1
                }
            }
            #expect(sorted > 50, "sorted searches with hits: \(sorted)")
            return (nonTrivial, compared)
        }
        #expect(nonTrivial > 50, "the random filters select something, not everything (\(nonTrivial))")
        #expect(compared == 60)
    }

    /// A schema of version 5 (documents without attributes) migrates; the sink then writes again
    /// the sources whose models declare attributes (once, saying why), and leaves the others.
    @Test func aVersion5SchemaGainsTheAttributesOfTheSourcesThatDeclareThem() async throws {
        let url = PostgresTestServer.freshURL("attrmigrate")
        let schema = PostgresSchema.quoted(try PostgresEndpoint(url: url).schema)
        let items = try TestDatabase(schema: Self.schema)
        let itemStore = try items.openStore(model: Self.model())
        try await itemStore.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO items(id, body, n, t) VALUES (1, 'common', 2020, 'Swift'), (2, 'common', 2019, 'rust')")
        }
        let notes = try TestDatabase()
        let noteStore = try notes.openStore()
        try await noteStore.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'common')") }
        func sink(_ store: HistoryStore, _ source: String) throws -> PostgresSink {
            var configuration = PostgresSink.Configuration()
            configuration.source = source
            return try PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration)
        }
        let itemSink = try sink(itemStore, "items"), noteSink = try sink(noteStore, "notes")
        _ = try await itemSink.runOnce()
        _ = try await noteSink.runOnce()
        // Back to version 5, as the previous release left it.
        try await PostgresTestServer.withClient(url) { client in
            try await client.query("ALTER TABLE \(unescaped: schema).documents DROP COLUMN attributes")
            try await client.query("ALTER TABLE \(unescaped: schema).sources DROP COLUMN attributes")
            try await client.query("UPDATE \(unescaped: schema).meta SET value = '5' WHERE key = 'schema_version'")
        }
        try await itemStore.write(author: "app") { db in try db.execute(sql: "INSERT INTO items(id, body, n, t) VALUES (3, 'common', 2021, 'SWIFT')") }
        let itemRun = try await sink(itemStore, "items").runOnce()
        #expect(itemRun.resyncs == 1, "the documents carry no attributes: written again")
        let noteRun = try await sink(noteStore, "notes").runOnce()
        #expect(noteRun.resyncs == 0, "a model without attributes has nothing to write again")
        let reason = try await PostgresTestServer.withClient(url) { client in
            var reason = ""
            for try await text in try await client.query("SELECT resync_reason FROM \(unescaped: schema).sources WHERE source = 'items'").decode(String.self) { reason = text }
            return reason
        }
        #expect(reason.contains("carry no attribute values"), "\(reason)")
        #expect(try await itemSink.runOnce().resyncs == 0, "once")
        let results = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
            try await search.search("common", filter: SearchFilter(parsing: #"n >= "2020" AND t = 'swift'"#), facets: ["t"])
        }
        #expect(results.hits.map(\.objectID).sorted() == [.integer(1), .integer(3)])
        #expect(results.facets?.first?.buckets == [SearchFacet.Bucket(value: "SWIFT", count: 2)], "NOCASE: one bucket, the smallest spelling in bytes")
        // An attribute no searched entity declares, a facet likewise: one line each, as locally.
        await #expect(throws: SearchlightError.self) {
            _ = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
                try await search.search("common", filter: SearchFilter(parsing: "year = 1"))
            }
        }
        do {
            _ = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
                try await search.search("common", sources: ["notes"], facets: ["t"])
            }
            Issue.record("a facet of an attribute the searched entities lack is an error")
        } catch let error as SearchlightError {
            #expect(error.code == .invalidArgument && error.message == #"invalid facet: unknown attribute "t" (the searched entities declare no attributes)"#, "\(error.message)")
        }
    }

    /// Ranking hints boost as locally: documents of the same text (their bm25 and `ts_rank` tie)
    /// come in the order their hints give them locally, for popularity values of every storage
    /// class and dates as unix seconds or text that SQLite's `julianday()` reads (or cannot).
    @Test func rankingHintsOrderMatchesAsLocally() async throws {
        let database = try TestDatabase(schema: "CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT, pop REAL, score, updated);")
        let model = try SearchlightModel(entities: [
            .init(name: "Item", table: "items", primaryKey: "id", fields: [.init(column: "body")],
                  attributes: [.init(column: "pop"), .init(column: "score", name: "Größe"), .init(column: "updated")],
                  ranking: [.init(attribute: "pop"), .init(attribute: "größe", weight: 0.5), .init(attribute: "updated", weight: 2, halfLifeDays: 30)]),
        ])
        let store = try database.openStore(model: model)
        let now = Date().timeIntervalSince1970
        let pops: [DatabaseValue] = [.null, 0.databaseValue, 3.databaseValue, 7.5.databaseValue, "12".databaseValue, (-4).databaseValue, "many".databaseValue,
                                     1e300.databaseValue, Data([1]).databaseValue, 1e305.databaseValue, Double.infinity.databaseValue]
        let dates: [DatabaseValue] = [.null, Int64(now - 86_400).databaseValue, (now - 40 * 86_400).databaseValue, "2024-05-01".databaseValue,
                                      "2024-05-01 12:00:00".databaseValue, "not a date".databaseValue, Int64(now + 86_400).databaseValue,
                                      (-1e308).databaseValue, "1970-01-01T00:00:00Z".databaseValue]
        try await store.write(author: "app") { db in
            var id = 0
            for pop in pops {
                for date in dates {
                    id += 1
                    try db.execute(sql: "INSERT INTO items(id, body, pop, score, updated) VALUES (?, 'common words', ?, ?, ?)",
                                   arguments: [id, pop, id % 5 == 0 ? .null : (id % 7).databaseValue, date])
                }
            }
        }
        try Indexer(store: store).indexPendingChanges()
        let url = PostgresTestServer.freshURL("hints")
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        let local = try SearchIndex(store: store).search("common", limit: nil)
        let remote = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in try await search.search("common", limit: nil) }
        #expect(local.hits.count == pops.count * dates.count && remote.hits.count == local.hits.count)
        // The local order as groups of equal scores: PostgreSQL's must visit them in order.
        var group: [ObjectID: Int] = [:]
        var current = 0
        for (index, hit) in local.hits.enumerated() {
            if index > 0, abs(hit.score - local.hits[index - 1].score) > 1e-9 * max(1, abs(hit.score)) { current += 1 }
            group[hit.objectID] = current
        }
        let order = remote.hits.map { group[$0.objectID] ?? -1 }
        #expect(order == order.sorted(), "PostgreSQL's order by the local score's groups: \(order)")
        // Ties (the same boosts) by key, as locally by rowid: the very same order.
        #expect(remote.hits.map(\.objectID) == local.hits.map(\.objectID))
        // An attribute named in another case, beyond ASCII (`GRÖSSE` for `Größe`), as locally.
        let filtered = try SearchIndex(store: store).search("common", limit: nil, filter: SearchFilter(parsing: "GRÖSSE >= 3")).total
        let remoteFiltered = try await PostgresSearch.withSearch(endpoint: PostgresEndpoint(url: url)) { search in
            try await search.search("common", limit: nil, filter: SearchFilter(parsing: "GRÖSSE >= 3")).total
        }
        #expect(remoteFiltered == filtered && filtered > 0, "\(remoteFiltered) \(filtered)")
        #expect(current > 40, "the hints tell most documents apart (\(current + 1) groups)")
    }
}
