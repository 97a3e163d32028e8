import Foundation
import GRDB

/// Follows the host app's renames of tracked tables and columns, for ``CaptureInstaller/heal(_:at:)``:
/// SQLite moves and rewrites our triggers on `RENAME TO` and `RENAME COLUMN`, so the triggers say
/// where an entity's table and columns went; the model the user installed wins whenever its
/// names exist again.
enum RenameFollower {
    /// Decides which table each entity tracks now, after the host app renamed tables:
    /// 1. the table the model names (as installed by `init`), if it exists and holds no other
    ///    entity's triggers: a rename-aside migration (rename, create, copy) ends on it, and so
    ///    does a remake;
    /// 2. otherwise the table its triggers moved to (`RENAME TO` takes them along);
    /// 3. otherwise the table it tracked, if it still exists.
    /// No two entities ever end on one table. Returns the entities whose table now holds another
    /// entity's triggers (they are set aside), with that entity's name and the table.
    static func followTables(_ model: inout SearchlightModel, declared declaredModel: SearchlightModel?, ids: [String: Int64],
                                     followed: inout [CaptureStatus.FollowedRename],
                                     at date: Date, _ db: Database) throws -> [String: (entity: String, table: String)] {
        var triggerTables: [String: String] = [:]
        for entity in model.entities {
            guard let id = ids[entity.name], let table = try String.fetchOne(db, sql: """
                SELECT "tbl_name" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" IN (?, ?) ORDER BY "name" DESC LIMIT 1
                """, arguments: ["searchlight_\(id)_insert_row", "searchlight_\(id)_insert"]) else { continue }
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
            if try EntitySchemaCheck.tableExists(name, db), owner(name).map({ $0 == entity.name }) ?? true, isFree(name) { chosen[entity.name] = name }
        }
        for entity in model.entities where chosen[entity.name] == nil {
            if let table = triggerTables[entity.name], try EntitySchemaCheck.tableExists(table, db), isFree(table) { chosen[entity.name] = table }
        }
        for entity in model.entities where chosen[entity.name] == nil {
            if try EntitySchemaCheck.tableExists(entity.table, db), owner(entity.table).map({ $0 == entity.name }) ?? true, isFree(entity.table) {
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
    static func followColumns(_ entity: inout SearchlightModel.Entity, id: Int64, at date: Date,
                                      _ db: Database) throws -> (renames: [CaptureStatus.FollowedRename], interrupted: Bool) {
        // Compared only with triggers of this release: older ones read other columns anyway.
        guard try Meta.get(db, .captureVersion, as: Int.self) == CaptureTriggers.version else { return ([], false) }
        var renames: [CaptureStatus.FollowedRename] = []
        let columns = Set(try EntitySchemaCheck.tableColumns(entity.table, db).map { $0.name.lowercased() })
        // RENAME COLUMN rewrote every reference in our triggers: compare their text with what we
        // would install, identifier by identifier.
        var mapping: [String: String] = [:]
        var interrupted = false
        let collation = (try? EntitySchemaCheck.keyCollation(entity, db)) ?? "BINARY"
        let expected = CaptureTriggers.render(entity: entity, entityID: id, trackedColumns: EntitySchemaCheck.trackedColumns(entity), keyCollation: collation,
                                              generatedColumns: (try? EntitySchemaCheck.hasGeneratedColumns(entity.table, db)) ?? false)
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
        // A column renamed onto a name the model still uses for another column (`a` to `z`,
        // then `b` to `a`) is not followed there: the model's names win, and the two would be
        // one column.
        var kept = Set<String>()
        var probe = entity
        renameColumns(of: &probe) { column, _ in
            if mapping[column.lowercased()] == nil { kept.insert(column.lowercased()) }
            return column
        }
        mapping = mapping.filter { !kept.contains($0.value.lowercased()) }
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
    /// `trackedColumns`, attributes' columns) with what `rename` returns for it, given the name `declared` uses at the
    /// same place (nil if it has none there).
    static func renameColumns(of entity: inout SearchlightModel.Entity, declared: SearchlightModel.Entity? = nil,
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
        // An attribute's name (what filters say) stays; only its column follows.
        let attributes = entity.attributes.count
        for index in entity.attributes.indices {
            entity.attributes[index].column = rename(entity.attributes[index].column,
                                                     at(declared?.attributes, index, sameCountAs: attributes)?.column)
        }
    }

    /// A column the model followed to a new name is gone, and the name `init` installed is back
    /// (renamed away and back, then the table remade or created again, with no heal between):
    /// go back to it, as for tables.
    static func returnToDeclaredColumns(_ entity: inout SearchlightModel.Entity, declared: SearchlightModel.Entity,
                                                at date: Date, _ db: Database) throws -> [CaptureStatus.FollowedRename] {
        let columns = Set(try EntitySchemaCheck.tableColumns(entity.table, db).map { $0.name.lowercased() })
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
    static func quotedIdentifiers(_ sql: String) -> [String] {
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
}
