import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Searchlight
import SearchlightHistory
import SearchlightPostgres
import SearchlightPostgresServer
@testable import SearchlightServer
import SearchlightTestSupport
import Testing

/// The HTTP API over PostgreSQL: the body of `/v1/search` is `searchlight-postgres search`'s
/// JSON page for the same search, sources are a parameter, and a tenant token's `sources`
/// claim keeps a tenant within its sources whatever it asks.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresSearchServiceTests {
    static let key = "0123456789abcdef-0123456789abcdef-test-key"

    @Test func searchesSourcesAndKeepsATenantWithinItsOwn() async throws {
        let url = PostgresTestServer.freshURL("serve")
        var databases: [TestDatabase] = []
        for source in ["acme", "globex"] {
            let database = try TestDatabase()
            let store = try database.openStore()
            try await store.write(author: "app") { db in
                for index in 1...12 {
                    try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [index, "Kernel \(source) \(index)", "the kernel panics"])
                }
            }
            try Indexer(store: store).indexPendingChanges()
            var configuration = PostgresSink.Configuration()
            configuration.source = source
            _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
            databases.append(database)
        }
        let endpoint = try PostgresEndpoint(url: url)
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Self.key), digestAlgorithm: .sha256)
        let acme = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), sources: ["acme"]))
        try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            var configuration = SearchServer.Configuration()
            configuration.apiKey = Self.key
            let server = SearchServer(service: PostgresSearchService(search: search, endpoint: endpoint), configuration: configuration)
            let app = Application(router: try await server.router())
            let direct = try await search.search("kernel", limit: 5)
            let expectedJSON = try JSONEncoder().encode(PostgresSearchPage(direct))
            try await app.test(.router) { client in
                let operatorHeaders: HTTPFields = [.authorization: "Bearer \(Self.key)"]
                try await client.execute(uri: "/v1/search?q=kernel&limit=5", method: .get, headers: operatorHeaders) { response in
                    var page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    #expect(page["tookMs"] is Double && page["cursor"] is String)
                    page["tookMs"] = nil
                    page["cursor"] = nil
                    let expected = try #require(try JSONSerialization.jsonObject(with: expectedJSON) as? [String: Any])
                    // (Compared as canonical JSON: Foundation's NSNumber equality differs between booleans' origins.)
                    func canonical(_ object: [String: Any]) throws -> String {
                        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
                    }
                    #expect(try canonical(page) == canonical(expected), "the CLI's page")
                }
                try await client.execute(uri: "/v1/search?q=kernel&source=globex", method: .get, headers: operatorHeaders) { response in
                    let page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    #expect(page["total"] as? Int == 12)
                }
                let tenant: HTTPFields = [.authorization: "Bearer \(acme)"]
                try await client.execute(uri: "/v1/search?q=kernel&limit=50", method: .get, headers: tenant) { response in
                    let page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    let hits = try #require(page["hits"] as? [[String: Any]])
                    #expect(page["total"] as? Int == 12 && hits.allSatisfy { $0["source"] as? String == "acme" }, "\(page)")
                }
                try await client.execute(uri: "/v1/search?q=kernel&source=globex", method: .get, headers: tenant) { response in
                    #expect(response.status == .forbidden)
                }
                try await client.execute(uri: "/v1/status", method: .get, headers: operatorHeaders) { response in
                    let status = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    #expect((status["sources"] as? [[String: Any]])?.count == 2)
                }
                // The search page over PostgreSQL, without JavaScript: sources are a facet, each
                // hit says its source, and a source's link keeps to it.
                try await client.execute(uri: "/?q=kernel", method: .get, headers: operatorHeaders) { response in
                    let html = String(buffer: response.body)
                    #expect(html.contains("24 results for “<bdi>kernel</bdi>”"), "\(html.prefix(3_000))")
                    #expect(html.contains("<h2>source</h2>") && html.contains(#"<a href="/?q=kernel&amp;source=globex"><bdi>globex</bdi>"#))
                    #expect(html.contains("<p class=\"meta\"><bdi>acme · Note · "))
                }
                try await client.execute(uri: "/?q=kernel&source=globex", method: .get, headers: tenant) { response in
                    #expect(response.status == .forbidden, "a tenant's page keeps to its sources too")
                }
                try await client.execute(uri: "/?q=kernel", method: .get, headers: tenant) { response in
                    let html = String(buffer: response.body)
                    #expect(html.contains("12 results") && !html.contains("globex ·"))
                }
            }
        }
        _ = databases
    }
}
