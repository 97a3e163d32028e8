import Foundation
import Logging
import NIOCore
import PostgresNIO
import SearchlightHistory
@testable import SearchlightPostgres
import SearchlightTestSupport
import Synchronization
import Testing

/// How the sink waits and whether it tries again: bounded, jittered backoff that honours a
/// sub-second maximum; retry decided by kinds of errors (SQLSTATE classes, postgres-nio's
/// codes, NIO's channel errors), never by a message's text or a type's name.
struct SinkRetryTests {
    @Test func backoffStaysWithinASubSecondMaximumAndIsJittered() {
        var generator = SplitMix(seed: 1)
        for maximum in [Duration.milliseconds(1), .milliseconds(40), .milliseconds(300), .milliseconds(999), .seconds(5)] {
            var seen: Set<Duration> = []
            for failures in 1...40 {
                let delay = PostgresSink.backoff(failures: failures, maximum: maximum, using: &generator)
                #expect(delay >= .milliseconds(1) && delay <= maximum, "\(failures) failures, maximum \(maximum): \(delay)")
                // Exponential from 100 ms, then at least half the maximum: never a tight loop.
                let ceiling = min(Duration.milliseconds(100) * (1 << min(failures - 1, 20)), maximum)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "\(failures) failures, maximum \(maximum): \(delay)")
                seen.insert(delay)
            }
            if maximum >= .milliseconds(40) { #expect(seen.count > 10, "no jitter under \(maximum): \(seen)") }
        }
    }

    @Test func aMaximumBackoffThatIsNotPositiveIsRefused() throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        configuration.maximumBackoff = .zero
        #expect(throws: SearchlightError.self) {
            try PostgresSink(store: store, endpoint: PostgresEndpoint(url: "postgres://x@127.0.0.1/y"), configuration: configuration)
        }
    }

    @Test func retryIsDecidedByKindsOfErrors() {
        // A server's SQLSTATE.
        for state in ["08006", "08001", "57P01", "57P02", "57P03", "53300", "40001", "40P01", "58030"] {
            #expect(PostgresErrors.isTransient(sqlState: state), "\(state)")
        }
        for state in ["3D000", "28000", "28P01", "42P01", "42501", "23505", "22P02", "0A000", "XX000"] {
            #expect(!PostgresErrors.isTransient(sqlState: state), "\(state)")
        }
        // NIO's own errors (postgres-nio's `PSQLError`s cannot be made outside it: the server's
        // are checked by their SQLSTATE above, and end to end by the CLI and fault tests).
        #expect(PostgresSink.isRetryable(ChannelError.ioOnClosedChannel))
        #expect(PostgresSink.isRetryable(ChannelError.eof))
        #expect(!PostgresSink.isRetryable(ChannelError.operationUnsupported))
        #expect(PostgresSink.isRetryable(IOError(errnoCode: ECONNRESET, reason: "read")))
        // Wrapped, as the session throws them: by what they wrap, never by their text.
        let refused = SearchlightError(.postgresError, "connection refused", underlyingError: IOError(errnoCode: ECONNREFUSED, reason: "connect"))
        #expect(PostgresSink.isRetryable(SearchlightError(.postgresError, "cannot connect: connection refused", underlyingError: refused)))
        #expect(!PostgresSink.isRetryable(SearchlightError(.postgresError, "PostgreSQL is restarting, try again: connection refused")))
        #expect(PostgresSink.isRetryable(SearchlightError(.postgresError, "x", underlyingError: CommitOutcomeUnknown(underlying: ChannelError.eof))))
        #expect(PostgresSink.isRetryable(SearchlightError(.postgresError, "x", underlyingError: ConnectionUnavailable(timeout: .seconds(1)))))
        // A type whose name merely says NIO is nothing of NIO's.
        struct NIOLookalikeError: Error {}
        #expect(!PostgresSink.isRetryable(NIOLookalikeError()))
        #expect(!PostgresSink.isRetryable(SearchlightError(.postgresError, "x", underlyingError: NIOLookalikeError())))
    }

    /// A sub-second maximum is honoured: the sink waits (it once waited 0 ms, a tight loop).
    @Test(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
    func aSubSecondMaximumBackoffIsWaitedNotTruncatedToZero() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        let url = PostgresTestServer.freshURL("backoff")
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('a')") }
        let recorder = CapturedLog()
        var configuration = PostgresSink.Configuration()
        configuration.source = "s"
        configuration.batchSize = 1
        configuration.logger = recorder.logger(label: "test.sink.retry")
        configuration.maximumBackoff = .milliseconds(300)
        // Each batch's outcome "unknown" once: the sink backs off, reads PostgreSQL back, adopts it.
        let failed = Mutex<Set<Int64>>([])
        configuration.faults.afterPostgresCommit = { token in
            if failed.withLock({ $0.insert(token.rawValue).inserted }) {
                throw CommitOutcomeUnknown(underlying: ChannelError.eof)
            }
        }
        _ = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        for i in 0..<3 { try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["b\(i)"]) } }
        let report = try await PostgresSink(store: store, endpoint: PostgresEndpoint(url: url), configuration: configuration).runOnce()
        #expect(report.token == (try store.currentToken()) && report.resyncs == 0 && report.adopted == 3)
        let waits = recorder.messages.compactMap { message -> Int? in
            guard let range = message.range(of: "trying again in ") else { return nil }
            return Int(message[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(waits.count == 3, "\(recorder.messages)")
        #expect(waits.allSatisfy { (1...300).contains($0) }, "waits \(waits) ms with a maximum of 300 ms")
    }
}
