import ArgumentParser
import Foundation
import GRDB
import Searchlight
import SearchlightHistory
import SearchlightTestSupport
import Synchronization

/// Load for the reliability tests: a writer that logs every change it committed, and a
/// searcher. Each exits 3 if any error (a busy or locked database included) reached it.
@main
struct Stress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchlight-stress", abstract: "Writers and searchers for Searchlight's reliability tests.",
        subcommands: [Write.self, Mutate.self, Search.self, Rebuild.self, Export.self, Clean.self])

    struct Write: ParsableCommand {
        @Option var db: String
        @Option(help: "Appends one line per committed change: 'insert|update|delete ID'.")
        var log: String
        @Option var seconds: Double = 5
        @Option var author: String = "writer"
        @Option(help: "The writer owns ids first ..< first + count.")
        var first: Int = 1
        @Option var count: Int = 500
        @Option var seed: UInt64 = 1

        func run() throws {
            let store = try HistoryStore(path: db)
            let handle = try open(log)
            var random = SplitMix(seed: seed)
            let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
            var errors = 0
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let id = first + Int(random.next() % UInt64(count))
                let text = (0..<6).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
                do {
                    let done = try store.write(author: author) { db -> String? in
                        let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?)", arguments: [id]) ?? false
                        switch (exists, random.next() % 3) {
                        case (false, _):
                            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [id, "note \(id)", text])
                            return "insert"
                        case (true, 0):
                            try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [id])
                            return "delete"
                        default:
                            try db.execute(sql: "UPDATE notes SET body = ? WHERE id = ?", arguments: [text + " \(random.next())", id])
                            return "update"
                        }
                    }
                    if let done { handle.write(Data("\(done) \(id)\n".utf8)) }
                } catch {
                    errors += 1
                    FileHandle.standardError.write(Data("writer error: \(error)\n".utf8))
                }
            }
            try handle.close()
            if errors > 0 { throw ExitCode(3) }
        }

        func open(_ path: String) throws -> FileHandle {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            return handle
        }
    }

    struct Search: ParsableCommand {
        @Option var db: String
        @Option var seconds: Double = 5

        func run() throws {
            let store = try HistoryStore(path: db)
            let index = SearchIndex(store: store)
            let queries = ["alpha", "bravo charlie", "\"delta echo\"", "fox*", "golf OR hotel", "india -juliet", "note"]
            var errors = 0, searches = 0
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                do {
                    _ = try index.search(queries[searches % queries.count], asYouType: searches % 2 == 0, limit: 10)
                } catch {
                    errors += 1
                    FileHandle.standardError.write(Data("search error: \(error)\n".utf8))
                }
                searches += 1
            }
            print("\(searches) searches, \(errors) errors")
            if errors > 0 { throw ExitCode(3) }
        }
    }
}

/// A small deterministic generator (reproducible runs from a seed).
/// A full rebuild with a small chunk size and lease, to be killed or raced in tests.
struct Rebuild: ParsableCommand {
    @Option var db: String
    @Option var chunk: Int = 200
    @Option(help: "The rebuild lease, in seconds.")
    var lease: Int = 30
    @Option(help: "Hold the rebuild after a chunk that reached 1,000 rows (creating PATH.held) until PATH exists: tests act while it surely runs. It holds between chunks, so no write lock is held.")
    var hold: String?

    func run() throws {
        let store = try HistoryStore(path: db)
        var configuration = Indexer.Configuration()
        configuration.rebuildChunkSize = chunk
        configuration.rebuildLease = .seconds(lease)
        let held = Mutex(false)
        let summary = try Indexer(store: store, configuration: configuration).reindex { progress in
            // Called after each chunk commits: holding here keeps the lease, not the write lock.
            guard let hold, progress.done >= 1_000 else { return }
            let first = held.withLock { wasHeld in
                defer { wasHeld = true }
                return !wasHeld
            }
            guard first else { return }
            _ = FileManager.default.createFile(atPath: hold + ".held", contents: nil)
            while !FileManager.default.fileExists(atPath: hold) { usleep(10_000) }
        }
        print("rebuilt \(summary.upserted)")
    }
}

/// The README's exporter: copies every change into `export_log` of the same database through
/// the public consumer contract, exactly once. `--follow` follows commits until killed;
/// otherwise it catches up and exits.
struct Export: AsyncParsableCommand {
    @Option var db: String
    @Option var consumer = "exporter"
    @Flag var follow = false

    static let createTable = """
        CREATE TABLE IF NOT EXISTS export_log(
          change_id INTEGER, token INTEGER NOT NULL, entity TEXT, object_id, type TEXT NOT NULL)
        """

    static func export(_ batch: HistoryBatch, _ db: Database) throws {
        for change in batch.changes {
            try db.execute(sql: "INSERT INTO export_log VALUES (?, ?, ?, ?, ?)",
                           arguments: [change.changeID, change.token, change.entity, change.objectID, change.type.description])
        }
    }

    static func resync(_ head: HistoryToken, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO export_log(token, type) VALUES (?, 'resync')", arguments: [head])
    }

    func run() async throws {
        let store = try HistoryStore(path: db)
        try await store.dbPool.write { try $0.execute(sql: Self.createTable) }
        if follow {
            try await store.consume(as: consumer, resynchronize: Self.resync, Self.export)
            return
        }
        while true {
            switch try store.consumeNextBatch(as: consumer, Self.export) {
            case .caughtUp: return
            case .consumed: continue
            case let .needsResync(resync):
                // The marker names why (the simulation checks that history only expires when a
                // maximum duration allows it).
                let reason = switch resync.reason {
                case .noCheckpoint: "noCheckpoint"
                case .historyExpired: "historyExpired"
                case .captureInterrupted: "captureInterrupted"
                }
                try store.resynchronize(as: consumer) { head, db in
                    try db.execute(sql: "INSERT INTO export_log(token, type) VALUES (?, ?)", arguments: [head, "resync " + reason])
                }
            }
        }
    }
}

/// Automatic cleanup as an app runs it: `HistoryCleaner` with a strategy, after every commit
/// (from any process), until killed.
struct Clean: AsyncParsableCommand {
    enum Strategy: String, ExpressibleByArgument { case duration, notification }

    @Option var db: String
    @Option var strategy: Strategy = .notification

    func run() async throws {
        let store = try HistoryStore(path: db)
        let cleaner = HistoryCleaner(store: store, configuration: .init(
            model: store.model, strategy: strategy == .duration ? .byDuration(.milliseconds(300)) : .byNotification(times: 5)))
        for await _ in store.historyUpdates() { try cleaner.cleanIfNeeded() }
    }
}
