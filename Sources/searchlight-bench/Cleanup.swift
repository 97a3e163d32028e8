import Foundation
import GRDB
import SearchlightHistory
import Synchronization

/// Scenario 6: purging 1M history changes while another writer keeps writing; the longest
/// time that writer waited for a write.
enum Cleanup {
    static func run(changes: Int) throws -> [Figure] {
        let directory = try scratchDirectory("cleanup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cleanup.sqlite").path
        let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
        try pool.write { try $0.execute(sql: "CREATE TABLE items(id INTEGER PRIMARY KEY, value INTEGER)") }
        let model = try SearchlightModel(entities: [SearchlightModel.Entity(name: "Item", table: "items", primaryKey: "id")])
        let store = try HistoryStore(dbPool: pool, model: model)
        // 1M changes: 1,000 transactions of 1,000 inserts.
        for batch in 0..<(changes / 1_000) {
            try store.write(author: "bulk") { db in
                try db.execute(sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
                    INSERT INTO items(id, value) SELECT ? + i, i FROM n
                    """, arguments: [batch * 1_000])
            }
        }
        try store.registerConsumer("consumer")
        try store.saveCheckpoint(try store.currentToken(), for: "consumer")

        let stop = Mutex(false)
        let worst = Mutex(0.0)
        let writes = Mutex(0)
        let writer = Thread {
            let clock = ContinuousClock()
            var i = 0
            while !stop.withLock({ $0 }) {
                let start = clock.now
                try? store.write(author: "writer") { db in
                    try db.execute(sql: "UPDATE items SET value = value + 1 WHERE id = ?", arguments: [1 + i % 1000])
                }
                let waited = (clock.now - start).seconds * 1000
                worst.withLock { $0 = max($0, waited) }
                writes.withLock { $0 += 1 }
                i += 1
                usleep(1_000)
            }
        }
        writer.start()
        Thread.sleep(forTimeInterval: 0.2)
        worst.withLock { $0 = 0 }
        let cleaner = HistoryCleaner(store: store, configuration: .init())
        var deleted = HistoryCount(transactions: 0, changes: 0)
        let purgeSeconds = try measure { deleted = try cleaner.clean().deleted }
        stop.withLock { $0 = true }
        while !writer.isFinished { usleep(1_000) }
        let longest = worst.withLock { $0 }
        return [
            Figure("6 cleanup", "purge \(deleted.changes) changes", unit: "s", ours: purgeSeconds),
            Figure("6 cleanup", "longest wait of a concurrent writer (\(writes.withLock { $0 }) writes)", unit: "ms",
                   ours: longest, target: "<= 50 ms", met: longest <= 50),
        ]
    }
}
