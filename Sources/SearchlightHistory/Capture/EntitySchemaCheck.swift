import Foundation
import GRDB

/// An entity that fits its table: checked against the schema (a table, not a view; a single
/// declared primary key with a built-in collation; every named column present), with the
/// columns whose updates its triggers record and its key's collation.
struct EntitySchemaCheck {
    var entity: SearchlightModel.Entity
    var tracked: [String]
    var keyCollation: String
    /// The table's unique keys besides its primary key that the capture triggers watch (see
    /// ``CaptureTriggers/conflictTemplate``).
    var uniqueKeys: [CaptureTriggers.UniqueKey] = []
    /// The table has a rowid that is not its key (a rowid table whose key is not an INTEGER
    /// PRIMARY KEY): an `INSERT OR REPLACE` naming the rowid can delete another row.
    var separateRowid = false
    /// The table has generated columns: an update of what they read changes them without
    /// naming them, so its update triggers run on every update.
    var generatedColumns = false

    static func tableExists(_ table: String, _ db: Database) throws -> Bool {
        try db.tableExistsInCurrentSchema(table)
    }

    /// The columns of a table, generated ones included (hidden 2 and 3), in order.
    static func tableColumns(_ table: String, _ db: Database) throws -> [(name: String, pk: Int)] {
        // The table name is bound as a value: nothing to quote, nothing to get wrong.
        try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid", arguments: [table])
            .map { ($0["name"], $0["pk"]) }
    }

