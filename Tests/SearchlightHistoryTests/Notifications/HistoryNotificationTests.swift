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
        var received: [HistoryToken] = []
        for await token in updates {
            received.append(token)
            if token == head { break }
        }
        #expect(received.count < 50, "a subscriber that did not keep up gets the newest token, not every one")
        #expect(received == received.sorted())
    }

    @Test func commitsByAnotherProcessAreNoticedThroughFileEvents() async throws {
        let db = try TestDatabase()
        var configuration = HistoryStore.Configuration()
        // With the fallback poll 30 s away, a notice within seconds can only come from inotify.
        configuration.watcherFallbackInterval = .seconds(30)
        let store = try HistoryStore(path: db.path, model: TestDatabase.notesModel, configuration: configuration)
        let updates = store.historyUpdates()
        try await Task.sleep(for: .milliseconds(200)) // let the watcher start
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'from another process');")
        let head = try store.currentToken()
        // Latency goals live in the benchmark; this pins that the watcher is event-driven.
        #expect(await Self.firstToken(updates, reaching: head, timeout: .seconds(10)) == head)
    }

    @Test func noUpdateWhenNothingTrackedChanged() async throws {
        let db = try TestDatabase(schema: TestDatabase.notesSchema + "CREATE TABLE other(x);")
        let store = try db.openStore()
        let updates = store.historyUpdates()
        try await store.write(author: "app") { try $0.execute(sql: "INSERT INTO other VALUES (1)") }
        try db.shell("INSERT INTO other VALUES (2);")
        #expect(await Self.firstToken(updates, reaching: HistoryToken(1), timeout: .milliseconds(600)) == nil)
    }
}
