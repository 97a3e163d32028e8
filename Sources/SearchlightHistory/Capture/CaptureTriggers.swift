import Foundation
import GRDB

/// Renders the capture triggers of one entity from ``template``.
///
/// The triggers use core SQLite only (no application-defined functions), so that every writer
/// is recorded: this library, another process, or the `sqlite3` shell. `Schemas/triggers.sql`
/// holds the same template, and a test checks that the two are identical.
///
/// How a change finds its transaction: a write made through ``HistoryStore/write(author:context:_:)``
/// first inserts its `searchlight_transaction` row (author, context, process id) and points
/// `searchlight_active_transaction` at it; that pointer is removed before commit. A change made
/// by any other writer finds no pointer, so the trigger opens a transaction of its own, with no
/// author. SQLite serializes writers, so `AUTOINCREMENT` tokens grow in commit order.
package struct CaptureTriggers {
    /// The trigger template. Placeholders:
    /// - `{{id}}`: the entity id (an integer from `searchlight_entity`)
    /// - `{{table}}`, `{{key}}`: the quoted table and primary-key column
    /// - `{{token}}`: the expression that yields the current transaction's token
    /// - `{{changed}}`: true when a tracked column changed (`OLD."c" IS NOT NEW."c" OR …`)
    /// - `{{updated_columns}}`: a JSON array of the columns that changed
    /// - `{{old_tombstone}}`, `{{row_tombstone}}`: a JSON object of the `preserveOnDelete` values
    package static let template = #"""
    -- Searchlight capture triggers: the set installed on each tracked table.
    -- A change made outside HistoryStore.write opens a transaction of its own (no author).

    CREATE TRIGGER "searchlight_{{id}}_before_insert" BEFORE INSERT ON {{table}}
    WHEN EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = NEW.{{key}})
    BEGIN
      INSERT OR REPLACE INTO "searchlight_replaced"("entity_id", "object_id", "tombstone")
        SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}} WHERE {{key}} = NEW.{{key}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert" AFTER INSERT ON {{table}}
    BEGIN
      INSERT INTO "searchlight_transaction"("timestamp")
        SELECT (julianday('now') - 2440587.5) * 86400.0
        WHERE NOT EXISTS (SELECT 1 FROM "searchlight_active_transaction");
      INSERT INTO "searchlight_change"("token", "entity_id", "object_id", "type", "tombstone")
        SELECT {{token}}, "entity_id", "object_id", 3, "tombstone" FROM "searchlight_replaced"
        WHERE "entity_id" = {{id}} AND "object_id" = NEW.{{key}};
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND "object_id" = NEW.{{key}};
      INSERT INTO "searchlight_change"("token", "entity_id", "object_id", "type")
        VALUES ({{token}}, {{id}}, NEW.{{key}}, 1);
    END;

    CREATE TRIGGER "searchlight_{{id}}_update" AFTER UPDATE ON {{table}}
    WHEN OLD.{{key}} IS NEW.{{key}} AND ({{changed}})
    BEGIN
      INSERT INTO "searchlight_transaction"("timestamp")
        SELECT (julianday('now') - 2440587.5) * 86400.0
        WHERE NOT EXISTS (SELECT 1 FROM "searchlight_active_transaction");
      INSERT INTO "searchlight_change"("token", "entity_id", "object_id", "type", "updated_columns")
        VALUES ({{token}}, {{id}}, NEW.{{key}}, 2, {{updated_columns}});
    END;

    CREATE TRIGGER "searchlight_{{id}}_rekey" AFTER UPDATE ON {{table}}
    WHEN OLD.{{key}} IS NOT NEW.{{key}}
    BEGIN
      INSERT INTO "searchlight_transaction"("timestamp")
        SELECT (julianday('now') - 2440587.5) * 86400.0
        WHERE NOT EXISTS (SELECT 1 FROM "searchlight_active_transaction");
      INSERT INTO "searchlight_change"("token", "entity_id", "object_id", "type", "tombstone")
        VALUES ({{token}}, {{id}}, OLD.{{key}}, 3, {{old_tombstone}});
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND "object_id" = OLD.{{key}};
      INSERT INTO "searchlight_change"("token", "entity_id", "object_id", "type")
        VALUES ({{token}}, {{id}}, NEW.{{key}}, 1);
    END;

    CREATE TRIGGER "searchlight_{{id}}_delete" AFTER DELETE ON {{table}}
    BEGIN
      INSERT INTO "searchlight_transaction"("timestamp")
        SELECT (julianday('now') - 2440587.5) * 86400.0
        WHERE NOT EXISTS (SELECT 1 FROM "searchlight_active_transaction");
      INSERT INTO "searchlight_change"("token", "entity_id", "object_id", "type", "tombstone")
        VALUES ({{token}}, {{id}}, OLD.{{key}}, 3, {{old_tombstone}});
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND "object_id" = OLD.{{key}};
    END;

    """#

    /// The token of the transaction a trigger is recording into.
    static let tokenExpression = #"COALESCE((SELECT "token" FROM "searchlight_active_transaction"), (SELECT max("token") FROM "searchlight_transaction"))"#

    /// The trigger statements of one entity, keyed by trigger name.
    package struct Rendered {
        package var statements: [(name: String, sql: String)]
    }

    /// Renders the triggers of `entity`, whose id is `entityID` and whose table has
    /// `tableColumns` (used when the entity tracks every column).
    package static func render(entity: Entity, entityID: Int64, trackedColumns: [String]) -> Rendered {
        let key = SQLQuoting.identifier(entity.primaryKey)
        let tracked = trackedColumns.filter { $0.caseInsensitiveCompare(entity.primaryKey) != .orderedSame }
        let changed = tracked.isEmpty
            ? "0"
            : tracked.map { "OLD.\(SQLQuoting.identifier($0)) IS NOT NEW.\(SQLQuoting.identifier($0))" }.joined(separator: " OR ")
        let updatedColumns = tracked.isEmpty
            ? "'[]'"
            : "'[' || substr(" + tracked.map { column in
                let jsonName = String(decoding: (try? JSONEncoder().encode(column)) ?? Data(), as: UTF8.self)
                let c = SQLQuoting.identifier(column)
                return "CASE WHEN OLD.\(c) IS NOT NEW.\(c) THEN \(SQLQuoting.literal("," + jsonName)) ELSE '' END"
            }.joined(separator: " || ") + ", 2) || ']'"
        func tombstone(_ prefix: String) -> String {
            guard !entity.preserveOnDelete.isEmpty else { return "NULL" }
            return "json_object(" + entity.preserveOnDelete.map { column in
                let value = prefix + SQLQuoting.identifier(column)
                return "\(SQLQuoting.literal(column)), CASE WHEN typeof(\(value)) = 'blob' THEN hex(\(value)) ELSE \(value) END"
            }.joined(separator: ", ") + ")"
        }
        let sql = renderTemplate(template, [
            "token": tokenExpression,
            "changed": changed,
            "updated_columns": updatedColumns,
            "old_tombstone": tombstone("OLD."),
            "row_tombstone": tombstone(""),
            "table": SQLQuoting.identifier(entity.table),
            "key": key,
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
