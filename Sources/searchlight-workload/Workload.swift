import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// Fixed workloads for instruction counting (`searchlight-bench --scenario 10` runs each under
/// `valgrind --tool=callgrind`): `prepare` sets a database up natively, `run` does only the
/// measured work on it. A workload is run at two sizes, and the difference of the two processes'
/// instruction counts divided by the difference of sizes is the work of one row, one document or
/// one pass of queries: process start, opening the database and reading the documents cancel out.
///
/// ```sh
/// searchlight-workload prepare foreign-insert --tracked --directory /tmp/w --documents docs.jsonl --count 1000
/// valgrind --tool=callgrind searchlight-workload run foreign-insert --tracked --directory /tmp/w --documents docs.jsonl --count 1000
/// ```
enum Workload: String, CaseIterable {
    // Writes, tracked (`--tracked`) or not.
    case single = "single"                     // one transaction a row, through HistoryStore.write (untracked: DatabasePool.write)
    case bulk = "bulk"                         // one transaction of `count` rows, the same way
    case foreignInsert = "foreign-insert"      // a foreign writer: a plain connection, one statement a row, one transaction
    case foreignUntrackedUpdate = "foreign-update-untracked"
    case foreignIndexedUpdate = "foreign-update-indexed"
    case foreignReplace = "foreign-replace"
    case foreignDelete = "foreign-delete"
    // Indexing, against a plain FTS5 table with the index's tokenizer and prefixes.
    case indexInserts = "index-inserts"
    case rawInserts = "raw-inserts"
    case indexUpdates = "index-updates"
    case rawUpdates = "raw-updates"
    case indexDeletes = "index-deletes"
    case rawDeletes = "raw-deletes"
    case rebuild = "rebuild"
    // Search: `count` passes of the query set, top 20 with snippets, against the same MATCH on
    // the index's own FTS5 table as raw SQL.
    case search = "search"
    case rawSearch = "raw-search"
    /// Raw SQL that ranks first and computes the page's snippets after, one row at a time.
    case rawSearchPage = "raw-search-page"

    /// The bench's table, and its model (the same as scenarios 1 to 3).
    static let schema = "CREATE TABLE docs(id INTEGER PRIMARY KEY, key TEXT, title TEXT, body TEXT)"
    static let model = try! SearchlightModel(entities: [
        SearchlightModel.Entity(name: "Doc", table: "docs", primaryKey: "id",
                                fields: [SearchlightModel.Field(column: "title", weight: 10, role: .title), SearchlightModel.Field(column: "body")],
                                preserveOnDelete: ["title"]),
    ])

    struct Document: Decodable {
        var id: String
        var title: String
        var body: String
    }

    struct Context {
        var directory: URL
        var documents: [Document]
        var count: Int
        var tracked: Bool
        var queries: [String]
        var path: String { directory.appendingPathComponent(tracked ? "tracked.sqlite" : "untracked.sqlite").path }
        var plainPath: String { directory.appendingPathComponent("plain.sqlite").path }
        var first: ArraySlice<Document> { documents.prefix(count) }
    }

    // MARK: - Prepare (not measured)

    func prepare(_ context: Context) throws {
        switch self {
        case .single, .bulk, .foreignInsert:
            _ = try Self.writeDatabase(context)
        case .foreignUntrackedUpdate, .foreignIndexedUpdate, .foreignReplace, .foreignDelete:
            // Every document is a row already; the run changes the first `count`.
            let queue = try Self.writeDatabase(context)
            try queue.write { db in try Self.insert(context.documents, db) }
            try Self.checkpoint(queue)
        case .indexInserts, .rebuild:
            let store = try Self.trackedStore(context)
            try store.write(author: "import") { db in try Self.insert(context.first, db) }
            if self == .rebuild { try Indexer(store: store).indexPendingChanges() }
            try Self.checkpoint(store.dbPool)
        case .indexUpdates, .indexDeletes:
            let store = try Self.trackedStore(context)
            try store.write(author: "import") { db in try Self.insert(context.documents, db) }
            try Indexer(store: store).indexPendingChanges()
            try store.write(author: "bench") { db in
                let sql = self == .indexUpdates ? "UPDATE docs SET body = body || ' revised' WHERE id = ?" : "DELETE FROM docs WHERE id = ?"
                let statement = try db.cachedStatement(sql: sql)
                for id in 1...context.count { try statement.execute(arguments: [id]) }
            }
            try Self.checkpoint(store.dbPool)
        case .rawInserts, .rawUpdates, .rawDeletes:
            let queue = try Self.walDatabase(context.plainPath)
            try queue.write { db in
                try db.execute(sql: "CREATE VIRTUAL TABLE plain USING fts5(title, body, tokenize = \(SQLQuoting.literal(Self.model.tokenizer)), prefix = \(SQLQuoting.literal(IndexSchema.prefixes)))")
                if self != .rawInserts {
                    let statement = try db.makeStatement(sql: "INSERT INTO plain(rowid, title, body) VALUES (?, ?, ?)")
                    for (offset, doc) in context.documents.enumerated() { try statement.execute(arguments: [offset + 1, doc.title, doc.body]) }
                }
            }
            try Self.checkpoint(queue)
        case .search, .rawSearch, .rawSearchPage:
            let store = try Self.trackedStore(context)
            try store.write(author: "import") { db in try Self.insert(context.documents, db) }
            try Indexer(store: store).indexPendingChanges()
            try Self.checkpoint(store.dbPool)
        }
    }

