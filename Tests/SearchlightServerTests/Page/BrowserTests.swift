import Foundation
import Searchlight
import SearchlightHistory
@testable import SearchlightServer
import SearchlightTestSupport
import Testing

/// The search page in a real browser: Debian's `chromium` and `chromium-driver`, driven by
/// Selenium (`Browser/page_test.py`) against a server on a real socket: typing, highlights, a
/// stale answer held back, a hostile document, a facet with back and forward, "10,000+",
/// keyboard navigation, Chinese and Japanese through input-method composition, and the page
/// without JavaScript. `.ci/run` installs the browser; elsewhere the suite is skipped with the reason.
@Suite(.enabled(if: Browser.missing == nil, Browser.skipReason), .serialized)
struct BrowserTests {

}

/// Where the browser is, and what is missing to run it.
enum Browser {
    static let chromium = "/usr/bin/chromium"
    static let driver = "/usr/bin/chromedriver"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/page_test.py").path

    /// What is missing to run the browser, or nil.
    static let missing: String? = {
        let files = FileManager.default
        if !files.isExecutableFile(atPath: chromium) { return "no \(chromium) (Debian's chromium)" }
        if !files.isExecutableFile(atPath: driver) { return "no \(driver) (Debian's chromium-driver)" }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import selenium"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "no python3" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "no Selenium for python3 (pip install selenium)"
    }()
    static var skipReason: Comment { "browser tests need chromium, chromium-driver and Selenium, which .ci/run installs: \(missing ?? "")" }
}

extension BrowserTests {

    /// Notes about kernels (30, in three categories), storage, stale and stalest entries, a
    /// hostile one, Chinese and Japanese ones; and 10,001 events that say "common".
    static func fixture() async throws -> (HistoryStore, TestDatabase) {
        let database = try TestDatabase(schema: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, category TEXT);
            CREATE TABLE events(id INTEGER PRIMARY KEY, message TEXT);
            """)
        let model = try SearchlightModel(entities: [
            .init(name: "Note", table: "notes", primaryKey: "id",
                  fields: [.init(column: "title", weight: 10, role: .title), .init(column: "body")], attributes: [.init(column: "category")]),
            .init(name: "Event", table: "events", primaryKey: "id", fields: [.init(column: "message", role: .title)]),
        ])
        let store = try database.openStore(model: model)
        let categories = ["kernel", "network", "storage"]
        try await store.write(author: "fixture") { db in
            for n in 1...30 {
                let category = categories[n % 3]
                try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, ?)",
                               arguments: ["Kernel note \(n)", "the kernel panics in the \(category) stack, case \(n)", category])
            }
            for n in 1...5 {
                try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, 'storage')", arguments: ["Storage array \(n)", "disks and volumes"])
            }
            for n in 1...3 {
                try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, 'cache')", arguments: ["stale cache \(n)", "an old copy"])
                try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, 'cache')", arguments: ["stalest entry \(n)", "the oldest copy"])
            }
            try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, ?)",
                           arguments: ["<script>window.__pwned=1</script> hostile", "<img src=x onerror=\"window.__pwned=2\"> hostile text & more", "<b>evil</b>"])
            try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, 'cjk')", arguments: ["数据库索引", "这个数据库的全文索引支持中文搜索"])
            try db.execute(sql: "INSERT INTO notes(title, body, category) VALUES (?, ?, 'cjk')", arguments: ["全文検索エンジン", "日本語の文書を検索します"])
            for n in 1...10_001 {
                try db.execute(sql: "INSERT INTO events(message) VALUES (?)", arguments: ["common event \(n)"])
            }
        }
        try Indexer(store: store).indexPendingChanges()
        return (store, database)
    }

    @Test func thePageInChromium() async throws {
        let (store, _database) = try await Self.fixture()
        _ = _database
        var configuration = SearchServer.Configuration()
        configuration.port = 0
        configuration.page.facets = ["category"]
        var options = SearchIndex.Options()
        options.maximumRankedMatches = 2_000 // so that the 10,001 events' count stops at its bound
        let server = SearchServer(service: LocalSearchService(store: store, options: options), configuration: configuration)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await server.run { port in continuation.yield(port) } }
        defer { serving.cancel() }
        let port = try await Self.first(ports, within: .seconds(60))
        if let seconds = ProcessInfo.processInfo.environment["SEARCHLIGHT_BROWSER_HOLD"].flatMap(Int.init) {
            print("BrowserTests: serving the fixture on http://127.0.0.1:\(port)/ for \(seconds) s")
            try await Task.sleep(for: .seconds(seconds))
        }
        let screenshots = ProcessInfo.processInfo.environment["SEARCHLIGHT_SCREENSHOTS"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-screenshots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let (status, output) = try await Self.run(["python3", Browser.script, "--url", "http://127.0.0.1:\(port)", "--screenshots", screenshots,
                                                   "--chromium", Browser.chromium, "--driver", Browser.driver], within: .seconds(600))
        print(output)
        #expect(status == 0, "the browser checks failed:\n\(output)")
        #expect(output.contains("ok   the last word"), "the checks ran")
    }

    static func first(_ ports: AsyncStream<Int>, within limit: Duration) async throws -> Int {
        try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { await ports.first { _ in true } }
            group.addTask { try await Task.sleep(for: limit); return nil }
            defer { group.cancelAll() }
            guard let port = try await group.next() ?? nil else { throw CancellationError() }
            return port
        }
    }

    /// Runs a command to its end (killed past `limit`): its exit status and its output.
    static func run(_ arguments: [String], within limit: Duration) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-browser-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close(); try? FileManager.default.removeItem(at: output) }
        process.standardOutput = handle
        process.standardError = handle
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.yield(); ended.continuation.finish() }
        try process.run()
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { for await _ in ended.stream { return true }; return true }
            group.addTask { try await Task.sleep(for: limit); return false }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if !finished { process.terminate() }
        process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return (process.terminationStatus, finished ? text : text + "\n(killed after \(limit))")
    }
}
