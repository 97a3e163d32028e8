import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// Scenarios 2 and 3: incremental indexing through history, and a full rebuild, against
/// inserting the same documents straight into a plain FTS5 table in one transaction.
enum Indexing {
    static let model = try! SearchlightModel(entities: [
        SearchlightModel.Entity(name: "Doc", table: "docs", primaryKey: "id",
               fields: [SearchlightModel.Field(column: "title", weight: 10, role: .title), SearchlightModel.Field(column: "body")], preserveOnDelete: ["title"]),
    ])

    /// A database with the corpus in `docs`, tracked, written through the API in chunks.
    static func trackedDatabase(_ documents: [Document], in directory: URL) throws -> (HistoryStore, String) {
        let path = directory.appendingPathComponent("tracked.sqlite").path
        let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
        try pool.write { try $0.execute(sql: WriteOverhead.schema) }
        let store = try HistoryStore(dbPool: pool, model: model)
        try Indexer(store: store).indexPendingChanges() // builds the (empty) index
        for start in stride(from: 0, to: documents.count, by: 10_000) {
            try store.write(author: "import") { db in
                for (offset, doc) in documents[start..<min(start + 10_000, documents.count)].enumerated() {
                    try WriteOverhead.insert(doc, start + offset + 1, db)
                }
            }
        }
        return (store, path)
    }

    /// Documents per second inserting into a plain FTS5 table in one transaction.
    static func plainFTS5(_ documents: ArraySlice<Document>, in directory: URL, tokenizer: String, prefixes: String) throws -> Double {
        let (_, seconds) = try plainFTS5Table(documents.map { ($0.title, $0.body) }, in: directory, tokenizer: tokenizer, prefixes: prefixes)
        return Double(documents.count) / seconds
    }

