import Foundation
import GRDB

/// Renders the capture triggers of one entity from ``template``.
///
/// The triggers use core SQLite only (no application-defined functions), so that every writer
/// is recorded: this library, another process, or the `sqlite3` shell. `Schemas/triggers.sql`
/// holds the same template, and a test checks that the two are identical.
///
/// History is one append-only table, `searchlight_log`: a transaction is a header row (type 0,
/// whose id is the token) followed by its change rows. A write made through
/// ``HistoryStore/write(author:context:_:)`` first appends its header (author, context, process
/// id) with `open = 1`, and clears `open` before commit. A change made by any other writer finds
/// no open transaction, so a BEFORE trigger opens one of its own, with no author (one per row:
/// SQLite has no statement-level triggers, and a trigger cannot see where a foreign transaction
/// ends). SQLite serializes writers, so the newest header is always the current transaction,
/// tokens grow in commit order, and a transaction's rows share the log's last page: tracking
/// costs a small write one more page.
package struct CaptureTriggers {
    /// The trigger template. Placeholders:
    /// - `{{id}}`: the entity id (an integer from `searchlight_entity`)
    /// - `{{table}}`, `{{key}}`: the quoted table and primary-key column
    /// - `{{not_open}}`: true unless the newest transaction is an open API write
    /// - `{{open_transaction}}`: the statement that opens an authorless transaction
    /// - `{{token}}`: the expression that yields the current transaction's token
    /// - `{{changed}}`: true when a tracked column changed (`OLD."c" IS NOT NEW."c" OR …`)
    /// - `{{updated_columns}}`: a JSON array of the columns that changed
    /// - `{{old_tombstone}}`, `{{row_tombstone}}`: a JSON object of the `preserveOnDelete` values
    /// - `{{replaced_is_new}}`, `{{replaced_is_old}}`: a scratch row of `searchlight_replaced`
    ///   holds the key `NEW."k"` (or `OLD."k"`), compared with the key column's collation (so
    ///   that `'A'` replacing `'a'` in a NOCASE key finds the row it replaced). The key is
    ///   written `+NEW."k"`: the unary plus drops the column's affinity, so the comparison has
    ///   none either, as `object_id` has none, and SQLite can answer it through the scratch
    ///   table's primary key (BINARY keys) or its NOCASE and RTRIM indexes. With the affinity of
    ///   an INTEGER or REAL key, the comparison could use no index, and every lookup read every
    ///   scratch row of the entity. The values compare the same: `object_id` holds values of the
    ///   key column, which already have its affinity, and 1 still equals 1.0.
    package static let template = #"""
    -- Searchlight capture triggers: the set installed on each tracked table.
    -- A BEFORE trigger opens a transaction with no author unless the newest transaction is an
    -- open HistoryStore.write; the AFTER triggers then record into the newest token.
    -- Values are compared byte for byte (COLLATE BINARY) and by type, whatever the columns'
    -- collations: a NOCASE column changed only in case, or 1 changed to 1.0, is a change. Keys are
    -- compared byte for byte (a case-only rename is a delete and an insert); 1 and 1.0 are one key.
    -- A scratch row of searchlight_replaced (the row an INSERT OR REPLACE, an UPSERT or an
    -- UPDATE OR REPLACE overwrote) lives until its key is next updated or deleted, or until
    -- cleanup runs (deleting it here on every insert cost single-row writes 8%). Scratch keys
    -- compare with the key column's collation, and without its affinity (+NEW."k"), so that
    -- the scratch table's primary key or its NOCASE or RTRIM index finds them.

    CREATE TRIGGER "searchlight_{{id}}_insert_opens" BEFORE INSERT ON {{table}}
    WHEN {{not_open}}
    BEGIN
      {{open_transaction}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert_replaces" BEFORE INSERT ON {{table}}
    WHEN EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = NEW.{{key}})
    BEGIN
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
      INSERT OR REPLACE INTO "searchlight_replaced"("entity_id", "object_id", "tombstone")
        SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}} WHERE {{key}} = NEW.{{key}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert" AFTER INSERT ON {{table}}
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
        SELECT {{token}}, 3, {{id}}, "object_id", "tombstone" FROM "searchlight_replaced"
        WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id")
        VALUES ({{token}}, 1, {{id}}, NEW.{{key}});
    END;

    CREATE TRIGGER "searchlight_{{id}}_update_opens" BEFORE UPDATE ON {{table}}
    WHEN {{not_open}} AND (OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY OR {{changed}})
    BEGIN
      {{open_transaction}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_rekey_replaces" BEFORE UPDATE ON {{table}}
    WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
      AND EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY)
    BEGIN
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
      INSERT OR REPLACE INTO "searchlight_replaced"("entity_id", "object_id", "tombstone")
        SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}}
        WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY;
    END;

    CREATE TRIGGER "searchlight_{{id}}_update" AFTER UPDATE ON {{table}}
    WHEN OLD.{{key}} IS NEW.{{key}} COLLATE BINARY AND ({{changed}})
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "updated_columns")
        VALUES ({{token}}, 2, {{id}}, NEW.{{key}}, {{updated_columns}});
    END;

    CREATE TRIGGER "searchlight_{{id}}_rekey" AFTER UPDATE ON {{table}}
    WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
        SELECT {{token}}, 3, {{id}}, "object_id", "tombstone" FROM "searchlight_replaced"
        WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
        VALUES ({{token}}, 3, {{id}}, OLD.{{key}}, {{old_tombstone}}), ({{token}}, 1, {{id}}, NEW.{{key}}, NULL);
      -- Two statements, not one with OR: SQLite 3.40.1 answers that OR through the BINARY primary
      -- key even when the comparison is NOCASE, and misses the row.
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_old}};
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_update_clears" AFTER UPDATE ON {{table}}
    WHEN OLD.{{key}} IS NEW.{{key}} COLLATE BINARY
      AND EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}})
    BEGIN
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_delete_opens" BEFORE DELETE ON {{table}}
    WHEN {{not_open}}
    BEGIN
      {{open_transaction}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_delete" AFTER DELETE ON {{table}}
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
        VALUES ({{token}}, 3, {{id}}, OLD.{{key}}, {{old_tombstone}});
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_old}};
    END;

    """#

    /// The version of ``template``: a store opened on a database whose triggers are older
    /// reinstalls them from the stored model.
    package static let version = 5

    /// The token of the transaction a trigger records into: the newest log row's.
    static let tokenExpression = #"(SELECT "token" FROM "searchlight_log" ORDER BY "id" DESC LIMIT 1)"#

    /// True unless the newest transaction is an open API write.
    static let notOpenCondition = #"(SELECT "open" FROM "searchlight_log" WHERE "id" = (SELECT "token" FROM "searchlight_log" ORDER BY "id" DESC LIMIT 1)) IS NULL"#

    /// Opens a transaction with no author: appends its header row, whose id is its token.
    ///
    /// It runs in a BEFORE trigger, as `INSERT … VALUES`: a statement that reads the table it
    /// inserts into through a SELECT (as a "WHERE NOT EXISTS" guard would) makes SQLite copy
    /// its rows through a temporary table, which tripled the cost of a bulk insert. If the row
    /// is then ignored (`INSERT OR IGNORE` by another writer), the transaction has no changes.
    static let openTransactionStatement = """
        INSERT INTO "searchlight_log"("id", "token", "type", "timestamp")
            VALUES (\(nextTokenExpression), \(nextTokenExpression), \(LogRowType.transactionHeader.rawValue), (julianday('now') - 2440587.5) * 86400.0)
        """

    /// The next token: above every log row that exists or that cleanup ever deleted, so
    /// tokens are never reused (without AUTOINCREMENT, whose `sqlite_sequence` update would
    /// cost every write another page).
    package static let nextTokenExpression = #"""
        (SELECT max(coalesce(max("id"), 0), coalesce((SELECT "value" FROM "searchlight_meta" WHERE "key" = \#(SQLQuoting.literal(MetaKey.purgedThroughToken.rawValue))), 0)) + 1 FROM "searchlight_log")
        """#

    /// The trigger statements of one entity, keyed by trigger name.
    package struct Rendered {
        package var statements: [(name: String, sql: String)]
    }

    /// Renders the triggers of `entity`, whose id is `entityID`, recording updates of
    /// `trackedColumns`; `keyCollation` is the key column's collation (`BINARY`, `NOCASE`, `RTRIM`).
    package static func render(entity: SearchlightModel.Entity, entityID: Int64, trackedColumns: [String], keyCollation: String = "BINARY") -> Rendered {
        let key = SQLQuoting.identifier(entity.primaryKey)
        // BINARY keys keep the plain comparison, which the scratch table's primary key serves.
        let collate = keyCollation.uppercased() == "BINARY" ? "" : " COLLATE \(SQLQuoting.identifier(keyCollation))"
        let tracked = trackedColumns.filter { $0.caseInsensitiveCompare(entity.primaryKey) != .orderedSame }
        func differs(_ column: String) -> String {
            let c = SQLQuoting.identifier(column)
            return "OLD.\(c) IS NOT NEW.\(c) COLLATE BINARY OR typeof(OLD.\(c)) IS NOT typeof(NEW.\(c))"
        }
        let changed = tracked.isEmpty ? "0" : tracked.map(differs).joined(separator: " OR ")
        let updatedColumns = tracked.isEmpty
            ? "'[]'"
            : "'[' || substr(" + tracked.map { column in
                let jsonName = String(decoding: (try? JSONEncoder().encode(column)) ?? Data(), as: UTF8.self)
                return "CASE WHEN \(differs(column)) THEN \(SQLQuoting.literal("," + jsonName)) ELSE '' END"
            }.joined(separator: " || ") + ", 2) || ']'"
        func tombstone(_ prefix: String) -> String {
            guard !entity.preserveOnDelete.isEmpty else { return "NULL" }
            return "json_object(" + entity.preserveOnDelete.map { column in
                let value = prefix + SQLQuoting.identifier(column)
                // A BLOB as its hex text; an infinite REAL as its text ('Inf'): this SQLite's
                // json_object writes a bare Inf, which is no JSON, and no reader could go past it.
                return "\(SQLQuoting.literal(column)), CASE typeof(\(value)) WHEN 'blob' THEN hex(\(value)) "
                    + "WHEN 'real' THEN CASE WHEN abs(\(value)) > 1.7976931348623157e308 THEN CAST(\(value) AS TEXT) ELSE \(value) END "
                    + "ELSE \(value) END"
            }.joined(separator: ", ") + ")"
        }
        let sql = renderTemplate(template, [
            "token": tokenExpression,
            "open_transaction": openTransactionStatement,
            "not_open": notOpenCondition,
            "changed": changed,
            "updated_columns": updatedColumns,
            "old_tombstone": tombstone("OLD."),
            "row_tombstone": tombstone(""),
            "table": SQLQuoting.identifier(entity.table),
            "key": key,
            "replaced_is_new": "\"object_id\" = +NEW.\(key)\(collate)",
            "replaced_is_old": "\"object_id\" = +OLD.\(key)\(collate)",
            "id": String(entityID),
        ])
        let statements = sql.components(separatedBy: "\nEND;")
            .map { $0.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n") }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
            .map { $0 + "\nEND" }
        return Rendered(statements: statements.map { statement in
            // CREATE TRIGGER "searchlight_<id>_<kind>" …
            let name = statement.split(separator: "\"", maxSplits: 2)[1]
            return (String(name), statement)
        })
    }

    /// Substitutes `{{name}}` placeholders in one pass, so that a substituted value (a hostile
    /// column named `{{id}}`, say) is never expanded again.
    static func renderTemplate(_ template: String, _ values: [String: String]) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            output += values[name] ?? "{{\(name)}}"
            rest = rest[close.upperBound...]
        }
        return output + rest
    }
}
