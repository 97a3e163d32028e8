import Foundation
import GRDB

/// Checks a model against the database and installs, updates or removes capture triggers.
///
/// Runs inside the caller's write transaction: on any error the transaction rolls back and
/// nothing is half-installed.
package struct CaptureInstaller {
    package let model: SearchlightModel

    package init(model: SearchlightModel) { self.model = model }

    /// Validates the model against the schema, applies migrations, registers entities and
    /// (re)installs their triggers. Triggers of entities no longer in the model are dropped.
    package func install(_ db: Database) throws {
        let checked = try model.entities.map { try check($0, db) }
        try HistorySchema.migrate(db)

        var wanted: [String: String] = [:]
        for (entity, tracked) in checked {
            let id = try entityID(for: entity, db)
            let rendered = CaptureTriggers.render(entity: entity, entityID: id, trackedColumns: tracked)
            for (name, sql) in rendered.statements { wanted[name] = sql }
        }
        let existing = try Row.fetchAll(db, sql: """
            SELECT "name", "sql" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" GLOB 'searchlight_*'
            """)
        var current: [String: String] = [:]
        for row in existing { current[row["name"]] = row["sql"] }
        for (name, sql) in current where wanted[name] != sql {
            try db.execute(sql: "DROP TRIGGER \(SQLQuoting.identifier(name))")
        }
        for (name, sql) in wanted.sorted(by: { $0.key < $1.key }) where current[name] != sql {
            try db.execute(sql: sql)
        }
        try Meta.set(db, .captureVersion, CaptureTriggers.version)
        let json = String(decoding: model.jsonData(), as: UTF8.self)
        if try Meta.get(db, .model, as: String.self) != json {
            try Meta.set(db, .model, json)
            try Meta.set(db, .modelRevision, (try Meta.get(db, .modelRevision, as: Int64.self) ?? 0) + 1)
        }
    }

    /// Why the installed triggers must be installed again, if they must.
    package enum Reinstall {
        /// They are older than this library's: nothing was missed.
        case outdated
        /// Some are missing (their table was remade by a migration tool, say): changes made
        /// while they were missing were not recorded.
        case missing
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

    /// Whether the store must reinstall the triggers when it opens, and why.
    package static func reinstallNeeded(_ model: SearchlightModel, _ db: Database) throws -> Reinstall? {
        // Every release installs "searchlight_<entity id>_insert" on each tracked table: an entity
        // without it lost its triggers (its table was dropped); one of an older release, merely
        // outdated triggers.
        let names = model.entities.map(\.name)
        let lost = try Int.fetchOne(db, sql: """
            SELECT count(*) FROM "searchlight_entity" "e" WHERE "e"."name" IN (\(databaseQuestionMarks(count: names.count)))
            AND NOT EXISTS (SELECT 1 FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" = 'searchlight_' || "e"."id" || '_insert')
            """, arguments: StatementArguments(names)) ?? 0
        if lost > 0 { return .missing }
        if try Meta.get(db, .captureVersion, as: Int.self) != CaptureTriggers.version { return .outdated }
        // This release's triggers: all of them must be there.
        let installed = try Int.fetchOne(db, sql: """
            SELECT count(*) FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" GLOB 'searchlight_*'
            """) ?? 0
        let perEntity = CaptureTriggers.template.components(separatedBy: "CREATE TRIGGER").count - 1
        return installed < perEntity * model.entities.count ? .missing : nil
    }

    /// The entity's stable id, registering it on first use.
    private func entityID(for entity: SearchlightModel.Entity, _ db: Database) throws -> Int64 {
        if let id = try Int64.fetchOne(db, sql: #"SELECT "id" FROM "searchlight_entity" WHERE "name" = ?"#, arguments: [entity.name]) {
            try db.execute(sql: #"UPDATE "searchlight_entity" SET "table_name" = ? WHERE "id" = ?"#, arguments: [entity.table, id])
            return id
        }
        try db.execute(sql: #"INSERT INTO "searchlight_entity"("name", "table_name") VALUES (?, ?)"#, arguments: [entity.name, entity.table])
        return db.lastInsertedRowID
    }

    /// Checks one entity against the schema and returns the columns whose updates it tracks.
    private func check(_ entity: SearchlightModel.Entity, _ db: Database) throws -> (SearchlightModel.Entity, [String]) {
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
        // The table name is bound as a value: nothing to quote, nothing to get wrong.
        let tableInfo = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [entity.table])
        let columns: [String] = tableInfo.map { $0["name"] }
        let keyColumns: [String] = tableInfo.filter { ($0["pk"] as Int) > 0 }.map { $0["name"] }
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
        for field in entity.fields { _ = try resolve(field.column, "field") }
        for column in entity.preserveOnDelete { _ = try resolve(column, "preserveOnDelete column") }
        // Indexed fields are always tracked: an update of one that history did not record would
        // never reach the index (issue 10, bug 8).
        let tracked = try entity.trackedColumns.map { names in
            var tracked = try names.map { try resolve($0, "tracked column") }
            for field in entity.fields {
                let column = try resolve(field.column, "field")
                if !tracked.contains(where: { $0.caseInsensitiveCompare(column) == .orderedSame }) { tracked.append(column) }
            }
            return tracked
        } ?? columns
        return (entity, tracked)
    }
}
