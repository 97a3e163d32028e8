import Foundation
import Logging
import PostgresNIO
import SearchlightPostgres
import SearchlightTestSupport
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
    /// A hot standby streaming from the server (`.ci/postgres` starts one), for the tests of
    /// searches on a replica.
    static let replicaBase = environment["SEARCHLIGHT_POSTGRES_REPLICA_URL"]
    static var hasReplica: Bool { url != nil && replicaBase != nil }
    static let replicaSkipReason: Comment = "no PostgreSQL replica: set SEARCHLIGHT_POSTGRES_REPLICA_URL (bash .ci/postgres start starts one)"

    /// The replica's URL with the same query (schema, timeouts) as `url` of the primary.
    static func replicaURL(of url: String) -> String {
        let query = url.firstIndex(of: "?").map { String(url[$0...]) } ?? ""
        return (replicaBase ?? "") + query
    }

    /// Waits until the replica has replayed everything the primary has written so far (its WAL
    /// position now): a readiness signal, within `seconds`.
    static func waitForReplica(seconds: Double = 60) async throws {
        let target = try await withClient { client in
            var lsn = ""
            for try await value in try await client.query("SELECT pg_current_wal_lsn()::text").decode(String.self) { lsn = value }
            return lsn
        }
        let replayed = try await withClient(replicaBase) { client in
            try await withTimeout(seconds) {
                while true {
                    var done = false
                    for try await value in try await client.query("SELECT coalesce(pg_last_wal_replay_lsn() >= \(target)::pg_lsn, false)").decode(Bool.self) { done = value }
                    if done { return true }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
        }
        if replayed != true { throw PostgresTestServer.ReplicaLag(target: target) }
    }

    struct ReplicaLag: Error, CustomStringConvertible {
        var target: String
        var description: String { "the replica did not replay the primary's WAL up to \(target) in time" }
    }

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
        // The client's run loop in a task of its own, cancelled and not awaited, as
        // `PostgresSession` runs it: a task group awaited it at the end, and its shutdown can
        // hang (CI once stopped with six PostgreSQL tests suspended, every thread idle and no
        // connection open on the server).
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        return try await body(client)
    }
}
