import Foundation
import Logging
import PostgresNIO
import Searchlight

/// Planner statistics after bulk writes.
///
/// Right after a sink loaded many documents (a first sync, a resync, a large backlog),
/// PostgreSQL has no statistics for them until autovacuum's next round (up to a minute
/// later, and only once a tenth of the table changed). Meanwhile the planner guesses: it
/// reads a source's documents through the primary key and tests `vector @@ query` on every
/// one of them instead of using the GIN index (17 ms for a word found nowhere among 117,659
/// documents, 4.9 ms after `ANALYZE`). As PostgreSQL's own advice for bulk loads says, the
/// loader analyzes: when a caught-up sink has written at least
/// ``PostgresSink/statisticsCheckInterval`` documents since it last looked, it asks PostgreSQL
/// how much of the table changed since the last `ANALYZE` (by anyone), and analyzes when that
/// is more than a tenth of the table (autovacuum's own rule) or the table was never analyzed;
/// it also moves the GIN index's pending list into the index, so that searches stop scanning
/// it. One sink at a time does this for a schema (an advisory lock; the others go on).
///
/// ```sql
/// BEGIN;
/// SELECT pg_try_advisory_xact_lock(1397510209, hashtext('searchlight'));  -- false: another sink is at it
/// SELECT s.n_mod_since_analyze, c.reltuples FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
/// WHERE s.relid = to_regclass('"searchlight".documents');
/// ANALYZE "searchlight".documents;
/// SELECT gin_clean_pending_list(to_regclass('"searchlight".documents_vector'));
/// COMMIT;
/// ```
///
/// Both are upkeep: an error there (a role that does not own the index, say) is logged and
/// changes nothing else.
extension PostgresSink {
    /// The first key of the advisory lock that lets one sink at a time analyze a schema ("SLPA").
    static let statisticsLockKey: Int32 = 0x534C_5041

    /// Documents a sink writes before it checks the table's statistics again.
    static let statisticsCheckInterval = 2_000

    /// Records `count` documents written by a step.
    func recordWritten(_ count: Int) {
        guard count > 0 else { return }
        unanalyzedWrites.withLock { $0 += count }
    }

    /// Analyzes the documents table when it needs it; called by a step that caught up.
    func refreshStatisticsIfNeeded(_ session: PostgresSession) async {
        let due = unanalyzedWrites.withLock { written in
            guard written >= Self.statisticsCheckInterval else { return false }
            written = 0
            return true
        }
        guard due else { return }
        let schema = session.schema, name = session.endpoint.schema, logger = self.logger, source = self.source
        let table = "\(schema).documents", index = "\(schema).documents_vector"
        do {
            try await session.transaction { connection in
                // One sink at a time analyzes a schema; the others go on writing.
                var locked = false
                for try await acquired in try await connection.query("""
                    SELECT pg_try_advisory_xact_lock(\(Self.statisticsLockKey), hashtext(\(name)))
                    """, logger: logger).decode(Bool.self) { locked = acquired }
                guard locked else { return }
                let rows = try await connection.query("""
                    SELECT s.n_mod_since_analyze, c.reltuples::float8, s.last_analyze IS NULL AND s.last_autoanalyze IS NULL
                    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relid = to_regclass(\(table))
                    """, logger: logger)
                var changed: Int64 = 0, tuples = 0.0, never = true
                for try await (modified, estimate, unanalyzed) in rows.decode((Int64, Double, Bool).self) {
                    (changed, tuples, never) = (modified, estimate, unanalyzed)
                }
                guard never || Double(changed) > 0.1 * max(tuples, 0) else { return }
                let started = ContinuousClock.now
                try await connection.query("ANALYZE \(unescaped: schema).documents", logger: logger)
                try await connection.query("SELECT gin_clean_pending_list(to_regclass(\(index)))", logger: logger)
                let why = never ? "never analyzed before" : "\(changed) rows changed of about \(Int64(tuples))"
                logger.info("source \(source): analyzed the documents table (\(why)) in \(ContinuousClock.now - started)")
            }
        } catch {
            logger.warning("source \(source): could not refresh the documents table's statistics: \(PostgresErrors.describe(error))")
        }
    }
}
