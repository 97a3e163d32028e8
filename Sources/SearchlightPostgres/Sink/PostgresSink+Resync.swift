import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO
import Searchlight
import SearchlightHistory

/// Resynchronization: the source's documents replaced by a snapshot of its rows.
extension PostgresSink {
    /// What the snapshot's read transaction sends: first its head, then chunks of `COPY` lines.
    enum SnapshotPart: Sendable {
        case head(token: HistoryToken, timestamp: Double?, modelJSON: String, attributesJSON: String)
        case lines(ByteBuffer, count: Int)
    }

    /// Replaces the source's documents with a snapshot, in one PostgreSQL transaction, if the
    /// row still is as `expected` (nil: no row), then saves the snapshot's token as the local
    /// checkpoint.
    ///
    /// ```sql
    /// BEGIN;
    /// INSERT INTO "searchlight".sources(source, token, model) VALUES ($1, -1, '{}') ON CONFLICT (source) DO NOTHING;
    /// SELECT … FROM "searchlight".sources WHERE source = $1 FOR UPDATE;  -- still as the lineage check saw it?
    /// DELETE FROM "searchlight".documents WHERE source = $1;
    /// SET LOCAL search_path TO "searchlight";
    /// COPY "documents"(source, entity, …) FROM STDIN WITH (FORMAT text);  -- streamed from one SQLite read transaction
    /// UPDATE "searchlight".sources SET token = $H, previous_token = NULL, batch_digest = NULL, model = $m, … WHERE source = $1;
    /// COMMIT;
    /// ```
    func resync(_ session: PostgresSession, expected: SourceRow?, reason: String) async throws -> Step {
        do {
            return try await resync(session, expected: expected, reason: reason, deduplicating: false)
        } catch let error as PSQLError where PostgresErrors.sqlState(error) == "23505" {
            // Two rows with one key: TEXT keys that differ only after a NUL, which SQLite hands
            // out cut at the NUL. Copy into a temporary table and keep one row per key.
            logger.warning("source \(source): the snapshot holds two rows with one key (TEXT keys that differ only after a NUL character); keeping one of each")
            return try await resync(session, expected: expected, reason: reason, deduplicating: true)
        }
    }

