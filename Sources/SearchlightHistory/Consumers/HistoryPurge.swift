import GRDB

/// Deletes history in bounded chunks, each in its own short write transaction, so that
/// writers (in this process or another) never wait long for the lock.
package struct HistoryPurge {
    package var dbPool: DatabasePool
    /// At most this many changes are deleted per write transaction.
    package var chunkSize = 5_000

    package init(dbPool: DatabasePool, chunkSize: Int = 5_000) {
        self.dbPool = dbPool
        self.chunkSize = chunkSize
    }

    /// Deletes the history of `authors` (everyone's if `nil`) up to and including `bound`, and
    /// records how far history was purged, so that later fetches from older tokens fail with
    /// `historyExpired` rather than silently missing changes.
    package func delete(through bound: HistoryToken, authors: Set<String>?) throws -> HistoryCount {
        var total = HistoryCount(transactions: 0, changes: 0)
        // Never past the head: a purge mark ahead of it would expire history not yet written.
        let bound = min(bound, try dbPool.read(HistoryLog.headToken))
        guard bound > .zero else { return total }
        let authorFilter: SQL = authors.map { " AND \"author\" IN \(Array($0))" } ?? ""
        while true {
            let finished = try dbPool.write { db -> Bool in
                let chunkEnd: HistoryToken = try SQLRequest<HistoryToken>(literal: """
                    SELECT "token" FROM "searchlight_change"
                    WHERE "token" <= \(bound) AND "token" IN (SELECT "token" FROM "searchlight_transaction" WHERE "token" <= \(bound)\(authorFilter))
                    ORDER BY "token" LIMIT 1 OFFSET \(chunkSize)
                    """).fetchOne(db) ?? bound
                let newestTime = try SQLRequest<Double>(literal: """
                    SELECT max("timestamp") FROM "searchlight_transaction" WHERE "token" <= \(chunkEnd)\(authorFilter)
                    """).fetchOne(db)
                try db.execute(literal: """
                    DELETE FROM "searchlight_change" WHERE "token" <= \(chunkEnd)
                    AND "token" IN (SELECT "token" FROM "searchlight_transaction" WHERE "token" <= \(chunkEnd)\(authorFilter))
                    """)
                total.changes += db.changesCount
                try db.execute(literal: """
                    DELETE FROM "searchlight_transaction" WHERE "token" <= \(chunkEnd)\(authorFilter)
                    """)
                total.transactions += db.changesCount
                if chunkEnd > (try HistoryLog.purgedThrough(db)) {
                    try Meta.set(db, "purgedThroughToken", chunkEnd)
                }
                if let newestTime, newestTime > (try Meta.get(db, "purgedThroughTimestamp", as: Double.self) ?? 0) {
                    try Meta.set(db, "purgedThroughTimestamp", newestTime)
                }
                return chunkEnd >= bound
            }
            if finished { return total }
        }
    }
}
