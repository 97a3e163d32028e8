import Foundation
import GRDB

/// The queries over the history log. All run on a `Database` the caller provides, so that
/// a consumer can read history and write its results in the transaction of its choice.
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
        let max = try HistoryToken.fetchOne(db, sql: #"SELECT max("token") FROM "searchlight_transaction""#)
        return Swift.max(max ?? .zero, try purgedThrough(db))
    }

    /// The newest token cleanup has deleted (`.zero` if it never deleted anything).
    package static func purgedThrough(_ db: Database) throws -> HistoryToken {
        try Meta.get(db, "purgedThroughToken", as: HistoryToken.self) ?? .zero
    }

    /// Throws `historyExpired` when history after `start` was deleted, and `invalidToken`
    /// for a token from the future.
    package static func checkStart(_ start: HistoryRequest.Start, _ db: Database) throws {
        switch start {
        case .oldest:
            return
        case let .token(token):
            if token.rawValue < 0 { throw HistoryError(.invalidToken, "invalid token \(token): tokens are not negative") }
            let head = try headToken(db)
            if token > head {
                throw HistoryError(.invalidToken, "token \(token) is ahead of the newest token \(head): it does not come from this database")
            }
            let purged = try purgedThrough(db)
            if token < purged {
                throw HistoryError(.historyExpired, "history after token \(token) has expired: cleanup deleted it through token \(purged); resynchronize from scratch")
            }
        case let .date(date):
            if let purgedTime = try Meta.get(db, "purgedThroughTimestamp", as: Double.self),
               date.timeIntervalSince1970 < purgedTime {
                throw HistoryError(.historyExpired, "history after \(ISO8601DateFormatter().string(from: date)) has expired: cleanup deleted transactions recorded after that date")
            }
        }
    }

    /// The SQL conditions on transactions (alias `t`) and changes (alias `c`) of a request.
    private static func conditions(_ request: HistoryRequest, _ entities: EntityNames) throws -> (transaction: [SQL], change: [SQL]) {
        var transaction: [SQL] = []
        switch request.start {
        case .oldest: break
        case let .token(token): transaction.append("t.\"token\" > \(token)")
        case let .date(date): transaction.append("t.\"timestamp\" > \(date.timeIntervalSince1970)")
        }
        switch request.authors {
        case .any: break
        case let .only(authors): transaction.append("t.\"author\" IN \(Array(authors))")
        case let .excluding(authors): transaction.append("(t.\"author\" IS NULL OR t.\"author\" NOT IN \(Array(authors)))")
        }
        if let context = request.contextName { transaction.append("t.\"context\" = \(context)") }
        var change: [SQL] = []
        if let names = request.entities {
            let ids = try names.sorted().map { name in
                guard let id = entities.ids[name] else {
                    throw HistoryError(.invalidArgument, "unknown entity \"\(name)\" (known: \(entities.ids.keys.sorted().joined(separator: ", ")))")
                }
                return id
            }
            change.append("c.\"entity_id\" IN \(ids)")
        }
        if let types = request.changeTypes { change.append("c.\"type\" IN \(types.map(\.rawValue).sorted())") }
        return (transaction, change)
    }

    private static func validate(_ request: HistoryRequest) throws {
        if let limit = request.limit, limit <= 0 {
            throw HistoryError(.invalidArgument, "invalid limit \(limit): a limit must be a positive number of transactions")
        }
    }

    /// Transactions matching `request`, each with its matching changes, in token order.
    package static func fetchTransactions(_ request: HistoryRequest, _ db: Database) throws -> [HistoryTransaction] {
        try validate(request)
        try checkStart(request.start, db)
        let entities = try EntityNames.fetch(db)
        let (transactionConditions, changeConditions) = try conditions(request, entities)
        var whereClause = transactionConditions
        if !changeConditions.isEmpty {
            whereClause.append("EXISTS (SELECT 1 FROM \"searchlight_change\" c WHERE c.\"token\" = t.\"token\" AND \(changeConditions.joined(operator: .and)))")
        }
        var sql: SQL = """
            SELECT t."token", t."timestamp", t."author", t."context", t."process_id"
            FROM "searchlight_transaction" t
            """
        if !whereClause.isEmpty { sql += " WHERE \(whereClause.joined(operator: .and))" }
        sql += " ORDER BY t.\"token\""
        if let limit = request.limit { sql += " LIMIT \(limit)" }
        var transactions = try SQLRequest<Row>(literal: sql).fetchAll(db).map { row in
            HistoryTransaction(
                token: row["token"], timestamp: Date(timeIntervalSince1970: row["timestamp"]),
                author: row["author"], contextName: row["context"], processID: row["process_id"], changes: [])
        }
        guard let first = transactions.first?.token, let last = transactions.last?.token else { return [] }

        var changeSQL: SQL = """
            SELECT c."id", c."token", c."entity_id", c."object_id", c."type", c."updated_columns", c."tombstone"
            FROM "searchlight_change" c
            WHERE c."token" BETWEEN \(first) AND \(last)
            """
        if !changeConditions.isEmpty { changeSQL += " AND \(changeConditions.joined(operator: .and))" }
        changeSQL += " ORDER BY c.\"id\""
        var byToken: [HistoryToken: [HistoryChange]] = [:]
        for row in try SQLRequest<Row>(literal: changeSQL).fetchAll(db) {
            let change = try decodeChange(row, entities)
            byToken[change.token, default: []].append(change)
        }
        for index in transactions.indices {
            transactions[index].changes = byToken[transactions[index].token] ?? []
        }
        // A page of filtered transactions can span tokens that the filters exclude.
        return transactions.filter { !$0.changes.isEmpty || changeConditions.isEmpty }
    }

    /// How many transactions and changes `request` selects (its limit is ignored).
    package static func count(_ request: HistoryRequest, _ db: Database, through bound: HistoryToken? = nil) throws -> HistoryCount {
        try validate(request)
        try checkStart(request.start, db)
        let (transactionConditions, changeConditions) = try conditions(request, EntityNames.fetch(db))
        var all = transactionConditions + changeConditions
        if let bound { all.append("t.\"token\" <= \(bound)") }
        var sql: SQL = """
            SELECT COUNT(DISTINCT t."token"), COUNT(c."id")
            FROM "searchlight_transaction" t JOIN "searchlight_change" c ON c."token" = t."token"
            """
        if !all.isEmpty { sql += " WHERE \(all.joined(operator: .and))" }
        let row = try SQLRequest<Row>(literal: sql).fetchOne(db)!
        return HistoryCount(transactions: row[0], changes: row[1])
    }

    /// Every change to one object after `start`, oldest first.
    package static func changes(entity: String, objectID: ObjectID, after start: HistoryRequest.Start, _ db: Database) throws -> [HistoryChange] {
        try checkStart(start, db)
        let entities = try EntityNames.fetch(db)
        guard let entityID = entities.ids[entity] else {
            throw HistoryError(.invalidArgument, "unknown entity \"\(entity)\"")
        }
        var sql: SQL = """
            SELECT c."id", c."token", c."entity_id", c."object_id", c."type", c."updated_columns", c."tombstone"
            FROM "searchlight_change" c
            WHERE c."entity_id" = \(entityID) AND c."object_id" = \(objectID)
            """
        switch start {
        case .oldest: break
        case let .token(token): sql += " AND c.\"token\" > \(token)"
        case let .date(date):
            sql += " AND c.\"token\" IN (SELECT \"token\" FROM \"searchlight_transaction\" WHERE \"timestamp\" > \(date.timeIntervalSince1970))"
        }
        sql += " ORDER BY c.\"id\""
        return try SQLRequest<Row>(literal: sql).fetchAll(db).map { try decodeChange($0, entities) }
    }

    private static func decodeChange(_ row: Row, _ entities: EntityNames) throws -> HistoryChange {
        let entityID: Int64 = row["entity_id"]
        let rawType: Int = row["type"]
        guard let type = ChangeType(rawValue: rawType) else {
            throw HistoryError(.databaseError, "history holds an unknown change type \(rawType)")
        }
        guard let objectID = ObjectID.fromDatabaseValue(row["object_id"]) else {
            throw HistoryError(.databaseError, "history holds a change with no object id")
        }
        var updatedColumns: [String]?
        if let json: String = row["updated_columns"] {
            updatedColumns = try JSONDecoder().decode([String].self, from: Data(json.utf8))
        }
        var tombstone: [String: DatabaseValue]?
        if let json: String = row["tombstone"] {
            tombstone = try JSONDecoder().decode([String: JSONScalar].self, from: Data(json.utf8)).mapValues(\.databaseValue)
        }
        return HistoryChange(
            changeID: row["id"], token: row["token"], entity: entities.names[entityID] ?? "#\(entityID)",
            objectID: objectID, type: type, updatedColumns: updatedColumns, tombstone: tombstone)
    }
}

/// A JSON scalar of a tombstone, read back as the SQLite value it was.
private struct JSONScalar: Decodable {
    var databaseValue: DatabaseValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            databaseValue = .null
        } else if let value = try? container.decode(Int64.self) {
            databaseValue = value.databaseValue
        } else if let value = try? container.decode(Double.self) {
            databaseValue = value.databaseValue
        } else {
            databaseValue = try container.decode(String.self).databaseValue
        }
    }
}
