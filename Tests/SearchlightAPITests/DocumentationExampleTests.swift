import Foundation
import GRDB
import Testing
// No @testable: the examples of docs/Library.md, compiled and run as an embedder would.
import Searchlight
import SearchlightHistory

/// The examples of `docs/Library.md` are these lines (a test checks that the document still
/// shows them): they compile here, with only the products the document tells an embedder to add,
/// and they run.
enum LibraryExamples {
    /// The complete program, with the database path as an argument.
    static func notes(path: String) async throws -> [String] {
        var printed: [String] = []
        // The table must exist; Searchlight adds its own tables and triggers beside it.
        let model = try SearchlightModel(entities: [
            .init(name: "Note", table: "notes", primaryKey: "id",
                  fields: [.init(column: "title", weight: 10, role: .title), .init(column: "body")],
                  preserveOnDelete: ["title"]),
        ])
        let store = try HistoryStore(path: path, model: model)

        // The indexer delegate: a required history consumer that follows every writer, on a
        // thread of its own (your cooperative pool is never blocked), until its task is cancelled.
        let indexer = try Indexer(store: store)
        let following = Task { try await indexer.run() }

        // Writes through the API carry an author and a context name.
        try await store.write(author: "app", context: "editor") { db in
            try db.execute(sql: "INSERT INTO notes(title, body) VALUES (?, ?)", arguments: ["Kernel panic", "The system halted."])
        }
        try await indexer.waitUntilCaughtUp(timeout: .seconds(30)) // throws timed-out past the bound

        let results = try SearchIndex(store: store).search("kern", asYouType: true, limit: 10)
        for hit in results.hits { print(hit.entity, hit.objectID, hit.titleHighlight ?? "", hit.snippet) }
        printed = results.hits.map { "\($0.entity) \($0.objectID)" }

        // At shutdown: the batch in flight commits, then run() returns.
        following.cancel()
        try await following.value
        return printed
    }

    static let exporter = "exporter"
    static let mine = HistoryFilter(authors: .excluding([exporter])) // also: context, entities, change types, tombstones

    static func export(_ batch: HistoryBatch, _ db: Database) throws {
        for change in batch.changes {                         // written in the same transaction as the checkpoint
            try db.execute(sql: "INSERT INTO outbox(entity, object_id, type) VALUES (?, ?, ?)",
                           arguments: [change.entity, change.objectID, change.type.description])
        }
    }

    static func resync(_ head: HistoryToken, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO outbox(entity, object_id, type) SELECT 'Note', id, 'snapshot' FROM notes")
    }

    // Catch up once (cron, or after each write):
    static func catchUp(_ store: HistoryStore) throws(SearchlightError) {
        while true {
            switch try store.consumeNextBatch(as: exporter, filter: mine, export) {
            case .consumed: continue
            case .caughtUp: return
            case .needsResync: try store.resynchronize(as: exporter, resync) // no checkpoint yet, or history expired
            }
        }
    }

    // Or follow every commit, from this process or any other, until the task is cancelled:
    static func follow(_ store: HistoryStore) async throws(SearchlightError) {
        try await store.consume(as: exporter, filter: mine, resynchronize: resync, export)
    }

    /// The async forms of the long operations, from async code.
    static func maintain(_ indexer: Indexer) async throws(SearchlightError) -> (Indexer.Summary, VerificationReport) {
        let summary = try await indexer.reindexAsync { progress in print(progress.done, "of", progress.total) }
        let report = try await indexer.verifyAsync()
        return (summary, report)
    }
}

@Suite struct DocumentationExampleTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/Library.md")

    /// The Swift code blocks of a Markdown file.
    static func swiftBlocks(_ url: URL) throws -> [[String]] {
        var blocks: [[String]] = [], current: [String]? = nil
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" { current = [] }
            else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" { blocks.append(current!); current = nil }
            else if current != nil { current!.append(String(line)) }
        }
        return blocks
    }

    /// Every statement line of the document's block appears, in order, in this file: what the
    /// document shows is what compiles here.
    @Test(arguments: ["@main struct Notes", "func catchUp(", "indexer.reindexAsync {"])
    func theDocumentShowsTheCompiledExample(marker: String) throws {
        let block = try #require(try Self.swiftBlocks(Self.library).first { $0.contains { $0.contains(marker) } }, "no block with \(marker)")
        let here = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var position = here.startIndex
        let skipped = ["import ", "@main struct", "static func main()", "}", "let exporter", "let mine", "func "]
        for line in block.map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty && !skipped.contains(where: { line.hasPrefix($0) }) {
            let expected = line.replacingOccurrences(of: #"path: "notes.sqlite""#, with: "path: path")
            guard let found = here[position...].firstIndex(of: expected) else {
                Issue.record("docs/Library.md shows a line this test does not compile: \(line)")
                return
            }
            position = here.index(after: found)
        }
    }

    /// A folder of its own, and the path of `notes.sqlite` in it.
    static func scratch() throws -> (URL, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (directory, directory.appendingPathComponent("notes.sqlite").path)
    }

    @Test func theCompleteProgramRuns() async throws {
        let (directory, path) = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
        }
        let printed = try await LibraryExamples.notes(path: path)
        #expect(printed == ["Note 1"], "\(printed)")
    }

    @Test func theAsyncFormsRun() async throws {
        let (directory, path) = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('one'), ('two')")
        }
        let model = try SearchlightModel(entities: [.init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "title")])])
        let indexer = try Indexer(store: HistoryStore(path: path, model: model))
        let (summary, report) = try await LibraryExamples.maintain(indexer)
        #expect(summary.rebuildReason == .requested && summary.upserted == 2, "\(summary)")
        #expect(report.isConsistent)
    }

    @Test func theConsumerExampleExportsEveryChangeOnce() async throws {
        let (directory, path) = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
            try db.execute(sql: "CREATE TABLE outbox(entity TEXT, object_id, type TEXT)")
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('before')")
        }
        let store = try HistoryStore(path: path, model: SearchlightModel(entities: [
            .init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "title")]),
        ]))
        try LibraryExamples.catchUp(store)                 // the resync: one snapshot row
        try await store.write(author: "app") { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('after')") }
        try LibraryExamples.catchUp(store)
        try LibraryExamples.catchUp(store)                 // nothing twice
        let rows = try await store.databaseWriter.read { db in try Row.fetchAll(db, sql: "SELECT object_id, type FROM outbox ORDER BY rowid") }
        #expect(rows.map { "\($0[0] as Int64) \($0[1] as String)" } == ["1 snapshot", "2 insert"])
    }
}
