import Foundation
import GRDB
import Logging
import PostgresNIO
import Searchlight
import SearchlightHistory

/// What verify found for one source.
public struct PostgresVerification: Hashable, Sendable, Codable {
    public struct EntityReport: Hashable, Sendable, Codable {
        public var entity: String
        /// Present documents in the source, and in PostgreSQL before any repair.
        public var sourceDocuments: Int
        public var postgresDocuments: Int
        /// Counts, and up to 10 object keys of each kind.
        public var missing: Int, stale: Int, extra: Int
        public var missingExamples: [String] = [], staleExamples: [String] = [], extraExamples: [String] = []
        public var differences: Int { missing + stale + extra }
    }

    public var source: String
    /// The token both sides were compared at (PostgreSQL's checkpoint, equal to the source's head then).
    public var token: HistoryToken
    public var entities: [EntityReport]
    /// Words of the source's vocabulary whose count differs from its documents' (missing,
    /// extra or miscounted), before any repair.
    public var vocabularyDifferences = 0
    /// Whether the differences were fixed (`repair`).
    public var repaired: Bool
    public var differences: Int { entities.reduce(0) { $0 + $1.differences } + vocabularyDifferences }
    /// No difference left: none found, or all repaired.
    public var isConsistent: Bool { differences == 0 || repaired }
}

/// Compares the documents PostgreSQL holds for a source with the source's rows, and repairs
/// them on request.
///
/// **A consistent point.** It first catches up as the sink does (``PostgresSink/runOnce()``),
/// then, in one PostgreSQL transaction, locks the source's row (`SELECT … FOR UPDATE`: no sink
/// can apply a batch meanwhile) and opens one SQLite read transaction; the two are compared only
/// if PostgreSQL's token equals that snapshot's head. If the app committed in between, it
/// catches up and tries again (three times); if it never settles, verify throws, saying
/// PostgreSQL is behind and by how many tokens. Documents are compared as PostgreSQL would
/// store them now (``PostgresDocument``: fields, title, body, CJK text, and the `tsvector`,
/// compared by PostgreSQL itself).
///
/// - missing: a present object with no document in PostgreSQL;
/// - stale: a document that differs from what the sink would write now;
/// - extra: a document whose object is gone (or excluded by a builder).
///
/// ```swift
/// let verifier = try PostgresVerifier(store: store, endpoint: endpoint)
/// let report = try await verifier.verify(repair: false)
/// report.isConsistent
/// ```
public struct PostgresVerifier: Sendable {
    public let sink: PostgresSink
    private var logger: Logger { sink.logger }

    /// `configuration` as for the sink (source name, builders, logger).
    public init(store: HistoryStore, endpoint: PostgresEndpoint, configuration: PostgresSink.Configuration = .init()) throws(SearchlightError) {
        sink = try PostgresSink(store: store, endpoint: endpoint, configuration: configuration)
    }

    /// Compares (and with `repair`, fixes in the same transaction, under the row's lock).
    public func verify(repair: Bool) async throws(SearchlightError) -> PostgresVerification {
        var behind: Int64 = 0
        for _ in 0..<3 {
            _ = try await sink.runOnce()
            let sink = sink, logger = logger
            let outcome = try await PostgresSession.with(sink.endpoint, logger: logger, migrate: false) { session in
                try await Self.compare(sink: sink, session: session, repair: repair, logger: logger)
            }
            switch outcome {
            case let .compared(report): return report
            case let .behind(tokens): behind = tokens
            }
        }
        throw SearchlightError(.postgresError, "source \(sink.source): PostgreSQL is behind the database by \(behind) tokens and writes keep coming: run the sink, then verify again")
    }

    enum Outcome: Sendable {
        case compared(PostgresVerification)
        case behind(Int64)
    }

    /// What the snapshot's read transaction sends.
    enum Part: Sendable {
        case head(HistoryToken, modelJSON: String)
        case entity(String)
        case documents([PostgresDocument])
    }

