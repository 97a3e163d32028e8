import Foundation
import GRDB
import Testing
import SearchlightHistory
import SearchlightTestSupport

/// The consumer contract: history after the checkpoint, the consumer's writes and the new
/// checkpoint commit together, or not at all.
@Suite struct HistoryConsumptionTests {
    static let outbox = "CREATE TABLE outbox(token INTEGER, entity TEXT, object_id, type TEXT)"

    static func export(_ batch: HistoryBatch, _ db: Database) throws {
        for change in batch.changes {
            try db.execute(sql: "INSERT INTO outbox VALUES (?, ?, ?, ?)",
                           arguments: [change.token, change.entity, change.objectID, change.type.description])
        }
    }

    static func outboxRows(_ store: HistoryStore) throws -> [String] {
        try store.dbPool.read { try String.fetchAll($0, sql: "SELECT type || ' ' || entity || ' ' || object_id FROM outbox ORDER BY rowid") }
    }

    @Test func aNewConsumerMustResyncThenReceivesEachChangeOnce() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.dbPool.write { try $0.execute(sql: Self.outbox) }
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'before');")
        guard case let .needsResync(resync) = try store.consumeNextBatch(as: "exporter", Self.export) else {
            Issue.record("a consumer with no checkpoint must resynchronize first"); return
        }
        #expect(resync.reason == .noCheckpoint)
        let head = try store.resynchronize(as: "exporter") { head, db in
            try db.execute(sql: "INSERT INTO outbox SELECT ?, 'Note', id, 'resync' FROM notes", arguments: [head])
        }
        #expect(try store.checkpoint(for: "exporter")?.token == head)
        try db.shell("INSERT INTO notes(id, title) VALUES (2, 'after'); DELETE FROM notes WHERE id = 1;")
        guard case let .consumed(batch) = try store.consumeNextBatch(as: "exporter", Self.export) else {
            Issue.record("expected a batch"); return
        }
        let current = try store.currentToken()
        #expect(batch.previousToken == head && batch.token == current)
        #expect(try store.consumeNextBatch(as: "exporter", Self.export) == .caughtUp(batch.token))
        #expect(try Self.outboxRows(store) == ["resync Note 1", "insert Note 2", "delete Note 1"])
        #expect(try store.consumers().first { $0.author == "exporter" }?.isRequired == true, "registered as required")
    }

    /// An exporter with an outbox, checkpointed at the head, and one foreign write after it.
    static func exporterBehindOneWrite() throws -> (TestDatabase, HistoryStore, HistoryToken) {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.dbPool.write { try $0.execute(sql: Self.outbox) }
        try store.resynchronize(as: "exporter") { _, _ in }
        let start = try #require(try store.checkpoint(for: "exporter")?.token)
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'x');")
        return (db, store, start)
    }

    @Test func aFailingBodyRollsBackItsWritesAndTheCheckpoint() throws {
        let (db, store, start) = try Self.exporterBehindOneWrite()
        _ = db
        struct Refused: Error {}
        let error = #expect(throws: SearchlightError.self) {
            try store.consumeNextBatch(as: "exporter") { batch, db in
                try Self.export(batch, db)
                throw Refused()
            }
        }
        #expect(error?.code == .bodyFailed && error?.underlyingError is Refused)
        #expect(try store.checkpoint(for: "exporter")?.token == start)
        #expect(try Self.outboxRows(store).isEmpty)
        try store.consumeNextBatch(as: "exporter", Self.export)
        #expect(try Self.outboxRows(store) == ["insert Note 1"])
    }

    /// The form that runs in the caller's transaction throws typed errors too: the body's error
    /// comes back as `bodyFailed` with the error as its cause, and the transaction rolls back.
    @Test func aFailingBodyInTheCallersTransactionIsBodyFailedAndRollsBack() throws {
        let (db, store, start) = try Self.exporterBehindOneWrite()
        _ = db
        struct Refused: Error {}
        var caught: SearchlightError?
        do {
            try store.dbPool.write { db in
                do throws(SearchlightError) {
                    try store.consumeNextBatch(as: "exporter", in: db) { batch, db in
                        try Self.export(batch, db)
                        throw Refused()
                    }
                } catch {
                    caught = error // typed: no cast needed
                    throw error
                }
            }
        } catch {}
        #expect(caught?.code == .bodyFailed && caught?.underlyingError is Refused)
        #expect(try store.checkpoint(for: "exporter")?.token == start)
        #expect(try Self.outboxRows(store).isEmpty)
    }

    @Test func filteredOutTransactionsStillAdvanceTheCheckpoint() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.dbPool.write { try $0.execute(sql: Self.outbox) }
        try store.resynchronize(as: "exporter") { _, _ in }
        try store.write(author: "exporter") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'mine')") }
        try store.write(author: "app") { try $0.execute(sql: "INSERT INTO people(uuid, name) VALUES ('p', 'theirs')") }
        var calls = 0
        let outcome = try store.consumeNextBatch(as: "exporter", filter: HistoryFilter(authors: .excluding(["exporter"])), batchSize: 1) { _, _ in calls += 1 }
        guard case let .consumed(batch) = outcome else { Issue.record("expected a batch"); return }
        #expect(calls == 0 && batch.transactions.isEmpty, "its own write is filtered out")
        #expect(try store.checkpoint(for: "exporter")?.token == batch.token, "but read past")
        try store.consumeNextBatch(as: "exporter", filter: HistoryFilter(authors: .excluding(["exporter"])), Self.export)
        #expect(try Self.outboxRows(store) == ["insert Person p"])
    }

    /// A consumer that says it needs no tombstones gets deletes without them (not decoded: even
    /// a damaged one does not stop it); one that does gets them, and a damaged one stops it.
    @Test func aConsumerCanGoWithoutTombstones() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        for consumer in ["bare", "full"] { try store.resynchronize(as: consumer) { _, _ in } }
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'kept'), (2, 'damaged'); DELETE FROM notes;")
        func deletes(_ consumer: String, tombstones: Bool) throws -> [[String: DatabaseValue]?] {
            var found: [[String: DatabaseValue]?] = []
            try store.consumeNextBatch(as: consumer, filter: HistoryFilter(includesTombstones: tombstones)) { batch, _ in
                found += batch.changes.filter { $0.type == .delete }.map(\.tombstone)
            }
            return found
        }
        #expect(try deletes("full", tombstones: true) == [["title": "kept".databaseValue], ["title": "damaged".databaseValue]])
        try store.dbPool.write { try $0.execute(sql: #"UPDATE "searchlight_log" SET "tombstone" = '{"title":' WHERE "tombstone" LIKE '%damaged%'"#) }
        #expect(try deletes("bare", tombstones: false) == [nil, nil])
        try store.resynchronize(as: "full") { _, _ in }
        try db.shell("INSERT INTO notes(id, title) VALUES (3, 'after');")
        try db.shell("DELETE FROM notes WHERE id = 3;")
        try store.dbPool.write { try $0.execute(sql: #"UPDATE "searchlight_log" SET "tombstone" = '{"title":' WHERE "object_id" = 3 AND "tombstone" IS NOT NULL"#) }
        #expect(throws: (any Error).self) { try deletes("full", tombstones: true) }
        #expect(try deletes("bare", tombstones: false) == [nil])
    }

    @Test func expiredHistoryIsATypedOutcome() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.resynchronize(as: "exporter") { _, _ in }
        for i in 1...3 { try db.shell("INSERT INTO notes(id, title) VALUES (\(i), 'x');") }
        try store.deleteHistory(through: store.currentToken())
        guard case let .needsResync(resync) = try store.consumeNextBatch(as: "exporter", { _, _ in }),
              case .historyExpired = resync.reason else {
            Issue.record("expected historyExpired"); return
        }
        #expect(resync.description.contains("deleted"))
    }

    @Test func asyncConsumeFollowsOtherProcessesAndEndsWhenCancelled() async throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try await store.dbPool.write { try $0.execute(sql: Self.outbox) }
        try store.resynchronize(as: "exporter") { _, _ in } // it starts at the head, before the writes
        let consumer = Task {
            try await store.consume(as: "exporter", resynchronize: { _, _ in }, Self.export)
        }
        // Writes from another process (the sqlite3 shell) reach the consumer.
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'a'); INSERT INTO notes(id, title) VALUES (2, 'b');")
        try await withTimeout(60) {
            while try Self.outboxRows(store).count < 2 { try await Task.sleep(for: .milliseconds(20)) }
        }
        consumer.cancel()
        try await withTimeout(60) { try await consumer.value }
        #expect(try Self.outboxRows(store) == ["insert Note 1", "insert Note 2"])
    }
}
