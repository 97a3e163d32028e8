import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// Scenario 8: what must not grow with the log or the data. The `searchlight` command reading a
/// large history (`history --format jsonl`, against `sqlite3 -json` reading the same log rows)
/// and verifying a large index, each at two sizes, as whole processes (time and peak RSS from
/// `/usr/bin/time`); and tracked `INSERT OR REPLACE` batches, the fifth against the first.
enum Scale {
    static func run(_ documents: [Document], transactions: Int, verifyRows: Int) throws -> [Figure] {
        guard let searchlight = executableBeside("searchlight") else {
            FileHandle.standardError.write(Data("scenario 8: history and verify skipped: build the searchlight command beside the bench (swift build -c release)\n".utf8))
            return try replace()
        }
        return try history(searchlight, transactions: transactions) + verify(searchlight, documents, rows: verifyRows) + replace()
    }

    // MARK: - history

    static func history(_ searchlight: String, transactions: Int) throws -> [Figure] {
        var figures: [Figure] = []
        var peaks: [Double] = []
        for count in [transactions / 4, transactions] {
            let directory = try scratchDirectory("history")
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("history.sqlite").path
            let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
            try pool.write { try $0.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)") }
            let model = try SearchlightModel(entities: [.init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "title")])])
            _ = try HistoryStore(dbPool: pool, model: model)
            // A foreign writer: one transaction of history per row.
            try pool.write { db in
                try db.execute(sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO notes(id, title) SELECT i, 'note ' || i FROM n
                    """, arguments: [count])
            }
            try pool.close()
            let output = directory.appendingPathComponent("out").path
            let ours = try timed([searchlight, "history", "--db", path, "--format", "jsonl", "--log-level", "error"], output: output)
            let raw = try timed(["/usr/bin/env", "sqlite3", "-json", path, #"SELECT * FROM "searchlight_log""#], output: output)
            let rate = Double(count) / ours.seconds
            figures.append(Figure("8 at scale", "history --format jsonl, \(count) transactions", unit: "tx/s", ours: rate,
                                  baseline: Double(count) / raw.seconds, baselineName: "sqlite3 -json of the log",
                                  target: "≥ 100000 tx/s", met: rate >= 100_000))
            peaks.append(ours.peakMB)
        }
        figures.append(Figure("8 at scale", "history peak RSS, \(transactions) transactions", unit: "MB", ours: peaks[1],
                              baseline: peaks[0], baselineName: "\(transactions / 4) transactions",
                              target: "flat (≤ 1.2x)", met: peaks[1] <= peaks[0] * 1.2))
        return figures
    }

    // MARK: - verify

    static func verify(_ searchlight: String, _ documents: [Document], rows: Int) throws -> [Figure] {
        // Documents of about 4 KB: glosses of the corpus, end to end.
        let text = documents.prefix(2_000).map(\.body).joined(separator: " ")
        let characters = Array(text)
        var peaks: [Double] = []
        var figures: [Figure] = []
        for count in [rows / 4, rows] {
            let directory = try scratchDirectory("verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("verify.sqlite").path
            let pool = try DatabasePool(path: path, configuration: HistoryStore.databaseConfiguration())
            try pool.write { db in
                try db.execute(sql: "CREATE TABLE pages(id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
                let insert = try db.makeStatement(sql: "INSERT INTO pages VALUES (?, ?, ?)")
                for id in 0..<count {
                    let start = (id * 4_099) % max(1, characters.count - 4_096)
                    try insert.execute(arguments: [id, "page \(id)", String(characters[start..<min(characters.count, start + 4_096)])])
                }
            }
            let model = try SearchlightModel(entities: [.init(name: "Page", table: "pages", primaryKey: "id",
                                                              fields: [.init(column: "title", role: .title), .init(column: "body")])])
            let store = try HistoryStore(dbPool: pool, model: model)
            try Indexer(store: store).indexPendingChanges()
            try pool.close()
            let run = try timed([searchlight, "verify", "--db", path, "--log-level", "error"], output: path + ".verify-output")
            peaks.append(run.peakMB)
            figures.append(Figure("8 at scale", "verify peak RSS, \(count) rows of 4 KB", unit: "MB", ours: run.peakMB,
                                  target: "≤ 100 MB", met: run.peakMB <= 100))
        }
        figures[1].baseline = peaks[0]
        figures[1].baselineName = "\(rows / 4) rows"
        figures[1].ratio = peaks[1] / peaks[0]
        return figures
    }

    // MARK: - INSERT OR REPLACE

    /// Five batches of 2,000 `INSERT OR REPLACE` of existing keys by a foreign writer, on a
    /// tracked table and on an untracked one: scratch rows stay until cleanup, so without an
    /// index each batch would scan more of them than the one before.
    static func replace() throws -> [Figure] {
        let directory = try scratchDirectory("replace")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(path: directory.appendingPathComponent("replace.sqlite").path,
                                    configuration: HistoryStore.databaseConfiguration())
        try pool.write { db in
            for table in ["tracked", "untracked"] {
                try db.execute(sql: """
                    CREATE TABLE \(table)(id INTEGER PRIMARY KEY, value TEXT);
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
                    INSERT INTO \(table) SELECT i, 'value ' || i FROM n;
                    """)
            }
        }
        let model = try SearchlightModel(entities: [.init(name: "Item", table: "tracked", primaryKey: "id", fields: [.init(column: "value")])])
        _ = try HistoryStore(dbPool: pool, model: model)
        func batches(_ table: String) throws -> [Double] {
            try (0..<5).map { batch in
                try measure {
                    try pool.write { db in
                        let statement = try db.makeStatement(sql: "INSERT OR REPLACE INTO \(table) VALUES (?, ?)")
                        for id in (batch * 2_000 + 1)...(batch * 2_000 + 2_000) {
                            try statement.execute(arguments: [id, "replaced \(batch)"])
                        }
                    }
                }
            }
        }
        let untracked = try batches("untracked")
        let tracked = try batches("tracked")
        return [
            Figure("8 at scale", "INSERT OR REPLACE, 5th batch of 2,000", unit: "s", ours: tracked[4],
                   baseline: tracked[0], baselineName: "1st batch", target: "flat (≤ 1.5x)", met: tracked[4] <= tracked[0] * 1.5),
            Figure("8 at scale", "INSERT OR REPLACE, 5th batch of 2,000, tracked", unit: "s", ours: tracked[4],
                   baseline: untracked[4], baselineName: "untracked"),
        ]
    }

    // MARK: - Processes

    /// The executable `name` beside this one (both are built into the same directory).
    static func executableBeside(_ name: String) -> String? {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Runs a command as a whole process, its output to `output`, and reads its wall time and
    /// peak RSS from `/usr/bin/time` (a child's own `ru_maxrss` would include this process's).
    /// `output` must be a regular file of the run's own: it is created, or replaced (never name
    /// `/dev/null` here: `createFile` replaces a file by renaming a new one over it, and a run as
    /// root once turned `/dev/null` into a regular file).
    static func timed(_ command: [String], output: String) throws -> (seconds: Double, peakMB: Double) {
        let report = output + ".time"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "%e %M", "-o", report] + command
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let fields = try String(contentsOfFile: report, encoding: .utf8).split(whereSeparator: \.isWhitespace)
        guard process.terminationStatus == 0, fields.count >= 2, let seconds = Double(fields[fields.count - 2]),
              let kilobytes = Double(fields[fields.count - 1]) else {
            throw Corpus.Failure(description: "\(command.joined(separator: " ")) failed (exit \(process.terminationStatus))")
        }
        return (max(seconds, 0.01), kilobytes / 1024)
    }
}
