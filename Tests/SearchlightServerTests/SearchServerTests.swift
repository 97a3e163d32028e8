import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Searchlight
import SearchlightHistory
@testable import SearchlightServer
import SearchlightTestSupport
import Testing

/// The HTTP API against a real index: each parameter, each error (JSON, one line, 4xx for the
/// caller's mistakes), paging by cursor, the API key and tenant tokens (expired, tampered,
/// signed with another key, another tenant's filter sent as a parameter).
struct SearchServerTests {
    static let key = "0123456789abcdef-0123456789abcdef-test-key"

    /// 30 notes about kernels, tagged by tenant (`acme` the even ones, `globex` the odd).
    static func service() async throws -> (LocalSearchService, TestDatabase) {
        let database = try TestDatabase()
        let model = try SearchlightModel(entities: [
            .init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "title", role: .title), .init(column: "body")],
                  attributes: [.init(column: "tags")]),
        ])
        let store = try database.openStore(model: model)
        try await store.write(author: "app") { db in
            for index in 1...30 {
                try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, ?)",
                               arguments: [index, "Kernel note \(index)", "the kernel panics <script>alert(1)</script> \(index)", index % 2 == 0 ? "acme" : "globex"])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        return (LocalSearchService(store: store), database)
    }

    static func application(key: String? = nil, limits: SearchServer.Limits = .init()) async throws -> (some ApplicationProtocol, TestDatabase) {
        let (service, database) = try await service()
        var configuration = SearchServer.Configuration()
        configuration.apiKey = key
        configuration.limits = limits
        let server = SearchServer(service: service, configuration: configuration)
        return (Application(router: try await server.router()), database)
    }

    static func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    @Test func searchAnswersTheCLIJSONWithTookMsAndPagesByCursor() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        try await app.test(.router) { client in
            var seen: [Int] = []
            var cursor: String? = nil
            var pages = 0
            repeat {
                let uri = "/v1/search?q=kernel&limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                    let page = try Self.object(response)
                    #expect(page["total"] as? Int == 30)
                    #expect(page["totalRelation"] as? String == "eq")
                    #expect(page["tookMs"] is Double)
                    let hits = try #require(page["hits"] as? [[String: Any]])
                    seen += hits.compactMap { $0["id"] as? Int }
                    cursor = page["cursor"] as? String
                }
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 5)
            #expect(seen.count == 30 && Set(seen).count == 30, "every note once across the pages: \(seen)")
        }
    }

    /// A cursor is an offset into the ranking of the moment. While writers insert matching
    /// notes (3 before each page, and another task writing all along), every page answers, and
    /// every note that was there from the start is on some page: an insert ranked ahead of the
    /// cursor pushes the rest later (seen twice), never past it.
    @Test func pagingByCursorWhileWritersInsert() async throws {
        let (service, _database) = try await Self.service()
        _ = _database
        let store = service.store
        let app = Application(router: try await SearchServer(service: service).router())
        let writing = Task {
            var next = 1_000
            while !Task.isCancelled {
                let id = next
                try await store.write(author: "writer") { db in
                    try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, 'acme')",
                                   arguments: [id, "Kernel note \(id)", "the kernel panics \(id)"])
                }
                try Indexer(store: store).indexPendingChanges()
                next += 1
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        defer { writing.cancel() }
        try await app.test(.router) { client in
            var inserted = 100
            var seen: [Int] = []
            var cursor: String? = nil
            var pages = 0
            repeat {
                try await client.execute(uri: "/v1/search?q=kernel&limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""), method: .get) { response in
                    #expect(response.status == .ok)
                    let page = try Self.object(response)
                    seen += (page["hits"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                    cursor = page["cursor"] as? String
                }
                pages += 1
                // Three more matching notes before the next page.
                let first = inserted
                try await store.write(author: "app") { db in
                    for id in first..<first + 3 {
                        try db.execute(sql: "INSERT INTO notes(id, title, body, tags) VALUES (?, ?, ?, 'acme')",
                                       arguments: [id, "Kernel note \(id)", "the kernel panics \(id)"])
                    }
                }
                inserted += 3
                try Indexer(store: store).indexPendingChanges()
            } while cursor != nil && pages < 400
            #expect(cursor == nil, "the pages ended")
            let missing = Set(1...30).subtracting(seen)
            #expect(missing.isEmpty, "notes there from the start, never paged: \(missing.sorted())")
            print("paging while writers insert: \(pages) pages, \(seen.count) hits, \(Set(seen).count) distinct")
        }
    }

    @Test func eachParameterIsHonoured() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/search?q=kernl&typos=off", method: .get) { response in
                let page = try Self.object(response)
                #expect(page["total"] as? Int == 0)
                #expect((page["explanation"] as? [String: Any])?["suggestions"] as? [String] == ["kernel"])
            }
            try await client.execute(uri: "/v1/search?q=kernl", method: .get) { response in
                let page = try Self.object(response)
                #expect(page["total"] as? Int == 30, "typos on by default")
            }
            try await client.execute(uri: "/v1/search?q=kern&prefix=true&filter=tags+%3D+%27acme%27&facet=tags&entity=Note", method: .get) { response in
                let page = try Self.object(response)
                #expect(page["total"] as? Int == 15)
                let facets = try #require(page["facets"] as? [[String: Any]])
                #expect((facets.first?["buckets"] as? [[String: Any]])?.count == 1)
            }
            try await client.execute(uri: "/v1/search?q=kernel&sort=id&ascending=true&limit=3", method: .get) { response in
                let page = try Self.object(response)
                let hits = try #require(page["hits"] as? [[String: Any]])
                #expect(hits.compactMap { $0["id"] as? Int } == [1, 2, 3])
            }
            try await client.execute(uri: "/v1/suggest?q=ker", method: .get) { response in
                let page = try Self.object(response)
                let suggestions = try #require(page["suggestions"] as? [[String: Any]])
                #expect(suggestions.first?["word"] as? String == "kernel")
            }
            try await client.execute(uri: "/v1/status", method: .get) { response in
                let status = try Self.object(response)
                #expect(status["documents"] as? Int == 30)
                #expect((status["consumers"] as? [[String: Any]])?.first?["lag"] as? Int == 0)
            }
            try await client.execute(uri: "/healthz", method: .get) { response in #expect(response.status == .ok) }
        }
    }

    @Test func mistakesAreOneLineJSONErrors() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        let cases: [(String, String, String)] = [
            ("/v1/search?q=kernel&filter=tags+%3D", "invalid-filter", "filter"),
            ("/v1/search?q=kernel&filter=colour+%3D+1", "invalid-filter", "unknown attribute"),
            ("/v1/search?q=kernel&limit=0", "invalid-argument", "limit"),
            ("/v1/search?q=kernel&limit=101", "invalid-argument", "limit"),
            ("/v1/search?q=kernel&limt=5", "invalid-argument", "unknown parameter \"limt\""),
            ("/v1/search?q=" + String(repeating: "a", count: 1_001), "invalid-argument", "at most 1000"),
            ("/v1/search?q=kernel&prefix=maybe", "invalid-argument", "prefix"),
            ("/v1/search?q=kernel&typos=some", "invalid-argument", "typos"),
            ("/v1/search?q=kernel&entity=Nope", "unknown-entity", "Nope"),
            ("/v1/search?q=kernel&cursor=bogus", "invalid-argument", "cursor"),
            ("/v1/search?q=kernel&source=a", "invalid-argument", "PostgreSQL"),
            ("/v1/search?q=%ZZ", "invalid-argument", "percent-encoded"),
            ("/v1/search?q=kernel&sort=nothing", "invalid-argument", "nothing"),
        ]
        try await app.test(.router) { client in
            for (uri, code, text) in cases {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .badRequest, "\(uri)")
                    let body = try Self.object(response)
                    #expect(body["code"] as? String == code, "\(uri): \(body)")
                    let message = body["message"] as? String ?? ""
                    #expect(message.contains(text) && !message.contains("\n"), "\(uri): \(message)")
                }
            }
            // What the API does not have: JSON too.
            for (uri, method) in [("/v2/search", HTTPRequest.Method.get), ("/v1/search?q=x", .post), ("/", .delete)] {
                try await client.execute(uri: uri, method: method) { response in
                    let body = try Self.object(response)
                    #expect(response.status.code >= 400 && response.status.code < 500, "\(method) \(uri)")
                    #expect((body["code"] as? String).map { ["not-found", "method-not-allowed"].contains($0) } ?? false, "\(method) \(uri): \(body)")
                }
            }
            // A cursor whose offset was changed to the largest integer (the fingerprint does not
            // cover it): refused, the server still up (an outsider's finding: it overflowed).
            var real = ""
            try await client.execute(uri: "/v1/search?q=kernel&limit=2", method: .get) { response in
                let page = try Self.object(response)
                real = page["cursor"] as? String ?? ""
            }
            let fingerprint = String(decoding: try #require(Access.base64URLDecoded(real[...])), as: UTF8.self).split(separator: ":")[2]
            let forged = Data("1:\(Int.max):\(fingerprint)".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            try await client.execute(uri: "/v1/search?q=kernel&limit=2&cursor=\(forged)", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/v1/search/?q=kernel&limit=2", method: .get) { response in
                let page = try Self.object(response)
                #expect(page["cursor"] is String, "a trailing slash still pages: \(page)")
            }
            // A cursor is refused with another search.
            var cursor = ""
            try await client.execute(uri: "/v1/search?q=kernel&limit=5", method: .get) { response in
                let page = try Self.object(response)
                cursor = page["cursor"] as? String ?? ""
            }
            try await client.execute(uri: "/v1/search?q=panics&limit=5&cursor=\(cursor)", method: .get) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test func aKeyIsRequiredOnceSetAndTenantTokensSeeOnlyTheirDocuments() async throws {
        let (app, _database) = try await Self.application(key: Self.key)
        _ = _database
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Self.key), digestAlgorithm: .sha256)
        let acme = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), filter: "tags = 'acme'"))
        let expired = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(-600), filter: "tags = 'acme'"))
        let otherKeys = JWTKeyCollection()
        await otherKeys.add(hmac: HMACKey(from: "another-key-of-32-bytes-or-more-for-hmac"), digestAlgorithm: .sha256)
        let forged = try await otherKeys.sign(TenantToken(expires: Date().addingTimeInterval(600)))
        // The payload swapped for one without the filter, the signature kept.
        let parts = acme.split(separator: ".")
        let unfiltered = Data(#"{"exp":\#(Int(Date().timeIntervalSince1970) + 600)}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let tampered = "\(parts[0]).\(unfiltered).\(parts[2])"
        // Signed with the key, but restricting nothing, or with a header that is not HS256's.
        let unrestricted = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600)))
        let otherHeader = Data(#"{"alg":"HS512","typ":"JWT"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let signedAsHS256 = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), filter: "tags = 'acme'"))
        let relabelled = "\(otherHeader).\(signedAsHS256.split(separator: ".")[1]).\(signedAsHS256.split(separator: ".")[2])"
        @Sendable func bearer(_ credential: String) -> HTTPFields { [.authorization: "Bearer \(credential)"] }
        try await app.test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in #expect(response.status == .ok, "no key needed") }
            for headers in [HTTPFields(), bearer("wrong"), bearer(expired), bearer(forged), bearer(tampered), [.authorization: "Basic abc"],
                            bearer(unrestricted), bearer(relabelled)] {
                try await client.execute(uri: "/v1/search?q=kernel", method: .get, headers: headers) { response in
                    let body = try Self.object(response)
                    #expect(response.status == .unauthorized, "\(headers)")
                    #expect(body["code"] as? String == "unauthorized")
                }
            }
            try await client.execute(uri: "/v1/search?q=kernel", method: .get, headers: bearer(Self.key)) { response in
                let page = try Self.object(response)
                #expect(page["total"] as? Int == 30)
            }
            // A tenant sees its 15 notes, whatever filter it sends (ANDed with its own).
            for uri in ["/v1/search?q=kernel", "/v1/search?q=kernel&filter=tags+%3D+%27globex%27", "/v1/search?q=kernel&filter=tags+%3D+%27globex%27+OR+tags+%3D+%27acme%27",
                        "/v1/search?q=kernel&filter=NOT+tags+%3D+%27acme%27", "/v1/search?q=kernel&filter=tags+IS+NOT+NULL&filter=tags+%3D+%27globex%27"] {
                try await client.execute(uri: uri, method: .get, headers: bearer(acme)) { response in
                    let page = try Self.object(response)
                    if uri.contains("&filter=tags+IS+NOT+NULL&filter=") {
                        #expect(response.status == .badRequest, "a filter sent twice is refused: \(page)")
                        return
                    }
                    #expect(response.status == .ok, "\(uri): \(page)")
                    let hits = page["hits"] as? [[String: Any]] ?? []
                    #expect(hits.allSatisfy { ($0["id"] as? Int).map { $0 % 2 == 0 } ?? false }, "\(uri)")
                    #expect((page["total"] as? Int ?? 99) <= 15, "\(uri)")
                }
            }
            for uri in ["/v1/suggest?q=ker", "/v1/status"] {
                try await client.execute(uri: uri, method: .get, headers: bearer(acme)) { response in #expect(response.status == .forbidden, "\(uri)") }
            }
        }
    }

    @Test func aPublicAddressNeedsAKey() throws {
        var configuration = SearchServer.Configuration()
        configuration.host = "0.0.0.0"
        #expect(throws: SearchlightError.self) { try configuration.validate() }
        configuration.apiKey = "short"
        #expect(throws: SearchlightError.self) { try configuration.validate() }
        configuration.apiKey = String(repeating: " ", count: 40)
        #expect(throws: SearchlightError.self) { try configuration.validate() }
        configuration.apiKey = Self.key
        try configuration.validate()
        configuration.corsOrigin = "https://a\r\nX-Evil: 1"
        #expect(throws: SearchlightError.self) { try configuration.validate() }
    }
}
