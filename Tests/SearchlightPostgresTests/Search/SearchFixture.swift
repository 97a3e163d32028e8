import Foundation
import PostgresNIO
import Searchlight
import SearchlightHistory
@testable import SearchlightPostgres

/// A schema of the test server filled with documents, without a sink: the tables as the
/// schema's statements create them, each source's model, and documents built by
/// ``PostgresDocument`` (inserted in batches).
struct SearchFixture {
    let url: String
    let endpoint: PostgresEndpoint

    init(_ label: String) throws {
        url = PostgresTestServer.freshURL(label)
        endpoint = try PostgresEndpoint(url: url)
    }

    var schema: String { endpoint.schema }
    var table: String { PostgresSchema.quoted(schema) + ".documents" }

    func create(_ client: PostgresClient) async throws {
        for statement in PostgresSchema.statements(from: 0, schema: schema) {
            try await client.query(PostgresQuery(unsafeSQL: statement))
        }
    }

    func addSource(_ source: String, model: SearchlightModel, _ client: PostgresClient) async throws {
        var binds = PostgresBindings()
        binds.append(source)
        binds.append(String(decoding: model.jsonData(), as: UTF8.self))
        try await client.query(PostgresQuery(unsafeSQL: "INSERT INTO \(PostgresSchema.quoted(schema)).sources (source, token, model) VALUES ($1, 0, $2::jsonb)", binds: binds))
    }

    /// Inserts documents, 500 a statement.
    func insert(_ documents: [PostgresDocument], _ client: PostgresClient) async throws {
        var start = 0
        while start < documents.count {
            let batch = documents[start..<min(start + 500, documents.count)]
            start += 500
            var binds = PostgresBindings()
            binds.append(batch.map(\.source))
            binds.append(batch.map(\.entity))
            binds.append(batch.map(\.objectKey))
            binds.append(batch.map(\.objectJSON))
            binds.append(batch.map { $0.title ?? "\u{1}" })
            binds.append(batch.map { String(decoding: try! JSONEncoder().encode($0.fields), as: UTF8.self) })
            binds.append(batch.map(\.body))
            binds.append(batch.map(\.cjkText))
            binds.append(batch.map(\.vector))
            binds.append(batch.map(\.token))
            try await client.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(table) (source, entity, object_key, object_id, title, fields, body, cjk, vector, token)
                SELECT s, e, k, o::jsonb, NULLIF(t, E'\\x01'), f::jsonb, b, c, v::tsvector, n
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int8[])
                  AS x(s, e, k, o, t, f, b, c, v, n)
                """, binds: binds))
        }
    }

    /// Runs `body` with a search over this fixture's schema.
    func search<T: Sendable>(options: PostgresSearch.Options = .init(), _ body: @Sendable (PostgresSearch) async throws -> T) async throws -> T {
        try await PostgresSearch.withSearch(endpoint: endpoint, options: options, body)
    }
}
