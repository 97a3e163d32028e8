import GRDB
import SearchlightHistory

extension Indexer {
    /// Compares the index with the source tables, in one consistent snapshot, and runs FTS5's
    /// integrity check; the vocabulary (``IndexVocabulary``) is compared with FTS5's own counts.
    ///
    /// Objects changed in history after the indexer's checkpoint are pending, not wrong: they
    /// are counted in ``VerificationReport/pending`` and left out of the comparison. Call
    /// ``indexPendingChanges()`` first to verify everything.
    ///
    /// The expected text of each field is the text SQLite itself gives the column's value
    /// (`CAST(column AS TEXT)`), so a value the indexer converted differently is stale; so is
    /// a document whose attribute values are not the row's (storage class included). Rows
    /// and documents are compared a chunk at a time: memory does not grow with the tables.
    public func verify() throws(SearchlightError) -> VerificationReport {
        try SearchlightError.catching("cannot verify the index") {
            var report = try store.databaseWriter.read { db in try verify(db) }
            // FTS5's integrity check is spelled as an INSERT, which read-only connections refuse.
            report.integrityErrors += try store.databaseWriter.writeWithoutTransaction { db in try integrityCheck(db) }
            return report
        }
    }

    /// ``verify()`` from async code: on a thread of its own, so that the calling task holds no
    /// cooperative thread while the tables are compared (seconds on large tables). The
    /// comparison is one read transaction: cancelling the task does not cut it short.
    public func verifyAsync() async throws(SearchlightError) -> VerificationReport {
        try await DedicatedThread.run(name: "searchlight.indexer") { [self] _ throws(SearchlightError) in try verify() }
    }

    /// Verifies, fixes every difference found (reindexing those objects, or rebuilding if the
    /// full-text index itself is damaged), and verifies again if it repaired anything.
    ///
    /// ```swift
    /// try indexer.indexPendingChanges()   // what history says first: only real differences remain
    /// let repair = try indexer.repair()
    /// print(repair.found.differences, repair.isConsistent)
    /// ```
    @discardableResult
    public func repair() throws(SearchlightError) -> RepairReport {
        try repair(until: { Task.isCancelled })
    }

    /// ``repair()`` from async code: on a thread of its own (the calling task holds no
    /// cooperative thread). Cancelling the task stops the repair between the transactions it
    /// commits (a rebuild's chunks, chunks of reindexed objects) with
    /// ``SearchlightError/Code-swift.struct/cancelled``; what was committed stays, and a
    /// rebuild resumes where it stopped.
    @discardableResult
    public func repairAsync() async throws(SearchlightError) -> RepairReport {
        try await DedicatedThread.run(name: "searchlight.indexer") { [self] shouldStop throws(SearchlightError) in
            try repair(until: shouldStop)
        }
    }

    /// ``repair()``, stopping between the transactions it commits once `shouldStop` says so.
    func repair(until shouldStop: () -> Bool) throws(SearchlightError) -> RepairReport {
        let found = try verify()
        guard !found.isConsistent else { return RepairReport(found: found, repaired: false, isConsistent: true) }
        // Damage to the index rebuilds it; differing documents are reindexed and the vocabulary
        // is counted again.
        if !found.integrityErrors.isEmpty {
            _ = try rebuild(reason: .damaged, progress: nil, until: shouldStop)
            _ = try indexPendingChanges(until: shouldStop)
        } else {
            for entity in found.entities where entity.differences > 0 {
                try reindex(ids: entity.missing + entity.stale + entity.extra, entity: entity.entity, until: shouldStop)
                logger.notice("repaired \(entity.entity): \(entity.missing.count) missing, \(entity.stale.count) stale, \(entity.extra.count) extra")
            }
            // Text that was wrong in the index was subtracted from the vocabulary as it was, not
            // as it had been counted: count the vocabulary again (one pass over FTS5's terms).
            try SearchlightError.catching("cannot repair the index's vocabulary") {
                try store.databaseWriter.write { db in
                    guard let live = try IndexState.live(db), let json = live.layout else { return }
                    try IndexVocabulary.recount(schema: live.schema, layout: IndexLayout(json: json), db)
                }
            }
            logger.notice("counted the index's vocabulary again")
        }
        return RepairReport(found: found, repaired: true, isConsistent: try verify().isConsistent)
    }

    /// The most rows (or keys) a chunk of ``verify()`` holds: each chunk is looked up with one
    /// `IN (…)` list of keys.
    static let verifyChunkSize = 500

    /// What one step of ``verify(_:observe:)`` held in memory: the documents of one chunk of
    /// source rows, or the keys of one chunk of indexed documents.
    struct VerificationChunk: Hashable, Sendable {
        var entity: String
        var documents: Int
        /// Bytes of expected and indexed text held for them.
        var textBytes: Int
    }

