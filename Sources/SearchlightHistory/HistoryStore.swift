import Foundation
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// An SQLite database whose tracked tables record every committed change as history.
///
/// Opening a store with a model installs (idempotently, in one transaction) the history tables
/// and the capture triggers of every entity. From then on every change to a tracked table is
/// recorded, whoever makes it: writes through ``write(author:context:_:)`` carry an author and a
/// context name; raw SQL, other processes and the `sqlite3` shell are recorded with no author.
///
/// ```swift
/// let model = try SearchlightModel(contentsOf: URL(fileURLWithPath: "notes.model.json"))
/// let store = try HistoryStore(path: "notes.sqlite", model: model)
///
/// try store.write(author: "app", context: "editor") { db in
///     try db.execute(sql: "INSERT INTO notes(title, body) VALUES (?, ?)", arguments: ["Hello", "World"])
/// }
/// for transaction in try store.fetchTransactions(.after(HistoryToken.zero)) {
///     print(transaction.token, transaction.author ?? "-", transaction.changes.map(\.type))
/// }
/// ```
public final class HistoryStore: Sendable {
    /// How a store talks to its database.
    public struct Configuration: Sendable {
        /// Where transaction timestamps and checkpoint dates come from (tests inject their own).
        public var clock: @Sendable () -> Date = { Date() }
        /// Where the store logs. It never prints.
        public var logger = Logger(label: "searchlight.history")
        /// How long a write waits for another process's write lock before failing.
        public var busyTimeout: Duration = .seconds(10)
        /// Whether `HistoryStore(path:)` may create a missing database file.
        public var createIfMissing = false
        /// How often the change watcher checks for commits when no file event arrives (a
        /// fallback for file systems without inotify events).
        public var watcherFallbackInterval: Duration = .milliseconds(250)
        /// Whether the store only reads. Opening it changes nothing in the database (no WAL
        /// setup, no heal of capture) and it never waits for another process's write lock:
        /// for searches and history listings while the app writes. It cannot install a model
        /// (`invalidArgument`), and its writes fail with `readOnly`. Capture is checked, and
        /// healed after a migration, by the stores that write (the indexer's, `watch`'s).
        public var readOnly = false

        public init() {}
    }

    /// The database, as GRDB hands one out: use it for reads, and for writes that need no author
    /// (``write(author:context:_:)`` records one).
    ///
    /// ```swift
    /// let count = try store.databaseWriter.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") }
    /// ```
    public var databaseWriter: any DatabaseWriter { dbPool }

    /// The connections (a WAL pool: readers never wait for the writer).
    package let dbPool: DatabasePool
    /// The model installed in the database, as this store last read it. Another process may
    /// install a new one (`searchlight init`); ``installedModel(in:)`` reads the current one.
    public var model: SearchlightModel { installed.withLock { $0.model } }
    private let installed: Mutex<(model: SearchlightModel, revision: Int64)>
    let configuration: Configuration
    let notifier: HistoryNotifier
    private let processID = Int32(ProcessInfo.processInfo.processIdentifier)

