import GRDB
import SearchlightHistory

extension Indexer {
    /// Compares the index with the source tables, in one consistent snapshot, and runs FTS5's
    /// integrity check.
    ///
    /// Objects changed in history after the indexer's checkpoint are pending, not wrong: they
    /// are counted in ``VerificationReport/pending`` and left out of the comparison. Call
    /// ``indexPendingChanges()`` first to verify everything.
    public func verify() throws(SearchlightError) -> VerificationReport {
        try SearchlightError.catching("cannot verify the index") {
            var report = try store.dbPool.read { db in try verify(db) }
            // FTS5's integrity check is spelled as an INSERT, which read-only connections refuse.
            report.integrityErrors += try store.dbPool.writeWithoutTransaction { db in try integrityCheck(db) }
            return report
        }
    }

    /// Verifies, fixes every difference found (reindexing those objects, or rebuilding if the
    /// full-text index itself is damaged), and returns the report of what was found.
    @discardableResult
    public func repair() throws(SearchlightError) -> VerificationReport {
        let report = try verify()
        if !report.integrityErrors.isEmpty {
            _ = try rebuild(reason: .damaged, progress: nil, until: { Task.isCancelled })
            try indexPendingChanges()
            return report
        }
        for entity in report.entities where entity.differences > 0 {
            try reindex(ids: entity.missing + entity.stale + entity.extra, entity: entity.entity)
            logger.notice("repaired \(entity.entity): \(entity.missing.count) missing, \(entity.stale.count) stale, \(entity.extra.count) extra")
        }
        return report
    }

    /// Brings the index up to date, compares it with the source, and, if `repair` is true,
    /// fixes every difference and compares again: what `searchlight verify [--repair]` does.
    public func catchUpAndVerify(repairing repair: Bool) throws(SearchlightError) -> VerificationResult {
        try indexPendingChanges()
        let found = repair ? try self.repair() : try verify()
        let consistent = repair && !found.isConsistent ? try verify().isConsistent : found.isConsistent
        return VerificationResult(found: found, repaired: repair && !found.isConsistent, isConsistent: consistent)
    }

    private func verify(_ db: Database) throws -> VerificationReport {
        guard let live = try IndexState.live(db) else {
            throw SearchlightError(.indexNotBuilt, "the index has not been built yet: run the indexer first")
        }
        let schema = live.schema
        let (layout, json) = try currentLayout(db)
        guard live.layout == json else {
            throw SearchlightError(.indexNotBuilt, "the index was built for another model: index first, which rebuilds it")
        }
        let token = try store.checkpoint(for: configuration.author, in: db)?.token ?? .zero
        // Objects with history after the checkpoint may legitimately differ.
        var pending: [String: Set<ObjectID>] = [:]
        var pendingCount = 0
        if let transactions = try? store.fetchTransactions(HistoryRequest(start: .token(token)), in: db) {
            for change in transactions.flatMap(\.changes) where pending[change.entity, default: []].insert(change.objectID).inserted {
                pendingCount += 1
            }
        }
        let entities = layout.entities
        let writer = makeWriter(schema, layout)
        var reports: [VerificationReport.EntityReport] = []
        var integrityErrors: [String] = []
        for entity in entities {
            let skip = pending[entity.entity.name] ?? []
            let source = writer.sources[entity.id]!
            var expected: [ObjectID: [String]] = [:]
            // A suspended entity (its table is missing) must have no documents.
            let rows = entity.isSuspended ? nil : try Row.fetchCursor(db, sql: source.selectSQL(where: "1"))
            while let row = try rows?.next() {
                guard let id = ObjectID.fromDatabaseValue(row[0]), !skip.contains(id) else { continue }
                if let fields = try source.fields(of: row, db) { expected[id] = fields }
            }
            let fts = SQLQuoting.identifier(schema.ftsTable(entity.id))
            let columns = entity.fieldColumns.map { "f.\(SQLQuoting.identifier($0))" }.joined(separator: ", ")
            var indexed = 0
            var missing: [ObjectID] = [], stale: [ObjectID] = [], extra: [ObjectID] = []
            var found = Set<ObjectID>()
            let documents = entity.usesRowidKeys
                ? try Row.fetchCursor(db, sql: "SELECT f.rowid, 1, \(columns) FROM \(fts) f")
                : try Row.fetchCursor(db, sql: """
                    SELECT d."object_id", f.rowid IS NOT NULL, \(columns)
                    FROM \(SQLQuoting.identifier(schema.documentTable)) d LEFT JOIN \(fts) f ON f.rowid = d."id"
                    WHERE d."entity_id" = ?
                    """, arguments: [entity.id])
            while let row = try documents.next() {
                guard let id = ObjectID.fromDatabaseValue(row[0]) else { continue }
                indexed += 1
                if skip.contains(id) { continue }
                found.insert(id)
                guard let fields = expected[id] else { extra.append(id); continue }
                let hasText: Bool = row[1]
                let text = (0..<entity.fieldColumns.count).map { (row[$0 + 2] as String?) ?? "" }
                if !hasText || text != fields { stale.append(id) }
            }
            // Full-text rows with no document row are invisible to search but still damage.
            let orphans = entity.usesRowidKeys ? 0 : try Int.fetchOne(db, sql: """
                SELECT count(*) FROM \(fts) f WHERE NOT EXISTS (SELECT 1 FROM \(SQLQuoting.identifier(schema.documentTable)) d WHERE d."id" = f.rowid)
                """) ?? 0
            if orphans > 0 { integrityErrors.append("\(entity.entity.name): \(orphans) full-text rows have no document") }
            missing = expected.keys.filter { !found.contains($0) }
            reports.append(.init(entity: entity.entity.name, sourceDocuments: expected.count, indexedDocuments: indexed,
                                 missing: missing.sorted(), stale: stale.sorted(), extra: extra.sorted()))
        }
        let notIndexed = try store.captureStatus(in: db).notCapturing.compactMap { entity -> String? in
            guard case let .modelMismatch(message) = entity.state else { return nil }
            return message
        }
        return VerificationReport(entities: reports, integrityErrors: integrityErrors, pending: pendingCount, token: token, notIndexed: notIndexed)
    }

    private func integrityCheck(_ db: Database) throws -> [String] {
        guard let live = try IndexState.live(db), let json = live.layout else { return [] }
        let schema = live.schema
        var errors: [String] = []
        for entity in try IndexLayout(json: json).entities {
            let fts = SQLQuoting.identifier(schema.ftsTable(entity.id))
            do {
                try db.execute(sql: "INSERT INTO \(fts)(\(fts)) VALUES ('integrity-check')")
            } catch let error as DatabaseError {
                errors.append("\(entity.entity.name): \(error.message ?? "\(error)")")
            }
        }
        return errors
    }
}
