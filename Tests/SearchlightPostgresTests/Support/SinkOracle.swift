import Foundation
import GRDB
import PostgresNIO
import SearchlightPostgres
import SearchlightTestSupport

/// An oracle for the sink that shares no code with it: what PostgreSQL holds for a source
/// (plain SQL over `documents`), and what it should hold (plain SQL over the notes test
/// tables), both as `entity/key → fields`.
enum SinkOracle {
    typealias Documents = [String: [String: String]]

    /// `Note/i:1 → [title: …, body: …, tags: …]`, `Person/t:uuid → [name: …]`; NULL as "".
    static func expected(_ path: String) throws -> Documents {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var result: Documents = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, coalesce(title, ''), coalesce(body, ''), coalesce(tags, '') FROM notes") {
                result["Note/i:\(row[0] as Int64)"] = ["title": row[1], "body": row[2], "tags": row[3]]
            }
            for row in try Row.fetchAll(db, sql: "SELECT uuid, coalesce(name, '') FROM people") {
                result["Person/t:\(row[0] as String)"] = ["name": row[1]]
            }
            return result
        }
    }

    /// What PostgreSQL holds for `source`.
    static func actual(_ url: String, source: String) async throws -> Documents {
        let schema = try PostgresEndpoint(url: url).schema
        return try await PostgresTestServer.withClient(url) { client in
            var result: Documents = [:]
            let rows = try await client.query("SELECT entity, object_key, fields::text FROM \(unescaped: "\"\(schema)\"").documents WHERE source = \(source)")
            for try await (entity, key, fields) in rows.decode((String, String, String).self) {
                result["\(entity)/\(key)"] = try JSONDecoder().decode([String: String].self, from: Data(fields.utf8))
            }
            return result
        }
    }

    /// One value of a query (first column of the first row).
    static func scalar<T: PostgresDecodable & Sendable>(_ url: String, _ sql: String, _ type: T.Type) async throws -> T? {
        try await PostgresTestServer.withClient(url) { client in
            var value: T?
            for try await item in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(T.self) { value = item }
            return value
        }
    }

    /// The test schema's name, quoted.
    static func schema(_ url: String) throws -> String { "\"" + (try PostgresEndpoint(url: url).schema) + "\"" }
}
