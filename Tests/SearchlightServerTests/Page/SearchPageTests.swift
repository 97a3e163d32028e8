import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Searchlight
import SearchlightHistory
@testable import SearchlightServer
import SearchlightTestSupport
import Testing

/// The search page as the server renders it (no browser: `BrowserTests` drives one): the page
/// without JavaScript, escaped text, facet links that filter, paging by links, the key, a
/// tenant's filter, and its headers.
struct SearchPageTests {
    static func application(key: String? = nil, page: SearchServer.Page = { var page = SearchServer.Page(); page.facets = ["tags"]; return page }())
        async throws -> (some ApplicationProtocol, TestDatabase) {
        let (service, database) = try await SearchServerTests.service()
        var configuration = SearchServer.Configuration()
        configuration.apiKey = key
        configuration.page = page
        return (Application(router: try await SearchServer(service: service, configuration: configuration).router()), database)
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    /// The `href` of every link whose text starts with `label`.
    static func links(_ html: String, _ label: String) -> [String] {
        html.matches(of: /<a [^>]*href="([^"]*)"[^>]*>(.*?)<\/a>/).filter { $0.output.2.replacing(/<[^>]*>/, with: "").hasPrefix(label) }
            .map { String($0.output.1).replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'") }
    }

    static func hits(_ html: String) -> [String] {
        html.matches(of: /<p class="meta"><bdi>Note · (\d+)<\/bdi><\/p>/).map { String($0.output.1) }
    }

    @Test func thePageWithoutAQueryIsTheFormWithItsHeaders() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"))
                let html = Self.text(response)
                #expect(html.contains(#"<label for="q">"#) && html.contains(#"<form id="search-form" role="search" action="/" method="get">"#))
                #expect(html.contains(#"role="status" aria-live="polite""#))
                #expect(html.contains(#"data-config="{&quot;facets&quot;:[&quot;tags&quot;],&quot;keyed&quot;:false"#))
                #expect(Self.hits(html).isEmpty)
            }
            try await client.execute(uri: "/assets/page.js", method: .get) { response in
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(Self.text(response).contains("compositionstart"))
            }
            try await client.execute(uri: "/assets/page.css", method: .get) { response in
                #expect(response.headers[.contentType] == "text/css; charset=utf-8")
            }
        }
    }

    @Test func resultsAreRenderedWithoutJavaScriptAndDocumentTextIsEscaped() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        try await app.test(.router) { client in
            try await client.execute(uri: "/?q=panics", method: .get) { response in
                #expect(response.status == .ok)
                let html = Self.text(response)
                #expect(html.contains("30 results for “<bdi>panics</bdi>”"))
                #expect(Self.hits(html).count == 20)
                #expect(html.contains("<mark>panics</mark>"))
                #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
                #expect(!html.contains("<script>alert"), "document text is escaped")
                #expect(html.contains(#"value="panics""#))
                #expect(html.contains("<title>panics – Search</title>"))
            }
            // The user's own text is escaped where it is shown: the box, the title, the status.
            try await client.execute(uri: "/?q=%22%3E%3Cscript%3Ex%3C%2Fscript%3E", method: .get) { response in
                let html = Self.text(response)
                #expect(!html.contains("<script>x"))
                #expect(html.contains("&quot;&gt;&lt;script&gt;x&lt;/script&gt;"))
            }
        }
    }

    @Test func facetsAreLinksThatFilterAndPagesAreLinksThatFollow() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        try await app.test(.router) { client in
            var facet = ""
            try await client.execute(uri: "/?q=kernel", method: .get) { response in
                let html = Self.text(response)
                facet = try #require(Self.links(html, "acme").first)
                #expect(facet.contains("filter=%60tags%60+%3D+%22acme%22"), "\(facet)")
            }
            // The facet's page: the even notes only, the filter shown as a chip that removes it.
            var next: String? = facet
            var seen: [Int] = []
            var pages = 0
            while let uri = next, pages < 5 {
                try await client.execute(uri: uri, method: .get) { response in
                    let html = Self.text(response)
                    #expect(html.contains("15 results for “<bdi>kernel</bdi>”"), "\(uri)")
                    #expect(html.contains(#"aria-label="Remove `tags` = &quot;acme&quot;""#))
                    seen += Self.hits(html).compactMap { Int($0) }
                    next = Self.links(html, "More results").first
                }
                pages += 1
            }
            #expect(pages == 1 && seen.count == 15 && seen.allSatisfy { $0 % 2 == 0 }, "\(seen)")
            // Without the facet, 30 notes in two pages by the "More results" link.
            next = "/?q=kernel"
            seen = []
            pages = 0
            while let uri = next, pages < 5 {
                try await client.execute(uri: uri, method: .get) { response in
                    seen += Self.hits(Self.text(response)).compactMap { Int($0) }
                    next = Self.links(Self.text(response), "More results").first
                }
                pages += 1
            }
            #expect(pages == 2 && Set(seen).count == 30 && seen.count == 30, "\(seen)")
        }
    }

    @Test func mistakesAreOneLineNoticesWithTheirStatus() async throws {
        let (app, _database) = try await Self.application()
        _ = _database
        try await app.test(.router) { client in
            try await client.execute(uri: "/?q=kernel&filter=tags+%3D+%27x", method: .get) { response in
                #expect(response.status == .badRequest)
                let html = Self.text(response)
                let notice = try #require(html.firstMatch(of: /<p id="notice" class="notice" role="alert">([^<]*)<\/p>/)?.output.1)
                #expect(notice.contains("invalid filter") && !notice.contains("\n"), "\(notice)")
            }
            try await client.execute(uri: "/?q=%ZZ", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(Self.text(response).contains("malformed query string"))
            }
            try await client.execute(uri: "/v1/search?q=kernel&highlight=marks", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/v1/search?q=kernel&highlight=private-use&limit=1", method: .get) { response in
                let page = try SearchServerTests.object(response)
                let hit = try #require((page["hits"] as? [[String: Any]])?.first)
                #expect((hit["titleHighlight"] as? String)?.contains("\u{E000}Kernel\u{E001}") == true, "\(hit)")
            }
        }
    }

    @Test func withAKeyThePageAsksForItAndATenantSeesOnlyItsOwn() async throws {
        let (app, _database) = try await Self.application(key: SearchServerTests.key)
        _ = _database
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: SearchServerTests.key), digestAlgorithm: .sha256)
        let acme = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), filter: "tags = 'acme'"))
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok, "the form itself holds no document")
                #expect(Self.text(response).contains("&quot;keyed&quot;:true"))
            }
            try await client.execute(uri: "/?q=kernel", method: .get) { response in
                #expect(response.status == .unauthorized)
                let html = Self.text(response)
                #expect(html.contains("needs an API key or a tenant token") && Self.hits(html).isEmpty)
            }
            // A tenant's filter is ANDed whatever the page's URL asks: another tenant's facet finds nothing.
            try await client.execute(uri: "/?q=kernel&filter=tags+%3D+%27globex%27", method: .get, headers: [.authorization: "Bearer \(acme)"]) { response in
                #expect(response.status == .ok)
                #expect(Self.hits(Self.text(response)).isEmpty)
            }
            try await client.execute(uri: "/?q=kernel", method: .get, headers: [.authorization: "Bearer \(acme)"]) { response in
                let hits = Self.hits(Self.text(response)).compactMap { Int($0) }
                #expect(hits.count == 15 && hits.allSatisfy { $0 % 2 == 0 }, "\(hits)")
            }
        }
    }

    @Test func withoutThePageOnlyTheAPIAnswers() async throws {
        var page = SearchServer.Page()
        page.isEnabled = false
        let (app, _database) = try await Self.application(page: page)
        _ = _database
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            }
            try await client.execute(uri: "/assets/page.js", method: .get) { response in #expect(response.status == .notFound) }
        }
    }

    /// The page's URLs are encoded as the script's `URLSearchParams` encodes them, so that both
    /// build the same links (a cursor's fingerprint covers its search's parameters in order).
    @Test func pageURLsAreEncodedAsURLSearchParamsEncodesThem() {
        #expect(PageState.encode("a b+c&d=é/`~*-._") == "a+b%2Bc%26d%3D%C3%A9%2F%60%7E*-._")
        let state = PageState(text: "数据 库", filters: ["`tags` = \"a&b\""], entities: ["Note"])
        #expect(state.url() == "/?q=%E6%95%B0%E6%8D%AE+%E5%BA%93&filter=%60tags%60+%3D+%22a%26b%22&entity=Note")
        #expect(PageState.clause("ta`g", .text("it\"s")) == "`ta``g` = \"it\"\"s\"")
        #expect(PageState.clause("n", .integer(-3)) == "`n` = -3")
        #expect(PageState.clause("n", .null) == "`n` IS NULL")
        #expect(PageState.clause("n", .blob(Data([1]))) == nil)
        #expect(PageView.count(10_000, atLeast: true) == "10,000+")
        #expect(PageHTML.marked("a\u{E000}<b>\u{E001}\u{E001}c\u{E000}d") == "a<mark>&lt;b&gt;</mark>c<mark>d</mark>")
    }
}
