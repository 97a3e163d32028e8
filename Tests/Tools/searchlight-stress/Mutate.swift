import ArgumentParser
import Foundation
import GRDB
import SearchlightHistory
import SearchlightTestSupport

/// The simulation's writer: random inserts, updates, deletes, REPLACE, UPSERT, key changes and
/// `UPDATE OR REPLACE` on the simulation's four tables (INTEGER, NOCASE TEXT, BLOB and REAL
/// keys), REPLACE of another row's title (UNIQUE on two of them), half through `HistoryStore.write` and half as a foreign writer would. Every word it
/// writes is unique. It logs, per committed write: `word W` for each word written, and
/// `token T` for a `HistoryStore.write` that changed tracked columns (history must hold it, or
/// record a gap after it). The host app's migrations make some writes fail (a table being
/// remade or renamed): those are skipped, not logged. Exits 3 if a busy or locked error reached it.
struct Mutate: ParsableCommand {
    @Option var db: String
    @Option var log: String
    @Option var seconds: Double = 5
    @Option var writer: Int = 1
    @Option var seed: UInt64 = 1

    static let tables = ["notes", "tags", "blobs", "reals"]

    func run() throws {
        let store = try HistoryStore(path: db)
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try handle.seekToEnd()
        var random = SplitMix(seed: seed)
        var counter = 0
        var busy = 0, skipped = 0, done = 0
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            // A busy app, not a saturated lock: at 100% occupancy SQLite's busy handler (which
            // polls, with no queue) once let a write wait past its 10 s timeout in 20 minutes of
            // simulation. 0–2 ms between writes still keeps the lock busy most of the time.
            usleep(UInt32(random.next() % 2_000))
            counter += 1
            let table = Self.tables[Int(random.next() % 4)]
            let key = Self.key(table, Int(random.next() % 30), &random)
            let other = Self.key(table, Int(random.next() % 30), &random)
            let word = "w\(writer)x\(seed % 1000)n\(counter)"
            let operation = Int(random.next() % 12)
            let throughAPI = random.next() % 2 == 0
            let quoted = "\"\(table)\""
            let (sql, arguments, tracked): (String, StatementArguments, Bool) = switch operation {
            case 0: ("INSERT INTO \(quoted)(k, title, body) VALUES (?, ?, 'plain')", [key, word], true)
            case 1: ("INSERT OR REPLACE INTO \(quoted)(k, title, body) VALUES (?, ?, 'replaced')", [key, word], true)
            case 2: ("INSERT INTO \(quoted)(k, title, body) VALUES (?, ?, 'upserted') ON CONFLICT(k) DO UPDATE SET title = excluded.title", [key, word], true)
            case 3: ("UPDATE \(quoted) SET title = ? WHERE k = ?", [word, key], true)
            case 4: ("UPDATE \(quoted) SET body = ? WHERE k = ?", ["body " + word, key], true)
            case 5: ("UPDATE \(quoted) SET extra = ? WHERE k = ?", [word, key], false)
            case 6: ("DELETE FROM \(quoted) WHERE k = ?", [key], true)
            case 7: ("UPDATE \(quoted) SET k = ?, title = ? WHERE k = ?", [other, word, key], true)
            case 8: ("UPDATE OR REPLACE \(quoted) SET k = ?, title = ? WHERE k = ?", [other, word, key], true)
            case 9: ("INSERT OR IGNORE INTO \(quoted)(k, title, body) VALUES (?, ?, 'ignored')", [key, word], true)
            // Another row's title: on a table whose title is UNIQUE, the REPLACE deletes that row
            // (SQLite fires no delete trigger for it). No new word; the update may change nothing
            // tracked (a row given its own title), so it logs no token.
            case 10: ("INSERT OR REPLACE INTO \(quoted)(k, title, body) SELECT ?, title, 'displaced' FROM \(quoted) WHERE k = ?", [key, other], true)
            default: ("UPDATE OR REPLACE \(quoted) SET title = (SELECT title FROM \(quoted) WHERE k = ?) WHERE k = ?", [other, key], false)
            }
            let started = Date()
            do {
                if throughAPI {
                    let (changed, token) = try store.write(author: "writer-\(writer)", context: "op \(counter)") { db -> (Int, Int64) in
                        // The transaction's header is the newest log row: its id is the token.
                        let token = try Int64.fetchOne(db, sql: #"SELECT max("id") FROM "searchlight_log""#) ?? 0
                        try db.execute(sql: sql, arguments: arguments)
                        return (db.changesCount, token)
                    }
                    if changed > 0 {
                        handle.write(Data("word \(word)\n".utf8))
                        if tracked { handle.write(Data("token \(token)\n".utf8)) }
                    }
                } else {
                    let changed = try store.dbPool.write { db -> Int in
                        try db.execute(sql: sql, arguments: arguments)
                        return db.changesCount
                    }
                    if changed > 0 { handle.write(Data("word \(word)\n".utf8)) }
                }
                done += 1
            } catch {
                let databaseError = (error as? SearchlightError)?.databaseError ?? (error as? DatabaseError)
                if databaseError?.resultCode == .SQLITE_BUSY || databaseError?.resultCode == .SQLITE_LOCKED {
                    busy += 1
                    let waited = String(format: "%.2f", Date().timeIntervalSince(started))
                    FileHandle.standardError.write(Data("writer \(writer) at \(Date()): \(error) (extended code \(databaseError.map { "\($0.extendedResultCode)" } ?? "-"), after \(waited) s)\n".utf8))
                } else {
                    skipped += 1 // a constraint, or a table a migration is remaking
                }
            }
        }
        try handle.close()
        print("writer \(writer): \(done) writes, \(skipped) refused, \(busy) busy")
        if busy > 0 { throw ExitCode(3) }
    }

    /// A key of the table's type: integers, NOCASE text in a random case, blobs, reals.
    static func key(_ table: String, _ n: Int, _ random: inout SplitMix) -> DatabaseValue {
        switch table {
        case "notes": return n.databaseValue
        case "tags":
            let text = "tag\(n)"
            return (random.next() % 3 == 0 ? text.uppercased() : text).databaseValue
        case "blobs": return Data([0xB0, UInt8(n)]).databaseValue
        default: return (Double(n) + 0.5).databaseValue
        }
    }
}
