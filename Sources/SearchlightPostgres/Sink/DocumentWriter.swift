import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Writes documents of one source into `documents`, inside the caller's transaction.
struct DocumentWriter: Sendable {
    let schema: String
    let source: String
    let logger: Logger

    /// Statements carry at most this many documents.
    static let chunkSize = 500

    /// Inserts or replaces `documents`, in statements of ``chunkSize`` rows:
    ///
    /// ```sql
    /// INSERT INTO "searchlight".documents (source, entity, object_key, object_id, title, fields, body, cjk, vector, token, attributes, boosts)
    /// SELECT $1, e, k, o::jsonb, CASE WHEN ht THEN t END, f::jsonb, b, c, v::tsvector, tk, NULLIF(a, '')::jsonb, NULLIF(h, '')::jsonb
    /// FROM unnest($2::text[], $3::text[], …) AS u(e, k, o, t, ht, f, b, c, v, tk, a, h)
    /// ON CONFLICT (source, entity, object_key) DO UPDATE SET object_id = excluded.object_id, …
    /// ```
    func upsert(_ documents: some Collection<PostgresDocument>, _ connection: PostgresConnection) async throws {
        // One row per key (the last wins): SQLite hands out TEXT keys cut at a NUL, so two keys
        // that differ only after one arrive as one key, which a statement may not upsert twice.
        var seen = Set<String>()
        let unique = Array(documents.reversed().filter { seen.insert($0.entity + "\u{0}" + $0.objectKey).inserted }.reversed())
        var rest = unique[...]
        while !rest.isEmpty {
            let chunk = rest.prefix(Self.chunkSize)
            rest = rest.dropFirst(chunk.count)
            let entities = chunk.map(\.entity), keys = chunk.map(\.objectKey), ids = chunk.map(\.objectJSON)
            let titles = chunk.map { $0.title ?? "" }, hasTitles = chunk.map { $0.title != nil }
            let fields = chunk.map(SinkDocuments.fieldsJSON), bodies = chunk.map(\.body), cjk = chunk.map(\.cjkText)
            let vectors = chunk.map(\.vector), tokens = chunk.map(\.token), attributes = chunk.map { $0.attributesJSON ?? "" }
            let boosts = chunk.map { $0.boostsJSON ?? "" }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).documents (source, entity, object_key, object_id, title, fields, body, cjk, vector, token, attributes, boosts)
                SELECT \(source), e, k, o::jsonb, CASE WHEN ht THEN t END, f::jsonb, b, c, v::tsvector, tk, NULLIF(a, '')::jsonb, NULLIF(h, '')::jsonb
                FROM unnest(\(entities)::text[], \(keys)::text[], \(ids)::text[], \(titles)::text[], \(hasTitles)::bool[],
                            \(fields)::text[], \(bodies)::text[], \(cjk)::text[], \(vectors)::text[], \(tokens)::int8[], \(attributes)::text[], \(boosts)::text[])
                     AS u(e, k, o, t, ht, f, b, c, v, tk, a, h)
                ON CONFLICT (source, entity, object_key) DO UPDATE SET
                    object_id = excluded.object_id, title = excluded.title, fields = excluded.fields, body = excluded.body,
                    cjk = excluded.cjk, vector = excluded.vector, token = excluded.token, attributes = excluded.attributes, boosts = excluded.boosts
                """, logger: logger)
        }
    }

    /// Deletes documents by (entity, object key); returns how many rows were there.
    ///
    /// ```sql
    /// DELETE FROM "searchlight".documents d USING unnest($2::text[], $3::text[]) AS u(e, k)
    /// WHERE d.source = $1 AND d.entity = u.e AND d.object_key = u.k RETURNING 1
    /// ```
    @discardableResult
    func delete(_ keys: some Collection<(entity: String, key: String)>, _ connection: PostgresConnection) async throws -> Int {
        var deleted = 0
        var rest = keys[...]
        while !rest.isEmpty {
            let chunk = rest.prefix(Self.chunkSize)
            rest = rest.dropFirst(chunk.count)
            let entities = chunk.map(\.entity), objectKeys = chunk.map(\.key)
            let rows = try await connection.query("""
                DELETE FROM \(unescaped: schema).documents d USING unnest(\(entities)::text[], \(objectKeys)::text[]) AS u(e, k)
                WHERE d.source = \(source) AND d.entity = u.e AND d.object_key = u.k RETURNING 1
                """, logger: logger)
            for try await _ in rows { deleted += 1 }
        }
        return deleted
    }

    /// Deletes every document of `entities` (capture of those stopped: their tables are gone).
    func deleteEntities(_ entities: [String], _ connection: PostgresConnection) async throws {
        guard !entities.isEmpty else { return }
        try await connection.query("""
            DELETE FROM \(unescaped: schema).documents WHERE source = \(source) AND entity = ANY(\(entities)::text[])
            """, logger: logger)
    }

    /// `COPY documents (…) FROM STDIN` text format: one line of tab-separated, escaped columns.
    static let copyColumns = ["source", "entity", "object_key", "object_id", "title", "fields", "body", "cjk", "vector", "token", "attributes", "boosts"]

    static func copyLine(_ document: PostgresDocument, into buffer: inout ByteBuffer) {
        let columns: [String?] = [document.source, document.entity, document.objectKey, document.objectJSON, document.title,
                                  SinkDocuments.fieldsJSON(document), document.body, document.cjkText, document.vector, String(document.token),
                                  document.attributesJSON, document.boostsJSON]
        for (index, column) in columns.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            guard let column else { buffer.writeString("\\N"); continue }
            buffer.writeString(copyEscaped(column))
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// Text format's escapes: backslash, and the characters that end a column or a line.
    static func copyEscaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
