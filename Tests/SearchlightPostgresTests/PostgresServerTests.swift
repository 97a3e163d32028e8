import Testing
import PostgresNIO

@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresServerTests {
    @Test func theTestServerAnswers() async throws {
        let version = try await PostgresTestServer.withClient { client in
            var version = ""
            for try await (text) in try await client.query("SELECT version()").decode(String.self) { version = text }
            return version
        }
        #expect(version.hasPrefix("PostgreSQL"))
    }
}
