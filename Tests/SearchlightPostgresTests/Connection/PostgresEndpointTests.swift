import SearchlightHistory
import SearchlightPostgres
import Testing

/// A connection URL is parsed at the boundary: what it says is kept, anything else is one line.
/// (No server needed.)
struct PostgresEndpointTests {
    @Test func connectTimeoutIsTenSecondsUnlessTheURLSaysOtherwise() throws {
        let plain = try PostgresEndpoint(url: "postgres://app@127.0.0.1:5432/search")
        #expect(plain.configuration.options.connectTimeout == .seconds(10))
        let longer = try PostgresEndpoint(url: "postgres://app@127.0.0.1:5432/search?schema=tenant&connect_timeout=60")
        #expect(longer.configuration.options.connectTimeout == .seconds(60))
        #expect(longer.schema == "tenant")
    }

    @Test(arguments: ["0", "-1", "3601", "1.5", "ten", ""])
    func aConnectTimeoutOutOfRangeIsRefusedByName(_ value: String) {
        #expect {
            _ = try PostgresEndpoint(url: "postgres://app@127.0.0.1/search?connect_timeout=\(value)")
        } throws: { error in
            guard let error = error as? SearchlightError else { return false }
            return error.code == .invalidArgument && "\(error)".contains("connect_timeout= needs whole seconds from 1 to 3600")
        }
    }
}
