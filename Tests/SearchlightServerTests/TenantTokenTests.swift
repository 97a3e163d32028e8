import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Searchlight
import SearchlightHistory
@testable import SearchlightServer
import SearchlightTestSupport
import Testing

/// What an outsider tried against tenant tokens and parameters (stop 39): a claim written
/// twice (the issuer's parser and the server's may keep different ones), a token not valid
/// yet, a tenant sorting by a column its filter does not cover or learning the model's
/// attributes from an error, a parameter given twice, and a page whose links repeat thousands
/// of filters.
struct TenantTokenTests {
    static func encoded(_ json: String) -> String {
        Data(json.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// A token signed with `key` whose header and payload are exactly these texts.
    static func signed(header: String, payload: String, key: String = SearchServerTests.key) -> String {
        let input = encoded(header) + "." + encoded(payload)
        let signature = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return input + "." + Data(signature).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    @Test func duplicateKeysAreFoundAsDecoded() {
        #expect(JSONObjectKeys.haveDuplicates(Data(#"{"a":1,"b":[{"a":2}],"c":{"a":{"a":3}}}"#.utf8)) == false)
        #expect(JSONObjectKeys.haveDuplicates(Data(#"{"filter":"x","f\u0069lter":"y"}"#.utf8)) == true)
        #expect(JSONObjectKeys.haveDuplicates(Data(#"{"a":{"b":1,"b":2}}"#.utf8)) == true)
        #expect(JSONObjectKeys.haveDuplicates(Data(#" [ 1, "x\"y", {"k": null} ] "#.utf8)) == false)
        #expect(JSONObjectKeys.haveDuplicates(Data(#"{"a":1"#.utf8)) == nil)
        #expect(JSONObjectKeys.haveDuplicates(Data(#"{"a":1} x"#.utf8)) == nil)
    }

    @Test func tokensThatRepeatAKeyOrAreNotValidYetAreRefused() async throws {
        let (app, _database) = try await SearchServerTests.application(key: SearchServerTests.key)
        _ = _database
        let exp = Int(Date().timeIntervalSince1970) + 600
        let header = #"{"alg":"HS256","typ":"JWT"}"#
        let good = Self.signed(header: header, payload: #"{"exp":\#(exp),"filter":"tags = 'acme'"}"#)
        let escapedTwice = Self.signed(header: header, payload: #"{"exp":\#(exp),"f\u0069lter":"tags = 'globex'","filter":"tags = 'acme'"}"#)
        let twiceInHeader = Self.signed(header: #"{"alg":"none","alg":"HS256"}"#, payload: #"{"exp":\#(exp),"filter":"tags = 'acme'"}"#)
        let notYet = Self.signed(header: header, payload: #"{"exp":\#(exp),"nbf":\#(exp - 60),"filter":"tags = 'acme'"}"#)
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/search?q=kernel", method: .get, headers: [.authorization: "Bearer \(good)"]) { response in
                #expect(response.status == .ok, "the hand-signed token is a valid one")
                let ids = (try SearchServerTests.object(response)["hits"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
                #expect(!ids.isEmpty && ids.allSatisfy { $0 % 2 == 0 })
            }
            for token in [escapedTwice, twiceInHeader, notYet] {
                try await client.execute(uri: "/v1/search?q=kernel", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                    #expect(response.status == .unauthorized, "\(String(buffer: response.body))")
                }
            }
        }
    }

    @Test func aTenantCannotSortNorLearnTheModelFromErrors() async throws {
        let (app, _database) = try await SearchServerTests.application(key: SearchServerTests.key)
        _ = _database
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: SearchServerTests.key), digestAlgorithm: .sha256)
        let acme = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), filter: "tags = 'acme'"))
        let undeclared = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), filter: "secret = 1"))
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/search?q=kernel&sort=title", method: .get, headers: [.authorization: "Bearer \(acme)"]) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v1/search?q=kernel&sort=title", method: .get, headers: [.authorization: "Bearer \(SearchServerTests.key)"]) { response in
                #expect(response.status == .ok, "the key's holder sorts")
            }
            try await client.execute(uri: "/v1/search?q=kernel", method: .get, headers: [.authorization: "Bearer \(undeclared)"]) { response in
                #expect(response.status == .badRequest)
                let message = String(buffer: response.body)
                #expect(!message.contains("tags") && !message.contains("Note"), "\(message)")
            }
            try await client.execute(uri: "/v1/search?q=kernel&entity=Secret", method: .get, headers: [.authorization: "Bearer \(acme)"]) { response in
                #expect(response.status == .badRequest)
                #expect(!String(buffer: response.body).contains("Note"), "\(String(buffer: response.body))")
            }
            // A facet the model lacks: the facet's error would list the declared attributes.
            try await client.execute(uri: "/v1/search?q=kernel&facet=zzz", method: .get, headers: [.authorization: "Bearer \(acme)"]) { response in
                #expect(response.status == .badRequest)
                #expect(!String(buffer: response.body).contains("tags"), "\(String(buffer: response.body))")
            }
            // A NUL would end the text SQLite compares: 'acme\0x' would match 'acme'.
            try await client.execute(uri: "/v1/search?q=kernel&filter=tags+%3D+%27acme%00globex%27", method: .get, headers: [.authorization: "Bearer \(SearchServerTests.key)"]) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("NUL"))
            }
            let nul = try await keys.sign(TenantToken(expires: Date().addingTimeInterval(600), filter: "tags = 'acme\u{0}globex'"))
            try await client.execute(uri: "/v1/search?q=kernel", method: .get, headers: [.authorization: "Bearer \(nul)"]) { response in
                #expect(response.status == .unauthorized)
            }
            // The key's holder still gets the whole message.
            try await client.execute(uri: "/v1/search?q=kernel&entity=Secret", method: .get, headers: [.authorization: "Bearer \(SearchServerTests.key)"]) { response in
                #expect(String(buffer: response.body).contains("Note"))
            }
        }
    }

    @Test func aParameterGivenTwiceIsRefusedUnlessItRepeats() async throws {
        let (app, _database) = try await SearchServerTests.application()
        _ = _database
        try await app.test(.router) { client in
            for uri in ["/v1/search?q=kernel&q=zzzz", "/v1/search?q=kernel&limit=2&limit=3", "/v1/suggest?q=ker&q=x"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .badRequest, "\(uri)")
                    #expect(String(buffer: response.body).contains("more than once"))
                }
            }
            try await client.execute(uri: "/v1/search?q=kernel&entity=Note&entity=Note&facet=tags&facet=tags", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    /// Each link of a page repeats its filters: thousands of them would make an answer of
    /// hundreds of megabytes. The page refuses them before rendering anything of them.
    @Test func aPageWithTooManyFiltersIsRefusedSmall() async throws {
        let (app, _database) = try await SearchPageTests.application(key: SearchServerTests.key)
        _ = _database
        let many = String(repeating: "&filter=tags%3D%27acme%27", count: 3_500)
        try await app.test(.router) { client in
            try await client.execute(uri: "/?q=kernel" + many, method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.body.readableBytes < 20_000, "\(response.body.readableBytes) bytes")
                #expect(String(buffer: response.body).contains("at most 16 filters"))
            }
            try await client.execute(uri: "/?q=kernel&q=other", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("given more than once"))
            }
            let few = String(repeating: "&filter=tags%3D%27acme%27", count: 16)
            try await client.execute(uri: "/?q=kernel" + few, method: .get) { response in
                #expect(response.status == .unauthorized, "within the bound, the key is asked for")
            }
        }
    }
}
