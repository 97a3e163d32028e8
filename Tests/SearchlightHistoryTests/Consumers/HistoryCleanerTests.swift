import Foundation
import Synchronization
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct HistoryCleanerTests {
    /// A store with `count` single-row transactions by `author`, an hour apart.
    func store(transactions count: Int = 6, author: String? = "app", clock: TestClock = TestClock()) throws -> (TestDatabase, HistoryStore, [HistoryToken]) {
        let db = try TestDatabase()
        let store = try db.openStore(clock: clock.function)
        var tokens: [HistoryToken] = []
        for i in 1...count {
            try store.write(author: author) { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
            tokens.append(try store.currentToken())
            clock.advance(3600)
        }
        return (db, store, tokens)
    }

    @Test func withoutCheckpointsNothingIsDeleted() throws {
        let (db, store, _) = try store()
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init())
        let report = try cleaner.clean()
        #expect(report.deleted.transactions == 0)
        #expect(report.plan.holdbacks == [.noCheckpoint(author: "indexer")])
        #expect(try store.fetchCount(.all).transactions == 6)
    }

    @Test func withNoRequiredConsumersNothingIsDeleted() throws {
        let (db, store, _) = try store()
        defer { withExtendedLifetime(db) {} }
        let report = try HistoryCleaner(store: store, configuration: .init()).clean()
        #expect(report.deleted.transactions == 0)
        #expect(report.plan.holdbacks == [.noRequiredConsumers])
    }

    @Test func deletesUpToTheSlowestCheckpoint() throws {
        let (db, store, tokens) = try store()
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        try store.registerConsumer("exporter")
        try store.saveCheckpoint(tokens[4], for: "indexer")
        try store.saveCheckpoint(tokens[1], for: "exporter")
        let cleaner = HistoryCleaner(store: store, configuration: .init())
        let plan = try cleaner.plan()
        #expect(plan.deleteThrough == tokens[1])
        #expect(plan.count.transactions == 2)
        #expect(plan.holdbacks == [.checkpoint(author: "exporter", token: tokens[1])])
        #expect(try store.fetchCount(.all).transactions == 6, "a dry run deletes nothing")
        let report = try cleaner.clean()
        #expect(report.deleted == HistoryCount(transactions: 2, changes: 2))
        #expect(try store.fetchTransactions(.all).map(\.token) == Array(tokens[2...]))
        // Both consumers can go on; checkpoints are untouched.
        #expect(try store.fetchTransactions(.after(tokens[1])).count == 4)
        #expect(try store.checkpoint(for: "exporter")?.token == tokens[1])
    }

    @Test func batchAuthorsAreNotWaitedFor() throws {
        let (db, store, tokens) = try store()
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        try store.registerConsumer("importer")
        try store.saveCheckpoint(tokens[3], for: "indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init(batchAuthors: ["importer"]))
        #expect(try cleaner.clean().deleted.transactions == 4)
    }

    @Test func allAuthorsMustCheckpointEvenIfNotRegistered() throws {
        let (db, store, tokens) = try store()
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        try store.saveCheckpoint(tokens[3], for: "indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init(allAuthors: ["widget"]))
        #expect(try cleaner.clean().deleted.transactions == 0)
        try store.saveCheckpoint(tokens[2], for: "widget")
        #expect(try cleaner.clean().deleted.transactions == 3)
    }

    @Test func maximumDurationForcesDeletionAndTheLaggardGetsHistoryExpired() throws {
        let clock = TestClock()
        let (db, store, tokens) = try store(clock: clock)
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("laggard")
        try store.saveCheckpoint(tokens[0], for: "laggard")
        // Transactions are at t0, t0+1h … t0+5h; now is t0+6h. Keep 2.5 hours.
        let cleaner = HistoryCleaner(store: store, configuration: .init(maximumDuration: .seconds(2.5 * 3600)))
        let plan = try cleaner.plan()
        #expect(plan.forcedByMaximumDuration)
        #expect(plan.expiringConsumers == ["laggard"])
        #expect(try cleaner.clean().deleted.transactions == 4)
        let error = try #require(throws: SearchlightError.self) { try store.fetchTransactions(.after(tokens[0])) }
        #expect(error.code == .historyExpired)
        #expect(try store.checkpoint(for: "laggard")?.token == tokens[0], "cleanup never resets checkpoints")
        // A consumer that had processed through the purge point is fine.
        #expect(try store.fetchTransactions(.after(tokens[3])).count == 2)
    }

    @Test func maximumDurationNeverDeletesAYoungTransactionBehindAClockJump() throws {
        let clock = TestClock()
        let db = try TestDatabase()
        let store = try db.openStore(clock: clock.function)
        try store.registerConsumer("indexer")
        let start = clock.date
        for (i, offset) in [0.0, 100_000, 10].enumerated() { // the third write's clock jumped back
            clock.set(start + offset)
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
        }
        clock.set(start + 100_000 + 50)
        let cleaner = HistoryCleaner(store: store, configuration: .init(maximumDuration: .seconds(1000)))
        // Token 2 is young, so nothing after token 1 can be deleted by duration.
        #expect(try cleaner.clean().deleted.transactions == 1)
        #expect(try store.fetchCount(.all).transactions == 2)
    }

    @Test func byDurationThrottles() throws {
        let clock = TestClock()
        let (db, store, tokens) = try store(clock: clock)
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init(strategy: .byDuration(.seconds(600))))
        try store.saveCheckpoint(tokens[0], for: "indexer")
        #expect(try cleaner.cleanIfNeeded()?.deleted.transactions == 1)
        try store.saveCheckpoint(tokens[1], for: "indexer")
        clock.advance(599)
        #expect(try cleaner.cleanIfNeeded() == nil)
        clock.advance(1)
        #expect(try cleaner.cleanIfNeeded()?.deleted.transactions == 1)
    }

    @Test func byNotificationThrottles() throws {
        let (db, store, tokens) = try store()
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        try store.saveCheckpoint(tokens[2], for: "indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init(strategy: .byNotification(times: 3)))
        #expect(try cleaner.cleanIfNeeded() == nil)
        #expect(try cleaner.cleanIfNeeded() == nil)
        #expect(try cleaner.cleanIfNeeded()?.deleted.transactions == 3)
        #expect(try cleaner.cleanIfNeeded() == nil)
    }

    @Test func strategyNoneNeverCleansAutomaticallyButManualCleanObeysTheSameRules() throws {
        let (db, store, tokens) = try store()
        defer { withExtendedLifetime(db) {} }
        try store.registerConsumer("indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init(strategy: .none))
        #expect(try cleaner.cleanIfNeeded() == nil)
        #expect(try cleaner.clean().deleted.transactions == 0, "no checkpoint yet")
        try store.saveCheckpoint(tokens[1], for: "indexer")
        #expect(try cleaner.cleanIfNeeded() == nil)
        #expect(try cleaner.clean().deleted.transactions == 2)
    }

    @Test func deletionRestrictedToAuthorsKeepsOtherAuthorsHistory() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        for (i, author) in ["app", "sync", "app", "sync"].enumerated() {
            try store.write(author: author) { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
        }
        try db.shell("INSERT INTO notes(id) VALUES (99);")
        try store.registerConsumer("indexer")
        try store.saveCheckpoint(try store.currentToken(), for: "indexer")
        let cleaner = HistoryCleaner(store: store, configuration: .init(onlyAuthors: ["app"]))
        #expect(try cleaner.clean().deleted.transactions == 2)
        #expect(try store.fetchTransactions(.all).map(\.author) == ["sync", "sync", nil])
    }

    /// The log rows each committed transaction of the writer connection deleted: a purge's chunks.
    final class LogDeletions: TransactionObserver, Sendable {
        private struct State { var pending: [Int64] = []; var committed: [[Int64]] = [] }
        private let state = Mutex(State())
        var chunks: [[Int64]] { state.withLock { $0.committed } }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
            if case let .delete(tableName) = eventKind { return tableName == "searchlight_log" }
            return false
        }
        func databaseDidChange(with event: DatabaseEvent) { state.withLock { $0.pending.append(event.rowID) } }
        func databaseDidCommit(_ db: Database) {
            state.withLock { state in
                if !state.pending.isEmpty { state.committed.append(state.pending) }
                state.pending = []
            }
        }
        func databaseDidRollback(_ db: Database) { state.withLock { $0.pending = [] } }
    }

    @Test func deletionRunsInChunks() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "bulk") { db in
            for i in 1...1000 { try db.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
        }
        for i in 1001...1100 { try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) } }
        try store.registerConsumer("indexer")
        try store.saveCheckpoint(try store.currentToken(), for: "indexer")
        // Each log row and whether it is a transaction's header.
        let isHeader = try store.dbPool.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: #"SELECT "id", "type" = 0 FROM "searchlight_log""#).map { ($0[0] as Int64, $0[1] as Bool) })
        }
        let deletions = LogDeletions()
        store.dbPool.add(transactionObserver: deletions)
        let chunkSize = 7
        let report = try HistoryCleaner(store: store, configuration: .init(chunkSize: chunkSize)).clean()
        #expect(report.deleted == HistoryCount(transactions: 101, changes: 1100))
        #expect(try store.fetchCount(.all).transactions == 0)
        let chunks = deletions.chunks
        #expect(chunks.flatMap { $0 }.sorted() == isHeader.keys.sorted(), "every row deleted once")
        // A chunk ends where a transaction ends: at most `chunkSize` rows and the rest of the
        // transaction it stopped in (here 1 row: the small transactions have 2 rows), or a
        // single transaction larger than that (the bulk one, 1,001 rows).
        for chunk in chunks {
            let transactions = chunk.filter { isHeader[$0] == true }.count
            #expect(chunk.count <= chunkSize + 1 || transactions == 1, "a chunk of \(chunk.count) rows, \(transactions) transactions")
        }
        #expect(chunks.count >= 1 + 100 * 2 / (chunkSize + 1), "\(chunks.map(\.count))")
        #expect(chunks.contains { $0.count == 1_001 }, "the bulk transaction, never split")
        // The head survives an empty log, and new history continues after it.
        let head = try store.currentToken()
        try db.shell("INSERT INTO notes(id) VALUES (5000);")
        #expect(try store.fetchTransactions(.after(head)).count == 1)
    }
}

