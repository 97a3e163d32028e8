import Foundation
import GRDB
import Searchlight
import SearchlightHistory

/// The sink's reads of the SQLite source, each in one read transaction (a snapshot): never the
/// write lock, so the app is never blocked by PostgreSQL work.
struct SinkReader: Sendable {
    let store: HistoryStore
    let source: String
    let author: String
    let builders: [String: DocumentBuilder]

    /// A batch of history with the current documents of the objects it changed.
    struct Batch: Sendable {
        var batch: HistoryBatch
        /// The commit time of the batch's last token (seconds since 1970).
        var tokenTimestamp: Double?
        var head: HistoryToken
        var headTimestamp: Double?
        var model: SearchlightModel
        /// How the attributes compare, as the source's columns are now.
        var comparisons: [String: [String: AttributeComparison]]
        var upserts: [PostgresDocument]
        /// Objects whose rows are gone or excluded: (entity, object key).
        var deletes: [(entity: String, key: String)]
        /// Entities whose capture stopped (table dropped…): their documents leave PostgreSQL.
        var suspended: [String]
        var digest: String
    }

    enum Read: Sendable {
        case caughtUp(model: SearchlightModel, comparisons: [String: [String: AttributeComparison]], head: HistoryToken)
        case batch(Batch)
        case needsResync(HistoryResync)
    }

    /// The batch after `token` (PostgreSQL's checkpoint) and the documents of its objects, as of
    /// one snapshot.
    func batch(after token: HistoryToken, batchSize: Int) throws -> Read {
        try SearchlightError.catching("cannot read history of \(store.databaseWriter.path)") {
            try store.databaseWriter.read { db in
                let model = try store.installedModel(in: db)
                switch try store.fetchBatch(as: author, after: token, batchSize: batchSize, in: db) {
                case let .caughtUp(head):
                    let comparisons = try SinkDocuments.comparisons(model, reader: DocumentReader(model: model, builders: builders), db)
                    return .caughtUp(model: model, comparisons: comparisons, head: head)
                case let .needsResync(resync):
                    return .needsResync(resync)
                case let .consumed(batch):
                    return .batch(try documents(of: batch, model: model, db))
                }
            }
        }
    }

    private func documents(of batch: HistoryBatch, model: SearchlightModel, _ db: Database) throws -> Batch {
        let suspended = Set(try store.healCapture(in: db).notCapturing.map(\.name))
        let reader = DocumentReader(model: model, builders: builders)
        let analyzer = SearchTextAnalyzer(model: model)
        let comparisons = try SinkDocuments.comparisons(model, reader: reader, db)
        // Each changed object once, with the token of the last transaction that changed it.
        var tokens: [String: [ObjectID: HistoryToken]] = [:]
        var order: [String: [ObjectID]] = [:]
        for transaction in batch.transactions {
            for change in transaction.changes where model.entity(named: change.entity) != nil && !suspended.contains(change.entity) {
                if tokens[change.entity, default: [:]].updateValue(transaction.token, forKey: change.objectID) == nil {
                    order[change.entity, default: []].append(change.objectID)
                }
            }
        }
        var upserts: [PostgresDocument] = []
        var deletes: [(entity: String, key: String)] = []
        for entity in model.entities {
            guard let ids = order[entity.name] else { continue }
            for (id, document) in try reader.documents(entity: entity.name, ids: ids, in: db) {
                if let document {
                    upserts.append(try SinkDocuments.make(source: source, entity: entity, id: id, token: tokens[entity.name]?[id] ?? batch.token,
                                                      document: document, comparisons: comparisons[entity.name] ?? [:], analyzer: analyzer,
                                                      reader: reader, db))
                } else {
                    deletes.append((entity.name, PostgresDocument.key(id)))
                }
            }
        }
        let head = try store.currentToken(in: db)
        let last = batch.transactions.last.flatMap { $0.token == batch.token ? $0.timestamp.timeIntervalSince1970 : nil }
        let tokenTimestamp = try last ?? timestamp(of: batch.token, db)
        return Batch(batch: batch, tokenTimestamp: tokenTimestamp, head: head,
                     headTimestamp: head == batch.token ? tokenTimestamp : try timestamp(of: head, db), model: model, comparisons: comparisons,
                     upserts: upserts, deletes: deletes, suspended: suspended.sorted(), digest: BatchDigest(batch.transactions).value)
    }

    /// The commit time of `token` (seconds since 1970); nil for token 0 or a token whose
    /// transaction cleanup deleted (as the consumer checkpoint records it then).
    func timestamp(of token: HistoryToken, _ db: Database) throws -> Double? {
        guard token.rawValue > 0 else { return nil }
        do {
            let transactions = try store.fetchTransactions(HistoryRequest(start: .token(HistoryToken(token.rawValue - 1)), limit: 1), in: db)
            guard let first = transactions.first, first.token == token else { return nil }
            return first.timestamp.timeIntervalSince1970
        } catch SearchlightError.historyExpired {
            return nil
        }
    }

