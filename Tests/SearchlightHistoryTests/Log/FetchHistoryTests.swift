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

    @Test func aTombstoneKeepsEachValueAsSQLiteTypedIt() throws {
        let db = try TestDatabase(schema: "CREATE TABLE things(id INTEGER PRIMARY KEY, b BLOB, r REAL, whole REAL, n TEXT, t TEXT, i INTEGER, e TEXT);")
        let columns = ["b", "r", "whole", "n", "t", "i", "e"]
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Thing", table: "things", primaryKey: "id",
                                    fields: [SearchlightModel.Field(column: "t")], preserveOnDelete: columns),
        ])
        let store = try db.openStore(model: model)
        // Written and deleted by the sqlite3 shell: what the triggers store, whoever writes.
        try db.shell("""
            INSERT INTO things VALUES (1, X'00FF10', 2.5, 1.0, NULL, 'it''s "quoted" \\ 日本 🙂', 9007199254740993, '');
            DELETE FROM things;
            """)
        let tombstone = try #require(try store.allChanges().last?.tombstone)
        #expect(Set(tombstone.keys) == Set(columns))
        // DatabaseValue's == compares numbers across types (1 == 1.0): compare the storage's case.
        func storage(_ column: String) -> String {
            switch tombstone[column]?.storage {
            case .int64(let value): "integer \(value)"
            case .double(let value): "real \(value)"
            case .string(let value): "text \(value)"
            case .blob(let value): "blob \(value.count)"
            case .null: "null"
            case nil: "missing"
            }
        }
        #expect(storage("b") == "text 00FF10", "a BLOB is kept as its hex text")
        #expect(storage("r") == "real 2.5")
        #expect(storage("whole") == "real 1.0", "a whole REAL stays REAL")
        #expect(storage("n") == "null")
        #expect(storage("t") == #"text it's "quoted" \ 日本 🙂"#)
        #expect(storage("i") == "integer 9007199254740993", "an integer beyond 2^53 keeps every digit")
        #expect(storage("e") == "text ")
    }

    @Test func anUnreadableTombstoneIsAnErrorOfTheFetch() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try db.shell("INSERT INTO people(uuid, name) VALUES ('p1', 'Ada'); DELETE FROM people;")
        #expect(try store.allChanges().last?.tombstone == ["name": "Ada".databaseValue, "email": .null])
        let damaged = [(#"'{"name": '"#, "malformed"), ("'[1, 2]'", "not a JSON object"),
                       (#"'{"name": [1]}'"#, "not a scalar"), ("X'FF00'", "not text")]
        for (stored, reason) in damaged {
            // Plain SQL, as a damaged file or a foreign tool would leave it.
            try db.shell("UPDATE searchlight_log SET tombstone = \(stored) WHERE type = 3;")
            let error = #expect(throws: SearchlightError.self) { try store.allChanges() }
            #expect(error?.code == .databaseError)
            #expect(error?.message.contains("unreadable tombstone") == true && error?.message.contains(reason) == true,
                    "\(stored): \(error?.message ?? "")")
        }
        try db.shell("UPDATE searchlight_log SET tombstone = '{}' WHERE type = 3;")
        #expect(try store.allChanges().last?.tombstone == [:], "an empty object is an empty tombstone")
    }

    /// A transaction's tombstones are decoded together (one `json_each` over its rows): each
    /// change gets its own values, and a damaged one among them is still named.
    @Test func theTombstonesOfOneTransactionAreEachTheirOwn() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        try store.write(author: "app") { db in
            for i in 1...300 {
                try db.execute(sql: "INSERT INTO people(uuid, name, email) VALUES (?, ?, ?)",
                               arguments: ["p\(i)", "name \(i)", i % 3 == 0 ? nil : "\(i)@example.com"])
            }
        }
        try store.write(author: "app") { db in try db.execute(sql: "DELETE FROM people") }
        let deletes = try #require(try store.fetchTransactions(.all).last).changes
        #expect(deletes.count == 300)
        for change in deletes {
            guard case let .text(uuid) = change.objectID, let i = Int(uuid.dropFirst()) else { Issue.record("\(change.objectID)"); continue }
            #expect(change.tombstone == ["name": "name \(i)".databaseValue, "email": i % 3 == 0 ? .null : "\(i)@example.com".databaseValue])
        }
        let damaged = deletes[150].changeID
        try db.shell("UPDATE searchlight_log SET tombstone = '{\"name\": ' WHERE id = \(damaged);")
        let error = #expect(throws: SearchlightError.self) { try store.fetchTransactions(.all) }
        #expect(error?.message.contains("history change \(damaged) holds an unreadable tombstone") == true, "\(error?.message ?? "")")
    }

    /// Regression: an infinite REAL in a preserved column made this SQLite's `json_object` write
    /// a bare `Inf`, which is no JSON: every reader of history stopped there for good.
    @Test func anInfiniteRealInATombstoneIsKeptAsItsText() throws {
        let db = try TestDatabase(schema: "CREATE TABLE things(id INTEGER PRIMARY KEY, t TEXT, r REAL);")
        let model = try SearchlightModel(entities: [
            SearchlightModel.Entity(name: "Thing", table: "things", primaryKey: "id",
                                    fields: [SearchlightModel.Field(column: "t")], preserveOnDelete: ["t", "r"]),
        ])
        let store = try db.openStore(model: model)
        try db.shell("INSERT INTO things VALUES (1, 'a', 9e999), (2, 'b', -9e999), (3, 'c', 2.5); DELETE FROM things;")
        let tombstones = try store.allChanges().filter { $0.type == .delete }.compactMap { $0.tombstone?["r"] }
        #expect(tombstones == ["Inf".databaseValue, "-Inf".databaseValue, 2.5.databaseValue])
    }
}
