import Foundation
import Logging
import PostgresNIO
import SearchlightPostgres
import Testing

/// The PostgreSQL server the tests run against: `SEARCHLIGHT_POSTGRES_URL` (`.ci/run` starts a
/// throwaway cluster and sets it; `eval "$(bash .ci/postgres start)"` does so locally). Without
/// it the PostgreSQL tests skip, saying why.
enum PostgresTestServer {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["SEARCHLIGHT_POSTGRES_URL"]
    static var isAvailable: Bool { url != nil }
    static let skipReason: Comment = "no PostgreSQL server: set SEARCHLIGHT_POSTGRES_URL (eval \"$(bash .ci/postgres start)\")"
    /// The cluster's directory, binaries and OS user, for tests that stop and restart it.
    static let dataDirectory = environment["SEARCHLIGHT_POSTGRES_DATA"]
    static let binDirectory = environment["SEARCHLIGHT_POSTGRES_BIN"]
    static let osUser = environment["SEARCHLIGHT_POSTGRES_OS_USER"]
    static var canRestart: Bool { url != nil && dataDirectory != nil && binDirectory != nil }

    /// A URL whose `schema=` is unique to the caller: every test gets tables of its own on the
    /// shared server. Its `connect_timeout` is a minute: these tests share one process, and so
    /// one cooperative pool, with a few hundred others on a 2-core machine, where a connection
    /// that PostgreSQL accepted at once was once resumed after the default 10 s (CI failed on it).
    static func freshURL(_ label: String = "t") -> String {
        let schema = "sl_\(label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20))_\(UInt32.random(in: 0...UInt32.max))"
        let base = url ?? "postgres://nobody@127.0.0.1/none"
        return base + (base.contains("?") ? "&" : "?") + "schema=\(schema)&connect_timeout=60"
    }

    /// Runs `body` with a client connected to the test server (its run loop in a task).
    static func withClient<T: Sendable>(_ url: String? = nil, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let endpoint = try PostgresEndpoint(url: url ?? self.url ?? "")
        let client = PostgresClient(configuration: endpoint.configuration, backgroundLogger: Logger(label: "test.postgres"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
