import Foundation
import Synchronization
import GRDB
import SearchlightHistory
import SearchlightEvaluation

/// A fresh database in its own temporary directory, removed when the value is released.
public final class TestDatabase: Sendable {
    public let directory: URL
    public let path: String

    /// Creates the database and runs `schema` on it (plain SQL, no Searchlight).
    public init(schema: String = TestDatabase.notesSchema) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("searchlight-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("test.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: schema) }
        try queue.close()
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    public static let notesSchema = """
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);
        CREATE TABLE people(uuid TEXT PRIMARY KEY NOT NULL, name TEXT, email TEXT UNIQUE);
        """

    public static let notesModel = try! SearchlightModel(entities: [
        SearchlightModel.Entity(name: "Note", table: "notes", primaryKey: "id",
               fields: [SearchlightModel.Field(column: "title", weight: 10, role: .title), SearchlightModel.Field(column: "body"), SearchlightModel.Field(column: "tags", weight: 3)],
               preserveOnDelete: ["title"]),
        SearchlightModel.Entity(name: "Person", table: "people", primaryKey: "uuid",
               fields: [SearchlightModel.Field(column: "name", role: .title)], preserveOnDelete: ["name", "email"]),
    ])

    public func openStore(model: SearchlightModel? = TestDatabase.notesModel,
                   clock: (@Sendable () -> Date)? = nil) throws -> HistoryStore {
        var configuration = HistoryStore.Configuration()
        if let clock { configuration.clock = clock }
        return try HistoryStore(path: path, model: model, configuration: configuration)
    }

    /// Runs SQL in a separate `sqlite3` process that loads no Searchlight code.
    @discardableResult
    public func shell(_ sql: String) throws -> String {
        try Shell.sqlite3(path, sql)
    }

    /// A snapshot of every object of the database schema (to prove nothing changed).
    public func schemaSnapshot() throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try String.fetchAll($0, sql: "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name") }
    }
}

public enum Shell {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    @discardableResult
    public static func sqlite3(_ path: String, _ sql: String) throws -> String {
        try run("/usr/bin/env", ["sqlite3", "-bail", "-cmd", ".timeout 10000", path], input: sql)
    }

    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), error = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(arguments.first ?? executable) exited \(process.terminationStatus): \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A clock tests move by hand.
public final class TestClock: Sendable {
    private let now: Mutex<Date>
    public init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { now = Mutex(start) }
    public var date: Date { now.withLock { $0 } }
    public func set(_ date: Date) { now.withLock { $0 = date } }
    public func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
    public var function: @Sendable () -> Date { { [self] in date } }
}

extension HistoryStore {
    /// All changes, flattened, for assertions.
    public func allChanges() throws -> [HistoryChange] { try fetchChanges(.all) }
}

public struct TimedOut: Error, CustomStringConvertible {
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s" }
}

/// Runs `body`, failing with ``TimedOut`` if it has not finished after `seconds` (a bound
/// against hangs, never a latency assertion: choose it generously).
public func withTimeout<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut(seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// A seeded generator (SplitMix64), so that a failing random run can be replayed. It lives in
/// `SearchlightEvaluation`, whose recall queries the benchmark draws with it too.
public typealias SplitMix = SearchlightEvaluation.SplitMix