    /// Whether PostgreSQL's `row`, ahead of the local checkpoint `after`, is a state of this
    /// very history: its token is a transaction of local history committed at the row's
    /// commit time, and the row's last batch (if it is a batch, not a snapshot) digests as
    /// local history over the same range, from a token at or after `after` committed at
    /// the row's previous time. A file restored from a backup or copied and written to has
    /// other transactions (other commit times, other digests) at those tokens, or none.
    func holdsHistory(of row: SourceRow, after: HistoryToken?) throws -> Bool {
        guard row.token > (after?.rawValue ?? 0), let rowTime = row.tokenTimestamp else { return false }
        let token = HistoryToken(row.token)
        let times = try SearchlightError.catching("cannot read history of \(store.databaseWriter.path)") {
            try store.databaseWriter.read { db -> (Double?, Double??)? in
                guard try store.currentToken(in: db) >= token else { return nil } // a history that went back (a restored backup)
                return (try timestamp(of: token, db), try row.previousToken.map { try timestamp(of: HistoryToken($0), db) })
            }
        }
        guard let (time, previousTime) = times else { return false }
        guard let time, SourceRow.sameTime(time, rowTime) else { return false }
        guard let previous = row.previousToken else { return row.batchDigest == nil } // a snapshot at `token`
        guard previous >= (after?.rawValue ?? 0), let digest = row.batchDigest,
              SourceRow.sameTime(previousTime ?? nil, row.previousTimestamp) else { return false }
        return try self.digest(after: HistoryToken(previous), through: token) == digest
    }

    /// The digest of local history over (`after`, `through`], as ``Batch/digest`` computed it
    /// for the batch that covered that range; nil if that history is not all here any more.
    func digest(after: HistoryToken, through: HistoryToken) throws -> String? {
        try SearchlightError.catching("cannot read history of \(store.databaseWriter.path)") {
            try store.databaseWriter.read { db -> String? in
                var digest = BatchDigest()
                var cursor = after
                while cursor < through {
                    guard case let .consumed(batch) = try store.fetchBatch(as: author, after: cursor, batchSize: 500, in: db) else { return nil }
                    for transaction in batch.transactions where transaction.token <= through { digest.add(transaction) }
                    if batch.token > through {
                        // The range ends inside this page: `through` must be a token of it.
                        return batch.transactions.contains { $0.token == through } ? digest.value : nil
                    }
                    cursor = batch.token
                }
                return cursor == through ? digest.value : nil
            }
        }
    }
}

/// The documents the sink writes and verify expects: values as read, each cut at a NUL
/// character (PostgreSQL's text holds none; SQLite's text functions and FTS5 read a C string,
/// which ends there too).
enum SinkDocuments {
    static func make(source: String, entity: SearchlightModel.Entity, id: ObjectID, token: HistoryToken,
                     document: IndexedDocument, comparisons: [String: AttributeComparison], analyzer: SearchTextAnalyzer,
                     reader: DocumentReader, _ db: Database) throws -> PostgresDocument {
        var row = PostgresDocument(source: source, entity: entity, objectID: id, token: token.rawValue,
                                   values: document.values.mapValues(withoutNUL), attributes: document.attributes,
                                   attributeComparisons: comparisons, analyzer: analyzer)
        if !entity.ranking.isEmpty { row.rankingInputs = try reader.rankingInputs(entity: entity.name, attributes: document.attributes, in: db) }
        return row
    }

    /// How each entity's attributes compare (by entity, then attribute name), for the entities
    /// that have attributes: what `sources.attributes` holds.
    static func comparisons(_ model: SearchlightModel, reader: DocumentReader, _ db: Database) throws -> [String: [String: AttributeComparison]] {
        var comparisons: [String: [String: AttributeComparison]] = [:]
        for entity in model.entities where !entity.attributes.isEmpty {
            comparisons[entity.name] = try reader.attributeComparisons(entity: entity.name, in: db)
        }
        return comparisons
    }

    /// `sources.attributes`: the comparisons as JSON, keys sorted.
    static func comparisonsJSON(_ comparisons: [String: [String: AttributeComparison]]) -> String {
        String(decoding: (try? encoder.encode(comparisons)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static func withoutNUL(_ text: String) -> String {
        guard let index = text.unicodeScalars.firstIndex(of: "\u{0}") else { return text }
        return String(text.unicodeScalars[..<index])
    }

    /// The `fields` column: the values by column as a JSON object, keys sorted.
    static func fieldsJSON(_ document: PostgresDocument) -> String {
        String(decoding: (try? encoder.encode(document.fields)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// One encoder for every document (its options never change; encoding is thread-safe).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
