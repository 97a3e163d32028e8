import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct HistoryNotificationTests {
    /// The first token the stream delivers that is at least `target`, or nil after `timeout`.
    static func firstToken(_ stream: AsyncStream<HistoryToken>, reaching target: HistoryToken, timeout: Duration) async -> HistoryToken? {
        await withTaskGroup(of: HistoryToken?.self) { group in
            group.addTask {
                for await token in stream where token >= target { return token }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test func inProcessCommitsPublishTheHeadToken() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let updates = store.historyUpdates()
        try await store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (1)") }
        try await store.dbPool.write { try $0.execute(sql: "INSERT INTO notes(id) VALUES (2)") }
        let head = try store.currentToken()
        #expect(await Self.firstToken(updates, reaching: head, timeout: .seconds(5)) == head)
    }

    @Test func burstsCoalesceToTheNewestToken() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        let updates = store.historyUpdates()
        for i in 1...50 {
            try await store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
        }
        let head = try store.currentToken()
        // Nothing read the stream while the 50 commits published their tokens: it holds the newest.
        let received = try await withTimeout(60) {
            var received: [HistoryToken] = []
            for await token in updates {
                received.append(token)
                if token >= head { break }
            }
            return received
        }
        #expect(received == [head], "a subscriber that did not keep up gets the newest token, not every one")
    }

    @Test func commitsByAnotherProcessAreNoticedThroughFileEvents() async throws {
        let db = try TestDatabase()
        var configuration = HistoryStore.Configuration()
        // With the fallback poll a minute away, a notice within 30 s can only come from inotify.
        configuration.watcherFallbackInterval = .seconds(60)
        let store = try HistoryStore(path: db.path, model: TestDatabase.notesModel, configuration: configuration)
        let updates = store.historyUpdates()
        // Readiness: the watcher delivers a first commit (through its file events, or through the
        // fallback poll if the commit came before it watched). Either way it watches from then on.
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'from another process');")
        let first = try store.currentToken()
        #expect(await Self.firstToken(updates, reaching: first, timeout: .seconds(600)) == first, "the watcher runs")
        try db.shell("INSERT INTO notes(id, title) VALUES (2, 'from another process');")
        let head = try store.currentToken()
        #expect(head > first)
        // Latency goals live in the benchmark; this pins that the watcher is event-driven.
        #expect(await Self.firstToken(updates, reaching: head, timeout: .seconds(30)) == head)
    }

    @Test func noUpdateWhenNothingTrackedChanged() async throws {
        let db = try TestDatabase(schema: TestDatabase.notesSchema + "CREATE TABLE other(x);")
        let store = try db.openStore()
        let updates = store.historyUpdates()
        try await store.write(author: "app") { try $0.execute(sql: "INSERT INTO other VALUES (1)") }
        try db.shell("INSERT INTO other VALUES (2);")
        // Then a tracked commit, from another process. If the untracked writes had recorded
        // history or woken subscribers, a token would have come before this one's.
        try db.shell("INSERT INTO notes(id) VALUES (1);")
        let transactions = try store.fetchTransactions(.all)
        #expect(transactions.count == 1, "the untracked writes recorded nothing")
        let head = try store.currentToken()
        #expect(transactions.first?.token == head)
        #expect(await Self.firstToken(updates, reaching: .zero, timeout: .seconds(600)) == head, "the first token delivered is the tracked commit's")
    }
}