    /// Opens the database at `path`.
    ///
    /// - Parameters:
    ///   - model: the model to install or update. `nil` uses the model stored by an earlier
    ///     setup, and fails with `notInstalled` if there is none.
    /// - Throws: ``SearchlightError`` (`databaseNotFound`, `notADatabase`, `readOnly`,
    ///   `schemaMismatch`, `notInstalled`…). On error nothing is changed.
    public convenience init(path: String, model: SearchlightModel? = nil, configuration: Configuration = .init()) throws(SearchlightError) {
        if path.isEmpty { throw SearchlightError(.invalidArgument, "invalid database path: it is empty") }
        if (configuration.readOnly || !configuration.createIfMissing) && !FileManager.default.fileExists(atPath: path) {
            throw SearchlightError(.databaseNotFound, "no database at \(UserText.shown(path, limit: 200))")
        }
        if configuration.readOnly {
            if model != nil { throw SearchlightError(.invalidArgument, "a read-only store cannot install a model: open it for writing") }
            // SQLite reads a WAL database through its -shm file and creates it, and an empty
            // -wal, when no process has the database open: files owned by this user, which the
            // database's owner might not be able to write, and then its app could not write.
            if access(path, W_OK) != 0 && Self.isWAL(path) && !FileManager.default.fileExists(atPath: path + "-shm") {
                throw SearchlightError(.readOnly, "\(UserText.shown(path, limit: 200)) is not writable by this user and no process has it open: reading it would create SQLite's -wal and -shm files as this user, which could keep its owner from writing; read it as its owner, or while its app has it open")
            }
            let identity = FileIdentity(path: path)
            let dbPool = try SearchlightError.catching("cannot open database at \(path)") {
                try DatabasePool(path: path, configuration: Self.databaseConfiguration(configuration))
            }
            try self.init(dbPool: dbPool, model: nil, configuration: configuration, fileIdentity: identity ?? FileIdentity(path: path))
            return
        }
        // SQLite in WAL mode writes the database and creates files beside it (-wal, -shm):
        // say so at open, rather than failing later in the middle of a write.
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if FileManager.default.fileExists(atPath: path) && access(path, W_OK) != 0 {
            throw SearchlightError(.readOnly, "the database \(path) is read-only: Searchlight needs to write to it")
        }
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 {
            throw SearchlightError(.readOnly, "the directory of \(path) is read-only: SQLite needs to create its -wal and -shm files there")
        }
        // The file's identity is taken before it is opened: a file moved over it from then on
        // is noticed (``checkFileIdentity()``).
        let identity = FileIdentity(path: path)
        // Opening a pool switches the file to WAL: first check, read-only, that there is
        // something to open (a setup, or a model that fits), so that a refusal changes nothing.
        if FileManager.default.fileExists(atPath: path) { try Self.checkBeforeOpening(path, model: model) }
        let primer = try SearchlightError.catching("cannot open database at \(path)") { try Self.fillWAL(path, configuration) }
        defer { try? primer?.close() }
        let dbPool = try SearchlightError.catching("cannot open database at \(path)") {
            try DatabasePool(path: path, configuration: Self.databaseConfiguration(configuration))
        }
        try self.init(dbPool: dbPool, model: model, configuration: configuration, fileIdentity: identity ?? FileIdentity(path: path))
    }

    /// Whether the file's header says WAL (its read and write versions are 2).
    private static func isWAL(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
    }

