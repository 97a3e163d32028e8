import Foundation
import Searchlight
import SearchlightHistory
import SearchlightPostgres

/// Scenario 11 on PostgreSQL (with `--postgres`): the one-word typo recall of both engines on the
/// same rows and the same queries. The corpus is indexed locally and loaded into a schema of its
/// own through the sink's snapshot path; the queries are scenario 11's one-word queries (a
/// document's word of 5 letters or more that alone finds it in the local top 10, with one random
/// edit), kept when the word as written also finds the document in PostgreSQL's top 10, and set
/// aside when the edit spells a word either engine holds (nothing is corrected then). For each,
/// whether the typo'd word finds the document in the top 10 of each engine.
extension TypoSearch {
    static func postgresOneWordRecall(_ documents: [Document], url: String, count: Int, seed: UInt64) async throws -> [Figure] {
        let directory = try scratchDirectory("typos-postgres")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, _) = try Indexing.trackedDatabase(documents, in: directory)
        try Indexer(store: store).indexPendingChanges()
        let index = SearchIndex(store: store)
        let queries = try queries(documents, count: count, seed: seed, maximumOthers: 0, findsExactly: findsExactly(index))
        let schema = "bench_typos_\(ProcessInfo.processInfo.processIdentifier)"
        let schemaURL = url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
        var configuration = PostgresSink.Configuration()
        configuration.source = "typos"
        configuration.logger.logLevel = .warning
        let tally: Tally
        do {
            _ = try await PostgresSink(store: store, endpoint: try PostgresEndpoint(url: schemaURL), configuration: configuration).runOnce()
            tally = try await evaluate(queries, index: index, endpoint: try PostgresEndpoint(url: schemaURL))
        } catch {
            try? await PostgresScenario.dropSchemas(url, [schema])
            throw error
        }
        try await PostgresScenario.dropSchemas(url, [schema])
        FileHandle.standardError.write(Data("scenario 11 on PostgreSQL: seed \(seed), \(queries.count) queries, \(tally.realWord) spell a word of an index, \(tally.notExactOnPostgres) not in PostgreSQL's top 10 as written, \(tally.evaluated) evaluated\n".utf8))
        let local = 100 * Double(tally.local) / Double(max(tally.evaluated, 1))
        let remote = 100 * Double(tally.postgres) / Double(max(tally.evaluated, 1))
        return [Figure("11 typo tolerance", "one-word queries on PostgreSQL: document in the top 10 (\(tally.evaluated) of \(count) typo'd words; the local index on the same queries beside it)",
                       unit: "%", ours: remote, baseline: local, baselineName: "local index", target: ">= 95%", met: remote >= 95)]
    }

    struct Tally: Sendable { var evaluated = 0, local = 0, postgres = 0, realWord = 0, notExactOnPostgres = 0 }

    static func evaluate(_ queries: [Query], index: SearchIndex, endpoint: PostgresEndpoint) async throws -> Tally {
        let debug = ProcessInfo.processInfo.environment["SEARCHLIGHT_TYPO_DEBUG"] != nil
        let cases = queries
        return try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            var tally = Tally()
            for query in cases {
                let document = ObjectID.integer(query.document)
                let localReal = try index.search(query.typo, limit: 1, typos: .off).total > 0
                let remoteReal = try await search.search(query.typo, limit: 1, typos: .off).total > 0
                if localReal || remoteReal { tally.realWord += 1; continue }
                guard try await search.search(query.clean, limit: 10, typos: .off).hits.contains(where: { $0.objectID == document }) else {
                    tally.notExactOnPostgres += 1
                    continue
                }
                tally.evaluated += 1
                if try index.search(query.typo, limit: 10).hits.contains(where: { $0.objectID == document }) { tally.local += 1 }
                let remote = try await search.search(query.typo, limit: 10)
                if remote.hits.contains(where: { $0.objectID == document }) {
                    tally.postgres += 1
                } else if debug {
                    let position = try await search.search(query.typo, limit: 1_000).hits.firstIndex { $0.objectID == document }
                    FileHandle.standardError.write(Data("PostgreSQL one-word miss: \(query.typo) (\(query.clean)) at \(position.map { String($0 + 1) } ?? "-") of \(remote.total): top \(remote.hits.prefix(5).map { "\($0.title ?? "") [\($0.typos)]" }), corrections \(remote.corrections.map { "\($0.word)→\($0.replacements.map(\.text).prefix(6))" })\n".utf8))
                }
            }
            return tally
        }
    }
}