    /// ``resync(_:expected:reason:)``; `deduplicating` copies into a temporary table first and
    /// inserts one row per key from it.
    private func resync(_ session: PostgresSession, expected: SourceRow?, reason: String, deduplicating: Bool) async throws -> Step {
        let schema = session.schema, source = self.source, logger = self.logger, path = self.store.databaseWriter.path
        let store = self.store, builders = configuration.documentBuilders
        let result = try await session.transaction { connection -> (HistoryToken, Int)? in
            try await connection.query("""
                INSERT INTO \(unescaped: schema).sources(source, token, model) VALUES (\(source), -1, '{}') ON CONFLICT (source) DO NOTHING
                """, logger: logger)
            guard let locked = try await SourceRow.read(source, schema: schema, lock: true, connection, logger: logger) else { return nil }
            if let expected {
                guard locked.holds(expected.token, expected.tokenTimestamp) else { return nil }
            } else if locked.token != -1 {
                return nil // another sink created it first
            }
            try await connection.query("DELETE FROM \(unescaped: schema).documents WHERE source = \(source)", logger: logger)
            try await connection.query("SET LOCAL search_path TO \(unescaped: schema)", logger: logger)
            let target = deduplicating ? "searchlight_snapshot" : "documents"
            if deduplicating {
                try await connection.query("CREATE TEMPORARY TABLE searchlight_snapshot (LIKE documents) ON COMMIT DROP", logger: logger)
            }

            let channel = SnapshotChannel<SnapshotPart>(capacity: 2)
            let producer = Task {
                try await DedicatedThread.run(name: "searchlight.postgres.snapshot") { _ throws(any Error) in
                    defer { channel.finish() }
                    try Self.readSnapshot(store: store, source: source, builders: builders, into: channel)
                }
            }
            var count = 0
            var head: (token: HistoryToken, timestamp: Double?, modelJSON: String, attributesJSON: String)?
            do {
                try await connection.copyFrom(table: target, columns: DocumentWriter.copyColumns, format: .text(.init()), logger: logger) { writer in
                    for await part in channel.elements {
                        switch part {
                        case let .head(token, timestamp, modelJSON, attributesJSON):
                            head = (token, timestamp, modelJSON, attributesJSON)
                        case let .lines(buffer, lines):
                            try await writer.write(buffer)
                            session.progress.touch()
                            count += lines
                        }
                        channel.consumed()
                    }
                }
            } catch {
                channel.cancel()
                _ = try? await producer.value
                throw error
            }
            try await producer.value // the read's own error, if it failed
            if deduplicating {
                let rows = try await connection.query("""
                    INSERT INTO documents SELECT DISTINCT ON (entity, object_key) * FROM searchlight_snapshot
                    ORDER BY entity, object_key RETURNING 1
                    """, logger: logger)
                count = 0
                for try await _ in rows { count += 1 }
            }
            guard let head else { throw SearchlightError(.databaseError, "the snapshot of \(path) ended before its head was read") }
            try await connection.query("""
                UPDATE \(unescaped: schema).sources SET token = \(head.token.rawValue), token_timestamp = \(head.timestamp),
                    previous_token = NULL, previous_timestamp = NULL, batch_digest = NULL,
                    head_token = \(head.token.rawValue), head_timestamp = \(head.timestamp), applied_at = now(),
                    resyncs = resyncs + \(expected == nil ? 0 : 1), resync_reason = \(reason), resynced_at = now(),
                    database_path = \(path), model = \(head.modelJSON)::jsonb, attributes = \(head.attributesJSON)::jsonb
                WHERE source = \(source)
                """, logger: logger)
            return (head.token, count)
        }
        guard let (token, count) = result else {
            logger.info("source \(source): another sink changed its checkpoint first; checking again")
            return Step()
        }
        recordWritten(count)
        try await saveLocalCheckpoint(token)
        logger.notice("source \(source): loaded a snapshot of \(count) documents at token \(token) (\(reason))")
        return Step(upserted: count, resyncs: 1, token: token)
    }

    /// The snapshot, in one read transaction: the head and the model, then every present
    /// document of every entity that is captured, as `COPY` lines in chunks of about 256 KB.
    static func readSnapshot(store: HistoryStore, source: String, builders: [String: DocumentBuilder],
                             into channel: SnapshotChannel<SnapshotPart>) throws {
        try store.databaseWriter.read { db in
            let model = try store.installedModel(in: db)
            let head = try store.currentToken(in: db)
            let reader = SinkReader(store: store, source: source, author: "", builders: builders)
            let documents = DocumentReader(model: model, builders: builders)
            let comparisons = try SinkDocuments.comparisons(model, reader: documents, db)
            try channel.send(.head(token: head, timestamp: try reader.timestamp(of: head, db),
                                   modelJSON: String(decoding: model.jsonData(), as: UTF8.self),
                                   attributesJSON: SinkDocuments.comparisonsJSON(comparisons)))
            let suspended = Set(try store.healCapture(in: db).notCapturing.map(\.name))
            let analyzer = SearchTextAnalyzer(model: model)
            var buffer = ByteBuffer()
            var lines = 0
            for entity in model.entities where !suspended.contains(entity.name) {
                try documents.forEachDocument(entity: entity.name, in: db) { id, document in
                    let row = try SinkDocuments.make(source: source, entity: entity, id: id, token: head, document: document,
                                                 comparisons: comparisons[entity.name] ?? [:], analyzer: analyzer,
                                                 reader: documents, db)
                    DocumentWriter.copyLine(row, into: &buffer)
                    lines += 1
                    if buffer.readableBytes >= 256 * 1024 {
                        try channel.send(.lines(buffer, count: lines))
                        buffer = ByteBuffer()
                        lines = 0
                    }
                }
            }
            if lines > 0 { try channel.send(.lines(buffer, count: lines)) }
        }
    }
}
