import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

/// The change feed reads history in pages as it is consumed, each keyed by the token where the
/// previous one ended: what a page costs is counted in SQLite VM instructions, never timed.
@Suite(.serialized) struct HistoryFeedTests {
    /// A store whose log holds `transactions` one-change transactions (a foreign writer's bulk
    /// insert records one per row), its reads counted by `counter`.
    static func store(transactions: Int, _ counter: StepCounter) throws -> (TestDatabase, HistoryStore) {
        let database = try TestDatabase()
        _ = try database.openStore()
        var configuration = HistoryStore.databaseConfiguration()
        configuration.prepareDatabase { db in counter.install(db) }
        let store = try HistoryStore(dbPool: DatabasePool(path: database.path, configuration: configuration), model: TestDatabase.notesModel)
        try store.dbPool.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO notes(id, title) SELECT i, 'note ' || i FROM n
                """, arguments: [transactions])
        }
        return (database, store)
    }

    /// The pages of a feed, and the VM instructions each one cost.
    static func pages(_ feed: HistoryFeed, _ counter: StepCounter) async throws -> [(transactions: [HistoryTransaction], steps: Int)] {
        var pages: [(transactions: [HistoryTransaction], steps: Int)] = []
        var iterator = feed.makeAsyncIterator()
        var before = counter.count
        while let page = try await iterator.next() {
            pages.append((page, counter.count - before))
            before = counter.count
        }
        return pages
    }

    /// Regression: `history` read the whole backlog into memory before the first page (a log
    /// of 1,000,000 changes took 7.5 minutes and 223 MB). Now each page holds about `pageSize`
    /// log rows, the first page of a long backlog costs what it costs for a short one, and the
    /// last page costs what the first does (keyed by token, not OFFSET): memory and work per
    /// page do not grow with the log.
    @Test func theFeedReadsPagesThatCostTheSameWhateverTheBacklog() async throws {
        let counter = StepCounter()
        let pageSize = 200 // log rows: 200 transactions of one change (another writer's: one row each)
        var firstPageSteps: [Int] = []
        for backlog in [1_000, 20_000] {
            let (database, store) = try Self.store(transactions: backlog, counter)
            defer { withExtendedLifetime(database) {} }
            let pages = try await Self.pages(HistoryFeed(store: store, request: .all, follow: false, pageSize: pageSize), counter)
            let tokens = pages.flatMap { $0.transactions.map(\.token) }
            #expect(tokens == (try store.fetchTransactions(.all)).map(\.token), "every transaction once, in order")
            #expect(tokens.count == backlog)
            #expect(pages.allSatisfy { $0.transactions.count <= pageSize }, "at most \(pageSize) log rows a page")
            #expect(pages.count == backlog / pageSize)
            let steps = pages.map(\.steps)
            print("backlog \(backlog): \(pages.count) pages, VM instructions per page from \(steps.min()!) to \(steps.max()!)")
            #expect(steps.max()! < steps.min()! * 2, "a page costs about the same wherever it is: \(steps)")
            firstPageSteps.append(steps[0])
        }
        #expect(firstPageSteps[1] < firstPageSteps[0] * 2, "the first page of 20,000 transactions cost \(firstPageSteps[1]) VM instructions, of 1,000 \(firstPageSteps[0])")
    }

    /// Filters, limits and a start date hold across pages.
    @Test func filtersLimitsAndDatesHoldAcrossPages() async throws {
        let counter = StepCounter()
        let (database, store) = try Self.store(transactions: 500, counter)
        defer { withExtendedLifetime(database) {} }
        try await store.write(author: "app") { db in
            try db.execute(sql: "UPDATE notes SET title = 'changed' WHERE id % 7 = 0")
        }
        for request in [
            HistoryRequest(start: .token(HistoryToken(100)), filter: HistoryFilter(authors: .excluding(["app"]))),
            HistoryRequest(start: .oldest, filter: HistoryFilter(authors: .only(["app"]))),
            HistoryRequest(start: .oldest, limit: 130),
            HistoryRequest(start: .token(HistoryToken(400)), filter: HistoryFilter(changeTypes: [.update])),
            HistoryRequest(start: .date(Date(timeIntervalSince1970: 0))),
        ] {
            let pages = try await Self.pages(HistoryFeed(store: store, request: request, follow: false, pageSize: 50), counter)
            #expect(pages.flatMap(\.transactions) == (try store.fetchTransactions(request)), "\(request)")
        }
    }

    /// Errors are typed: a bad request throws a `SearchlightError` on the first page.
    @Test func aBadRequestThrowsATypedError() async throws {
        let counter = StepCounter()
        let (database, store) = try Self.store(transactions: 3, counter)
        defer { withExtendedLifetime(database) {} }
        var request = HistoryRequest.all
        request.entities = ["Nope"]
        do {
            for try await _ in store.history(request, follow: false) {}
            Issue.record("an unknown entity was accepted")
        } catch {
            let typed: SearchlightError = error
            #expect(typed.code == .unknownEntity)
        }
    }

    /// Following reads its backlog in pages, then what commits after, in pages too; a
    /// transaction larger than a page comes whole, in a page of its own.
    @Test func followingPagesTheBacklogThenNewCommits() async throws {
        let counter = StepCounter()
        let (database, store) = try Self.store(transactions: 200, counter)
        defer { withExtendedLifetime(database) {} }
        let pageSize = 20
        let received = try await withThrowingTaskGroup(of: [[HistoryTransaction]]?.self) { group in
            group.addTask {
                var pages: [[HistoryTransaction]] = []
                var count = 0
                for try await page in HistoryFeed(store: store, request: .all, follow: true, pageSize: pageSize) {
                    pages.append(page)
                    count += page.count
                    if count == 200 {
                        // Caught up with the backlog: commit a large transaction, then small ones.
                        try await store.write(author: "bulk") { db in
                            try db.execute(sql: "UPDATE notes SET body = 'b' WHERE id <= 50")
                        }
                        try await store.dbPool.write { db in
                            try db.execute(sql: "UPDATE notes SET body = 'c' WHERE id > 150")
                        }
                    }
                    if count == 200 + 1 + 50 { break }
                }
                return pages
            }
            group.addTask {
                try await Task.sleep(for: .seconds(120)) // a bound, not a latency assertion
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        let pages = try #require(received, "the feed delivered the backlog and the new commits within the bound")
        let transactions = pages.flatMap { $0 }
        #expect(transactions.map(\.token) == (try store.fetchTransactions(.all)).map(\.token))
        for page in pages {
            // A HistoryStore.write's transaction is a header and its changes; another writer's
            // change is a row of its own.
            let rows = page.reduce(0) { $0 + ($1.author == nil ? 0 : 1) + $1.changes.count }
            #expect(rows <= pageSize || page.count == 1, "a page of \(page.count) transactions, \(rows) log rows")
        }
        #expect(pages.contains { $0.count == 1 && $0[0].author == "bulk" && $0[0].changes.count == 50 })
    }

    /// A following feed whose database another connection uninstalls (as another process
    /// would): the next read says `notInstalled`, not SQLite's "no such table".
    @Test func aFollowingFeedSaysNotInstalledAfterAnUninstallElsewhere() async throws {
        let database = try TestDatabase()
        let store = try database.openStore()
        try database.shell("INSERT INTO notes(id, title) VALUES (1, 'before');")
        #expect(try store.fetchTransactions(.all).count == 1)
        try HistoryStore(path: database.path).uninstall()
        let error = await #expect(throws: SearchlightError.self) {
            try await withTimeout(600) {
                var feed = store.history(.all, follow: true).makeAsyncIterator()
                _ = try await feed.next()
            }
        }
        #expect(error?.code == .notInstalled, "\(String(describing: error))")
    }
}