    private static func compare(sink: PostgresSink, session: PostgresSession, repair: Bool, logger: Logger) async throws -> Outcome {
        let schema = session.schema, source = sink.source, store = sink.store
        let builders = sink.configuration.documentBuilders
        let writer = DocumentWriter(schema: schema, source: source, logger: logger)
        return try await session.transaction { connection -> Outcome in
            guard let row = try await SourceRow.read(source, schema: schema, lock: true, connection, logger: logger) else {
                throw SearchlightError(.postgresError, "PostgreSQL holds no source \"\(source)\": run the sink first")
            }
            var counts: [String: Int] = [:]
            for try await (entity, count) in try await connection.query("""
                SELECT entity, count(*) FROM \(unescaped: schema).documents WHERE source = \(source) GROUP BY entity
                """, logger: logger).decode((String, Int64).self) { counts[entity] = Int(count) }

            let channel = SnapshotChannel<Part>(capacity: 2)
            let producer = Task {
                try await DedicatedThread.run(name: "searchlight.postgres.verify") { _ throws(any Error) in
                    defer { channel.finish() }
                    try store.databaseWriter.read { db in
                        let model = try store.installedModel(in: db)
                        let head = try store.currentToken(in: db)
                        try channel.send(.head(head, modelJSON: String(decoding: model.jsonData(), as: UTF8.self)))
                        guard head.rawValue == row.token else { return }
                        let suspended = Set(try store.healCapture(in: db).notCapturing.map(\.name))
                        let reader = DocumentReader(model: model, builders: builders)
                        let analyzer = SearchTextAnalyzer(model: model)
                        let comparisons = try SinkDocuments.comparisons(model, reader: reader, db)
                        for entity in model.entities {
                            try channel.send(.entity(entity.name))
                            guard !suspended.contains(entity.name) else { continue }
                            var chunk: [PostgresDocument] = []
                            try reader.forEachDocument(entity: entity.name, in: db) { id, document in
                                chunk.append(try SinkDocuments.make(source: source, entity: entity, id: id, token: head, document: document,
                                                                comparisons: comparisons[entity.name] ?? [:], analyzer: analyzer,
                                                                reader: reader, db))
                                if chunk.count == DocumentWriter.chunkSize { try channel.send(.documents(chunk)); chunk = [] }
                            }
                            if !chunk.isEmpty { try channel.send(.documents(chunk)) }
                        }
                    }
                }
            }
            var reports: [PostgresVerification.EntityReport] = []
            var head: HistoryToken?
            do {
                for await part in channel.elements {
                    defer { channel.consumed() }
                    switch part {
                    case let .head(token, _):
                        head = token
                        if token.rawValue != row.token { channel.cancel() }
                    case let .entity(name):
                        reports.append(.init(entity: name, sourceDocuments: 0, postgresDocuments: counts[name] ?? 0, missing: 0, stale: 0, extra: 0))
                    case let .documents(documents):
                        let differing = try await Self.differing(documents, schema: schema, source: source, connection, logger: logger)
                        reports[reports.count - 1].sourceDocuments += documents.count
                        for document in documents where differing[document.objectKey] != nil {
                            if differing[document.objectKey] == true {
                                reports[reports.count - 1].missing += 1
                                if reports[reports.count - 1].missingExamples.count < 10 { reports[reports.count - 1].missingExamples.append(document.objectKey) }
                            } else {
                                reports[reports.count - 1].stale += 1
                                if reports[reports.count - 1].staleExamples.count < 10 { reports[reports.count - 1].staleExamples.append(document.objectKey) }
                            }
                        }
                        if repair { try await writer.upsert(documents.filter { differing[$0.objectKey] != nil }, connection) }
                    }
                }
            } catch {
                channel.cancel()
                _ = try? await producer.value
                throw error
            }
            do { try await producer.value } catch is SnapshotChannel<Part>.Cancelled {}
            guard let head, head.rawValue == row.token else {
                return .behind(max(0, (head?.rawValue ?? 0) - row.token))
            }
            // Extra: documents whose objects are not present (the present ones were all matched above).
            for index in reports.indices {
                let entity = reports[index].entity
                let matched = reports[index].sourceDocuments - reports[index].missing
                guard reports[index].postgresDocuments > matched else { continue }
                let extras = try await Self.extras(entity: entity, sink: sink, schema: schema, connection, logger: logger)
                reports[index].extra = extras.count
                reports[index].extraExamples = Array(extras.prefix(10))
                if repair { try await writer.delete(extras.map { (entity, $0) }, connection) }
            }
            for (entity, count) in counts where !reports.contains(where: { $0.entity == entity }) {
                // An entity the model no longer declares.
                var report = PostgresVerification.EntityReport(entity: entity, sourceDocuments: 0, postgresDocuments: count, missing: 0, stale: 0, extra: count)
                report.extraExamples = ["(all \(count) documents of an entity the model does not declare)"]
                reports.append(report)
                if repair { try await writer.deleteEntities([entity], connection) }
            }
            var report = PostgresVerification(source: source, token: head, entities: reports, repaired: repair)
            report.vocabularyDifferences = try await Self.vocabularyDifferences(schema: schema, source: source, repair: repair, connection, logger: logger)
            if repair && report.differences > 0 {
                logger.notice("source \(source): repaired \(report.differences) differences in PostgreSQL (\(report.vocabularyDifferences) of them in the vocabulary)")
            }
            return .compared(report)
        }
    }