    /// A plain FTS5 table (by default with the legacy prefix indexes, which the search
    /// latency baselines have always used; scenarios 2 and 3 pass the index's own) filled with `documents` in one
    /// transaction, and the seconds the filling took.
    static func plainFTS5Table(_ documents: [(title: String, body: String)], in directory: URL, tokenizer: String,
                               prefixes: String = IndexSchema.legacyPrefixes) throws -> (DatabaseQueue, Double) {
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("plain-\(UUID().uuidString).sqlite").path)
        try queue.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE plain USING fts5(title, body, tokenize = \(SQLQuoting.literal(tokenizer)), prefix = \(SQLQuoting.literal(prefixes)))")
        }
        let seconds = try measure {
            try queue.write { db in
                let statement = try db.makeStatement(sql: "INSERT INTO plain(rowid, title, body) VALUES (?, ?, ?)")
                for (offset, doc) in documents.enumerated() {
                    try statement.execute(arguments: [offset + 1, doc.title, doc.body])
                }
            }
        }
        return (queue, seconds)
    }

    static func run(_ documents: [Document]) throws -> [Figure] {
        let directory = try scratchDirectory("indexing")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, _) = try trackedDatabase(documents, in: directory)
        let indexer = try Indexer(store: store)
        var figures: [Figure] = []
        // The raw baseline: a plain FTS5 table with the index's tokenizer and prefixes doing
        // the same inserts, updates and deletes, each in one transaction.
        let (plain, plainInsertSeconds) = try plainFTS5Table(documents.map { ($0.title, $0.body) }, in: directory,
                                                             tokenizer: model.tokenizer, prefixes: IndexSchema.prefixes)
        let baseline = Double(documents.count) / plainInsertSeconds

        let insertSeconds = try measure { try indexer.indexPendingChanges() }
        let insertRate = Double(documents.count) / insertSeconds
        figures.append(Figure("2 incremental indexing", "catch up on \(documents.count) inserts", unit: "docs/s",
                              ours: insertRate, baseline: baseline, baselineName: "plain FTS5 insert",
                              target: ">= 0.75x", met: insertRate / baseline >= 0.75))

        let tenth = documents.count / 10
        let updated = Array(stride(from: 1, through: tenth * 10, by: 10))
        try store.write(author: "bench") { db in
            for id in updated { try db.execute(sql: "UPDATE docs SET body = body || ' revised' WHERE id = ?", arguments: [id]) }
        }
        let updateSeconds = try measure { try indexer.indexPendingChanges() }
        let plainUpdateSeconds = try measure {
            try plain.write { db in
                let statement = try db.makeStatement(sql: "UPDATE plain SET body = body || ' revised' WHERE rowid = ?")
                for id in updated { try statement.execute(arguments: [id]) }
            }
        }
        let updateRate = Double(updated.count) / updateSeconds, plainUpdateRate = Double(updated.count) / plainUpdateSeconds
        figures.append(Figure("2 incremental indexing", "catch up on \(updated.count) updates (10%)", unit: "docs/s",
                              ours: updateRate, baseline: plainUpdateRate, baselineName: "plain FTS5 update",
                              target: ">= 0.7x", met: updateRate / plainUpdateRate >= 0.7))
        let deleted = (1...documents.count).filter { $0 % 10 == 5 }
        let removed = try store.write(author: "bench") { db -> Int in
            try db.execute(sql: "DELETE FROM docs WHERE id % 10 = 5")
            return db.changesCount
        }
        let deleteSeconds = try measure { try indexer.indexPendingChanges() }
        let plainDeleteSeconds = try measure {
            try plain.write { db in
                let statement = try db.makeStatement(sql: "DELETE FROM plain WHERE rowid = ?")
                for id in deleted { try statement.execute(arguments: [id]) }
            }
        }
        let deleteRate = Double(removed) / deleteSeconds, plainDeleteRate = Double(deleted.count) / plainDeleteSeconds
        figures.append(Figure("2 incremental indexing", "catch up on \(removed) deletes (10%)", unit: "docs/s",
                              ours: deleteRate, baseline: plainDeleteRate, baselineName: "plain FTS5 delete",
                              target: ">= 0.7x", met: deleteRate / plainDeleteRate >= 0.7))
        return figures
    }

    /// Scenario 3: a full rebuild in a child process (so that its peak RSS is its own).
    static func rebuild(_ documents: [Document], corpus: String, limit: Int?) throws -> [Figure] {
        let directory = try scratchDirectory("rebuild")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, path) = try trackedDatabase(documents, in: directory)
        let baseline = try plainFTS5(documents[...], in: directory, tokenizer: model.tokenizer, prefixes: IndexSchema.prefixes)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--rebuild-child", path, "--corpus", corpus]
        let pipe = Pipe()
        child.standardOutput = pipe
        try child.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        let fields = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard child.terminationStatus == 0, fields.count == 2 else {
            throw Corpus.Failure(description: "the rebuild child failed")
        }
        let (seconds, peakMB) = (fields[0], fields[1])
        let rate = Double(documents.count) / seconds
        return [
            Figure("3 full reindex", "rebuild \(documents.count) documents", unit: "docs/s", ours: rate, baseline: baseline,
                   baselineName: "plain FTS5 insert", target: ">= 0.85x", met: rate / baseline >= 0.85),
            Figure("3 full reindex", "peak RSS of the rebuilding process", unit: "MB", ours: peakMB,
                   target: "< 100 MB", met: peakMB < 100),
        ]
    }

    /// Runs in the child: opens the database, rebuilds, prints the seconds taken and its peak
    /// resident memory in MB.
    static func rebuildChild(_ path: String) throws {
        let store = try HistoryStore(path: path)
        let indexer = try Indexer(store: store)
        let seconds = try measure { try indexer.reindex() }
        print(seconds, peakResidentMB())
    }

    /// `VmHWM` of `/proc/self/status`: the high-water mark of this process image. (`ru_maxrss`
    /// survives `exec`, so a child would report the size of the parent it was forked from.)
    static func peakResidentMB() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}
