import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct FetchHistoryTests {
    /// Three transactions: app/editor inserts a note, sync/import inserts a person, the shell deletes the note.
    func populated(clock: TestClock = TestClock()) throws -> (TestDatabase, HistoryStore) {
        let db = try TestDatabase()
        let store = try db.openStore(clock: clock.function)
        try store.write(author: "app", context: "editor") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'one')") }
        clock.advance(10)
        try store.write(author: "sync", context: "import") { try $0.execute(sql: "INSERT INTO people(uuid, name) VALUES ('p1', 'Ada')") }
        try db.shell("DELETE FROM notes WHERE id = 1;")
        return (db, store)
    }

    @Test func fetchAfterTokenReturnsLaterTransactionsOnly() throws {
        let (db, store) = try populated()
        defer { withExtendedLifetime(db) {} }
        let all = try store.fetchTransactions(.all)
        #expect(all.count == 3)
        #expect(try store.fetchTransactions(.after(all[0].token)).map(\.token) == [all[1].token, all[2].token])
        #expect(try store.fetchTransactions(.after(all[1])).map(\.token) == [all[2].token])
        #expect(try store.fetchTransactions(.after(store.currentToken())).isEmpty)
    }

    @Test func fetchAfterDate() throws {
        let clock = TestClock()
        let (db, store) = try populated(clock: clock)
        defer { withExtendedLifetime(db) {} }
        let transactions = try store.fetchTransactions(.after(clock.date.addingTimeInterval(-5)))
        // The shell stamps its transaction with the real clock, later than the injected one.
        #expect(transactions.map(\.author) == ["sync", nil])
    }

    @Test func authorFilters() throws {
        let (db, store) = try populated()
        defer { withExtendedLifetime(db) {} }
        var request = HistoryRequest.all
        request.authors = .only(["app"])
        #expect(try store.fetchTransactions(request).map(\.author) == ["app"])
        request.authors = .excluding(["app"])
        #expect(try store.fetchTransactions(request).map(\.author) == ["sync", nil])
    }

    @Test func contextEntityAndChangeTypeFilters() throws {
        let (db, store) = try populated()
        defer { withExtendedLifetime(db) {} }
        var request = HistoryRequest.all
        request.contextName = "import"
        #expect(try store.fetchTransactions(request).map(\.author) == ["sync"])
        request = .all
        request.entities = ["Note"]
        #expect(try store.fetchChanges(request).map(\.type) == [.insert, .delete])
        request.changeTypes = [.delete]
        #expect(try store.fetchChanges(request).map(\.objectID) == [.integer(1)])
        request.entities = ["Nope"]
        #expect(throws: SearchlightError.self) { try store.fetchChanges(request) }
    }

    @Test func countAndLimit() throws {
        let (db, store) = try populated()
        defer { withExtendedLifetime(db) {} }
        #expect(try store.fetchCount(.all) == HistoryCount(transactions: 3, changes: 3))
        var request = HistoryRequest.all
        request.limit = 2
        let page = try store.fetchTransactions(request)
        #expect(page.count == 2)
        var next = HistoryRequest.after(page.last!)
        next.limit = 2
        #expect(try store.fetchTransactions(next).count == 1)
    }

    @Test func historyOfOneObject() throws {
        let (db, store) = try populated()
        defer { withExtendedLifetime(db) {} }
        let changes = try store.fetchChanges(entity: "Note", objectID: .integer(1))
        #expect(changes.map(\.type) == [.insert, .delete])
        #expect(try store.fetchChanges(entity: "Note", objectID: .integer(1), after: .token(changes[0].token)).map(\.type) == [.delete])
    }

    @Test func misuseGetsClearErrors() throws {
        let (db, store) = try populated()
        defer { withExtendedLifetime(db) {} }
        let head = try store.currentToken()
        let future = try #require(throws: SearchlightError.self) { try store.fetchTransactions(.after(HistoryToken(head.rawValue + 1))) }
        #expect(future.code == .invalidToken)
        let negative = try #require(throws: SearchlightError.self) { try store.fetchTransactions(.after(HistoryToken(-1))) }
        #expect(negative.code == .invalidToken)
        var request = HistoryRequest.all
        request.limit = -3
        let limit = try #require(throws: SearchlightError.self) { try store.fetchTransactions(request) }
        #expect(limit.code == .invalidArgument)
        #expect(throws: SearchlightError.self) { try store.unregisterConsumer("nobody") }
    }

    @Test func clockGoingBackwardsLosesNothing() throws {
        let clock = TestClock()
        let db = try TestDatabase()
        let store = try db.openStore(clock: clock.function)
        var tokens: [HistoryToken] = []
        for i in 1...5 {
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
            tokens.append(try store.currentToken())
            clock.advance(-3600) // every write an hour "earlier"
        }
        // Consumer reading after each token in turn sees each transaction exactly once.
        var seen: [ObjectID] = []
        var checkpoint = HistoryToken.zero
        while let next = try store.fetchTransactions(.after(checkpoint)).first {
            seen += next.changes.map(\.objectID)
            checkpoint = next.token
        }
        #expect(seen == (1...5).map { .integer(Int64($0)) })
        // Each commit got a new, larger token while its timestamp went back: order is by token.
        #expect(zip(tokens, tokens.dropFirst()).allSatisfy { $0 < $1 }, "\(tokens)")
        let transactions = try store.fetchTransactions(.all)
        #expect(transactions.map(\.token) == tokens)
        #expect(zip(transactions, transactions.dropFirst()).allSatisfy { $0.timestamp > $1.timestamp }, "the clock went back at each write")
    }

    @Test func equalTimestampsLoseNothing() throws {
        let clock = TestClock()
        let db = try TestDatabase()
        let store = try db.openStore(clock: clock.function)
        for i in 1...20 {
            try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id) VALUES (?)", arguments: [i]) }
        }
        var request = HistoryRequest.all
        request.limit = 3
        var seen = 0
        while true {
            let page = try store.fetchTransactions(request)
            guard let last = page.last else { break }
            seen += page.count
            request = .after(last)
            request.limit = 3
        }
        #expect(seen == 20)
        #expect(Set(try store.fetchTransactions(.all).map(\.timestamp)).count == 1)
    }
}