    // MARK: - Run (measured)

    func run(_ context: Context) throws {
        switch self {
        case .single:
            if context.tracked {
                let store = try HistoryStore(path: context.path)
                for (offset, doc) in context.first.enumerated() { try store.write(author: "bench") { try Self.insert(doc, offset + 1, $0) } }
            } else {
                let pool = try DatabasePool(path: context.path, configuration: HistoryStore.databaseConfiguration())
                for (offset, doc) in context.first.enumerated() { try pool.write { try Self.insert(doc, offset + 1, $0) } }
            }
        case .bulk:
            if context.tracked {
                let store = try HistoryStore(path: context.path)
                try store.write(author: "bench") { try Self.insert(context.first, $0) }
            } else {
                let pool = try DatabasePool(path: context.path, configuration: HistoryStore.databaseConfiguration())
                try pool.write { try Self.insert(context.first, $0) }
            }
        case .foreignInsert:
            try DatabaseQueue(path: context.path).write { try Self.insert(context.first, $0) }
        case .foreignUntrackedUpdate:
            try Self.foreign(context, "UPDATE docs SET key = 'k' || ?1 WHERE id = ?1")
        case .foreignIndexedUpdate:
            try Self.foreign(context, "UPDATE docs SET body = body || ' updated' WHERE id = ?1")
        case .foreignReplace:
            try DatabaseQueue(path: context.path).write { db in
                let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)")
                for (offset, doc) in context.first.enumerated() { try statement.execute(arguments: [offset + 1, "r\(offset + 1)", doc.title, doc.body]) }
            }
        case .foreignDelete:
            try Self.foreign(context, "DELETE FROM docs WHERE id = ?1")
        case .indexInserts, .indexUpdates, .indexDeletes:
            try Indexer(store: HistoryStore(path: context.path)).indexPendingChanges()
        case .rebuild:
            try Indexer(store: HistoryStore(path: context.path)).reindex()
        case .rawInserts:
            try DatabaseQueue(path: context.plainPath).write { db in
                let statement = try db.makeStatement(sql: "INSERT INTO plain(rowid, title, body) VALUES (?, ?, ?)")
                for (offset, doc) in context.first.enumerated() { try statement.execute(arguments: [offset + 1, doc.title, doc.body]) }
            }
        case .rawUpdates:
            try DatabaseQueue(path: context.plainPath).write { db in
                let statement = try db.makeStatement(sql: "UPDATE plain SET body = body || ' revised' WHERE rowid = ?")
                for id in 1...context.count { try statement.execute(arguments: [id]) }
            }
        case .rawDeletes:
            try DatabaseQueue(path: context.plainPath).write { db in
                let statement = try db.makeStatement(sql: "DELETE FROM plain WHERE rowid = ?")
                for id in 1...context.count { try statement.execute(arguments: [id]) }
            }
        case .search:
            let index = SearchIndex(store: try HistoryStore(path: context.path))
            for _ in 0..<context.count {
                for query in context.queries { _ = try index.search(query, limit: 20) }
            }
        case .rawSearchPage:
            // A careful hand-written search: rank and count without snippets, then the page's
            // titles and snippets, one row at a time.
            let queue = try DatabaseQueue(path: context.path)
            try queue.read { db in
                let table = SQLQuoting.identifier(try Self.ftsTable(db, context.path))
                let rank = try db.makeStatement(sql: """
                    SELECT rowid, bm25(\(table), 10, 1) AS score, (SELECT count(*) FROM \(table) WHERE \(table) MATCH ?1) AS total
                    FROM \(table) WHERE \(table) MATCH ?1 ORDER BY score LIMIT 20
                    """)
                let page = try db.makeStatement(sql: """
                    SELECT highlight(\(table), 0, '[', ']'), snippet(\(table), -1, '[', ']', '…', 12) FROM \(table) WHERE \(table) MATCH ?1 AND rowid = ?2
                    """)
                for _ in 0..<context.count {
                    for expression in Self.rawExpressions(context.queries) {
                        for rowid in try Int64.fetchAll(rank, arguments: [expression]) { _ = try Row.fetchAll(page, arguments: [expression, rowid]) }
                    }
                }
            }
        case .rawSearch:
            // What a user would write by hand against the same FTS5 table: ranked hits with a
            // snippet and the title, and the total. A CJK word is the phrase of its characters,
            // as the index stores them.
            let queue = try DatabaseQueue(path: context.path)
            try queue.read { db in
                let table = SQLQuoting.identifier(try Self.ftsTable(db, context.path))
                let statement = try db.makeStatement(sql: """
                    SELECT rowid, highlight(\(table), 0, '[', ']'), snippet(\(table), -1, '[', ']', '…', 12), bm25(\(table), 10, 1) AS score,
                           (SELECT count(*) FROM \(table) WHERE \(table) MATCH ?1) AS total
                    FROM \(table) WHERE \(table) MATCH ?1 ORDER BY score LIMIT 20
                    """)
                for _ in 0..<context.count {
                    for expression in Self.rawExpressions(context.queries) { _ = try Row.fetchAll(statement, arguments: [expression]) }
                }
            }
        }
    }

    // MARK: - Helpers

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The index's FTS5 table.
    static func ftsTable(_ db: Database, _ path: String) throws -> String {
        guard let fts = try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'searchlight_fts_*_g*' AND sql LIKE 'CREATE VIRTUAL TABLE%'") else {
            throw Failure(description: "no index in \(path)")
        }
        return fts
    }

    /// Each query's words as FTS5 phrases of their characters, as the index stores CJK text.
    static func rawExpressions(_ queries: [String]) -> [String] {
        queries.map { query in
            query.split(separator: " ").map { word in "\"" + word.map(String.init).joined(separator: " ") + "\"" }.joined(separator: " AND ")
        }
    }

    static func writeDatabase(_ context: Context) throws -> DatabaseQueue {
        if context.tracked {
            let store = try trackedStore(context)
            try checkpoint(store.dbPool)
        } else {
            try walDatabase(context.path).write { try $0.execute(sql: schema) }
        }
        return try DatabaseQueue(path: context.path)
    }

    /// A new database in WAL mode, as a tracked one is (a HistoryStore's), so that a baseline
    /// writes the same way. (SQLite cannot change the journal mode inside a transaction.)
    static func walDatabase(_ path: String) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                throw Failure(description: "\(path) is not in WAL mode")
            }
        }
        return queue
    }

    static func trackedStore(_ context: Context) throws -> HistoryStore {
        let pool = try DatabasePool(path: context.path, configuration: HistoryStore.databaseConfiguration())
        try pool.write { try $0.execute(sql: schema) }
        let store = try HistoryStore(dbPool: pool, model: model)
        try Indexer(store: store).indexPendingChanges() // builds the (empty) index
        return store
    }

    static func insert(_ doc: Document, _ id: Int, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)").execute(arguments: [id, doc.id, doc.title, doc.body])
    }

    static func insert(_ documents: some Collection<Document>, _ db: Database) throws {
        for (offset, doc) in documents.enumerated() { try insert(doc, offset + 1, db) }
    }

    /// One statement a row, by a plain connection, in one transaction.
    static func foreign(_ context: Context, _ sql: String) throws {
        try DatabaseQueue(path: context.path).write { db in
            let statement = try db.cachedStatement(sql: sql)
            for id in 1...context.count { try statement.execute(arguments: [id]) }
        }
    }

    /// Leaves the database file whole and the WAL empty, so that a run starts from the same state.
    static func checkpoint(_ writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}
