import Foundation
import GRDB

/// Installs, updates and heals capture triggers, from a model checked against the database
/// (``EntitySchemaCheck``) and renames followed (``RenameFollower``).
///
/// Runs inside the caller's write transaction: on any error the transaction rolls back and
/// nothing is half-installed.
package struct CaptureInstaller {
    package let model: SearchlightModel

    package init(model: SearchlightModel) { self.model = model }

    /// Installs `model` (what `searchlight init` does): validates every entity against the
    /// schema (any problem throws), applies migrations, registers entities and (re)installs their
    /// triggers. Triggers of entities no longer in the model are dropped.
    package func install(_ db: Database, at date: Date) throws {
        let checked = try model.entities.map { try EntitySchemaCheck.check($0, db) }
        try HistorySchema.migrate(db)
        try Meta.setJSON(db, .declaredModel, model)
        try Self.apply(model: model, checked: checked, problems: [], followed: [], at: date, db)
    }

    /// Brings capture in line with the schema as it is now, from the stored model, with no
    /// manual step (see ``CaptureStatus``): follows renamed tables and columns, reinstalls lost
    /// triggers, sets aside entities whose table is gone or no longer fits, and records a gap in
    /// history whenever an entity's capture was interrupted. Returns nil if nothing is installed.
    @discardableResult
    package static func heal(_ db: Database, at date: Date) throws -> CaptureStatus? {
        guard try HistorySchema.isInstalled(db), let json = try Meta.get(db, .model, as: String.self) else { return nil }
        try HistorySchema.migrate(db)
        var model = try SearchlightModel(jsonData: Data(json.utf8))
        var followed = try storedStatus(db)?.followed ?? []
        let ids = try HistoryLog.EntityNames.fetch(db).ids
        let declaredModel = try Meta.getJSON(db, .declaredModel, as: SearchlightModel.self)
        let taken = try RenameFollower.followTables(&model, declared: declaredModel, ids: ids, followed: &followed, at: date, db)
        var columnsInterrupted: Set<String> = []
        for index in model.entities.indices {
            guard let id = ids[model.entities[index].name], try EntitySchemaCheck.tableExists(model.entities[index].table, db) else { continue }
            let (renames, interrupted) = try RenameFollower.followColumns(&model.entities[index], id: id, at: date, db)
            followed += renames
            if interrupted { columnsInterrupted.insert(model.entities[index].name) }
            if let declared = declaredModel?.entity(named: model.entities[index].name) {
                followed += try RenameFollower.returnToDeclaredColumns(&model.entities[index], declared: declared, at: date, db)
            }
        }
        var checked: [EntitySchemaCheck] = []
        var problems: [CaptureStatus.Entity] = []
        for entity in model.entities {
            if let (other, table) = taken[entity.name] {
                problems.append(.init(name: entity.name, table: table, state: .modelMismatch(
                    "entity \"\(entity.name)\": table \"\(table)\" now holds the rows of entity \"\(other)\" (tables were renamed); install a model that says which table is which (searchlight init)")))
                continue
            }
            do {
                checked.append(try EntitySchemaCheck.check(entity, db))
            } catch let error as SearchlightError {
                let state: CaptureStatus.State = try EntitySchemaCheck.tableExists(entity.table, db)
                    ? .modelMismatch(error.message + "; install a model that fits the table (searchlight init)")
                    : .tableMissing(entity.table)
                problems.append(.init(name: entity.name, table: entity.table, state: state))
            }
        }
        // Renames followed since `init`, newest last; an app that renames for years keeps the last ones.
        return try apply(model: model, checked: checked, problems: problems, followed: Array(followed.suffix(100)),
                         interrupted: columnsInterrupted, at: date, db)
    }

    /// The status the last install or heal stored. A status that cannot be read is an error:
    /// read as no status, it would claim that every entity is captured.
    package static func storedStatus(_ db: Database) throws -> CaptureStatus? {
        guard let json = try Meta.get(db, .captureStatus, as: String.self) else { return nil }
        do {
            return try JSONDecoder().decode(CaptureStatus.self, from: Data(json.utf8))
        } catch {
            throw SearchlightError(.schemaMismatch, "the stored capture status cannot be read (a newer release of Searchlight may have written it: upgrade Searchlight)", underlyingError: error)
        }
    }

    /// Whether the schema changed since the last install or heal, or an older release installed
    /// the triggers or the history tables (one pragma, one query): a heal then upgrades them.
    package static func schemaChanged(_ db: Database) throws -> Bool {
        let schemaVersion = try Int64.fetchOne(db, sql: "PRAGMA schema_version")
        guard let row = try Row.fetchOne(db, sql: """
            SELECT (SELECT "value" FROM "searchlight_meta" WHERE "key" = ?),
                   (SELECT "value" FROM "searchlight_meta" WHERE "key" = ?),
                   (SELECT "value" FROM "searchlight_meta" WHERE "key" = ?)
            """, arguments: [MetaKey.captureSchemaVersion, MetaKey.captureVersion, MetaKey.schemaVersion]) else { return true }
        return schemaVersion != row[0] as Int64?
            || row[1] as Int? != CaptureTriggers.version
            || row[2] as Int? != HistorySchema.currentVersion
    }

    /// The triggers without which an entity's changes go unrecorded: an entity missing one was
    /// not captured for a while (its table was remade or dropped). Capture triggers 8 have their
    /// own; before them, every version had the same.
    private static func essentialTriggers(version: Int) -> [String] {
        version >= 8 ? ["insert_row", "update", "rekey_row", "delete"]
            : ["insert_opens", "insert", "update_opens", "update", "rekey", "delete_opens", "delete"]
    }

    /// Installs the triggers of the `checked` entities, drops every other Searchlight trigger,
    /// stores the model and the status, and records a capture gap if an entity's capture was
    /// interrupted since the last install or heal.
    @discardableResult
    private static func apply(model: SearchlightModel, checked: [EntitySchemaCheck], problems: [CaptureStatus.Entity],
                              followed: [CaptureStatus.FollowedRename], interrupted interruptedEntities: Set<String> = [],
                              at date: Date, _ db: Database) throws -> CaptureStatus {
        let knownIDs = try HistoryLog.EntityNames.fetch(db).ids
        let previouslyLost = Set(try storedStatus(db)?.notCapturing.map(\.name) ?? [])
        // Triggers, and the views through which the rare paths' triggers run (capture triggers 8).
        let existing = try Row.fetchAll(db, sql: """
            SELECT "name", "tbl_name", "sql", "rowid", "type" FROM "sqlite_master" WHERE "type" IN ('trigger', 'view') AND "name" GLOB 'searchlight_*'
            """)
        var current: [String: (table: String, sql: String, rowid: Int64)] = [:]
        var views: Set<String> = []
        // (An app's own trigger may bear the prefix too: only names Searchlight gives count.)
        for row in existing where HistorySchema.isSearchlightObject(row["name"], type: row["type"]) {
            current[row["name"]] = (row["tbl_name"], row["sql"], row["rowid"])
            if row["type"] as String == "view" { views.insert(row["name"]) }
        }
        // SQLite fires the newest trigger first, and a `RAISE(IGNORE)` in an app's AFTER trigger
        // skips the triggers that would fire after it: ours must be the newest on their table.
        var recreate: Set<String> = []

        let previousRootPages = try Meta.getJSON(db, .captureRootPages, as: [String: Int64].self) ?? [:]
        var rootPages: [String: Int64] = [:]
        // With auto-vacuum, dropping any table moves root pages: the check would only cause
        // needless resyncs there, so such databases go without it.
        let rootPagesAreStable = try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") == 0
        var interrupted = false
        var wanted: [String: String] = [:]
        // The triggers of the version installed (an upgrade is no interruption).
        let essentialTriggers = Self.essentialTriggers(version: try Meta.get(db, .captureVersion, as: Int.self) ?? 0)
        for entry in checked {
            let id = try entityID(for: entry.entity, db)
            let rootPage = try Int64.fetchOne(db, sql: """
                SELECT "rootpage" FROM "sqlite_master" WHERE "type" = 'table' AND "name" = ? COLLATE NOCASE
                """, arguments: [entry.entity.table])
            rootPages[entry.entity.name] = rootPage
            if knownIDs[entry.entity.name] != nil {
                // A known entity missing a trigger on its table, or one that was set aside: what
                // changed meanwhile is unknown. So is it when the table was remade by a tool that
                // put our triggers back itself (SQLite's 12-step ALTER TABLE procedure): the
                // remade table has a new root page. (VACUUM may renumber pages too: a needless
                // resync, never a missed change.)
                let intact = essentialTriggers.allSatisfy { kind in
                    current["searchlight_\(id)_\(kind)"].map { $0.table.caseInsensitiveCompare(entry.entity.table) == .orderedSame } ?? false
                }
                let remade = rootPagesAreStable && (previousRootPages[entry.entity.name].map { $0 != rootPage } ?? false)
                if !intact || remade || previouslyLost.contains(entry.entity.name) || interruptedEntities.contains(entry.entity.name) {
                    interrupted = true
                }
            }
            let rendered = CaptureTriggers.render(entity: entry.entity, entityID: id, trackedColumns: entry.tracked, keyCollation: entry.keyCollation,
                                                  uniqueKeys: entry.uniqueKeys, separateRowid: entry.separateRowid, generatedColumns: entry.generatedColumns)
            if knownIDs[entry.entity.name] != nil {
                // The watch for rows a REPLACE deletes through another unique key (the app added
                // or changed one, or capture was installed by a release without it): until now
                // such deletes could have gone unrecorded.
                // (A unique key dropped, or an unchanged one, needs no resync.)
                if let predicate = rendered.collisionPredicate {
                    let watched = rendered.statements.filter { $0.name.contains("_collide") }.allSatisfy { current[$0.name] != nil }
                    if !watched || !(current["searchlight_\(id)_insert_collides"]?.sql.contains(predicate) ?? false) { interrupted = true }
                }
            }
            for (name, sql) in rendered.statements { wanted[name] = sql }
            // The triggers of one event fire newest first, and the replaced row's delete must be
            // recorded before the insert that replaced it: an entity's triggers are created
            // together, in the order of their names, or not at all.
            if rendered.statements.contains(where: { current[$0.name]?.sql != $0.sql }) {
                recreate.formUnion(rendered.statements.map(\.name))
            }
            let ours = rendered.statements.compactMap { current[$0.name]?.rowid }
            // Created in the order of their names, or their order of firing is not the one the
            // template relies on (insert_row before insert_replaced, rekey_row before
            // rekey_replaced: the replaced row's delete is made of the change recorded last). A
            // tool that remade the table and its triggers in another order: made again, and
            // whatever they recorded since is not trusted.
            let onTable = rendered.statements.map(\.name).sorted().compactMap { current[$0] }
                .filter { $0.table.caseInsensitiveCompare(entry.entity.table) == .orderedSame }.map(\.rowid)
            if onTable.count == rendered.statements.filter({ $0.sql.hasPrefix("CREATE TRIGGER") && !$0.sql.contains(" INSTEAD OF ") }).count,
               onTable != onTable.sorted() {
                recreate.formUnion(rendered.statements.map(\.name))
                if knownIDs[entry.entity.name] != nil { interrupted = true }
            }
            let newestOfTheApp = try Row.fetchAll(db, sql: """
                SELECT "name", "rowid" FROM "sqlite_master" WHERE "type" = 'trigger' AND "tbl_name" = ? COLLATE NOCASE
                """, arguments: [entry.entity.table])
                .filter { !HistorySchema.isSearchlightObject($0["name"], type: "trigger") }.map { $0["rowid"] as Int64 }.max()
            if let newestOfTheApp, let oldest = ours.min(), newestOfTheApp > oldest {
                recreate.formUnion(rendered.statements.map(\.name))
                // Until now, that trigger could have kept ours from recording.
                if knownIDs[entry.entity.name] != nil { interrupted = true }
            }
        }
        // An entity set aside now that was captured before: its documents must leave the index.
        if problems.contains(where: { knownIDs[$0.name] != nil && !previouslyLost.contains($0.name) }) { interrupted = true }

        // Triggers first (dropping a view drops the triggers on it), then views; views are made
        // first, then the triggers, in the order of their names.
        let dropped = current.filter { wanted[$0.key] != $0.value.sql || recreate.contains($0.key) }.keys
        for name in dropped where !views.contains(name) { try db.execute(sql: "DROP TRIGGER IF EXISTS \(SQLQuoting.identifier(name))") }
        for name in dropped where views.contains(name) { try db.execute(sql: "DROP VIEW IF EXISTS \(SQLQuoting.identifier(name))") }
        let isView = { (sql: String) in sql.hasPrefix("CREATE VIEW ") }
        // (A trigger on a view dropped just now went with it.)
        let droppedViews = Set(dropped.filter { views.contains($0) }.map { $0.lowercased() })
        let goneWithViews = Set(current.filter { droppedViews.contains($0.value.table.lowercased()) }.keys)
        for (name, sql) in wanted.sorted(by: { (isView($0.value) ? 0 : 1, $0.key) < (isView($1.value) ? 0 : 1, $1.key) })
        where current[name]?.sql != sql || recreate.contains(name) || goneWithViews.contains(name) {
            try db.execute(sql: sql)
        }
        try Meta.set(db, .captureVersion, CaptureTriggers.version)
        let json = String(decoding: model.jsonData(), as: UTF8.self)
        if try Meta.get(db, .model, as: String.self) != json {
            try Meta.set(db, .model, json)
            try Meta.set(db, .modelRevision, (try Meta.get(db, .modelRevision, as: Int64.self) ?? 0) + 1)
        }
        let problemsByName = Dictionary(problems.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let status = CaptureStatus(entities: model.entities.map { entity in
            problemsByName[entity.name] ?? .init(name: entity.name, table: entity.table, state: .capturing)
        }, followed: followed)
        try Meta.setJSON(db, .captureStatus, status)
        try Meta.setJSON(db, .captureRootPages, rootPages)
        if interrupted { try recordCaptureGap(at: date, db) }
        try Meta.set(db, .captureSchemaVersion, try Int64.fetchOne(db, sql: "PRAGMA schema_version"))
        return status
    }

    /// The context of a capture gap's marker (``recordCaptureGap(at:_:)``).
    package static let interruptedContext = "searchlight.capture-interrupted"

    /// Records that capture was interrupted: a transaction of its own (no changes, context
    /// `searchlight.capture-interrupted`), so that its token is newer than every checkpoint, and
    /// ``MetaKey/resyncThroughToken`` set to it. Consumers behind it must resynchronize.
    package static func recordCaptureGap(at date: Date, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO "searchlight_log"("id", "token", "type", "timestamp", "context")
            VALUES (\(CaptureTriggers.nextTokenExpression), \(CaptureTriggers.nextTokenExpression), ?, ?, ?)
            """, arguments: [LogRowType.transactionHeader, date.timeIntervalSince1970, interruptedContext])
        try Meta.set(db, .resyncThroughToken, db.lastInsertedRowID)
    }

    /// The entity's stable id, registering it on first use.
    private static func entityID(for entity: SearchlightModel.Entity, _ db: Database) throws -> Int64 {
        if let id = try Int64.fetchOne(db, sql: #"SELECT "id" FROM "searchlight_entity" WHERE "name" = ?"#, arguments: [entity.name]) {
            try db.execute(sql: #"UPDATE "searchlight_entity" SET "table_name" = ? WHERE "id" = ?"#, arguments: [entity.table, id])
            return id
        }
        try db.execute(sql: #"INSERT INTO "searchlight_entity"("name", "table_name") VALUES (?, ?)"#, arguments: [entity.name, entity.table])
        return db.lastInsertedRowID
    }
}
