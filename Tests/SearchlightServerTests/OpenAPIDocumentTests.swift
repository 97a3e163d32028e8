import Foundation
import Hummingbird
import HummingbirdTesting
@testable import SearchlightServer
import Testing

/// `Schemas/openapi.json` describes the server as it is: its paths answer, its parameters are
/// the ones the server takes (no more, no fewer), and real answers hold every property it
/// requires.
struct OpenAPIDocumentTests {
    static var document: [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schemas/openapi.json")
        return (try? JSONSerialization.jsonObject(with: Data(contentsOf: url))) as? [String: Any] ?? [:]
    }

    static func operation(_ path: String) throws -> [String: Any] {
        let paths = try #require(document["paths"] as? [String: Any])
        return try #require((paths[path] as? [String: Any])?["get"] as? [String: Any], "\(path) is documented")
    }

    static func parameters(_ path: String) throws -> Set<String> {
        Set((try operation(path)["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
    }

    static func required(_ schema: String) throws -> Set<String> {
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        return Set((schemas[schema] as? [String: Any])?["required"] as? [String] ?? [])
    }

    @Test func theParametersAreTheServers() throws {
        #expect(try Self.parameters("/v1/search") == SearchServer.searchParameters)
        #expect(try Self.parameters("/v1/suggest") == ["q", "limit", "typos"])
        #expect(try Self.parameters("/v1/status").isEmpty)
        let paths = try #require(Self.document["paths"] as? [String: Any])
        #expect(Set(paths.keys) == ["/", "/v1/search", "/v1/suggest", "/v1/status", "/healthz"])
        #expect(try Self.parameters("/") == ["q", "filter", "entity", "source", "cursor"], "the page's own parameters (PageState)")
    }

    @Test func realAnswersHoldWhatTheDocumentRequires() async throws {
        let (app, database) = try await SearchServerTests.application()
        let required = (page: try Self.required("SearchPage"), hit: try Self.required("Hit"), suggestions: try Self.required("Suggestions"),
                        error: try Self.required("Error"))
        #expect(required.page.contains("cursor") && required.error == ["code", "message"])
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/search?q=kernel&limit=2", method: .get) { response in
                let page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                #expect(required.page.subtracting(page.keys).isEmpty, "missing \(required.page.subtracting(page.keys))")
                let hit = try #require((page["hits"] as? [[String: Any]])?.first)
                #expect(required.hit.subtracting(hit.keys).isEmpty, "missing \(required.hit.subtracting(hit.keys))")
            }
            try await client.execute(uri: "/v1/suggest?q=ker", method: .get) { response in
                let body = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                #expect(required.suggestions.subtracting(body.keys).isEmpty)
            }
            try await client.execute(uri: "/v1/search?q=kernel&limit=0", method: .get) { response in
                let body = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                #expect(Set(body.keys) == required.error)
            }
            for path in ["/v1/status", "/healthz"] {
                try await client.execute(uri: path, method: .get) { response in #expect(response.status == .ok, "\(path)") }
            }
        }
        _ = database
    }
}
