import Foundation
import Testing
import SearchlightTestSupport

/// kill -9 of an indexing process at random instants never leaves the index inconsistent:
/// index writes and the checkpoint commit together, and a rebuild swaps in atomically.
@Suite struct CrashRecoveryTests {
    @Test func killingTheIndexerAtRandomPointsLeavesVerifyClean() async throws {
        let (db, model) = try CLI.workspace()
        #expect(try await CLI.run(["init", "--db", db.path, "--model", model]).status == 0)
        let (seed, random) = seededGenerator("killingTheIndexerAtRandomPointsLeavesVerifyClean")
        var generator = random
        var killed = 0
        for iteration in 0..<20 {
            // Foreign writes: a burst of single-row transactions the indexer has to catch up on.
            let base = 10_000 + iteration * 10_000
            try db.shell("""
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
                INSERT INTO notes SELECT \(base) + i, 'round \(iteration) note ' || i, 'body ' || (i * 7919 % 1000) FROM n;
                UPDATE notes SET title = title || ' edited' WHERE id % 5 = \(iteration % 5) AND id < \(base);
                DELETE FROM notes WHERE id % 7 = \(iteration % 7) AND id < \(base);
                """)
            // Sometimes a full rebuild, mostly incremental indexing; killed at a random instant.
            let command = iteration % 4 == 3 ? "reindex" : "index"
            let running = CLI.start([command, "--db", db.path, "--log-level", "error"])
            try await Task.sleep(for: .microseconds(UInt64.random(in: 10_000...250_000, using: &generator)))
            if running.process.isRunning {
                kill(running.process.processIdentifier, SIGKILL)
                killed += 1
            }
            _ = try await CLI.finish(running)
        }
        #expect(killed >= 10, "most runs were killed mid-way (\(killed) of 20)")
        // Restart: catch up, then the index must equal the source exactly.
        let verify = try await CLI.run(["verify", "--db", db.path, "--format", "json"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as! [String: Any]
        if verify.status != 0 { print("seed \(seed):", verify.stdout.prefix(2_000), verify.stderr) }
        #expect(report["differences"] as? Int == 0)
        #expect((report["integrityErrors"] as? [String])?.isEmpty == true)
    }
}
