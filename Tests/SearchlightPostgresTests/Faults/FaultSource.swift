import Foundation
import GRDB
import SearchlightHistory
import SearchlightTestSupport
import Testing

/// A source database of a fault test: set up with `searchlight init`, written by
/// `searchlight-stress` writers, sunk by `searchlight-postgres sink`, and read back by a plain
/// `SELECT key, columns FROM table` (the rows oracle).
final class FaultSource: Sendable {
    /// An entity of the model: its table, key column and field columns.
    struct Entity: Sendable {
        var name: String
        var table: String
        var key: String
        var fields: [String]
    }

    enum Kind: Sendable {
        /// `notes(id INTEGER PRIMARY KEY, title, body, tags)`: `searchlight-stress write`.
        case notes
        /// Four tables with INTEGER, NOCASE TEXT, BLOB (WITHOUT ROWID) and REAL keys:
        /// `searchlight-stress mutate`.
        case mutate
    }

    let kind: Kind
    let database: TestDatabase
    let entities: [Entity]
    let directory: String
    /// The database file (it can be replaced, as a restore does).
    let path: String

    static let mutateDefinitions: [(String, String)] = [
        ("notes", "(k INTEGER PRIMARY KEY, title TEXT, body TEXT, extra TEXT)"),
        ("tags", "(k TEXT PRIMARY KEY COLLATE NOCASE, title TEXT, body TEXT, extra TEXT)"),
        ("blobs", "(k BLOB PRIMARY KEY NOT NULL, title TEXT, body TEXT, extra TEXT) WITHOUT ROWID"),
        ("reals", "(k REAL PRIMARY KEY, title TEXT, body TEXT, extra TEXT)"),
    ]

    init(_ kind: Kind) async throws {
        self.kind = kind
        switch kind {
        case .notes:
            database = try TestDatabase(schema: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT);")
            entities = [Entity(name: "Note", table: "notes", key: "id", fields: ["title", "body", "tags"])]
        case .mutate:
            database = try TestDatabase(schema: Self.mutateDefinitions.map { "CREATE TABLE \($0.0) \($0.1);" }.joined(separator: "\n"))
            entities = Self.mutateDefinitions.map { Entity(name: $0.0.capitalized, table: $0.0, key: "k", fields: ["title", "body"]) }
        }
        directory = database.directory.path
        path = database.path
        let model = directory + "/model.json"
        let described = entities.map { entity in
            let fields = entity.fields.enumerated().map { index, column in
                index == 0 ? #"{"column": "\#(column)", "weight": 10, "role": "title"}"# : #"{"column": "\#(column)"}"#
            }
            return #"{"name": "\#(entity.name)", "table": "\#(entity.table)", "primaryKey": "\#(entity.key)", "fields": [\#(fields.joined(separator: ", "))], "preserveOnDelete": ["title"]}"#
        }
        try Data(#"{"entities": [\#(described.joined(separator: ", "))]}"#.utf8).write(to: URL(fileURLWithPath: model))
        try await FaultProcess.run("searchlight", ["init", "--db", path, "--model", model, "--log-level", "error"])
    }

    /// The field columns by entity name (to read `documents.fields`).
    var fieldsByEntity: [String: [String]] { Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.fields) }) }

    /// The source id the sink uses by default.
    func sourceID(at path: String? = nil) throws -> String {
        try HistoryStore(path: path ?? self.path).sourceID()
    }

    /// The rows oracle: every row of every entity's table, `entity object_key` → field texts,
    /// read by plain SQL (`object_key` as the sink's contract writes it: `i:42`, `t:abc`,
    /// `b:0A1B`, `r:8.5`).
    func rows(at path: String? = nil) throws -> [String: [String]] {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: path ?? self.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            var result: [String: [String]] = [:]
            for entity in entities {
                let key = "\"\(entity.key)\""
                let columns = entity.fields.map { "coalesce(CAST(\"\($0)\" AS TEXT), '')" }.joined(separator: ", ")
                let sql = """
                    SELECT CASE typeof(\(key)) WHEN 'integer' THEN 'i:' || \(key) WHEN 'text' THEN 't:' || \(key)
                             WHEN 'blob' THEN 'b:' || hex(\(key)) ELSE 'r:' || \(key) END, \(columns)
                    FROM "\(entity.table)" WHERE \(key) IS NOT NULL
                    """
                for row in try Row.fetchAll(db, sql: sql) {
                    result[entity.name + " " + (row[0] as String)] = (1...entity.fields.count).map { row[$0] as String }
                }
            }
            return result
        }
    }

    /// The sink's SQLite checkpoint (author `searchlight.postgres.<source>`), read by plain SQL.
    func sqliteCheckpoint(_ source: String, at path: String? = nil) throws -> Int64? {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: path ?? self.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            try Int64.fetchOne(db, sql: "SELECT token FROM searchlight_consumer WHERE author = ?", arguments: ["searchlight.postgres." + source])
        }
    }

    /// The newest history token of the file.
    func headToken(at path: String? = nil) throws -> Int64 {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: path ?? self.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { try Int64.fetchOne($0, sql: "SELECT max(CASE token WHEN 0 THEN id ELSE token END) FROM searchlight_log") ?? 0 }
    }

    // MARK: - Processes

    /// A writer of this source's kind: `write` (ids `first ..< first + count`) or `mutate`.
    func writer(log: String, seconds: Double, seed: UInt64, index: Int, at path: String? = nil) -> FaultProcess {
        switch kind {
        case .notes:
            FaultProcess("searchlight-stress", ["write", "--db", path ?? self.path, "--log", log, "--seconds", "\(seconds)",
                                                "--author", "writer-\(index)", "--first", "\(index * 10_000)", "--count", "300", "--seed", "\(seed)"])
        case .mutate:
            FaultProcess("searchlight-stress", ["mutate", "--db", path ?? self.path, "--log", log, "--seconds", "\(seconds)",
                                                "--writer", "\(index)", "--seed", "\(seed)"])
        }
    }

    /// A following sink (`sink` without `--once`).
    func follow(_ postgres: FaultPostgres, at path: String? = nil, extra: [String] = []) -> FaultProcess {
        FaultProcess("searchlight-postgres", ["sink", "--db", path ?? self.path, "--postgres", postgres.url] + extra)
    }

    /// `sink --once`: catches up and exits 0; returns its stdout.
    @discardableResult
    func catchUp(_ postgres: FaultPostgres, at path: String? = nil, extra: [String] = []) async throws -> String {
        try await FaultProcess.run("searchlight-postgres", ["sink", "--db", path ?? self.path, "--postgres", postgres.url, "--once"] + extra).stdout
    }
}

