import Foundation
import GRDB

/// Checks a model against the database and installs, updates, heals or removes capture triggers.
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
        let checked = try model.entities.map { try Self.check($0, db) }
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
        let taken = try followTables(&model, declared: declaredModel, ids: ids, followed: &followed, at: date, db)
        var columnsInterrupted: Set<String> = []
        for index in model.entities.indices {
            guard let id = ids[model.entities[index].name], try tableExists(model.entities[index].table, db) else { continue }
            let (renames, interrupted) = try followColumns(&model.entities[index], id: id, at: date, db)
            followed += renames
            if interrupted { columnsInterrupted.insert(model.entities[index].name) }
            if let declared = declaredModel?.entity(named: model.entities[index].name) {
                followed += try returnToDeclaredColumns(&model.entities[index], declared: declared, at: date, db)
            }
        }
        var checked: [Checked] = []
        var problems: [CaptureStatus.Entity] = []
        for entity in model.entities {
            if let (other, table) = taken[entity.name] {
                problems.append(.init(name: entity.name, table: table, state: .modelMismatch(
                    "entity \"\(entity.name)\": table \"\(table)\" now holds the rows of entity \"\(other)\" (tables were renamed); install a model that says which table is which (searchlight init)")))
                continue
            }
            do {
                checked.append(try check(entity, db))
            } catch let error as SearchlightError {
                let state: CaptureStatus.State = try tableExists(entity.table, db)
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

    /// The trigger kinds every release installed: an entity missing one of them on its table
    /// lost its triggers (its table was remade or dropped) and changes went unrecorded.
    private static let essentialTriggers = ["insert_opens", "insert", "update_opens", "update", "rekey", "delete_opens", "delete"]

    /// Installs the triggers of the `checked` entities, drops every other Searchlight trigger,
    /// stores the model and the status, and records a capture gap if an entity's capture was
    /// interrupted since the last install or heal.
    @discardableResult
    private static func apply(model: SearchlightModel, checked: [Checked], problems: [CaptureStatus.Entity],
                              followed: [CaptureStatus.FollowedRename], interrupted interruptedEntities: Set<String> = [],
                              at date: Date, _ db: Database) throws -> CaptureStatus {
        let knownIDs = try HistoryLog.EntityNames.fetch(db).ids
        let previouslyLost = Set(try storedStatus(db)?.notCapturing.map(\.name) ?? [])
        let existing = try Row.fetchAll(db, sql: """
            SELECT "name", "tbl_name", "sql", "rowid" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" GLOB 'searchlight_*'
            """)
        var current: [String: (table: String, sql: String, rowid: Int64)] = [:]
        for row in existing { current[row["name"]] = (row["tbl_name"], row["sql"], row["rowid"]) }
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
            let rendered = CaptureTriggers.render(entity: entry.entity, entityID: id, trackedColumns: entry.tracked, keyCollation: entry.keyCollation)
            for (name, sql) in rendered.statements { wanted[name] = sql }
            let ours = rendered.statements.compactMap { current[$0.name]?.rowid }
            let newestOfTheApp = try Int64.fetchOne(db, sql: """
                SELECT max("rowid") FROM "sqlite_master" WHERE "type" = 'trigger' AND "tbl_name" = ? COLLATE NOCASE AND "name" NOT GLOB 'searchlight_*'
                """, arguments: [entry.entity.table])
            if let newestOfTheApp, let oldest = ours.min(), newestOfTheApp > oldest {
                recreate.formUnion(rendered.statements.map(\.name))
                // Until now, that trigger could have kept ours from recording.
                if knownIDs[entry.entity.name] != nil { interrupted = true }
            }
        }
        // An entity set aside now that was captured before: its documents must leave the index.
        if problems.contains(where: { knownIDs[$0.name] != nil && !previouslyLost.contains($0.name) }) { interrupted = true }

        for (name, trigger) in current where wanted[name] != trigger.sql || recreate.contains(name) {
            try db.execute(sql: "DROP TRIGGER \(SQLQuoting.identifier(name))")
        }
        for (name, sql) in wanted.sorted(by: { $0.key < $1.key }) where current[name]?.sql != sql || recreate.contains(name) {
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

    /// Records that capture was interrupted: a transaction of its own (no changes, context
    /// `searchlight.capture-interrupted`), so that its token is newer than every checkpoint, and
    /// ``MetaKey/resyncThroughToken`` set to it. Consumers behind it must resynchronize.
    package static func recordCaptureGap(at date: Date, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO "searchlight_log"("id", "token", "type", "timestamp", "context")
            VALUES (\(CaptureTriggers.nextTokenExpression), \(CaptureTriggers.nextTokenExpression), ?, ?, 'searchlight.capture-interrupted')
            """, arguments: [LogRowType.transactionHeader, date.timeIntervalSince1970])
        try Meta.set(db, .resyncThroughToken, db.lastInsertedRowID)
    }

    // MARK: - Following renames

    /// Decides which table each entity tracks now, after the host app renamed tables:
    /// 1. the table the model names (as installed by `init`), if it exists and holds no other
    ///    entity's triggers: a rename-aside migration (rename, create, copy) ends on it, and so
    ///    does a remake;
    /// 2. otherwise the table its triggers moved to (`RENAME TO` takes them along);
    /// 3. otherwise the table it tracked, if it still exists.
    /// No two entities ever end on one table. Returns the entities whose table now holds another
    /// entity's triggers (they are set aside), with that entity's name and the table.
    private static func followTables(_ model: inout SearchlightModel, declared declaredModel: SearchlightModel?, ids: [String: Int64],
                                     followed: inout [CaptureStatus.FollowedRename],
                                     at date: Date, _ db: Database) throws -> [String: (entity: String, table: String)] {
        var triggerTables: [String: String] = [:]
        for entity in model.entities {
            guard let id = ids[entity.name], let table = try String.fetchOne(db, sql: """
                SELECT "tbl_name" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" = ?
                """, arguments: ["searchlight_\(id)_insert"]) else { continue }
            triggerTables[entity.name] = table
        }
        func same(_ a: String, _ b: String) -> Bool { a.caseInsensitiveCompare(b) == .orderedSame }
        func owner(_ table: String) -> String? { triggerTables.first { same($0.value, table) }?.key }
        // The table `init` installed the entity with (before any rename was followed).
        func declared(_ entity: SearchlightModel.Entity) -> String {
            declaredModel?.entity(named: entity.name)?.table ?? entity.table
        }
        var chosen: [String: String] = [:]
        func isFree(_ table: String) -> Bool { !chosen.values.contains { same($0, table) } }
        for entity in model.entities {
            let name = declared(entity)
            if try tableExists(name, db), owner(name).map({ $0 == entity.name }) ?? true, isFree(name) { chosen[entity.name] = name }
        }
        for entity in model.entities where chosen[entity.name] == nil {
            if let table = triggerTables[entity.name], try tableExists(table, db), isFree(table) { chosen[entity.name] = table }
        }
        for entity in model.entities where chosen[entity.name] == nil {
            if try tableExists(entity.table, db), owner(entity.table).map({ $0 == entity.name }) ?? true, isFree(entity.table) {
                chosen[entity.name] = entity.table
            }
        }
        var taken: [String: (entity: String, table: String)] = [:]
        for index in model.entities.indices {
            let entity = model.entities[index]
            guard let table = chosen[entity.name] else {
                // Set aside under the name the model gives it; if another entity now tracks that
                // table, under its last name that is free (the model never names a table twice).
                let name = declared(entity)
                if let other = chosen.first(where: { same($0.value, name) })?.key {
                    taken[entity.name] = (other, name)
                    if !same(entity.table, name), isFree(entity.table) { continue }
                    // A placeholder no table has: the stored model stays valid.
                    model.entities[index].table = "\(name) (renamed)"
                } else {
                    model.entities[index].table = name
                }
                continue
            }
            if !same(table, entity.table) {
                followed.append(.init(entity: entity.name, kind: .table, from: entity.table, to: table, date: date))
                model.entities[index].table = table
            }
        }
        return taken
    }

    /// Follows renamed columns of `entity` (SQLite rewrote our triggers to the new names; their
    /// text says what the names are now). Returns what it followed, and whether the triggers were
    /// reading a column other than the one the model names, which does exist (a column renamed
    /// aside and its name given to another: what was written to that one went unrecorded).
    private static func followColumns(_ entity: inout SearchlightModel.Entity, id: Int64, at date: Date,
                                      _ db: Database) throws -> (renames: [CaptureStatus.FollowedRename], interrupted: Bool) {
        // Compared only with triggers of this release: older ones read other columns anyway.
        guard try Meta.get(db, .captureVersion, as: Int.self) == CaptureTriggers.version else { return ([], false) }
        var renames: [CaptureStatus.FollowedRename] = []
        let columns = Set(try tableColumns(entity.table, db).map { $0.name.lowercased() })
        // RENAME COLUMN rewrote every reference in our triggers: compare their text with what we
        // would install, identifier by identifier.
        var mapping: [String: String] = [:]
        var interrupted = false
        let collation = (try? keyCollation(entity, db)) ?? "BINARY"
        let expected = CaptureTriggers.render(entity: entity, entityID: id, trackedColumns: trackedColumns(entity), keyCollation: collation)
        for (name, sql) in expected.statements {
            guard let actual = try String.fetchOne(db, sql: #"SELECT "sql" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" = ?"#, arguments: [name]) else { continue }
            let old = quotedIdentifiers(sql), new = quotedIdentifiers(actual)
            guard old.count == new.count else { continue }
            for (before, after) in zip(old, new) where before.lowercased() != after.lowercased() {
                if !columns.contains(before.lowercased()) && columns.contains(after.lowercased()) {
                    mapping[before.lowercased()] = after
                } else if columns.contains(before.lowercased()) {
                    interrupted = true
                }
            }
        }
        let name = entity.name
        renameColumns(of: &entity) { column, _ in
            guard let to = mapping[column.lowercased()] else { return column }
            if !renames.contains(where: { $0.kind == .column && $0.from == column }) {
                renames.append(.init(entity: name, kind: .column, from: column, to: to, date: date))
            }
            return to
        }
        return (renames, interrupted)
    }

    /// Replaces every column name `entity` uses (key, fields, `preserveOnDelete`,
    /// `trackedColumns`) with what `rename` returns for it, given the name `declared` uses at the
    /// same place (nil if it has none there).
    private static func renameColumns(of entity: inout SearchlightModel.Entity, declared: SearchlightModel.Entity? = nil,
                                      _ rename: (_ column: String, _ declared: String?) -> String) {
        func at<T>(_ list: [T]?, _ index: Int, sameCountAs other: Int) -> T? {
            guard let list, list.count == other, list.indices.contains(index) else { return nil }
            return list[index]
        }
        entity.primaryKey = rename(entity.primaryKey, declared?.primaryKey)
        let fields = entity.fields.count
        for index in entity.fields.indices {
            entity.fields[index].column = rename(entity.fields[index].column, at(declared?.fields, index, sameCountAs: fields)?.column)
        }
        let preserved = entity.preserveOnDelete
        entity.preserveOnDelete = preserved.indices.map { rename(preserved[$0], at(declared?.preserveOnDelete, $0, sameCountAs: preserved.count)) }
        if let tracked = entity.trackedColumns {
            entity.trackedColumns = tracked.indices.map { rename(tracked[$0], at(declared?.trackedColumns, $0, sameCountAs: tracked.count)) }
        }
    }

    /// A column the model followed to a new name is gone, and the name `init` installed is back
    /// (renamed away and back, then the table remade or created again, with no heal between):
    /// go back to it, as for tables.
    private static func returnToDeclaredColumns(_ entity: inout SearchlightModel.Entity, declared: SearchlightModel.Entity,
                                                at date: Date, _ db: Database) throws -> [CaptureStatus.FollowedRename] {
        let columns = Set(try tableColumns(entity.table, db).map { $0.name.lowercased() })
        var renames: [CaptureStatus.FollowedRename] = []
        let name = entity.name
        renameColumns(of: &entity, declared: declared) { current, original in
            guard let original, !columns.contains(current.lowercased()), columns.contains(original.lowercased()) else { return current }
            renames.append(.init(entity: name, kind: .column, from: current, to: original, date: date))
            return original
        }
        return renames
    }

    /// The double-quoted identifiers of an SQL text, unquoted, in order.
    private static func quotedIdentifiers(_ sql: String) -> [String] {
        let characters = Array(sql)
        var result: [String] = []
        var index = 0
        while index < characters.count {
            guard characters[index] == "\"" else { index += 1; continue }
            var name = ""
            index += 1
            while index < characters.count {
                if characters[index] == "\"" {
                    // A doubled quote inside a quoted identifier is one quote.
                    guard index + 1 < characters.count, characters[index + 1] == "\"" else { break }
                    index += 1
                }
                name.append(characters[index])
                index += 1
            }
            result.append(name)
            index += 1
        }
        return result
    }

    // MARK: - Checking an entity against the schema

    /// An entity that fits its table: the columns whose updates it tracks and its key's collation.
    struct Checked {
        var entity: SearchlightModel.Entity
        var tracked: [String]
        var keyCollation: String
    }

    private static func tableExists(_ table: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM "sqlite_master" WHERE "type" = 'table' AND "name" = ? COLLATE NOCASE)
            """, arguments: [table]) ?? false
    }

    /// The columns of a table, generated ones included (hidden 2 and 3), in order.
    private static func tableColumns(_ table: String, _ db: Database) throws -> [(name: String, pk: Int)] {
        // The table name is bound as a value: nothing to quote, nothing to get wrong.
        try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid", arguments: [table])
            .map { ($0["name"], $0["pk"]) }
    }

    /// The collation of the entity's key (BINARY for an INTEGER PRIMARY KEY, which has no index).
    private static func keyCollation(_ entity: SearchlightModel.Entity, _ db: Database) throws -> String {
        try String.fetchOne(db, sql: """
            SELECT "x"."coll" FROM pragma_index_list(?1) AS "l", pragma_index_xinfo("l"."name") AS "x"
            WHERE "l"."origin" = 'pk' AND "x"."key" = 1 AND "x"."cid" >= 0
            """, arguments: [entity.table]) ?? "BINARY"
    }

    /// The columns whose updates `entity` records: what the model needs (its indexed fields),
    /// plus the `trackedColumns` it lists. Other columns are not referenced by the triggers, so
    /// that the app's migrations may drop or rename them.
    private static func trackedColumns(_ entity: SearchlightModel.Entity) -> [String] {
        var tracked = entity.trackedColumns ?? []
        for field in entity.fields where !tracked.contains(where: { $0.caseInsensitiveCompare(field.column) == .orderedSame }) {
            tracked.append(field.column)
        }
        return tracked
    }

    /// Checks one entity against the schema; throws `schemaMismatch` naming the problem.
    static func check(_ entity: SearchlightModel.Entity, _ db: Database) throws -> Checked {
        func fail(_ message: String) -> SearchlightError {
            SearchlightError(.schemaMismatch, "entity \"\(entity.name)\": \(message)")
        }
        let kind = try Row.fetchOne(db, sql: """
            SELECT "type", "sql" FROM "sqlite_master" WHERE "name" = ? COLLATE NOCASE AND "type" IN ('table', 'view')
            """, arguments: [entity.table])
        guard let kind else { throw fail("no table named \"\(entity.table)\" in the database") }
        if (kind["type"] as String) == "view" { throw fail("\"\(entity.table)\" is a view; only tables can be tracked") }
        if ((kind["sql"] as String?) ?? "").uppercased().hasPrefix("CREATE VIRTUAL") {
            throw fail("\"\(entity.table)\" is a virtual table; only ordinary tables can be tracked")
        }
        let tableInfo = try tableColumns(entity.table, db)
        let columns = tableInfo.map(\.name)
        let keyColumns = tableInfo.filter { $0.pk > 0 }.map(\.name)
        func resolve(_ name: String, _ role: String) throws -> String {
            guard let column = columns.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw fail("\(role) \"\(name)\" is not a column of table \"\(entity.table)\" (columns: \(columns.joined(separator: ", ")))")
            }
            return column
        }
        if keyColumns.count > 1 {
            throw fail("table \"\(entity.table)\" has a composite primary key (\(keyColumns.joined(separator: ", "))); only single-column keys are supported")
        }
        if keyColumns.isEmpty {
            throw fail("table \"\(entity.table)\" has no declared primary key; declare an INTEGER PRIMARY KEY or TEXT PRIMARY KEY column (a bare rowid can change on VACUUM)")
        }
        let key = try resolve(entity.primaryKey, "primaryKey")
        guard keyColumns[0].caseInsensitiveCompare(key) == .orderedSame else {
            throw fail("primaryKey \"\(entity.primaryKey)\" is not the primary key of table \"\(entity.table)\" (which is \"\(keyColumns[0])\")")
        }
        let collation = try keyCollation(entity, db)
        guard ["BINARY", "NOCASE", "RTRIM"].contains(collation.uppercased()) else {
            throw fail("primary key \"\(key)\" uses the collation \"\(collation)\", which the application defines; Searchlight compares keys with SQLite's built-in collations only (BINARY, NOCASE, RTRIM)")
        }
        for field in entity.fields { _ = try resolve(field.column, "field") }
        for column in entity.preserveOnDelete { _ = try resolve(column, "preserveOnDelete column") }
        // Indexed fields are always tracked: an update of one that history did not record would
        // never reach the index (issue 10, bug 8).
        let tracked = try trackedColumns(entity).map { try resolve($0, "tracked column") }
        return Checked(entity: entity, tracked: tracked, keyCollation: collation)
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