    /// Compares, in one read transaction (one snapshot), every entity's source rows with its
    /// documents, chunk by chunk so that memory does not grow with the tables:
    ///
    /// 1. Source rows in key order, in chunks (at most ``verifyChunkSize`` rows, fewer if
    ///    ``Configuration/rebuildChunkSize`` is smaller, or about 4 MB of text): the text they
    ///    should have in the index is compared with the chunk's documents, looked up by key.
    ///    This finds missing, stale and excluded documents.
    /// 2. Documents in chunks: those whose row no longer exists are extra.
    ///
    /// The expected text of a field is the text SQLite gives the column's value
    /// (`CAST(x AS TEXT)`), prepared like the text of queries: it shares no value conversion
    /// with the indexer's own reading of rows. (An entity with a ``DocumentBuilder`` is
    /// compared with what its builder returns.)
    func verify(_ db: Database, observe: ((VerificationChunk) -> Void)? = nil) throws -> VerificationReport {
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
        let writer = makeWriter(schema, layout)
        var reports: [VerificationReport.EntityReport] = []
        var integrityErrors: [String] = []
        for entity in layout.entities {
            var comparison = EntityComparison(
                entity: entity, schema: schema, source: writer.sources[entity.id]!, text: layout.text,
                skip: pending[entity.entity.name] ?? [], chunkSize: min(max(1, configuration.rebuildChunkSize), Self.verifyChunkSize),
                observe: observe)
            // A suspended entity (its table is missing) must have no documents.
            if !entity.isSuspended { try comparison.compareSourceRows(db) }
            try comparison.findDocumentsWithoutRows(db)
            let fts = SQLQuoting.identifier(schema.ftsTable(entity.id))
            // Full-text rows with no document row are invisible to search but still damage.
            let orphans = entity.usesRowidKeys ? 0 : try Int.fetchOne(db, sql: """
                SELECT count(*) FROM \(fts) f WHERE NOT EXISTS (SELECT 1 FROM \(SQLQuoting.identifier(schema.documentTable)) d WHERE d."id" = f.rowid)
                """) ?? 0
            if orphans > 0 { integrityErrors.append("\(entity.entity.name): \(orphans) full-text rows have no document") }
            // Attribute values of no document are damage too (a filter never reaches them).
            let strayValues = entity.attributes.isEmpty ? 0 : try Int.fetchOne(db, sql: """
                SELECT count(*) FROM \(SQLQuoting.identifier(schema.attributeTable(entity.id))) a WHERE NOT EXISTS (SELECT 1 FROM \(fts) f WHERE f.rowid = a.rowid)
                """) ?? 0
            if strayValues > 0 { integrityErrors.append("\(entity.entity.name): \(strayValues) rows of attribute values have no document") }
            reports.append(comparison.report)
        }
        // The vocabulary against FTS5's own counts: repair counts a differing one again.
        let vocabularyDifferences = try IndexVocabulary.differences(schema: schema, layout: layout, db)
        let vocabularyReport = vocabularyDifferences.count == 0 ? nil
            : "\(vocabularyDifferences.count) words differ from the counts of the index's text (" + vocabularyDifferences.examples.joined(separator: ", ") + ")"
        // An entity set aside, or whose table is gone: the model no longer fits the database
        // (a table renamed together with a remake looks the same as one dropped).
        let notIndexed = try store.healCapture(in: db).notCapturing.compactMap { entity -> String? in
            switch entity.state {
            case let .modelMismatch(message): message
            case .tableMissing: "entity \"\(entity.name)\": \(entity.state)"
            default: nil
            }
        }
        var report = VerificationReport(entities: reports, integrityErrors: integrityErrors, pending: pendingCount, token: token, notIndexed: notIndexed)
        report.vocabularyDifferences = vocabularyReport
        return report
    }

    /// FTS5's integrity check of each entity's table, each in a transaction of its own that
    /// reads which generation is live: a rebuild's swap in another process between reading it
    /// and checking dropped the tables read ("no such table", seen by the simulation), and a
    /// transaction of all the checks would hold the write lock for all of them at once.
    private func integrityCheck(_ db: Database) throws -> [String] {
        var errors: [String] = []
        var checked = 0
        var more = true
        while more {
            try db.inTransaction(.immediate) {
                guard let live = try IndexState.live(db), let json = live.layout else { more = false; return .commit }
                let entities = try IndexLayout(json: json).entities
                guard checked < entities.count else { more = false; return .commit }
                let entity = entities[checked]
                let fts = SQLQuoting.identifier(live.schema.ftsTable(entity.id))
                do {
                    try db.execute(sql: "INSERT INTO \(fts)(\(fts)) VALUES ('integrity-check')")
                } catch let error as DatabaseError {
                    errors.append("\(entity.entity.name): \(error.message ?? "\(error)")")
                }
                checked += 1
                return .commit
            }
        }
        return errors
    }
}