/// The end-state checks every fault test makes.
enum FaultOracle {
    /// PostgreSQL's documents of `source` equal the rows of `file` (a plain SELECT), field by field.
    static func differences(_ source: FaultSource, id: String, postgres: FaultPostgres, at path: String? = nil) async throws -> [String] {
        let expected = try source.rows(at: path)
        let actual = try await postgres.documents(id, fields: source.fieldsByEntity)
        var differences: [String] = []
        for (key, fields) in expected where actual[key] != fields {
            differences.append(actual[key] == nil ? "missing \(key) \(fields)" : "\(key): PostgreSQL has \(actual[key]!), the row \(fields)")
        }
        for key in actual.keys where expected[key] == nil {
            differences.append("\(key) is in PostgreSQL, not in the source")
        }
        return differences.sorted()
    }

    /// The `write` writers' logs (`insert|update|delete ID`, one writer per id range): the last
    /// operation logged for an id says whether it exists. Returns the ids where PostgreSQL
    /// disagrees, and how many ids the logs name.
    static func writerLogDifferences(logs: [String], entity: String, postgres: FaultPostgres, source id: String) async throws -> (differences: [String], ids: Int) {
        var last: [Int: Substring] = [:]
        for log in logs {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let id = Int(parts[1]) else { continue }
                last[id] = parts[0]
            }
        }
        let present = Set(try await postgres.rows("SELECT object_key FROM \(postgres.s).documents WHERE source = '\(id)' AND entity = '\(entity)'").map { $0[0] })
        var differences: [String] = []
        for (id, operation) in last {
            let exists = operation != "delete"
            if present.contains("i:\(id)") != exists {
                differences.append("id \(id): the writer's last \(operation), PostgreSQL \(present.contains("i:\(id)") ? "has" : "lacks") it")
            }
        }
        return (differences.sorted(), last.count)
    }

    /// The highest `token T` a `mutate` writer logged.
    static func highestLoggedToken(_ logs: [String]) -> Int64 {
        logs.flatMap { ((try? String(contentsOfFile: $0, encoding: .utf8)) ?? "").split(separator: "\n") }
            .compactMap { $0.hasPrefix("token ") ? Int64($0.dropFirst(6)) : nil }.max() ?? 0
    }

    static func environment(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }
}