    /// The words of the source's vocabulary (``PostgresSchema/vocabularyStatements``) whose
    /// count differs from a count of its documents (after their repair, if any), made by
    /// PostgreSQL; with `repair`, the source's vocabulary is counted again:
    ///
    /// ```sql
    /// SELECT count(*) FROM (SELECT w, count(*) AS n FROM documents d, vocabulary_words(d.vector) w WHERE d.source = $1 GROUP BY w) x
    /// FULL JOIN (SELECT word, documents FROM vocabulary WHERE source = $1) v ON v.word = x.w
    /// WHERE x.n IS DISTINCT FROM v.documents;
    /// ```
    static func vocabularyDifferences(schema: String, source: String, repair: Bool, _ connection: PostgresConnection, logger: Logger) async throws -> Int {
        var differences = 0
        for try await count in try await connection.query("""
            SELECT count(*) FROM (SELECT w, count(*) AS n FROM \(unescaped: schema).documents d, \(unescaped: schema).vocabulary_words(d.vector) w
                                  WHERE d.source = \(source) GROUP BY w) x
            FULL JOIN (SELECT word, documents FROM \(unescaped: schema).vocabulary WHERE source = \(source)) v ON v.word = x.w
            WHERE x.n IS DISTINCT FROM v.documents
            """, logger: logger).decode(Int64.self) { differences = Int(count) }
        if repair, differences > 0 {
            // Nobody writes documents while the count is made and put in place: a DBA's delete
            // waiting on a vocabulary row the repair replaced would otherwise subtract from the
            // new count what it already lacks (an outsider's finding). The sinks of other
            // sources wait for as long as one source's count takes.
            try await connection.query("LOCK TABLE \(unescaped: schema).documents IN SHARE MODE", logger: logger)
            try await connection.query("DELETE FROM \(unescaped: schema).vocabulary WHERE source = \(source)", logger: logger)
            try await connection.query("""
                INSERT INTO \(unescaped: schema).vocabulary (word, source, documents)
                SELECT w, \(source), count(*) FROM \(unescaped: schema).documents d, \(unescaped: schema).vocabulary_words(d.vector) w
                WHERE d.source = \(source) GROUP BY w
                """, logger: logger)
        }
        return differences
    }