/// Regressions of cleanup under concurrency.
@Suite struct HistoryPurgeTests {
    /// Regression: when the bound was the newest transaction, the purge deleted every row
    /// after its cursor, including a transaction another process committed while it ran; nobody
    /// got `historyExpired` and the index never saw that change.
    @Test func aTransactionCommittedWhileThePurgeRunsIsKept() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        for i in 1...3 { try db.shell("INSERT INTO notes(id, title) VALUES (\(i), 'early');") }
        let bound = try store.currentToken()
        var purge = HistoryPurge(dbPool: store.dbPool, chunkSize: 2)
        purge.afterPlanning = { try db.shell("INSERT INTO notes(id, title) VALUES (99, 'late');") }
        let deleted = try purge.delete(through: bound, authors: nil)
        #expect(deleted.transactions == 3)
        let late = try store.fetchChanges(.after(bound))
        #expect(late.map(\.objectID) == [.integer(99)], "the late transaction and its change survive")
        #expect(try store.fetchTransactions(.all).count == 1)
    }

    /// Suspected, and proven: with an author filter, a chunk that split a
    /// transaction deleted its header, and the next chunk (which finds authored transactions by
    /// their headers) left that transaction's remaining changes behind, orphaned. Chunks now end
    /// on transaction boundaries.
    @Test func anAuthorFilteredPurgeNeverLeavesChangesWithoutTheirTransaction() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        for batch in 0..<3 {
            try store.write(author: "bulk") { db in
                for i in 1...10 { try db.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [batch * 100 + i]) }
            }
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [batch * 100 + 50]) }
        }
        let deleted = try HistoryPurge(dbPool: store.dbPool, chunkSize: 4).delete(through: try store.currentToken(), authors: ["bulk"])
        #expect(deleted == HistoryCount(transactions: 3, changes: 30))
        let orphans = try store.dbPool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_log c WHERE c.type <> 0 AND NOT EXISTS (SELECT 1 FROM searchlight_log h WHERE h.id = c.token)")
        }
        #expect(orphans == 0)
        #expect(try store.fetchTransactions(.all).map(\.author) == ["app", "app", "app"])
    }
}
