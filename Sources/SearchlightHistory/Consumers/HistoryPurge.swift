import GRDB

/// Deletes history in bounded chunks, each in its own short write transaction, so that
/// writers (in this process or another) never wait long for the lock.
package struct HistoryPurge {
    package var dbPool: DatabasePool
    /// At most this many log rows are deleted per write transaction.
    package var chunkSize = 5_000
    /// Runs between planning and deleting (tests commit concurrent writes there).
    package var afterPlanning: (@Sendable () throws -> Void)?

    package init(dbPool: DatabasePool, chunkSize: Int = 5_000) {
        self.dbPool = dbPool
        self.chunkSize = max(chunkSize, 1)
    }

    /// Deletes the history of `authors` (everyone's if `nil`) up to and including the
    /// transaction `requested`.
    ///
    /// The first write records how far history is purged, before anything is deleted: from
    /// then on a fetch from an older token throws `historyExpired`, so no reader ever sees a
    /// transaction whose changes are half deleted.
    package func delete(through requested: HistoryToken, authors: Set<String>?) throws -> HistoryCount {
        var total = HistoryCount(transactions: 0, changes: 0)
        let authorFilter: SQL = authors.map { " AND \"author\" IN \(Array($0))" } ?? ""
        // Find the log rows the purge covers (every row up to the next header) in a read: the
        // scans must not hold the write lock. History up to the bound no longer changes.
        let found = try dbPool.read { db -> (bound: HistoryToken, start: Int64, end: Int64, newestTime: Double?)? in
            // Never past the head: a purge mark ahead of it would expire history not yet written.
            let limit = min(requested, try HistoryLog.headToken(db))
            guard let bound = try HistoryToken.fetchOne(db, sql: """
                SELECT "id" FROM "searchlight_log" WHERE \(LogRowType.transactionStart) AND "id" <= ? ORDER BY "id" DESC LIMIT 1
                """, arguments: [limit]) else { return nil }
            let newestTime = try SQLRequest<Double>(literal: """
                SELECT max("timestamp") FROM "searchlight_log" WHERE \(sql: LogRowType.transactionStart) AND "id" <= \(bound)\(authorFilter)
                """).fetchOne(db)
            let start = try Int64.fetchOne(db, sql: #"SELECT min("id") FROM "searchlight_log""#) ?? 0
            // The purge ends with the bound transaction's last row: before the next header, or,
            // when the bound is the newest transaction, at the newest row of this snapshot. Never
            // open-ended: rows committed after planning belong to newer transactions.
            let end = try Int64.fetchOne(db, sql: """
                SELECT "id" - 1 FROM "searchlight_log" WHERE \(LogRowType.transactionStart) AND "id" > ? ORDER BY "id" LIMIT 1
                """, arguments: [bound])
                ?? Int64.fetchOne(db, sql: #"SELECT max("id") FROM "searchlight_log""#) ?? bound.rawValue
            return (bound, start, end, newestTime)
        }
        guard let found else { return total }
        try afterPlanning?()
        // Mark the purge before deleting anything. Scratch rows of the capture triggers live only
        // inside a writing statement: any row left (by an INSERT OR REPLACE, or an insert that
        // was ignored) is stale, and holds values of a replaced row: delete them too.
        try dbPool.write { db in
            try db.execute(sql: #"DELETE FROM "searchlight_replaced""#)
            try db.execute(sql: #"DELETE FROM "searchlight_conflict""#)
            if found.bound > (try HistoryLog.purgedThrough(db)) { try Meta.set(db, .purgedThroughToken, found.bound) }
            if let newestTime = found.newestTime, newestTime > (try Meta.get(db, .purgedThroughTimestamp, as: Double.self) ?? 0) {
                try Meta.set(db, .purgedThroughTimestamp, newestTime)
            }
        }
        let plan = found
        var cursor = plan.start
        while cursor <= plan.end {
            let deleted = try dbPool.write { db -> HistoryCount? in
                // Skip gaps: continue from the first row still there.
                guard let first = try Int64.fetchOne(db, sql: #"SELECT min("id") FROM "searchlight_log" WHERE "id" >= ?"#, arguments: [cursor]),
                      first <= plan.end else { return nil }
                // A chunk ends where a transaction ends: with an author filter, the next chunk
                // finds authored transactions by their headers, so a transaction split across
                // chunks would leave its remaining changes orphaned.
                let candidate = min(first + Int64(chunkSize) - 1, plan.end)
                let last = min(try Int64.fetchOne(db, sql: """
                    SELECT "id" - 1 FROM "searchlight_log" WHERE \(LogRowType.transactionStart) AND "id" > ? ORDER BY "id" LIMIT 1
                    """, arguments: [candidate]) ?? plan.end, plan.end)
                var condition: SQL = "\"id\" BETWEEN \(first) AND \(last)"
                if authors != nil {
                    let byAuthor: SQL = """
                         AND "token" IN (SELECT "id" FROM "searchlight_log" WHERE "type" = \(LogRowType.transactionHeader)
                          AND "id" BETWEEN (SELECT "token" FROM "searchlight_log" WHERE "id" = \(first)) AND \(plan.bound)\(authorFilter))
                        """
                    condition += byAuthor
                }
                let counts = try SQLRequest<Row>(literal: """
                    SELECT count(*) FILTER (WHERE \(sql: LogRowType.transactionStart)), count(*) FILTER (WHERE "type" IN (1, 2, 3))
                    FROM "searchlight_log" WHERE \(condition)
                    """).fetchOne(db)!
                let newest = try Int64.fetchOne(db, sql: #"SELECT max("id") FROM "searchlight_log""#)
                try db.execute(literal: "DELETE FROM \"searchlight_log\" WHERE \(condition)")
                // SQLite gives another writer's change the next rowid, and its id is its token: a
                // placeholder keeps the newest id deleted, so that no token is given again.
                if let newest, try Int64.fetchOne(db, sql: #"SELECT max("id") FROM "searchlight_log""#).map({ $0 < newest }) ?? true {
                    try db.execute(sql: #"INSERT INTO "searchlight_log"("id", "token", "type") VALUES (?, ?, ?)"#,
                                   arguments: [newest, plan.bound, LogRowType.placeholder])
                }
                cursor = last + 1
                return HistoryCount(transactions: counts[0], changes: counts[1])
            }
            guard let deleted else { break }
            total.transactions += deleted.transactions
            total.changes += deleted.changes
        }
        return total
    }
}
