import Foundation
import GRDB
import Synchronization
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

@Suite struct MaintenanceTests {
    @Test func verifyDetectsMissingStaleAndExtraAndRepairFixesThem() throws {
        let f = try Fixture()
        for i in 1...5 { try f.insertNote(i, title: "note \(i)") }
        try f.runIndexer()
        #expect(try f.indexer.verify().isConsistent)
        // Damage the index behind the indexer's back. notes has an INTEGER PRIMARY KEY: object
        // ids are the full-text rowids.
        try f.store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            let fts = "searchlight_fts_1_g\(generation)"
            try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = 1")                        // 1: missing
            try db.execute(sql: "UPDATE \(fts) SET title = 'wrong' WHERE rowid = 2")         // 2: stale
            try db.execute(sql: "INSERT INTO \(fts)(rowid, title) VALUES (99, 'ghost')")     // 99: extra
        }
        let report = try f.indexer.verify()
        #expect(!report.isConsistent)
        let notes = try #require(report.entities.first { $0.entity == "Note" })
        #expect(notes.missing == [.integer(1)])
        #expect(notes.stale == [.integer(2)])
        #expect(notes.extra == [.integer(99)])
        try f.indexer.repair()
        #expect(try f.indexer.verify().isConsistent)
        #expect(try f.ids("ghost").isEmpty)
        #expect(try f.ids("note", entities: ["Note"]).count == 5)
    }

    /// Writes to the index's FTS5 table, grouped by the transaction that committed them.
    /// The number of stale documents (title 'wrong') after each commit, when it changed: the
    /// index's own writes go through SQLite's C API, which GRDB's observation does not see, so
    /// the observer reads the index after every commit instead.
    final class StaleAfterCommits: TransactionObserver, Sendable {
        private let counts = Mutex<[Int]>([])
        var sequence: [Int] { counts.withLock { $0 } }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) {
            guard let stale = try? Int.fetchOne(db, sql: "SELECT count(*) FROM searchlight_fts_1_g1 WHERE title = 'wrong'") else { return }
            counts.withLock { if $0.last != stale { $0.append(stale) } }
        }
        func databaseDidRollback(_ db: Database) {}
    }

    /// A repair of many differences is many short transactions: the app's writers never wait
    /// for the whole repair, and what it holds stays one chunk of documents.
    @Test func aLargeRepairCommitsChunkByChunk() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for i in 1...1_000 { try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [i, "note \(i)"]) }
        }
        try f.runIndexer()
        try f.store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            try db.execute(sql: "UPDATE searchlight_fts_1_g\(generation) SET title = 'wrong'") // 1,000 stale
        }
        let stale = StaleAfterCommits()
        f.store.dbPool.add(transactionObserver: stale)
        let repair = try f.indexer.repair()
        #expect(repair.found.differences == 1_000 && repair.repaired && repair.isConsistent)
        // One transaction per chunk of ids: the stale documents go down a chunk at a time
        // (without chunks, one transaction wrote them all: 1,000 then 0).
        #expect(stale.sequence.count >= 1_000 / Indexer.reindexChunkSize && stale.sequence.last == 0, "\(stale.sequence)")
    }

    /// Regression: a BLOB field holding a NUL byte was indexed whole but expected cut at the NUL
    /// (SQLite's text of it, read as a C string): verify called it stale for ever.
    @Test func aBlobWithNulBytesIsExpectedWhole() throws {
        let db = try TestDatabase(schema: "CREATE TABLE files(id INTEGER PRIMARY KEY, name TEXT, data BLOB);")
        try db.shell("INSERT INTO files VALUES (1, 'one', x'610062'), (2, 'two', x'00ff00'), (3, 'three', x'616263');")
        let model = try SearchlightModel(entities: [.init(name: "File", table: "files", primaryKey: "id",
                                                          fields: [.init(column: "name", role: .title), .init(column: "data")])])
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        #expect(try SearchIndex(store: store).search("b", limit: nil).hits.map(\.objectID) == [.integer(1)], "every byte is indexed")
        #expect(try indexer.verify().isConsistent)
    }

    /// Regression: `reindex --id 8.5` could not name a REAL key, yet reported success.
    @Test func aRealKeyTypedAsTextIsReindexed() throws {
        #expect(ObjectID.candidates(typed: "8.5") == [.real(8.5), .text("8.5")])
        #expect(ObjectID.candidates(typed: "42") == [.integer(42), .text("42")])
        #expect(ObjectID.candidates(typed: "nan") == [.text("nan")])
        let db = try TestDatabase(schema: "CREATE TABLE readings(k REAL PRIMARY KEY, label TEXT);")
        try db.shell("INSERT INTO readings VALUES (8.5, 'first'), (0.1 + 0.2, 'second');")
        let model = try SearchlightModel(entities: [.init(name: "Reading", table: "readings", primaryKey: "k", fields: [.init(column: "label")])])
        let store = try db.openStore(model: model)
        let indexer = try Indexer(store: store)
        try indexer.indexPendingChanges()
        try store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            try db.execute(sql: "UPDATE searchlight_fts_1_g\(generation) SET label = 'wrong'")
        }
        let keys = try SearchIndex(store: store).search("wrong", limit: nil).hits.map(\.objectID.description)
        #expect(Set(keys) == ["8.5", "0.30000000000000004"], "search prints REAL keys so")
        let summary = try indexer.reindex(ids: keys.flatMap(ObjectID.candidates(typed:)))
        #expect(summary.upserted == 2)
        // The documents are right again; the vocabulary, counted from the text the UPDATE above
        // wrote behind the indexer's back, is what repair counts again.
        #expect(try indexer.verify().differences == 0)
        #expect(try indexer.repair().isConsistent)
    }

    @Test func verifyAndRepairThroughTheDocumentMapOfTextKeys() throws {
        let f = try Fixture()
        try f.store.write(author: "app") { db in
            for name in ["ada", "grace", "edsger"] { try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: ["u-" + name, name]) }
        }
        try f.runIndexer()
        try f.store.dbPool.write { db in
            let generation = try Int.fetchOne(db, sql: "SELECT value FROM searchlight_index_state WHERE key = 'generation'")!
            let documents = "searchlight_document_g\(generation)", fts = "searchlight_fts_2_g\(generation)"
            let ada = try Int64.fetchOne(db, sql: "SELECT id FROM \(documents) WHERE object_id = 'u-ada'")!
            try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = ?", arguments: [ada])       // ada: indexed without text
            let grace = try Int64.fetchOne(db, sql: "SELECT id FROM \(documents) WHERE object_id = 'u-grace'")!
            try db.execute(sql: "DELETE FROM \(fts) WHERE rowid = ?", arguments: [grace])
            try db.execute(sql: "DELETE FROM \(documents) WHERE id = ?", arguments: [grace]) // grace: missing
            try db.execute(sql: "INSERT INTO \(documents)(entity_id, object_id) VALUES (2, 'u-ghost')")
            try db.execute(sql: "INSERT INTO \(fts)(rowid, name) VALUES (last_insert_rowid(), 'ghost')") // extra
        }
        let people = try #require(try f.indexer.verify().entities.first { $0.entity == "Person" })
        #expect(people.stale == [.text("u-ada")])
        #expect(people.missing == [.text("u-grace")])
        #expect(people.extra == [.text("u-ghost")])
        try f.indexer.repair()
        #expect(try f.indexer.verify().isConsistent)
        #expect(try f.ids("ada OR grace OR edsger", entities: ["Person"]).count == 3)
        #expect(try f.ids("ghost").isEmpty)
    }

    /// Verify reads the source and the index chunk by chunk: differences are found wherever
    /// they fall among the chunks, through the rowid keys and the document map alike.
    @Test func verifyFindsEveryDifferenceAcrossChunks() throws {
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 3
        let f = try Fixture(configuration: configuration)
        try f.store.write(author: "app") { db in
            for i in 1...20 { try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [i, "note \(i)"]) }
            for i in 1...10 { try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: ["u\(i)", "person \(i)"]) }
        }
        try f.runIndexer()
        #expect(try f.indexer.verify().isConsistent)
        try f.store.dbPool.write { db in
            let schema = try #require(try IndexState.live(db)).schema
            let notes = schema.ftsTable(1), people = schema.ftsTable(2), documents = schema.documentTable
            try db.execute(sql: "DELETE FROM \(notes) WHERE rowid IN (2, 9, 20)")
            try db.execute(sql: "UPDATE \(notes) SET title = 'wrong' WHERE rowid IN (1, 5, 17)")
            try db.execute(sql: "INSERT INTO \(notes)(rowid, title) VALUES (100, 'ghost'), (0, 'ghost')")
            for uuid in ["u1", "u10"] {  // indexed without text
                try db.execute(sql: "DELETE FROM \(people) WHERE rowid = (SELECT id FROM \(documents) WHERE object_id = ?)", arguments: [uuid])
            }
            for uuid in ["u4", "u7"] {  // missing
                try db.execute(sql: "DELETE FROM \(people) WHERE rowid = (SELECT id FROM \(documents) WHERE object_id = ?)", arguments: [uuid])
                try db.execute(sql: "DELETE FROM \(documents) WHERE object_id = ?", arguments: [uuid])
            }
            try db.execute(sql: "UPDATE \(people) SET name = 'wrong' WHERE rowid = (SELECT id FROM \(documents) WHERE object_id = 'u5')")
            for uuid in ["u0", "u99"] {  // extra
                try db.execute(sql: "INSERT INTO \(documents)(entity_id, object_id) VALUES (2, ?)", arguments: [uuid])
                try db.execute(sql: "INSERT INTO \(people)(rowid, name) VALUES (last_insert_rowid(), 'ghost')")
            }
        }
        let report = try f.indexer.verify()
        let notes = try #require(report.entities.first { $0.entity == "Note" })
        #expect(notes.missing == [2, 9, 20].map(ObjectID.integer))
        #expect(notes.stale == [1, 5, 17].map(ObjectID.integer))
        #expect(notes.extra == [0, 100].map(ObjectID.integer))
        #expect(notes.sourceDocuments == 20 && notes.indexedDocuments == 19)
        let people = try #require(report.entities.first { $0.entity == "Person" })
        #expect(people.missing == [.text("u4"), .text("u7")])
        #expect(people.stale == [.text("u1"), .text("u10"), .text("u5")])
        #expect(people.extra == [.text("u0"), .text("u99")])
        #expect(people.sourceDocuments == 10 && people.indexedDocuments == 10)
        try f.indexer.repair()
        #expect(try f.indexer.verify().isConsistent)
        #expect(try f.ids("ghost OR wrong").isEmpty)
    }

    /// Verify holds one chunk of documents at a time: the most it holds at once (documents and
    /// bytes of text) is the same for a table ten times larger. It used to hold every document.
    @Test func verifyHoldsOneChunkAtATimeWhateverTheTableSize() throws {
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 10
        func largest(notes: Int, people: Int) throws -> (documents: Int, bytes: Int) {
            let f = try Fixture(configuration: configuration)
            try f.store.write(author: "app") { db in
                for i in 1...notes {
                    try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                                   arguments: [i, String(format: "note %06d", i), String(repeating: "lorem ipsum ", count: 20)])
                }
                for i in 1...people { try db.execute(sql: "INSERT INTO people(uuid, name) VALUES (?, ?)", arguments: [String(format: "u%06d", i), "someone"]) }
            }
            try f.runIndexer()
            let chunks = Mutex<[Indexer.VerificationChunk]>([])
            let report = try f.store.dbPool.read { db in try f.indexer.verify(db) { chunk in chunks.withLock { $0.append(chunk) } } }
            #expect(report.isConsistent)
            let seen = chunks.withLock { $0 }
            // Every row and every document was compared (once as a row, once as a document).
            #expect(seen.filter { $0.entity == "Note" }.reduce(0) { $0 + $1.documents } == 2 * notes)
            #expect(seen.filter { $0.entity == "Person" }.reduce(0) { $0 + $1.documents } == 2 * people)
            return (seen.map(\.documents).max() ?? 0, seen.map(\.textBytes).max() ?? 0)
        }
        let small = try largest(notes: 35, people: 12)
        let large = try largest(notes: 350, people: 120)
        #expect(small.documents == 10)
        #expect(large.documents == small.documents)
        #expect(large.bytes == small.bytes)
        #expect(small.bytes > 10 * 2 * 240, "a chunk holds the expected and the indexed text of 10 notes")
    }

    /// A chunk of large documents ends at a size of text, not at a number of rows.
    @Test func verifyHoldsAChunkOfLargeDocumentsUpToItsTextSize() throws {
        let f = try Fixture()
        let body = String(repeating: "lorem ipsum ", count: 1 << 16)  // 768 KiB
        try f.store.write(author: "app") { db in
            for i in 1...8 { try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, 'large', ?)", arguments: [i, body]) }
        }
        try f.runIndexer()
        let chunks = Mutex<[Indexer.VerificationChunk]>([])
        let report = try f.store.dbPool.read { db in try f.indexer.verify(db) { chunk in chunks.withLock { $0.append(chunk) } } }
        #expect(report.isConsistent)
        // Rows are read until their expected text reaches the bound: 6 × 768 KiB ≥ 4 MiB.
        let rows = chunks.withLock { $0 }.filter { $0.entity == "Note" && $0.textBytes > 0 }
        #expect(rows.map(\.documents) == [6, 2])
        #expect(rows.allSatisfy { $0.textBytes <= 2 * (EntityComparison.chunkTextBytes + body.utf8.count + 16) })
    }

    @Test func verifyLeavesPendingChangesOut() throws {
        let f = try Fixture()
        try f.insertNote(1, title: "indexed")
        try f.runIndexer()
        try f.insertNote(2, title: "not yet")
        let report = try f.indexer.verify()
        #expect(report.isConsistent)
        #expect(report.pending == 1)
    }

    @Test func reindexReportsProgressAndKeepsEverything() throws {
        let f = try Fixture()
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 7
        let indexer = try Indexer(store: f.store, configuration: configuration)
        for i in 1...30 { try f.insertNote(i, title: "entry \(i)") }
        try indexer.indexPendingChanges()
        let seen = Mutex<[Indexer.Progress]>([])
        try indexer.reindex { progress in seen.withLock { $0.append(progress) } }
        let progress = seen.withLock { $0 }
        #expect(progress.first == .init(done: 0, total: 30))
        #expect(progress.last == .init(done: 30, total: 30))
        #expect(try f.ids("entry").count == 30)
        #expect(try indexer.verify().isConsistent)
    }

    /// Found by the simulation (seed 4031): verify read which generation was live, then ran
    /// FTS5's integrity check on its tables in another statement; a rebuild swapped in between
    /// by another connection had dropped them ("no such table": damage, and a repair would have
    /// rebuilt for nothing). Rebuilds on one store, verifies on another, side by side.
    @Test func verifyDuringRebuildsOnAnotherConnectionFindsNoDamage() async throws {
        let f = try Fixture()
        for i in 1...200 { try f.insertNote(i, title: "entry \(i)") }
        try f.runIndexer()
        let rebuilder = try Indexer(store: try f.db.openStore())
        let stop = Mutex(false)
        let rebuilds = Task.detached {
            defer { stop.withLock { $0 = true } }
            for _ in 0..<12 { try rebuilder.reindex() }
        }
        var verified = 0
        var damage: [String] = []
        repeat {
            damage += try f.indexer.verify().integrityErrors
            verified += 1
        } while !stop.withLock({ $0 })
        try await rebuilds.value
        #expect(verified > 0)
        #expect(damage.isEmpty, "\(verified) verifications: \(damage.prefix(3))")
    }

    @Test func searchesKeepAnsweringDuringAReindexAndLaterChangesAreApplied() async throws {
        let f = try Fixture()
        try await f.store.write(author: "app") { db in
            for i in 1...3_000 { try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'searchable')", arguments: [i]) }
        }
        try f.runIndexer()
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = 200
        let indexer = try Indexer(store: f.store, configuration: configuration)
        let stop = Mutex(false)
        let index = f.index
        let searcher = Task.detached { () -> (searches: Int, failures: Int) in
            var searches = 0, failures = 0
            while !stop.withLock({ $0 }) {
                do {
                    if try index.search("searchable", limit: 1).total < 3_000 { failures += 1 }
                } catch { failures += 1 }
                searches += 1
            }
            return (searches, failures)
        }
        let store = f.store
        let writer = Task.detached {
            for i in 1...20 {
                try store.write(author: "app") { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES (?, 'searchable during')", arguments: [10_000 + i]) }
            }
        }
        try indexer.reindex()
        try await writer.value
        stop.withLock { $0 = true }
        let (searches, failures) = await searcher.value
        #expect(searches > 0)
        #expect(failures == 0, "every search during the rebuild succeeded with the full result")
        try indexer.indexPendingChanges()
        #expect(try f.ids("during").count == 20, "changes made during the rebuild are applied")
        #expect(try indexer.verify().isConsistent)
    }
}