    /// GRDB opens a pool for writing by creating and dropping a table whenever the WAL is
    /// missing or empty (the first open after the last connection closed), so that its readers
    /// find one. That changed the app's schema version at every such open (SQLite prepares the
    /// app's statements again) and set off a check of capture, in a write transaction. For a
    /// database in WAL mode that Searchlight set up, one row of ours written first fills the WAL
    /// instead. Returns that connection, to close once the pool is open (closing it before
    /// would empty the WAL again); nil when there was nothing to do. It waits for the write
    /// lock as GRDB's table would have.
    private static func fillWAL(_ path: String, _ configuration: Configuration) throws -> DatabaseQueue? {
        if let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int, size > 0 { return nil }
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var connection = GRDB.Configuration()
        connection.busyMode = .timeout(configuration.busyTimeout.seconds)
        connection.label = "searchlight.wal"
        let queue = try DatabaseQueue(path: path, configuration: connection)
        do {
            let filled = try queue.inDatabase { db -> Bool in
                guard try db.tableExists("searchlight_meta") else { return false }
                // The pool switches a database in another journal mode to WAL: so does this
                // connection, first (the switch itself leaves the schema version as it is).
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                    guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else { return false }
                }
                // A value that changes: SQLite writes no page for a row rewritten as it was.
                try db.inTransaction(.immediate) {
                    try db.execute(sql: #"""
                        INSERT OR REPLACE INTO "searchlight_meta"("key", "value")
                        VALUES (?1, coalesce((SELECT "value" FROM "searchlight_meta" WHERE "key" = ?1), 0) + 1)
                        """#, arguments: [MetaKey.walFills])
                    return .commit
                }
                return true
            }
            if filled { return queue }
        } catch {
            try? queue.close()
            throw error
        }
        try queue.close()
        return nil
    }

    /// What opening would refuse, found through a read-only connection (which leaves the
    /// journal mode as it is): no setup when no model is given, or a model that does not fit the
    /// schema, or names of the app's that a first install would take over.
    private static func checkBeforeOpening(_ path: String, model: SearchlightModel?) throws(SearchlightError) {
        try SearchlightError.catching("cannot open database at \(path)") {
            var configuration = GRDB.Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in
                let installed = try HistorySchema.isInstalled(db)
                guard let model else {
                    let storedModel = installed ? try Meta.get(db, .model, as: String.self) : nil
                    if storedModel == nil {
                        throw SearchlightError(.notInstalled, "\(path) has no Searchlight setup; install it with a model first")
                    }
                    return
                }
                if !installed { try HistorySchema.checkNamesAreFree(db) }
                for entity in model.entities { _ = try EntitySchemaCheck.check(entity, db) }
            }
        }
    }

    /// Uses an existing pool (configure its busy mode; see ``databaseConfiguration(_:)``).
    public convenience init(dbPool: DatabasePool, model: SearchlightModel? = nil, configuration: Configuration = .init()) throws(SearchlightError) {
        try self.init(dbPool: dbPool, model: model, configuration: configuration, fileIdentity: FileIdentity(path: dbPool.path))
    }

    private init(dbPool: DatabasePool, model: SearchlightModel?, configuration: Configuration, fileIdentity: FileIdentity?) throws(SearchlightError) {
        self.dbPool = dbPool
        self.configuration = configuration
        self.fileIdentity = fileIdentity
        if let model {
            let (revision, installationID) = try SearchlightError.catching("cannot set up history in \(dbPool.path)") {
                try dbPool.write { db in
                    try CaptureInstaller(model: model).install(db, at: configuration.clock())
                    return (try Meta.get(db, .modelRevision, as: Int64.self) ?? 0, try Meta.get(db, .installationID, as: String.self))
                }
            }
            installed = Mutex((model, revision))
            self.installationID = installationID
        } else {
            let stored = try SearchlightError.catching("cannot read the Searchlight setup of \(dbPool.path)") {
                try dbPool.read { db -> (String, Int64, String?)? in
                    guard try HistorySchema.isInstalled(db), let json = try Meta.get(db, .model, as: String.self) else { return nil }
                    return (json, try Meta.get(db, .modelRevision, as: Int64.self) ?? 0, try Meta.get(db, .installationID, as: String.self))
                }
            }
            guard let stored else {
                throw SearchlightError(.notInstalled, "\(dbPool.path) has no Searchlight setup; install it with a model first")
            }
            installed = Mutex((try SearchlightModel(jsonData: Data(stored.0.utf8)), stored.1))
            installationID = stored.2
        }
        notifier = HistoryNotifier(dbPool: dbPool, logger: configuration.logger, fallbackInterval: configuration.watcherFallbackInterval,
                                   fileIdentity: fileIdentity)
        if model == nil && !configuration.readOnly {
            // The schema may have changed while no Searchlight code ran (a migration remade a
            // table): heal capture now. If that fails, the store still opens: what can be read is.
            do {
                _ = try healIfSchemaChanged()
            } catch {
                configuration.logger.warning("cannot check the capture triggers of \(dbPool.path): \(SearchlightError(wrapping: error, doing: "checking capture").message)")
            }
        }
    }

    /// Whether the store was opened read-only (``Configuration/readOnly``).
    public var isReadOnly: Bool { configuration.readOnly }

    /// The file the store opened (device and inode), to notice it was replaced.
    private let fileIdentity: FileIdentity?

    /// The setup the store opened (``MetaKey/installationID``): one that replaced it after an
    /// uninstall is another one (see ``checkInstalled(in:)``).
    let installationID: String?
    /// The last `PRAGMA schema_version` at which ``checkInstalled(in:)`` found the setup in place:
    /// an uninstall changes the schema, so the common case costs one pragma.
    let installedAtSchemaVersion = Mutex<Int64?>(nil)

    /// Throws `databaseReplaced` if the database file was moved over or deleted since the store
    /// opened it (one `stat`): every consumer batch checks, so that `watch` stops with a clear
    /// error instead of following a file nobody writes any more.
    public func checkFileIdentity() throws(SearchlightError) {
        guard let fileIdentity, FileIdentity(path: dbPool.path) != fileIdentity else { return }
        throw SearchlightError(.databaseReplaced, "the database file \(dbPool.path) was replaced or deleted after it was opened: open it again")
    }

    /// The last schema version capture was checked at, in this process: the common case costs
    /// one pragma.
    private let checked = Mutex<(schemaVersion: Int64, status: CaptureStatus)?>(nil)

    /// The status only changes when a heal runs, and a heal only runs when the schema changed:
    /// it is read again only then.
    @discardableResult
    func checkCapture(_ db: Database) throws -> CaptureStatus {
        let version = try Int64.fetchOne(db, sql: "PRAGMA schema_version")
        if let status = checked.withLock({ $0?.schemaVersion == version ? $0?.status : nil }) { return status }
        // The schema changed: Searchlight may have been uninstalled meanwhile. Healing must
        // never set anything up again (only `init` does).
        try checkInstalled(db)
        var healed: CaptureStatus?
        if try CaptureInstaller.schemaChanged(db) {
            let before = try CaptureInstaller.storedStatus(db)
            healed = try CaptureInstaller.heal(db, at: configuration.clock())
            if let healed, healed != before { log(healed, previous: before) }
        }
        let status = try healed ?? CaptureInstaller.storedStatus(db) ?? CaptureStatus(entities: [], followed: [])
        let schemaVersion = try Int64.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        checked.withLock { $0 = (schemaVersion, status) }
        return status
    }

    private func log(_ status: CaptureStatus, previous: CaptureStatus?) {
        for rename in status.followed where !(previous?.followed.contains(rename) ?? false) {
            configuration.logger.notice("\(rename)")
        }
        for entity in status.entities where entity.state != previous?.entities.first(where: { $0.name == entity.name })?.state {
            switch entity.state {
            case .capturing: configuration.logger.notice("entity \(entity.name): capture of table \"\(entity.table)\" checked and resumed")
            default: configuration.logger.warning("entity \(entity.name): \(entity.state)")
            }
        }
    }

    /// Checks capture against the current schema, heals it if the host app migrated since the
    /// last check, and returns whether each entity's changes are recorded now and what renames
    /// were followed.
    ///
    /// A read-only store (``Configuration/readOnly``) heals nothing: it returns the status as
    /// the last check, by a store that writes, found it.
    ///
    /// Healing (see ``CaptureStatus``) runs in a write transaction, and only when the schema
    /// changed since capture was last checked: an unchanged schema costs one read and never
    /// takes the write lock. A consumer that reads history in a read transaction of its own
    /// (``fetchBatch(as:after:filter:batchSize:in:)``) calls it first, so that a migration's gap
    /// is recorded before it reads.
    public func healCapture() throws(SearchlightError) -> CaptureStatus {
        try SearchlightError.catching("cannot check capture") {
            try (configuration.readOnly ? nil : healIfSchemaChanged()) ?? dbPool.read { db in
                try CaptureInstaller.storedStatus(db) ?? CaptureStatus(entities: [], followed: [])
            }
        }
    }

    @available(*, deprecated, renamed: "healCapture()", message: "it heals capture, as its new name says")
    public func captureStatus() throws(SearchlightError) -> CaptureStatus { try healCapture() }

    /// ``healCapture()`` in the caller's transaction.
    ///
    /// In a write transaction, capture is checked and healed first if the schema changed since
    /// this store last checked (one `PRAGMA schema_version` otherwise). Every consumer batch does
    /// so before it reads history, so a migration of the host app is noticed by the next batch
    /// after it, and its gap is recorded first; a consumer that reads the tracked tables itself
    /// (the indexer) does so before it reads them. In a read transaction nothing can be healed:
    /// it returns the status as the last check found it.
    @discardableResult
    public func healCapture(in db: Database) throws(SearchlightError) -> CaptureStatus {
        try SearchlightError.catching("cannot check capture") {
            // A pool's readers are read-only connections: no heal there.
            if sqlite3_db_readonly(db.sqliteConnection, "main") == 1 {
                return try CaptureInstaller.storedStatus(db) ?? CaptureStatus(entities: [], followed: [])
            }
            return try checkCapture(db)
        }
    }

    @available(*, deprecated, renamed: "healCapture(in:)", message: "it heals capture in a write transaction, as its new name says")
    @discardableResult
    public func captureStatus(in db: Database) throws(SearchlightError) -> CaptureStatus { try healCapture(in: db) }

    /// Heals capture in a write transaction if the schema changed since the last heal (a read
    /// finds out first, so that an unchanged schema never takes the write lock). Returns the
    /// status when it healed.
    private func healIfSchemaChanged() throws -> CaptureStatus? {
        guard try dbPool.read(CaptureInstaller.schemaChanged) else { return nil }
        return try dbPool.write { try checkCapture($0) }
    }

    /// The GRDB configuration Searchlight uses: WAL (a `DatabasePool`), a busy timeout so that
    /// concurrent writers in other processes wait instead of failing.
    public static func databaseConfiguration(_ configuration: Configuration = .init()) -> GRDB.Configuration {
        var config = GRDB.Configuration()
        config.busyMode = .timeout(configuration.busyTimeout.seconds)
        config.readonly = configuration.readOnly
        config.label = "searchlight"
        return config
    }

    /// Runs `updates` in one write transaction recorded with this author and context name.
    ///
    /// The transaction gets its token before `updates` runs; every change to a tracked table
    /// inside it (including those made by your own triggers) belongs to that token. If
    /// `updates` throws, the transaction rolls back and leaves no history. A transaction that
    /// changes no tracked row leaves no history either.
    ///
    /// SQL it runs around your updates:
    /// ```sql
    /// INSERT INTO searchlight_log(id, token, type, timestamp, author, context, process_id)
    ///   VALUES (<next token>, <next token>, 0 /* header */, ?, ?, ?, ?);
    /// INSERT INTO searchlight_open(token) VALUES (<that token>);
    /// -- your updates: the capture triggers record changes with the token searchlight_open holds
    /// DELETE FROM searchlight_open;
    /// DELETE FROM searchlight_log WHERE id = ?; -- only if it recorded no change
    /// ```
    ///
    /// - Throws: ``SearchlightError``: what SQLite reported, or ``SearchlightError/Code-swift.struct/bodyFailed``
    ///   with your closure's own error as its `underlyingError`.
    public func write<T>(author: String?, context: String? = nil, _ updates: (Database) throws -> T) throws(SearchlightError) -> T {
        try checkWritable()
        let (result, token) = try Self.writing(author: author) {
            try dbPool.write { db in try recording(db, author: author, context: context) { try updates(db) } }
        }
        if let token { notifier.publish(token) }
        return result
    }

    /// The async variant of ``write(author:context:_:)``.
    public func write<T: Sendable>(author: String?, context: String? = nil, _ updates: @escaping @Sendable (Database) throws -> T) async throws(SearchlightError) -> T {
        try checkWritable()
        let (result, token): (T, HistoryToken?)
        do {
            (result, token) = try await dbPool.write { [self] db in try recording(db, author: author, context: context) { try updates(db) } }
        } catch {
            throw SearchlightError(wrappingClosureError: error, doing: "the write of \"\(author ?? "-")\" failed")
        }
        if let token { notifier.publish(token) }
        return result
    }

    /// A read-only store says so before SQLite does.
    private func checkWritable() throws(SearchlightError) {
        if configuration.readOnly { throw SearchlightError(.readOnly, "\(dbPool.path) was opened read-only: open it for writing to write") }
    }

    private static func writing<T>(author: String?, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw SearchlightError(wrappingClosureError: error, doing: "the write of \"\(author ?? "-")\" failed") }
    }

    /// Runs `updates` inside an open API transaction; returns the token if it recorded changes.
    private func recording<T>(_ db: Database, author: String?, context: String?, _ updates: () throws -> T) throws -> (T, HistoryToken?) {
        do {
            try db.cachedStatement(sql: """
                INSERT INTO "searchlight_log"("id", "token", "type", "timestamp", "author", "context", "process_id")
                VALUES (\(CaptureTriggers.nextTokenExpression), \(CaptureTriggers.nextTokenExpression), ?, ?, ?, ?, ?)
                """).execute(arguments: [LogRowType.transactionHeader, configuration.clock().timeIntervalSince1970, author, context, processID])
        } catch {
            try checkInstalled(db) // an uninstall says so; any other failure is reported as it is
            throw error
        }
        let token = db.lastInsertedRowID
        try db.cachedStatement(sql: #"INSERT INTO "searchlight_open"("token") VALUES (?)"#).execute(arguments: [token])
        let result = try updates()
        // Close the transaction if it recorded a change (a row after its header); otherwise
        // remove the header: a write that changed nothing tracked leaves no history.
        try db.cachedStatement(sql: #"DELETE FROM "searchlight_open""#).execute()
        if try Bool.fetchOne(db.cachedStatement(sql: #"SELECT EXISTS (SELECT 1 FROM "searchlight_log" WHERE "id" > ?)"#), arguments: [token]) == true {
            return (result, HistoryToken(token))
        }
        try db.cachedStatement(sql: #"DELETE FROM "searchlight_log" WHERE "id" = ?"#).execute(arguments: [token])
        return (result, nil)
    }

    /// The model installed in the database now, read in the caller's transaction. Costs one
    /// point query unless another process installed a new model since the last call, in which
    /// case ``model`` is updated too.
    public func installedModel(in db: Database) throws(SearchlightError) -> SearchlightModel {
        let revision = try SearchlightError.catching("cannot read the installed model") {
            try Meta.get(db, .modelRevision, as: Int64.self) ?? 0
        }
        if let model = installed.withLock({ $0.revision == revision ? $0.model : nil }) { return model }
        let json = try SearchlightError.catching("cannot read the installed model") { try Meta.get(db, .model, as: String.self) }
        guard let json else { throw SearchlightError(.notInstalled, "\(dbPool.path) has no Searchlight setup; install it with a model first") }
        let model = try SearchlightModel(jsonData: Data(json.utf8))
        installed.withLock { $0 = (model, revision) }
        configuration.logger.notice("the installed model changed (revision \(revision)): another process installed one, or a rename was followed")
        return model
    }

    /// The stable integer id of each installed entity, by name. An id is never reused, so it
    /// can name per-entity objects of your own (the index names its FTS5 tables with it).
    public func entityIDs(in db: Database) throws(SearchlightError) -> [String: Int64] {
        try SearchlightError.catching("cannot read the installed entities") { try HistoryLog.EntityNames.fetch(db).ids }
    }

    // MARK: - Reading history

    /// The newest committed token.
    public func currentToken() throws(SearchlightError) -> HistoryToken {
        try SearchlightError.catching("cannot read the current token") { try dbPool.read(HistoryLog.headToken) }
    }

    /// The newest committed token, in the caller's transaction.
    public func currentToken(in db: Database) throws(SearchlightError) -> HistoryToken {
        try SearchlightError.catching("cannot read the current token") { try HistoryLog.headToken(db) }
    }

    /// ``fetchTransactions(_:)`` in the caller's transaction.
    public func fetchTransactions(_ request: HistoryRequest, in db: Database) throws(SearchlightError) -> [HistoryTransaction] {
        try SearchlightError.catching("cannot fetch history") { try HistoryLog.fetchTransactions(request, db) }
    }

    /// Transactions matching `request`, with their matching changes, in token order.
    ///
    /// - Throws: `historyExpired` if cleanup deleted history after the request's start;
    ///   `invalidToken` for a token ahead of the head; `invalidArgument` for a bad limit or
    ///   an unknown entity.
    public func fetchTransactions(_ request: HistoryRequest) throws(SearchlightError) -> [HistoryTransaction] {
        try SearchlightError.catching("cannot fetch history") { try dbPool.read { try HistoryLog.fetchTransactions(request, $0) } }
    }

    /// The changes of the transactions matching `request`, in order.
    public func fetchChanges(_ request: HistoryRequest) throws(SearchlightError) -> [HistoryChange] {
        try fetchTransactions(request).flatMap(\.changes)
    }

    /// How many transactions and changes `request` selects.
    public func fetchCount(_ request: HistoryRequest) throws(SearchlightError) -> HistoryCount {
        try SearchlightError.catching("cannot count history") { try dbPool.read { try HistoryLog.count(request, $0) } }
    }

    /// Every change to one object after `start`: the history of an object id.
    public func fetchChanges(entity: String, objectID: ObjectID, after start: HistoryRequest.Start = .oldest) throws(SearchlightError) -> [HistoryChange] {
        try SearchlightError.catching("cannot fetch history") {
            try dbPool.read { try HistoryLog.changes(entity: entity, objectID: objectID, after: start, $0) }
        }
    }

    /// Deletes all history up to and including `token`, regardless of consumers (the raw
    /// operation, for tests; ``HistoryCleaner`` decides what is safe to delete). Readers that
    /// later ask for history after an older token get `historyExpired`.
    @discardableResult
    package func deleteHistory(through token: HistoryToken) throws(SearchlightError) -> HistoryCount {
        try SearchlightError.catching("cannot delete history") {
            try HistoryPurge(dbPool: dbPool).delete(through: token, authors: nil)
        }
    }

    // MARK: - Notifications

    /// The head token, each time writes commit history (in this process or another one).
    /// If reading history starts failing (its table was dropped, say), subscribers are woken
    /// once with the last token, so that their next read meets the error.
    ///
    /// Bursts coalesce: a slow subscriber receives the newest token, not every one. Writes made
    /// through ``write(author:context:_:)`` publish their token as they commit. While at least
    /// one subscription is alive, a watcher notices every other commit, from this process or
    /// another (inotify on the database directory, with a slow poll as a fallback). Writers pay
    /// nothing for notifications: no commit hook or update hook is installed.
    ///
    /// ```swift
    /// for await token in store.historyUpdates() {
    ///     let transactions = try store.fetchTransactions(.after(lastSeen))
    /// }
    /// ```
    public func historyUpdates() -> AsyncStream<HistoryToken> {
        notifier.subscribe()
    }
}

extension HistoryStore {
    /// The change feed: the transactions `request` selects, in pages read as they are consumed,
    /// then, if `follow` is true, each new matching transaction as it commits (in this process
    /// or another), until the consuming task is cancelled. Each element is a page of
    /// transactions in token order; the feed holds one page at a time, whatever the backlog.
    /// See ``HistoryFeed``.
    ///
    /// With a `limit`, the backlog stops after that many transactions and following resumes
    /// from the head (the rest of the backlog is left out on purpose). Iterating throws a
    /// ``SearchlightError`` if reading fails (`historyExpired` when cleanup deletes history
    /// the feed has not read yet).
    ///
    /// ```swift
    /// for try await page in store.history(.after(checkpoint), follow: true) {
    ///     for transaction in page { print(transaction.token, transaction.changes.count) }
    /// }
    /// ```
    public func history(_ request: HistoryRequest, follow: Bool) -> HistoryFeed {
        HistoryFeed(store: self, request: request, follow: follow)
    }
}

/// A file's device and inode: a file moved over the database has another identity.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
