import Foundation
import JWTKit
import Searchlight
import SearchlightHistory

/// A tenant token (as Meilisearch's): a JWT signed with the server's API key (HS256) that lets
/// its bearer search only what its claims allow. The server ANDs ``filter`` with whatever
/// filter a request asks, and keeps a search on PostgreSQL within ``sources``, so a tenant sees
/// only its own documents whatever it sends.
///
/// ```json
/// { "exp": 1767225600, "filter": "tenant = 'acme'", "sources": ["acme-db"] }
/// ```
public struct TenantToken: JWTPayload, Equatable {
    /// When the token stops being accepted (required).
    public var exp: ExpirationClaim
    /// A condition in ``Searchlight/SearchFilter``'s grammar that every result satisfies.
    public var filter: String?
    /// PostgreSQL: the only sources searched.
    public var sources: [String]?
    /// When the token starts being accepted (optional).
    public var nbf: NotBeforeClaim?

    public init(expires: Date, filter: String? = nil, sources: [String]? = nil, notBefore: Date? = nil) {
        exp = ExpirationClaim(value: expires)
        self.filter = filter
        self.sources = sources
        nbf = notBefore.map { NotBeforeClaim(value: $0) }
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try nbf?.verifyNotBefore()
    }
}

/// Who a request is: the operator (the API key itself), a tenant, or anyone when the server
/// has no key.
enum Caller: Sendable {
    case anyone
    case `operator`
    case tenant(filter: SearchFilter?, sources: Set<String>?)
}

/// Checks `Authorization: Bearer …` against the API key and tenant tokens signed with it.
struct Access: Sendable {
    let apiKey: String?
    let keys: JWTKeyCollection

    init(apiKey: String?) async {
        self.apiKey = apiKey
        keys = JWTKeyCollection()
        if let apiKey { await keys.add(hmac: HMACKey(from: apiKey), digestAlgorithm: .sha256) }
    }

    func caller(authorization: String?) async throws(ServerError) -> Caller {
        guard let apiKey else { return .anyone }
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw ServerError(.unauthorized, "missing credentials: send Authorization: Bearer <API key or tenant token>")
        }
        let credential = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        if Self.constantTimeEqual(credential, apiKey) { return .operator }
        let parts = credential.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw ServerError(.unauthorized, "invalid credentials: neither the API key nor a tenant token")
        }
        // A key written twice in the header or the claims may be read differently by the
        // issuer's parser and this one: refused.
        let decoded = parts.prefix(2).map(Self.base64URLDecoded)
        guard let headerJSON = decoded[0], let claimsJSON = decoded[1],
              JSONObjectKeys.haveDuplicates(headerJSON) == false, JSONObjectKeys.haveDuplicates(claimsJSON) == false else {
            throw ServerError(.unauthorized, "invalid tenant token: its header or claims are not JSON, or repeat a key")
        }
        // Only HS256, as the header says it (jwt-kit verifies with the key's own algorithm).
        guard let fields = try? JSONSerialization.jsonObject(with: headerJSON) as? [String: Any], fields["alg"] as? String == "HS256",
              fields["crit"] == nil else {
            throw ServerError(.unauthorized, "invalid tenant token: its header must say alg HS256")
        }
        let token: TenantToken
        do {
            token = try await keys.verify(credential, as: TenantToken.self)
        } catch {
            let expired = (error as? JWTError)?.errorType == .claimVerificationFailure
            throw ServerError(.unauthorized, expired ? "the tenant token has expired, or is not valid yet" : "invalid tenant token: its signature, header or claims do not verify")
        }
        // A token that restricts nothing would see everything: one mistake of an issuer.
        guard token.filter != nil || token.sources != nil else {
            throw ServerError(.unauthorized, "invalid tenant token: it must restrict what its bearer sees (a filter claim, or on PostgreSQL a sources claim)")
        }
        do {
            let filter = try token.filter.map { try SearchServer.filter($0) }
            return .tenant(filter: filter, sources: token.sources.map(Set.init))
        } catch {
            let reason = (error as? SearchlightError)?.message ?? "\(error)"
            throw ServerError(.unauthorized, "invalid tenant token: its filter claim does not parse (\(reason))")
        }
    }

    static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
