import Foundation
import GRDB
import SearchlightTestSupport
import Testing

/// The app migrates its schema while its sink follows and its writers write: a 12-step table
/// remake from the `sqlite3` shell (create, copy with changes, drop, rename), the same with GRDB's
/// `DatabaseMigrator`, a column rename away and back, a table renamed away and back. Capture
/// heals; after catch-up PostgreSQL equals the rows (INTEGER, NOCASE TEXT, BLOB and REAL keys),
/// every write the writers logged through `HistoryStore.write` was reached, nothing applied twice.
@Suite(.enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct SourceMigrationTests {
    @Test func theAppsMigrationsWhileItsSinkRunsLoseNothing() async throws {
        let (seed, generator) = seededGenerator("theAppsMigrationsWhileItsSinkRunsLoseNothing")
        var random = generator
        let started = ContinuousClock.now
        let source = try await FaultSource(.mutate)
        let postgres = FaultPostgres.fresh("migrate")
        let id = try source.sourceID()
        var failures: [String] = []
        try await source.catchUp(postgres)
        try await postgres.installAppliedLog()
        let sink = source.follow(postgres)
        #expect(await sink.waitUntil(stderrContains: "following source"), "\(sink.stderr.suffix(500))")
        let logs = (1...2).map { source.directory + "/writer-\($0).log" }
        let writers = (1...2).map { source.writer(log: logs[$0 - 1], seconds: 6, seed: seed &+ UInt64($0), index: $0) }
        var migrations: [String] = []
        var step = 0
        // Every kind of migration at least once, however long the writers take on a loaded machine.
        while writers.contains(where: \.isRunning) || step < 4 {
            try await Task.sleep(for: .microseconds(100_000 + random.next() % 400_000))
            let (table, definition) = FaultSource.mutateDefinitions[Int(random.next() % 4)]
            step += 1
            switch step % 4 {
            case 1:
                // The 12-step remake, from the sqlite3 shell; the copy changes some titles and drops some rows.
                try await FaultProcess.run("/usr/bin/env", ["sqlite3", "-bail", "-cmd", ".timeout 20000", source.path], input: """
                    PRAGMA foreign_keys = OFF;
                    BEGIN IMMEDIATE;
                    CREATE TABLE "new_\(table)" \(definition);
                    INSERT INTO "new_\(table)"(k, title, body, extra)
                      SELECT k, CASE WHEN length(title) % 3 = 0 THEN title || ' remade' ELSE title END, body, extra
                      FROM "\(table)" WHERE length(coalesce(title, '')) % 5 <> \(step % 5);
                    DROP TABLE "\(table)";
                    ALTER TABLE "new_\(table)" RENAME TO "\(table)";
                    COMMIT;
                    """)
                migrations.append("remake \(table) (sqlite3)")
            case 2:
                try migrate { db in
                    try db.execute(sql: "ALTER TABLE \"\(table)\" RENAME COLUMN body TO body_renamed")
                }
                try await Task.sleep(for: .microseconds(random.next() % 300_000))
                try migrate { db in
                    try db.execute(sql: "ALTER TABLE \"\(table)\" RENAME COLUMN body_renamed TO body")
                }
                migrations.append("rename column \(table).body away and back (GRDB)")
            case 3:
                var migrator = DatabaseMigrator()
                migrator.registerMigration("remake \(table) \(step)") { db in
                    try db.execute(sql: "CREATE TABLE \"new_\(table)\" \(definition)")
                    try db.execute(sql: "INSERT INTO \"new_\(table)\"(k, title, body, extra) SELECT k, title, body || ' migrated', extra FROM \"\(table)\"")
                    try db.drop(table: table)
                    try db.rename(table: "new_\(table)", to: table)
                }
                try migrate(migrator)
                migrations.append("remake \(table) (DatabaseMigrator)")
            default:
                try migrate { db in try db.execute(sql: "ALTER TABLE \"\(table)\" RENAME TO \"\(table)_renamed\"") }
                try await Task.sleep(for: .microseconds(random.next() % 300_000))
                try migrate { db in try db.execute(sql: "ALTER TABLE \"\(table)_renamed\" RENAME TO \"\(table)\"") }
                migrations.append("rename \(table) away and back (GRDB)")
            }
        }
        for writer in writers {
            let result = await writer.finish()
            if result.status != 0 { failures.append("a writer met a busy or locked database: \(result.stderr.prefix(300))") }
        }
        if !sink.isRunning { failures.append("the following sink exited during the migrations: \(sink.stderr.suffix(800))") }
        sink.signal(SIGTERM)
        let stopped = await sink.finish(timeout: 60)
        if stopped.status != 0 || stopped.signalled { failures.append("the sink did not exit 0 on SIGTERM: \(stopped.status) \(stopped.stderr.suffix(6000))") }

        let once = try await source.catchUp(postgres)
        #expect(once.contains("caught up at token"), "\(once)")
        failures += try await FaultOracle.differences(source, id: id, postgres: postgres).prefix(10)
        let highest = FaultOracle.highestLoggedToken(logs)
        let reached = try await postgres.checkpoint(id)
        if (reached?.token ?? 0) < highest { failures.append("PostgreSQL's checkpoint \(reached?.token ?? 0) is before a write the writers committed (\(highest))") }
        let applied = try await postgres.appliedLogProblems()
        failures += applied.problems
        let rows = try source.rows().count
        print("theAppsMigrations: seed \(seed), \(migrations.count) migrations (\(migrations.joined(separator: ", "))), \(rows) rows, \(applied.batches) batches, \(applied.resyncs) resyncs (\(reached?.reason ?? "")), \(ContinuousClock.now - started)")
        // Enough to check, on a loaded machine too: every kind of migration ran, and each writer
        // committed writes during them (how many rows remain depends on the machine's speed and
        // on the rows the remakes drop, so it is no measure of that).
        let logged = logs.map { (try? String(contentsOfFile: $0, encoding: .utf8))?.split(separator: "\n").count ?? 0 }
        #expect(migrations.count >= 4 && logged.allSatisfy { $0 > 0 }, "the test migrated and wrote enough to check: \(migrations.count) migrations, writes logged \(logged), \(rows) rows")
        #expect(failures.isEmpty, "seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it): \(failures.joined(separator: "\n"))")

        func queue() throws -> DatabaseQueue {
            var configuration = Configuration()
            configuration.busyMode = .timeout(20)
            return try DatabaseQueue(path: source.path, configuration: configuration)
        }
        func migrate(_ body: (Database) throws -> Void) throws {
            let queue = try queue()
            defer { try? queue.close() }
            try queue.write(body)
        }
        func migrate(_ migrator: DatabaseMigrator) throws {
            let queue = try queue()
            defer { try? queue.close() }
            try migrator.migrate(queue)
        }
    }
}
