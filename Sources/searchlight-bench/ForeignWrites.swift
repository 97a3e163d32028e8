import Foundation
import GRDB
import SearchlightHistory

/// Scenario 1, continued: what tracking costs a *foreign* writer (the app's own code, another
/// process, a script: any write that does not go through `HistoryStore.write`). One statement
/// per row inside one transaction; SQLite has no statement triggers, so each row is a history
/// transaction of its own. Tracked and untracked databases, same rows, phases in order:
/// insert, update of a column the model does not track (`key`), update of an indexed column
/// (`body`), `INSERT OR REPLACE` of existing rows in batches (each leaves scratch rows until
/// cleanup: the last batch must cost what the first did), delete.
enum ForeignWrites {
    enum Phase: String, CaseIterable {
        case insert = "insert"
        case untrackedUpdate = "update of a column the model does not track"
        case indexedUpdate = "update of an indexed column"
        case replace = "INSERT OR REPLACE of existing rows"
        case delete = "delete"

        var target: (String, Double)? {
            switch self {
            case .insert: (">= 0.35x", 0.35)
            case .untrackedUpdate: (">= 0.9x", 0.9)
            case .replace: (">= 0.3x", 0.3)
            default: nil
            }
        }
    }

    struct Round {
        var seconds: [Phase: Double] = [:]
        var replaceBatches: [Double] = [] // seconds per batch
    }

    /// One pass of every phase on a fresh database of `variant` (tracked or untracked).
    static func pass(_ tracked: Bool, _ documents: ArraySlice<Document>, replaceBatch: Int) throws -> Round {
        let directory = try scratchDirectory("foreign")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pool, store) = try WriteOverhead.prepare(tracked ? .tracked : .untracked, in: directory)
        _ = store
        let ids = Array(1...documents.count)
        var round = Round()
        func timed(_ phase: Phase, _ body: (Database) throws -> Void) throws {
            round.seconds[phase] = try measure { try pool.write(body) }
        }
        try timed(.insert) { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)")
            for (id, doc) in zip(ids, documents) { try statement.execute(arguments: [id, doc.id, doc.title, doc.body]) }
        }
        try timed(.untrackedUpdate) { db in
            let statement = try db.cachedStatement(sql: "UPDATE docs SET key = ? WHERE id = ?")
            for id in ids { try statement.execute(arguments: ["k\(id)", id]) }
        }
        try timed(.indexedUpdate) { db in
            let statement = try db.cachedStatement(sql: "UPDATE docs SET body = body || ' updated' WHERE id = ?")
            for id in ids { try statement.execute(arguments: [id]) }
        }
        var replaceSeconds = 0.0
        for start in stride(from: 0, to: ids.count, by: replaceBatch) {
            let batch = Array(zip(ids, documents).dropFirst(start).prefix(replaceBatch))
            let seconds = try measure {
                try pool.write { db in
                    let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)")
                    for (id, doc) in batch { try statement.execute(arguments: [id, "r\(id)", doc.title, doc.body]) }
                }
            }
            round.replaceBatches.append(seconds / Double(batch.count))
            replaceSeconds += seconds
        }
        round.seconds[.replace] = replaceSeconds
        try timed(.delete) { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM docs WHERE id = ?")
            for id in ids { try statement.execute(arguments: [id]) }
        }
        return round
    }

    static func run(_ documents: [Document], rows: Int, rounds: Int) throws -> [Figure] {
        let slice = documents.prefix(rows)
        let replaceBatch = max(slice.count / 10, 1)
        var best: [Bool: [Phase: Double]] = [:]
        // The tracked round with the fastest replaces gives the batch-by-batch figure.
        var trackedBatches: [Double] = [], fastestReplace = Double.infinity
        for _ in 0..<rounds {
            for tracked in [true, false] {
                let round = try pass(tracked, slice, replaceBatch: replaceBatch)
                for (phase, seconds) in round.seconds { best[tracked, default: [:]][phase] = min(best[tracked]?[phase] ?? .infinity, seconds) }
                if tracked, round.seconds[.replace]! < fastestReplace {
                    fastestReplace = round.seconds[.replace]!
                    trackedBatches = round.replaceBatches
                }
            }
        }
        var figures: [Figure] = []
        for phase in Phase.allCases {
            let tracked = Double(slice.count) / best[true]![phase]!, untracked = Double(slice.count) / best[false]![phase]!
            let target = phase.target
            figures.append(Figure("1 write overhead", "foreign writer, \(phase.rawValue), \(slice.count) rows, one statement a row", unit: "rows/s",
                                  ours: tracked, baseline: untracked, baselineName: "untracked",
                                  target: target?.0, met: target.map { tracked / untracked >= $0.1 }))
        }
        if let first = trackedBatches.first, let last = trackedBatches.last {
            figures.append(Figure("1 write overhead", "foreign replaces, last batch of \(replaceBatch) vs first (per-row time)", unit: "µs/row",
                                  ours: last * 1e6, baseline: first * 1e6, baselineName: "first batch",
                                  target: "flat (<= 1.2x)", met: last <= 1.2 * first))
        }
        return figures
    }
}
