import Foundation
import Testing

/// The fault tests' applied log can fail: on tables shaped like the sink's, by hand-written
/// transactions, it reports a batch applied twice from one checkpoint, two sinks that both moved
/// the checkpoint without a compare-and-set, documents written outside a checkpoint's transaction
/// and a checkpoint moved back without a resync; and it accepts resyncs and a new lineage.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct AppliedLogTests {
    @Test func theAppliedLogReportsWhatWasAppliedTwice() async throws {
        let postgres = FaultPostgres.fresh("appliedlog")
        let s = postgres.s
        try await postgres.rows("""
            CREATE SCHEMA \(s);
            CREATE TABLE \(s).sources(source text PRIMARY KEY, token bigint NOT NULL, resyncs integer NOT NULL DEFAULT 0);
            CREATE TABLE \(s).documents(source text, entity text, object_key text, fields jsonb, token bigint,
                                         PRIMARY KEY (source, entity, object_key));
            INSERT INTO \(s).sources VALUES ('a', 0, 0);
            """)
        try await postgres.installAppliedLog()
        let upsert = { (key: String, token: Int) in
            "INSERT INTO \(s).documents VALUES ('a', 'Note', '\(key)', '{}', \(token)) ON CONFLICT (source, entity, object_key) DO UPDATE SET token = excluded.token;"
        }
        // Well-behaved batches with compare-and-set, a resync that starts a new lineage at a lower
        // token, and a batch from a checkpoint the old lineage had already left.
        try await postgres.rows("""
            BEGIN; \(upsert("i:1", 5)) UPDATE \(s).sources SET token = 5 WHERE source = 'a' AND token = 0; COMMIT;
            BEGIN; \(upsert("i:2", 9)) DELETE FROM \(s).documents WHERE object_key = 'i:1'; UPDATE \(s).sources SET token = 9 WHERE source = 'a' AND token = 5; COMMIT;
            BEGIN; UPDATE \(s).sources SET token = 9 WHERE source = 'a' AND token = 5; COMMIT;
            BEGIN; DELETE FROM \(s).documents WHERE source = 'a'; \(upsert("i:1", 3)) UPDATE \(s).sources SET token = 3, resyncs = resyncs + 1 WHERE source = 'a'; COMMIT;
            BEGIN; \(upsert("i:1", 5)) UPDATE \(s).sources SET token = 5 WHERE source = 'a' AND token = 3; COMMIT;
            """)
        var report = try await postgres.appliedLogProblems()
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.batches == 3 && report.resyncs == 1)

        // A batch applied again from the same checkpoint (a sink that lost the race but wrote anyway).
        try await postgres.rows("""
            BEGIN; \(upsert("i:7", 8)) UPDATE \(s).sources SET token = 8 WHERE source = 'a' AND token = 5; COMMIT;
            BEGIN; UPDATE \(s).sources SET token = 5 WHERE source = 'a'; COMMIT;
            """)
        report = try await postgres.appliedLogProblems()
        #expect(report.problems.contains { $0.contains("moved back or stood still") })
        try await postgres.rows("BEGIN; \(upsert("i:7", 8)) UPDATE \(s).sources SET token = 8 WHERE source = 'a'; COMMIT;")
        report = try await postgres.appliedLogProblems()
        #expect(report.problems.contains { $0.contains("applied twice from the same checkpoint") }, "\(report.problems)")
        #expect(report.problems.contains { $0.contains("upserted by two transactions") }, "\(report.problems)")
        #expect(!report.problems.contains { $0.contains("moved no checkpoint") }, "\(report.problems)")

        // Two sinks without a compare-and-set: the second one's checkpoint does not move, its documents are written anyway.
        try await postgres.rows("BEGIN; \(upsert("i:9", 8)) UPDATE \(s).sources SET token = 8 WHERE source = 'a'; COMMIT;")
        report = try await postgres.appliedLogProblems()
        #expect(report.problems.contains { $0.contains("moved no checkpoint") }, "\(report.problems)")
        try await postgres.rows("DROP SCHEMA \(s) CASCADE")
    }
}
