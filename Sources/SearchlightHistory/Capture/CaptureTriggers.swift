import Foundation
import GRDB

/// Renders the capture triggers of one entity from ``template``.
///
/// The triggers use core SQLite only (no application-defined functions), so that every writer
/// is recorded: this library, another process, or the `sqlite3` shell. `Schemas/triggers.sql`
/// holds the same template, and a test checks that the two are identical.
///
/// History is one append-only table, `searchlight_log`, one row a change. A write made through
/// ``HistoryStore/write(author:context:_:)`` first appends a header row (type 0, whose id is
/// the token; author, context, process id) and puts its token in `searchlight_open` until it
/// commits: its changes carry that token. A change made by any other writer finds
/// `searchlight_open` empty and records token 0: the row is a transaction of its own, whose
/// token is its id (SQLite has no statement-level triggers, and a trigger cannot see where a
/// foreign transaction ends). SQLite serializes writers, so tokens grow in commit order, and a
/// transaction's rows share the log's last page: tracking costs a small write one more page.
package struct CaptureTriggers {
    /// The trigger template. Placeholders:
    /// - `{{id}}`: the entity id (an integer from `searchlight_entity`)
    /// - `{{table}}`, `{{key}}`: the quoted table and primary-key column
    /// - `{{token}}`: ``tokenExpression``; `{{timestamp}}`: ``timestampExpression``
    /// - `{{last_transaction}}`: the transaction of the row the trigger inserted last
    /// - `{{last_row_transaction}}`: ``lastRowTransactionExpression``
    /// - `{{replaced_becomes_delete}}`: ``replacedBecomesDelete(entityID:collate:)``; `{{collate}}`: the key
    ///   column's collation clause (` COLLATE "NOCASE"`), or nothing for BINARY
    /// - `{{changed}}`: true when a tracked column changed (`OLD."c" IS NOT NEW."c" OR …`)
    /// - `{{updated_columns}}`: a JSON array of the columns that changed
    /// - `{{old_tombstone}}`, `{{row_tombstone}}`: a JSON object of the `preserveOnDelete` values
    /// - `{{key_names}}`: the key and the rowid's names (`rowid`, `oid`, `_rowid_`), for
    ///   `UPDATE OF`: SQLite matches the names a statement's SET writes, and `SET rowid = 5`
    ///   changes an INTEGER PRIMARY KEY without naming it
    /// - `{{of_key_and_tracked}}`: ` OF ` and those names and the tracked columns; nothing on a
    ///   table with generated columns (an update of the columns a generated column reads changes
    ///   it without naming it, so every update runs the update triggers there)
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
    -- Searchlight capture triggers (version 8): the set installed on each tracked table.
    -- Each change is one row of searchlight_log. Its token is the open HistoryStore.write's
    -- (searchlight_open holds it while that write runs, and is empty for every other writer), or
    -- 0: the row is a transaction of its own, whose token is its id (SQLite gives the next id;
    -- where cleanup deletes the newest row it leaves a placeholder, so ids are never reused).
    -- Values are compared byte for byte (COLLATE BINARY) and by type, whatever the columns'
    -- collations: a NOCASE column changed only in case, or 1 changed to 1.0, is a change. Keys are
    -- compared byte for byte (a case-only rename is a delete and an insert); 1 and 1.0 are one key.
    -- A scratch row of searchlight_replaced holds the row an INSERT OR REPLACE, an UPSERT or an
    -- UPDATE OR REPLACE is about to overwrite. When the write goes ahead, the row recorded last
    -- (the insert of that key) becomes the overwritten row's delete, and the insert follows it in
    -- the same transaction. One an ignored insert or an UPSERT's update leaves lives until its key
    -- is next written or deleted, or until cleanup runs. Scratch keys compare with the key
    -- column's collation, and without its affinity (+NEW."k"), so that the scratch table's primary
    -- key or its NOCASE or RTRIM index finds them.
    -- Cost: every trigger SQLite runs costs a frame it allocates and zeroes, sized by the
    -- trigger's body, whatever its WHEN says; the common paths run as few and as small triggers as
    -- they can (an insert three, an update or a delete two), and the update triggers name
    -- their columns (UPDATE OF): an update of columns the model does not track runs none.
    -- A rare path's work (a row about to be overwritten) runs in the INSTEAD OF trigger of a view
    -- the table's trigger inserts one row into: the table's triggers stay small, and the view's
    -- triggers read no table of the app (a migration that drops and renames a table must not find
    -- a trigger naming the old one). Rows go into a view with VALUES: an INSERT … SELECT into a
    -- view with triggers goes through a temporary table (two new pages, zeroed, a row).
    -- SQLite fires the triggers of one event newest first, and the installer creates an entity's
    -- triggers together in the order of their names: insert_row fires before insert_replaced,
    -- rekey_row before rekey_replaced.

    CREATE VIEW "searchlight_{{id}}_replacing"("k", "tombstone") AS SELECT NULL, NULL WHERE 0;

    CREATE VIEW "searchlight_{{id}}_replaced"("k", "last") AS SELECT NULL, NULL WHERE 0;

    CREATE TRIGGER "searchlight_{{id}}_keeps_replaced" INSTEAD OF INSERT ON "searchlight_{{id}}_replacing"
    BEGIN
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND "object_id" = +NEW."k"{{collate}};
      INSERT INTO "searchlight_replaced"("entity_id", "object_id", "tombstone") VALUES ({{id}}, NEW."k", NEW."tombstone");
    END;

    CREATE TRIGGER "searchlight_{{id}}_records_replaced" INSTEAD OF INSERT ON "searchlight_{{id}}_replaced"
    BEGIN
      {{replaced_becomes_delete}};
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "timestamp")
        VALUES ({{last_row_transaction}}, 1, {{id}}, NEW."k", {{timestamp}});
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND "object_id" = +NEW."k"{{collate}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert_replaces" BEFORE INSERT ON {{table}}
    WHEN EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = NEW.{{key}})
    BEGIN
      INSERT INTO "searchlight_{{id}}_replacing"("k", "tombstone")
        VALUES ((SELECT {{key}} FROM {{table}} WHERE {{key}} = NEW.{{key}}),
                (SELECT {{row_tombstone}} FROM {{table}} WHERE {{key}} = NEW.{{key}}));
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert_row" AFTER INSERT ON {{table}}
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "timestamp")
        VALUES ({{token}}, 1, {{id}}, NEW.{{key}}, {{timestamp}});
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert_replaced" AFTER INSERT ON {{table}}
    WHEN EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}})
    BEGIN
      INSERT INTO "searchlight_{{id}}_replaced"("k", "last") VALUES (NEW.{{key}}, (SELECT max("id") FROM "searchlight_log"));
    END;

    CREATE TRIGGER "searchlight_{{id}}_update" AFTER UPDATE{{of_key_and_tracked}} ON {{table}}
    WHEN OLD.{{key}} IS NEW.{{key}} COLLATE BINARY AND ({{changed}})
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "updated_columns", "timestamp")
        VALUES ({{token}}, 2, {{id}}, NEW.{{key}}, {{updated_columns}}, {{timestamp}});
    END;

    CREATE TRIGGER "searchlight_{{id}}_update_clears" AFTER UPDATE{{of_key_and_tracked}} ON {{table}}
    WHEN OLD.{{key}} IS NEW.{{key}} COLLATE BINARY
      AND EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}})
    BEGIN
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_rekey_replaces" BEFORE UPDATE OF {{key_names}} ON {{table}}
    WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
      AND EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY)
    BEGIN
      INSERT INTO "searchlight_{{id}}_replacing"("k", "tombstone")
        VALUES ((SELECT {{key}} FROM {{table}} WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY),
                (SELECT {{row_tombstone}} FROM {{table}} WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY));
    END;

    CREATE TRIGGER "searchlight_{{id}}_rekey_row" AFTER UPDATE OF {{key_names}} ON {{table}}
    WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone", "timestamp")
        VALUES ({{token}}, 3, {{id}}, OLD.{{key}}, {{old_tombstone}}, {{timestamp}});
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "timestamp")
        VALUES ({{last_transaction}}, 1, {{id}}, NEW.{{key}}, {{timestamp}});
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_old}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_rekey_replaced" AFTER UPDATE OF {{key_names}} ON {{table}}
    WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
      AND EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}})
    BEGIN
      INSERT INTO "searchlight_{{id}}_replaced"("k", "last") VALUES (NEW.{{key}}, (SELECT max("id") FROM "searchlight_log"));
    END;

    CREATE TRIGGER "searchlight_{{id}}_delete" AFTER DELETE ON {{table}}
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone", "timestamp")
        VALUES ({{token}}, 3, {{id}}, OLD.{{key}}, {{old_tombstone}}, {{timestamp}});
    END;

    CREATE TRIGGER "searchlight_{{id}}_delete_clears" AFTER DELETE ON {{table}}
    WHEN EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_old}})
    BEGIN
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_old}};
    END;

    """#

    /// The triggers installed, in addition to ``template``, on a table where a REPLACE can
    /// delete a row other than the one of the written key: one with a UNIQUE constraint or
    /// index besides its primary key (`INSERT OR REPLACE INTO users(email, …)`, the classic
    /// upsert by natural key, deletes the row that held the email), or a rowid table whose key
    /// is not the rowid (`INSERT OR REPLACE INTO t(rowid, …)`). SQLite fires no delete trigger
    /// for such a row (unless the writer turned `recursive_triggers` on), so the BEFORE
    /// trigger keeps the rows the written values would collide with, and the AFTER trigger
    /// records a delete for each that is gone. Placeholders as in ``template``, plus:
    /// - `{{collides_with_new}}`: true for a row of the table, other than the written one,
    ///   holding the values of one of the table's unique keys that `NEW` holds, and a partial
    ///   index's condition as written, so that the index answers (a superset of the rows a
    ///   REPLACE deletes: whether `NEW` meets the condition is left out; the AFTER trigger
    ///   records only the rows that are gone)
    /// - `{{of_unique_columns}}`: ` OF ` and the columns of those keys (and the rowid's names);
    ///   nothing when one of them is a partial index (an update of a column of its `WHERE` can
    ///   make a row collide) or the table has generated columns (a unique generated column
    ///   changes with the columns it reads)
    ///
    /// The candidates live in `searchlight_conflict`, emptied for the entity before each
    /// statement row that has any and after it (and by the next such BEFORE trigger, after an
    /// `INSERT OR IGNORE` whose AFTER trigger never ran).
    package static let conflictTemplate = #"""
    -- On a table with a unique key besides its primary key: the rows a REPLACE deletes for
    -- holding NEW's values of that key, which SQLite deletes without firing a delete trigger.
    -- A row whose key is NULL has no identity (it is never in history): it is not kept. Their
    -- deletes are recorded before the change that displaced them (insert_vanished fires before
    -- insert_row, update_collided before update), each a transaction of its own unless a
    -- HistoryStore.write is open. A writer with recursive_triggers on has SQLite fire the delete
    -- triggers for such a row: its delete is recorded there, and delete_unwatches takes the row
    -- off the candidates (recorded twice before).

    CREATE TRIGGER "searchlight_{{id}}_insert_collides" BEFORE INSERT ON {{table}}
    WHEN EXISTS (SELECT 1 FROM {{table}} WHERE ({{collides_with_new}}) AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL)
      OR EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
    BEGIN
      DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
      INSERT INTO "searchlight_conflict"("entity_id", "object_id", "tombstone")
        SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}} WHERE ({{collides_with_new}}) AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL;
    END;

    CREATE TRIGGER "searchlight_{{id}}_insert_vanished" AFTER INSERT ON {{table}}
    WHEN EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone", "timestamp")
        SELECT {{token}}, 3, {{id}}, "c"."object_id", "c"."tombstone", {{timestamp}} FROM "searchlight_conflict" AS "c"
        WHERE "c"."entity_id" = {{id}} AND NOT EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = "c"."object_id");
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}}
        AND "object_id" IN (SELECT "object_id" FROM "searchlight_conflict" WHERE "entity_id" = {{id}});
      DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
    END;

    CREATE TRIGGER "searchlight_{{id}}_delete_unwatches" AFTER DELETE ON {{table}}
    WHEN EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
    BEGIN
      DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}} AND "object_id" = +OLD.{{key}} COLLATE BINARY;
    END;

    CREATE TRIGGER "searchlight_{{id}}_update_collides" BEFORE UPDATE{{of_unique_columns}} ON {{table}}
    WHEN EXISTS (SELECT 1 FROM {{table}} WHERE ({{collides_with_new}}) AND {{key}} IS NOT OLD.{{key}} AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL)
      OR EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
    BEGIN
      DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
      INSERT INTO "searchlight_conflict"("entity_id", "object_id", "tombstone")
        SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}}
        WHERE ({{collides_with_new}}) AND {{key}} IS NOT OLD.{{key}} AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL;
    END;

    CREATE TRIGGER "searchlight_{{id}}_update_collided" AFTER UPDATE{{of_unique_columns}} ON {{table}}
    WHEN EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
    BEGIN
      INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone", "timestamp")
        SELECT {{token}}, 3, {{id}}, "c"."object_id", "c"."tombstone", {{timestamp}} FROM "searchlight_conflict" AS "c"
        WHERE "c"."entity_id" = {{id}} AND NOT EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = "c"."object_id");
      DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}}
        AND "object_id" IN (SELECT "object_id" FROM "searchlight_conflict" WHERE "entity_id" = {{id}});
      DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
    END;

    """#

    /// The version of ``template``: a store opened on a database whose triggers are older
    /// reinstalls them from the stored model.
    package static let version = 8

    /// The token a change row records: the open API write's, or 0 (a transaction of its own,
    /// whose token is the row's id).
    static let tokenExpression = #"coalesce((SELECT "token" FROM "searchlight_open"), 0)"#

    /// The time of a change row (read by readers for a transaction of its own).
    static let timestampExpression = "(julianday('now') - 2440587.5) * 86400.0"

    /// The transaction of the row a trigger recorded last (in the same trigger: SQLite's
    /// `last_insert_rowid()` is that row's id while the trigger runs): its token, or its id.
    static let lastTransactionExpression = #"""
        coalesce((SELECT "token" FROM "searchlight_open"), last_insert_rowid())
        """#

    /// The change recorded last (`NEW."last"`, this statement row's insert of `NEW."k"`; a
    /// constant, so that the UPDATE needs no temporary table of rowids) made the delete of
    /// the row it overwrote, from its scratch row; the insert then follows it, in its transaction
    /// (``lastRowTransactionExpression``). Should the change recorded last be another (an order
    /// of triggers the installer never makes), the delete is appended as a transaction of its own
    /// instead, and the insert follows it again.
    static func replacedBecomesDelete(entityID: Int64, collate: String) -> String {
        let replacedIsNew = #""object_id" = +NEW."k""# + collate
        return #"""
        UPDATE "searchlight_log" SET "type" = 3,
            "object_id" = (SELECT "object_id" FROM "searchlight_replaced" WHERE "entity_id" = \#(entityID) AND \#(replacedIsNew)),
            "tombstone" = (SELECT "tombstone" FROM "searchlight_replaced" WHERE "entity_id" = \#(entityID) AND \#(replacedIsNew))
          WHERE "id" = NEW."last" AND "type" = 1 AND "entity_id" = \#(entityID) AND "object_id" IS NEW."k" COLLATE BINARY;
          INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone", "timestamp")
            SELECT \#(tokenExpression), 3, \#(entityID), "object_id", "tombstone", \#(timestampExpression) FROM "searchlight_replaced"
            WHERE "entity_id" = \#(entityID) AND \#(replacedIsNew) AND changes() = 0
        """#
    }

    /// The transaction of the row recorded last: its token, or its id.
    static let lastRowTransactionExpression = #"""
        coalesce((SELECT "token" FROM "searchlight_open"), (SELECT CASE "token" WHEN 0 THEN "id" ELSE "token" END FROM "searchlight_log" WHERE "id" = (SELECT max("id") FROM "searchlight_log")))
        """#

    /// The next token: above every log row that exists or that cleanup ever deleted, so
    /// tokens are never reused (without AUTOINCREMENT, whose `sqlite_sequence` update would
    /// cost every write another page).
    package static let nextTokenExpression = #"""
        (SELECT max(coalesce(max("id"), 0), coalesce((SELECT "value" FROM "searchlight_meta" WHERE "key" = \#(SQLQuoting.literal(MetaKey.purgedThroughToken.rawValue))), 0)) + 1 FROM "searchlight_log")
        """#

    /// A column of a unique key, with the collation its index compares it with (`BINARY`,
    /// `NOCASE` or `RTRIM`).
    package struct UniqueColumn: Hashable, Sendable {
        package var name: String
        package var collation: String
        /// For a term of a unique index on an expression, the expression as written in its
        /// `CREATE INDEX` (`name` is then empty).
        package var expression: String?
        package init(name: String, collation: String, expression: String? = nil) {
            self.name = name
            self.collation = collation
            self.expression = expression
        }
    }

    /// A unique key of a table besides its primary key: its columns, and for a partial index
    /// its condition.
    package struct UniqueKey: Hashable, Sendable {
        package var columns: [UniqueColumn]
        /// The partial index's `WHERE` as written (nil for a full index, or when it could not
        /// be read).
        package var condition: String?
        /// A partial index: an update of a column of its `WHERE` can make a row collide.
        package var isPartial: Bool
        /// When a term is an expression, the table's columns it reads: `NEW`'s value of the
        /// expression is computed over them (only those: a trigger that names a column keeps
        /// the app from dropping it).
        package var tableColumns: [String]
        package init(columns: [UniqueColumn], condition: String? = nil, isPartial: Bool = false, tableColumns: [String] = []) {
            self.columns = columns
            self.condition = condition
            self.isPartial = isPartial
            self.tableColumns = tableColumns
        }
        /// Whether a term is an expression: an update of any column can make a row collide.
        package var hasExpression: Bool { columns.contains { $0.expression != nil } }
    }

    /// The trigger statements of one entity, keyed by trigger name.
    package struct Rendered {
        package var statements: [(name: String, sql: String)]
        /// The condition that picks the rows a REPLACE may delete through another unique key;
        /// nil when the table has none (and no ``conflictTemplate`` triggers).
        package var collisionPredicate: String?
    }

    /// Renders the triggers of `entity`, whose id is `entityID`, recording updates of
    /// `trackedColumns`; `keyCollation` is the key column's collation (`BINARY`, `NOCASE`, `RTRIM`).
    ///
    /// `uniqueKeys` are the table's unique keys besides its primary key (each its columns and
    /// their built-in collations) and `separateRowid` says the table has a rowid that is not its
    /// key: either adds ``conflictTemplate``'s triggers (which run on every update when one of
    /// the keys is a partial index). `generatedColumns` says the table has generated columns
    /// (its update triggers then run on every update).
    package static func render(entity: SearchlightModel.Entity, entityID: Int64, trackedColumns: [String], keyCollation: String = "BINARY",
                               uniqueKeys: [UniqueKey] = [], separateRowid: Bool = false, generatedColumns: Bool = false) -> Rendered {
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
        let rowidNames = ["rowid", "oid", "_rowid_"].filter { $0.caseInsensitiveCompare(entity.primaryKey) != .orderedSame }
        let keyNames = [entity.primaryKey] + rowidNames
        let keyAndTracked = (keyNames + tracked).map(SQLQuoting.identifier).joined(separator: ", ")
        var collisions: [String] = uniqueKeys.filter { !$0.columns.isEmpty }.map { key -> String in
            var terms = key.columns.map { column -> String in
                if let expression = column.expression {
                    // The expression over the table's row, against the same expression over
                    // NEW's values (a one-row subquery whose columns bear the table's names):
                    // written as the index writes it, so that the index answers.
                    let newColumns = key.tableColumns.map { "NEW.\(SQLQuoting.identifier($0)) AS \(SQLQuoting.identifier($0))" }.joined(separator: ", ")
                    return "(\(expression)) = (SELECT (\(expression)) FROM (SELECT \(newColumns)))" + " COLLATE \(column.collation.uppercased())"
                }
                let c = SQLQuoting.identifier(column.name)
                return "\(c) = NEW.\(c) COLLATE \(column.collation.uppercased())"
            }
            // A partial index's condition, as written: with it, SQLite can look the rows up
            // through that index (without it, it reads the whole table on every write).
            if let condition = key.condition { terms.append("(\(condition))") }
            return "(" + terms.joined(separator: " AND ") + ")"
        }
        var uniqueColumns: [String] = []
        for column in uniqueKeys.map(\.columns).joined() where column.expression == nil && !uniqueColumns.contains(where: { $0.caseInsensitiveCompare(column.name) == .orderedSame }) {
            uniqueColumns.append(column.name)
        }
        if separateRowid {
            collisions.append(#""rowid" = NEW."rowid""#)
            uniqueColumns += ["rowid", "oid", "_rowid_"]
        }
        let replacedIsNew = "\"object_id\" = +NEW.\(key)\(collate)"
        let sql = renderTemplate(collisions.isEmpty ? template : template + conflictTemplate, [
            "token": tokenExpression,
            "timestamp": timestampExpression,
            "last_transaction": lastTransactionExpression,
            "replaced_becomes_delete": replacedBecomesDelete(entityID: entityID, collate: collate),
            "collate": collate,
            "last_row_transaction": lastRowTransactionExpression,
            "changed": changed,
            "updated_columns": updatedColumns,
            "old_tombstone": tombstone("OLD."),
            "row_tombstone": tombstone(""),
            "table": SQLQuoting.identifier(entity.table),
            "key": key,
            "replaced_is_new": replacedIsNew,
            "replaced_is_old": "\"object_id\" = +OLD.\(key)\(collate)",
            "id": String(entityID),
            "key_names": keyNames.map(SQLQuoting.identifier).joined(separator: ", "),
            "of_key_and_tracked": generatedColumns ? "" : " OF " + keyAndTracked,
            "collides_with_new": collisions.joined(separator: " OR "),
            "of_unique_columns": uniqueKeys.contains(where: { $0.isPartial || $0.hasExpression }) || generatedColumns ? "" : " OF " + uniqueColumns.map(SQLQuoting.identifier).joined(separator: ", "),
        ])
        // One-line CREATE VIEW statements, then the triggers (each ends with END).
        let views = sql.split(separator: "\n").filter { $0.hasPrefix("CREATE VIEW ") }.map { String($0.dropLast()) }
        let statements = views + sql.split(separator: "\n").filter { !$0.hasPrefix("CREATE VIEW ") }.joined(separator: "\n")
            .components(separatedBy: "\nEND;")
            .map { $0.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n") }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
            .map { $0.hasPrefix("CREATE VIEW ") ? $0 : $0 + "\nEND" }
        return Rendered(statements: statements.map { statement in
            // CREATE TRIGGER "searchlight_<id>_<kind>" …
            let name = statement.split(separator: "\"", maxSplits: 2)[1]
            return (String(name), statement)
        }, collisionPredicate: collisions.isEmpty ? nil : collisions.joined(separator: " OR "))
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