    /// Whether `table` has generated columns (hidden 2 and 3 in `table_xinfo`): a fact of the
    /// table that no rename changes.
    static func hasGeneratedColumns(_ table: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3))", arguments: [table]) ?? false
    }

    /// The collation of the entity's key (BINARY for an INTEGER PRIMARY KEY, which has no index).
    static func keyCollation(_ entity: SearchlightModel.Entity, _ db: Database) throws -> String {
        try String.fetchOne(db, sql: """
            SELECT "x"."coll" FROM pragma_index_list(?1) AS "l", pragma_index_xinfo("l"."name") AS "x"
            WHERE "l"."origin" = 'pk' AND "x"."key" = 1 AND "x"."cid" >= 0
            """, arguments: [entity.table]) ?? "BINARY"
    }

    /// The columns whose updates `entity` records: what the model needs (its indexed fields and
    /// its attributes' columns), plus the `trackedColumns` it lists. Other columns are not referenced by the triggers, so
    /// that the app's migrations may drop or rename them.
    static func trackedColumns(_ entity: SearchlightModel.Entity) -> [String] {
        var tracked = entity.trackedColumns ?? []
        for field in entity.fields where !tracked.contains(where: { $0.caseInsensitiveCompare(field.column) == .orderedSame }) {
            tracked.append(field.column)
        }
        for attribute in entity.attributes where !tracked.contains(where: { $0.caseInsensitiveCompare(attribute.column) == .orderedSame }) {
            tracked.append(attribute.column)
        }
        return tracked
    }

    /// Checks one entity against the schema; throws `schemaMismatch` naming the problem.
    static func check(_ entity: SearchlightModel.Entity, _ db: Database) throws -> EntitySchemaCheck {
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
        for attribute in entity.attributes { _ = try resolve(attribute.column, "attribute column") }
        for column in entity.preserveOnDelete { _ = try resolve(column, "preserveOnDelete column") }
        // Indexed fields are always tracked: an update of one that history did not record would
        // never reach the index.
        let tracked = try trackedColumns(entity).map { try resolve($0, "tracked column") }
        let unique = try uniqueKeys(entity.table, db)
        let rowid = try hasSeparateRowid(entity.table, columns: columns, db)
        return EntitySchemaCheck(entity: entity, tracked: tracked, keyCollation: collation, uniqueKeys: unique, separateRowid: rowid,
                                 generatedColumns: try hasGeneratedColumns(entity.table, db))
    }

    /// The unique keys of `table` besides its primary key (UNIQUE constraints and unique
    /// indexes, partial ones included), each as its columns and their collations; a term on an
    /// expression carries the expression as written in its `CREATE INDEX`. A key on the rowid, or
    /// compared with a collation the application defines (which another process's writer would
    /// not have), is left out: its collisions are not recorded. A partial index's key carries
    /// its `WHERE` as written in its `CREATE INDEX`.
    static func uniqueKeys(_ table: String, _ db: Database) throws -> [CaptureTriggers.UniqueKey] {
        let indexes = try Row.fetchAll(db, sql: """
            SELECT "l"."name", "l"."partial", "m"."sql" FROM pragma_index_list(?) AS "l"
            LEFT JOIN "sqlite_master" AS "m" ON "m"."type" = 'index' AND "m"."name" = "l"."name"
            WHERE "l"."unique" = 1 AND "l"."origin" <> 'pk' ORDER BY "l"."name"
            """, arguments: [table])
        var keys: [CaptureTriggers.UniqueKey] = []
        for row in indexes {
            let index: String = row["name"]
            let columns = try Row.fetchAll(db, sql: """
                SELECT "cid", "name", "coll" FROM pragma_index_xinfo(?) WHERE "key" = 1 ORDER BY "seqno"
                """, arguments: [index])
            guard !columns.isEmpty, columns.allSatisfy({ ["BINARY", "NOCASE", "RTRIM"].contains(($0["coll"] as String? ?? "BINARY").uppercased()) }) else { continue }
            // A term on an expression (cid -2) is read from the index's CREATE INDEX, as written;
            // one on the rowid (cid -1), or one that cannot be read, leaves the key out.
            let terms = (row["sql"] as String?).flatMap(indexTerms)
            var uniqueColumns: [CaptureTriggers.UniqueColumn] = []
            for (position, column) in columns.enumerated() {
                let collation = (column["coll"] as String? ?? "BINARY").uppercased()
                switch column["cid"] as Int {
                case 0...: uniqueColumns.append(.init(name: column["name"], collation: collation))
                case -2:
                    guard let terms, terms.count == columns.count else { break }
                    uniqueColumns.append(.init(name: "", collation: collation, expression: terms[position]))
                default: break
                }
            }
            guard uniqueColumns.count == columns.count else { continue }
            let isPartial = (row["partial"] as Int?) == 1
            // The columns the expressions name (only those: a trigger that names a column keeps
            // the app from dropping it, and a dropped column's name in a trigger fails the
            // migration).
            let expressions = uniqueColumns.compactMap(\.expression)
            let tableColumns = expressions.isEmpty ? [] : try Self.tableColumns(table, db).map(\.name)
                .filter { column in expressions.contains { identifiers(in: $0).contains(column.lowercased()) } }
            let key = CaptureTriggers.UniqueKey(
                columns: uniqueColumns,
                condition: isPartial ? (row["sql"] as String?).flatMap(partialIndexCondition) : nil,
                isPartial: isPartial, tableColumns: tableColumns)
            if !keys.contains(key) { keys.append(key) }
        }
        return keys
    }

    /// The identifiers an SQL expression may name, lowercased: its bare words and its quoted
    /// names (`"a""b"`, `` `c` ``, `[d]`), string literals left out. A function's name comes
    /// along with the columns; the caller keeps the names of the table's columns.
    static func identifiers(in expression: String) -> Set<String> {
        var names: Set<String> = []
        var characters = Array(expression)[...]
        while let character = characters.first {
            if character == "'" {
                // A string literal: skipped ('' is a quote inside it).
                characters = characters.dropFirst()
                while let next = characters.first {
                    characters = characters.dropFirst()
                    if next == "'" { if characters.first == "'" { characters = characters.dropFirst() } else { break } }
                }
            } else if character == "\"" || character == "`" || character == "[" {
                let close: Character = character == "[" ? "]" : character
                characters = characters.dropFirst()
                var name = ""
                while let next = characters.first {
                    characters = characters.dropFirst()
                    if next == close {
                        if close != "]", characters.first == close { name.append(close); characters = characters.dropFirst() } else { break }
                    } else {
                        name.append(next)
                    }
                }
                names.insert(name.lowercased())
            } else if character.isLetter || character == "_" {
                let word = characters.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
                names.insert(String(word).lowercased())
                characters = characters.dropFirst(word.count)
            } else {
                characters = characters.dropFirst()
            }
        }
        return names
    }

    /// The column list of a `CREATE INDEX … ON t(term, …) [WHERE expr]` statement, read with
    /// quotes and parentheses respected: its terms as written, and what follows the list. nil
    /// when there is no list.
    private static func indexList(_ sql: String) -> (terms: [String], rest: Substring)? {
        var depth = 0
        var quote: Character?
        var terms: [String] = []
        var current = ""
        var index = sql.startIndex
        while index < sql.endIndex {
            let character = sql[index]
            index = sql.index(after: index)
            if let open = quote {
                if character == (open == "[" ? "]" : open) { quote = nil }
            } else if character == "\"" || character == "'" || character == "`" || character == "[" {
                quote = character
            } else if character == "(" {
                depth += 1
                if depth == 1 { continue }
            } else if character == ")" {
                depth -= 1
                if depth == 0 {
                    terms.append(current)
                    return (terms, sql[index...])
                }
            } else if character == ",", depth == 1 {
                terms.append(current)
                current = ""
                continue
            }
            if depth >= 1 { current.append(character) }
        }
        return nil
    }

    /// The terms of a `CREATE INDEX … ON t(term, …)` statement's list, as written, each without a
    /// trailing `ASC`, `DESC` or `COLLATE name` (the collation is read from SQLite); nil when
    /// the list cannot be read.
    static func indexTerms(_ sql: String) -> [String]? {
        guard let terms = indexList(sql)?.terms, !terms.isEmpty else { return nil }
        return terms.map { term in
            term.trimmingCharacters(in: .whitespacesAndNewlines)
                .replacing(#/(?i)\s+(ASC|DESC)$/#, with: "")
                .replacing(#/(?i)\s+COLLATE\s+("[^"]*"|\S+)$/#, with: "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The `WHERE` expression of a `CREATE INDEX … ON t(…) WHERE expr` statement: what follows
    /// the column list. nil when there is none.
    static func partialIndexCondition(_ sql: String) -> String? {
        guard let rest = indexList(sql)?.rest.drop(while: \.isWhitespace) else { return nil }
        guard rest.prefix(5).uppercased() == "WHERE", let next = rest.dropFirst(5).first, next.isWhitespace || next == "(" else { return nil }
        let condition = rest.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)
        return condition.isEmpty ? nil : condition
    }

    /// Whether `table` is a rowid table whose key is not its rowid, and no column hides the
    /// rowid's name.
    static func hasSeparateRowid(_ table: String, columns: [String], _ db: Database) throws -> Bool {
        if columns.contains(where: { ["rowid", "oid", "_rowid_"].contains($0.lowercased()) }) { return false }
        // A WITHOUT ROWID table has no rowid to select.
        guard (try? db.makeStatement(sql: "SELECT \"rowid\" FROM \(SQLQuoting.identifier(table)) LIMIT 0")) != nil else { return false }
        // An INTEGER PRIMARY KEY is the rowid, and has no index of its own.
        return try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM pragma_index_list(?) WHERE "origin" = 'pk')
            """, arguments: [table]) ?? false
    }
}