    /// The documents among `documents` that PostgreSQL lacks (true) or holds otherwise (false),
    /// compared by PostgreSQL (`tsvector` and `jsonb` equality):
    ///
    /// ```sql
    /// SELECT u.k, d.object_key IS NULL FROM unnest($3::text[], …) AS u(k, o, t, ht, f, b, c, v)
    /// LEFT JOIN "searchlight".documents d ON d.source = $1 AND d.entity = $2 AND d.object_key = u.k
    /// WHERE d.object_key IS NULL OR d.object_id <> u.o::jsonb OR d.title IS DISTINCT FROM … OR d.fields <> u.f::jsonb
    ///    OR d.body <> u.b OR d.cjk <> u.c OR d.vector <> u.v::tsvector
    /// ```
    private static func differing(_ documents: [PostgresDocument], schema: String, source: String,
                                  _ connection: PostgresConnection, logger: Logger) async throws -> [String: Bool] {
        guard let entity = documents.first?.entity else { return [:] }
        let keys = documents.map(\.objectKey), ids = documents.map(\.objectJSON)
        let titles = documents.map { $0.title ?? "" }, hasTitles = documents.map { $0.title != nil }
        let fields = documents.map(SinkDocuments.fieldsJSON), bodies = documents.map(\.body), cjk = documents.map(\.cjkText)
        let vectors = documents.map(\.vector), attributes = documents.map { $0.attributesJSON ?? "" }
        let boosts = documents.map { $0.boostsJSON ?? "" }
        var result: [String: Bool] = [:]
        let rows = try await connection.query("""
            SELECT u.k, d.object_key IS NULL
            FROM unnest(\(keys)::text[], \(ids)::text[], \(titles)::text[], \(hasTitles)::bool[], \(fields)::text[],
                        \(bodies)::text[], \(cjk)::text[], \(vectors)::text[], \(attributes)::text[], \(boosts)::text[]) AS u(k, o, t, ht, f, b, c, v, a, h)
            LEFT JOIN \(unescaped: schema).documents d ON d.source = \(source) AND d.entity = \(entity) AND d.object_key = u.k
            WHERE d.object_key IS NULL OR d.object_id <> u.o::jsonb OR d.title IS DISTINCT FROM (CASE WHEN u.ht THEN u.t END)
               OR d.fields <> u.f::jsonb OR d.body <> u.b OR d.cjk <> u.c OR d.vector <> u.v::tsvector
               OR d.attributes IS DISTINCT FROM NULLIF(u.a, '')::jsonb OR d.boosts IS DISTINCT FROM NULLIF(u.h, '')::jsonb
            """, logger: logger)
        for try await (key, missing) in rows.decode((String, Bool).self) { result[key] = missing }
        return result
    }

    /// The object keys of `entity`'s documents whose objects are not present now (read in
    /// pages of 500 keys, each checked in a read transaction of the source). The row lock
    /// keeps PostgreSQL at the compared token; an object inserted in the source since then is
    /// not counted (the sink will write it), and one present at that token was matched already.
    private static func extras(entity: String, sink: PostgresSink, schema: String, _ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        let reader = DocumentReader(model: sink.store.model, builders: sink.configuration.documentBuilders)
        var extras: [String] = []
        var after = ""
        while true {
            var page: [(String, ObjectID)] = []
            for try await (key, json) in try await connection.query("""
                SELECT object_key, object_id::text FROM \(unescaped: schema).documents
                WHERE source = \(sink.source) AND entity = \(entity) AND object_key > \(after) ORDER BY object_key LIMIT 500
                """, logger: logger).decode((String, String).self) {
                page.append((key, try JSONDecoder().decode(ObjectID.self, from: Data(json.utf8))))
            }
            guard let last = page.last else { return extras }
            after = last.0
            let ids = page.map(\.1)
            let present = try await sink.store.databaseWriter.read { db in
                try reader.documents(entity: entity, ids: ids, in: db).filter { $0.1 != nil }.map { PostgresDocument.key($0.0) }
            }
            let presentKeys = Set(present)
            extras += page.map(\.0).filter { !presentKeys.contains($0) }
        }
    }
}
