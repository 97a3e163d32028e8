import Foundation
import GRDB

/// The queries over the history log, `searchlight_log`: an append-only table where a
/// ``HistoryStore/write(author:context:_:)`` transaction is a header row (type 0, `id` = token)
/// followed by its change rows, and any other writer's change is a row of its own (token 0: a
/// transaction whose token is its id).
///
/// Reading history after a token is one range scan of the table's rowid: no index is needed,
/// and writers pay for none. All functions run on a `Database` the caller provides, so that a
/// consumer can read history and write its results in the transaction of its choice.
package enum HistoryLog {
    /// Entity names by id, and ids by name.
    package struct EntityNames: Sendable {
        package var names: [Int64: String]
        package var ids: [String: Int64]

        package static func fetch(_ db: Database) throws -> EntityNames {
            var names: [Int64: String] = [:], ids: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: #"SELECT "id", "name" FROM "searchlight_entity""#) {
                names[row["id"]] = row["name"]
                ids[row["name"]] = row["id"]
            }
            return EntityNames(names: names, ids: ids)
        }
    }

    /// The newest committed token (`.zero` for an empty log).
    package static func headToken(_ db: Database) throws -> HistoryToken {
        let newest = try HistoryToken.fetchOne(db, sql: #"SELECT CASE "token" WHEN 0 THEN "id" ELSE "token" END FROM "searchlight_log" ORDER BY "id" DESC LIMIT 1"#)
        return max(newest ?? .zero, try purgedThrough(db))
    }

    /// The newest token cleanup has deleted (`.zero` if it never deleted anything).
    package static func purgedThrough(_ db: Database) throws -> HistoryToken {
        try Meta.get(db, .purgedThroughToken, as: HistoryToken.self) ?? .zero
    }

    /// Throws `historyExpired` when history after `start` was deleted, and `invalidToken`
    /// for a token from the future.
    package static func checkStart(_ start: HistoryRequest.Start, _ db: Database) throws {
        switch start {
        case .oldest:
            return
        case let .token(token):
            if token.rawValue < 0 { throw SearchlightError(.invalidToken, "invalid token \(token): tokens are not negative") }
            let head = try headToken(db)
            if token > head {
                throw SearchlightError(.invalidToken, "token \(token) is ahead of the newest token \(head): it does not come from this database")
            }
            let purged = try purgedThrough(db)
            if token < purged {
                throw SearchlightError(.historyExpired, "history after token \(token) has expired: cleanup deleted it through token \(purged); resynchronize from scratch")
            }
        case let .date(date):
            if let purgedTime = try Meta.get(db, .purgedThroughTimestamp, as: Double.self),
               date.timeIntervalSince1970 < purgedTime {
                throw SearchlightError(.historyExpired, "history after \(ISO8601DateFormatter().string(from: date)) has expired: cleanup deleted transactions recorded after that date")
            }
        }
    }

    /// Calls `body` with each transaction after `start`, in token order, with all its changes,
    /// until `body` returns false. One range scan of the log.
    package static func scan(after start: HistoryRequest.Start, tombstones: Bool = true, _ db: Database, _ body: (HistoryTransaction) throws -> Bool) throws {
        var after: Int64 = 0
        var since: Double?
        switch start {
        case .oldest: break
        case let .token(token): after = token.rawValue
        case let .date(date): since = date.timeIntervalSince1970
        }
        try scan(after: after, tombstones: tombstones, db) { transaction, _ in
            if let since, transaction.timestamp.timeIntervalSince1970 <= since { return true }
            return try body(transaction)
        }
    }

    /// Calls `body` with each transaction whose token is above `after`, in token order, with
    /// all its changes and the number of log rows it holds (its header included), until `body`
    /// returns false. One range scan of the log's rowid, from the first row after `after`:
    ///
    /// ```sql
    /// SELECT "id", "token", "type", "entity_id", "object_id", "updated_columns", "tombstone",
    ///        "timestamp", "author", "context", "process_id"
    /// FROM "searchlight_log" WHERE "id" > ? ORDER BY "id"
    /// ```
    /// With `tombstones` false, deletes come without their tombstones (not decoded).
    static func scan(after: Int64, tombstones: Bool = true, _ db: Database, _ body: (HistoryTransaction, Int) throws -> Bool) throws {
        let entities = try EntityNames.fetch(db)
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT "id", "token", "type", "entity_id", "object_id", "updated_columns", "tombstone",
                   "timestamp", "author", "context", "process_id"
            FROM "searchlight_log" WHERE "id" > ? ORDER BY "id"
            """), arguments: [after])
        var current: HistoryTransaction?
        var currentRows = 0
        // The changes of `current` whose tombstone is still to decode: their indexes.
        var undecoded: [Int] = []
        func complete(_ transaction: inout HistoryTransaction) throws {
            if !undecoded.isEmpty { try decodeTombstones(of: &transaction, at: undecoded, db) }
            undecoded.removeAll(keepingCapacity: true)
        }
        // Columns by position (the order of the SELECT above): a name lookup per value cost
        // more than the rest of the decoding.
        while let row = try rows.next() {
            let stored: Int64 = row[1]
            // Token 0: another writer's change, a transaction of its own whose token is its id.
            let token = stored == 0 ? row[0] as Int64 : stored
            // Rows of a transaction at or before the start (its header was before the range).
            if token <= after { continue }
            let type: Int64 = row[2]
            if type == Int64(LogRowType.placeholder.rawValue) { continue }
            let isHeader = type == Int64(LogRowType.transactionHeader.rawValue)
            if isHeader || stored == 0 {
                if var transaction = current {
                    try complete(&transaction)
                    if try !body(transaction, currentRows) { return }
                }
                current = HistoryTransaction(
                    token: HistoryToken(token), timestamp: Date(timeIntervalSince1970: row[7] ?? 0),
                    author: row[8], contextName: row[9], processID: row[10], changes: [])
                currentRows = 0
            }
            if current?.token.rawValue == token { currentRows += 1 }
            if !isHeader, current?.token.rawValue == token {
                if let change = try decodeChange(row, type: type, entities) {
                    if tombstones, !row.hasNull(atIndex: 6) { undecoded.append(current!.changes.count) }
                    current!.changes.append(change)
                }
            }
        }
        if var transaction = current {
            try complete(&transaction)
            _ = try body(transaction, currentRows)
        }
    }

    /// Decodes the tombstones of one transaction's changes (at `indexes`) in one statement:
    /// SQLite's `json_each` over the transaction's log rows, so that values keep SQLite's types.
    /// Anything unexpected (malformed JSON, not an object, a nested value) is decoded again change
    /// by change, which throws the error that names the change.
    private static func decodeTombstones(of transaction: inout HistoryTransaction, at indexes: [Int], _ db: Database) throws {
        let ids = indexes.map { transaction.changes[$0].changeID }
        var decoded: [Int64: [String: DatabaseValue]] = [:]
        var wellFormed = true
        do {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT l."id", json_type(l."tombstone"), j."key", j."value", j."type"
                FROM "searchlight_log" l LEFT JOIN json_each(l."tombstone") j
                WHERE l."id" BETWEEN ? AND ? AND l."tombstone" IS NOT NULL
                """), arguments: [ids.min(), ids.max()])
            while let row = try rows.next() {
                let id: Int64 = row[0]
                guard (row[1] as String?) == "object", row.hasNull(atIndex: 4) || !["object", "array"].contains(row[4] as String) else {
                    wellFormed = false
                    break
                }
                var values = decoded[id] ?? [:]
                if let key = row[2] as String? { values[key] = row[3] as DatabaseValue } // no key: an empty object
                decoded[id] = values
            }
        } catch {
            wellFormed = false
        }
        for (index, id) in zip(indexes, ids) {
            if wellFormed, let values = decoded[id] {
                transaction.changes[index].tombstone = values
            } else {
                let value = try DatabaseValue.fetchOne(db, sql: #"SELECT "tombstone" FROM "searchlight_log" WHERE "id" = ?"#, arguments: [id]) ?? .null
                transaction.changes[index].tombstone = try HistoryChange.decodeTombstone(value, changeID: id, db)
            }
        }
    }

    /// One page of history: the transactions after `cursor` (and at or before `bound`, if
    /// given) in token order, whole, until they hold at least `rows` log rows or number
    /// `transactions`; those that match `filter` (and were recorded after `since`, if given)
    /// are returned. `last` is the last token read (nil when nothing is left), where the next
    /// page starts: pages are keyed by token, so each one costs the same whatever precedes it.
    package static func page(after cursor: HistoryToken, through bound: HistoryToken?, filter: HistoryFilter, since: Date?,
                             rows maximumRows: Int, transactions maximumTransactions: Int, _ db: Database) throws
        -> (matches: [HistoryTransaction], last: HistoryToken?)
    {
        var matches: [HistoryTransaction] = []
        var last: HistoryToken?
        var rows = 0, transactions = 0
        let since = since?.timeIntervalSince1970
        try scan(after: cursor.rawValue, db) { transaction, transactionRows in
            if let bound, transaction.token > bound { return false }
            last = transaction.token
            rows += transactionRows
            transactions += 1
            if since.map({ transaction.timestamp.timeIntervalSince1970 > $0 }) ?? true, let match = filter.apply(transaction) {
                matches.append(match)
            }
            return rows < maximumRows && transactions < maximumTransactions
        }
        return (matches, last)
    }

    /// Checks a request's limit and entity names before any scan.
    static func validate(_ request: HistoryRequest, _ db: Database) throws {
        if let limit = request.limit, limit <= 0 {
            throw SearchlightError(.invalidArgument, "invalid limit \(limit): a limit must be a positive number of transactions")
        }
        try validate(request.filter, db)
    }

    static func validate(_ filter: HistoryFilter, _ db: Database) throws {
        if let names = filter.entities {
            let known = try EntityNames.fetch(db).ids
            if let unknown = names.sorted().first(where: { known[$0] == nil }) {
                throw SearchlightError(.unknownEntity, "unknown entity \"\(unknown)\" (known: \(known.keys.sorted().joined(separator: ", ")))")
            }
        }
    }

    /// Transactions matching `request`, each with its matching changes, in token order.
    package static func fetchTransactions(_ request: HistoryRequest, _ db: Database) throws -> [HistoryTransaction] {
        try validate(request, db)
        try checkStart(request.start, db)
        var transactions: [HistoryTransaction] = []
        try scan(after: request.start, db) { transaction in
            if let match = request.filter.apply(transaction) { transactions.append(match) }
            return transactions.count < (request.limit ?? .max)
        }
        return transactions
    }

    /// How many transactions and changes `request` selects (its limit is ignored), counting
    /// only transactions up to `bound` if given.
    package static func count(_ request: HistoryRequest, _ db: Database, through bound: HistoryToken? = nil) throws -> HistoryCount {
        try validate(request.filter, db)
        try checkStart(request.start, db)
        var count = HistoryCount(transactions: 0, changes: 0)
        try scan(after: request.start, db) { transaction in
            if let bound, transaction.token > bound { return false }
            if let match = request.filter.apply(transaction) {
                count.transactions += 1
                count.changes += match.changes.count
            }
            return true
        }
        return count
    }

    /// At most `maximum` transactions after `token`, whatever their authors and changes, with
    /// those that match `filter`: what a consumer's batch reads. Returns the matches and the
    /// last token read (nil when there is nothing after `token`).
    static func batch(after token: HistoryToken, filter: HistoryFilter, maximum: Int, _ db: Database) throws
        -> (matches: [HistoryTransaction], last: HistoryToken?)
    {
        var matches: [HistoryTransaction] = []
        var last: HistoryToken?
        var read = 0
        try scan(after: .token(token), tombstones: filter.includesTombstones, db) { transaction in
            read += 1
            last = transaction.token
            if let match = filter.apply(transaction) { matches.append(match) }
            return read < maximum
        }
        return (matches, last)
    }

    /// Every change to one object after `start`, oldest first.
    package static func changes(entity: String, objectID: ObjectID, after start: HistoryRequest.Start, _ db: Database) throws -> [HistoryChange] {
        var request = HistoryRequest(start: start)
        request.entities = [entity]
        return try fetchTransactions(request, db).flatMap(\.changes).filter { $0.objectID == objectID }
    }

    /// A change row as a `HistoryChange`; nil for a row whose key is NULL (SQLite accepts NULL
    /// in a primary key that is not an INTEGER PRIMARY KEY, unless it is declared NOT NULL):
    /// such a row has no identity to index, fetch or delete by, so it is left out of history
    /// rather than stopping every reader.
    /// The row comes from ``scan(after:_:_:)`` (columns by position).
    /// Its tombstone is decoded with the rest of its transaction's (``decodeTombstones(of:at:_:)``).
    private static func decodeChange(_ row: Row, type: Int64, _ entities: EntityNames) throws -> HistoryChange? {
        let entityID: Int64 = row[3]
        guard let type = LogRowType(rawValue: Int(type))?.changeType else {
            throw SearchlightError(.databaseError, "history holds an unknown change type \(type)")
        }
        guard let objectID = ObjectID.fromDatabaseValue(row[4]) else { return nil }
        let updatedColumns = try (row[5] as String?).map(decodeColumns)
        return HistoryChange(
            changeID: row[0], token: HistoryToken(row[1] as Int64), entity: entities.names[entityID] ?? "#\(entityID)",
            objectID: objectID, type: type, updatedColumns: updatedColumns)
    }

    /// The JSON array of column names the update triggers write: `["a","b"]`. Names without
    /// escapes (almost all) are split directly; others go through `JSONDecoder`.
    static func decodeColumns(_ json: String) throws -> [String] {
        if json == "[]" { return [] }
        if !json.contains("\\"), json.hasPrefix("[\""), json.hasSuffix("\"]") {
            // Inside an encoded name a quote is always escaped, so `","` only separates names.
            return json.dropFirst(2).dropLast(2).components(separatedBy: "\",\"")
        }
        return try JSONDecoder().decode([String].self, from: Data(json.utf8))
    }
}
