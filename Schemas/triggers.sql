-- Searchlight capture triggers: the set installed on each tracked table.
-- A BEFORE trigger opens a transaction with no author unless the newest transaction is an
-- open HistoryStore.write; the AFTER triggers then record into the newest token.
-- Values are compared byte for byte (COLLATE BINARY) and by type, whatever the columns'
-- collations: a NOCASE column changed only in case, or 1 changed to 1.0, is a change. Keys are
-- compared byte for byte (a case-only rename is a delete and an insert); 1 and 1.0 are one key.
-- A scratch row of searchlight_replaced (the row an INSERT OR REPLACE, an UPSERT or an
-- UPDATE OR REPLACE overwrote) is deleted once its delete is recorded (left behind, 100,000
-- replaces made each later delete of those keys cost three index deletes); one an ignored
-- insert or an UPSERT's update of untracked columns leaves lives until its key is next
-- written or deleted, or until cleanup runs. Scratch keys
-- compare with the key column's collation, and without its affinity (+NEW."k"), so that
-- the scratch table's primary key or its NOCASE or RTRIM index finds them.
-- Cost: a trigger whose condition is false still costs its frame, so the update triggers
-- name their columns (UPDATE OF): an update of columns the model does not track runs none.
-- Rows go into searchlight_log with INSERT … VALUES: an INSERT … SELECT reads
-- searchlight_log (the token) and so goes through a temporary B-tree on every row. A
-- replaced row's delete (_insert_replaced, _rekey_replaced, run only when a scratch row
-- says a row was replaced) reads the one scratch row of the key in two subqueries. SQLite fires the triggers of one event newest first, and the installer creates
-- an entity's triggers together in the order of their names, so the replaced row's delete
-- is recorded before the insert that replaced it.

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
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id")
    VALUES ({{token}}, 1, {{id}}, NEW.{{key}});
END;

CREATE TRIGGER "searchlight_{{id}}_insert_replaced" AFTER INSERT ON {{table}}
WHEN EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}})
BEGIN
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
    VALUES ({{token}}, 3, {{id}},
      (SELECT "object_id" FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}}),
      (SELECT "tombstone" FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}}));
  DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
END;

CREATE TRIGGER "searchlight_{{id}}_update_opens" BEFORE UPDATE{{of_key_and_tracked}} ON {{table}}
WHEN {{not_open}} AND (OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY OR {{changed}})
BEGIN
  {{open_transaction}};
END;

CREATE TRIGGER "searchlight_{{id}}_rekey_replaces" BEFORE UPDATE OF {{key_names}} ON {{table}}
WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
  AND EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY)
BEGIN
  DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
  INSERT OR REPLACE INTO "searchlight_replaced"("entity_id", "object_id", "tombstone")
    SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}}
    WHERE {{key}} = NEW.{{key}} AND {{key}} IS NOT OLD.{{key}} COLLATE BINARY;
END;

CREATE TRIGGER "searchlight_{{id}}_update" AFTER UPDATE{{of_key_and_tracked}} ON {{table}}
WHEN OLD.{{key}} IS NEW.{{key}} COLLATE BINARY AND ({{changed}})
BEGIN
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "updated_columns")
    VALUES ({{token}}, 2, {{id}}, NEW.{{key}}, {{updated_columns}});
END;

CREATE TRIGGER "searchlight_{{id}}_rekey" AFTER UPDATE OF {{key_names}} ON {{table}}
WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
BEGIN
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
    VALUES ({{token}}, 3, {{id}}, OLD.{{key}}, {{old_tombstone}}), ({{token}}, 1, {{id}}, NEW.{{key}}, NULL);
  DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_old}};
END;

CREATE TRIGGER "searchlight_{{id}}_rekey_replaced" AFTER UPDATE OF {{key_names}} ON {{table}}
WHEN OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY
  AND EXISTS (SELECT 1 FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}})
BEGIN
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
    VALUES ({{token}}, 3, {{id}},
      (SELECT "object_id" FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}}),
      (SELECT "tombstone" FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}}));
  DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}} AND {{replaced_is_new}};
END;

CREATE TRIGGER "searchlight_{{id}}_update_clears" AFTER UPDATE{{of_key_and_tracked}} ON {{table}}
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
-- On a table with a unique key besides its primary key: the rows a REPLACE deletes for
-- holding NEW's values of that key, which SQLite deletes without firing a delete trigger.
-- A row whose key is NULL has no identity (it is never in history): it is not kept.

CREATE TRIGGER "searchlight_{{id}}_insert_collides" BEFORE INSERT ON {{table}}
WHEN EXISTS (SELECT 1 FROM {{table}} WHERE ({{collides_with_new}}) AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL)
  OR EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
BEGIN
  DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
  INSERT INTO "searchlight_conflict"("entity_id", "object_id", "tombstone")
    SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}} WHERE ({{collides_with_new}}) AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL;
END;

CREATE TRIGGER "searchlight_{{id}}_insert_collided" AFTER INSERT ON {{table}}
WHEN EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
BEGIN
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
    SELECT {{token}}, 3, {{id}}, "c"."object_id", "c"."tombstone" FROM "searchlight_conflict" AS "c"
    WHERE "c"."entity_id" = {{id}} AND NOT EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = "c"."object_id");
  DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}}
    AND "object_id" IN (SELECT "object_id" FROM "searchlight_conflict" WHERE "entity_id" = {{id}});
  DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
END;

CREATE TRIGGER "searchlight_{{id}}_update_collides" BEFORE UPDATE{{of_unique_columns}} ON {{table}}
WHEN EXISTS (SELECT 1 FROM {{table}} WHERE ({{collides_with_new}}) AND {{key}} IS NOT OLD.{{key}} AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL)
  OR EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
BEGIN
  DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
  INSERT INTO "searchlight_conflict"("entity_id", "object_id", "tombstone")
    SELECT {{id}}, {{key}}, {{row_tombstone}} FROM {{table}}
    WHERE ({{collides_with_new}}) AND {{key}} IS NOT OLD.{{key}} AND {{key}} IS NOT NEW.{{key}} AND {{key}} IS NOT NULL;
  -- An update of no tracked column opened no transaction: open one for the deletes.
  {{open_transaction_select}}
    WHERE {{not_open}} AND NOT (OLD.{{key}} IS NOT NEW.{{key}} COLLATE BINARY OR {{changed}})
      AND EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}});
END;

CREATE TRIGGER "searchlight_{{id}}_update_collided" AFTER UPDATE{{of_unique_columns}} ON {{table}}
WHEN EXISTS (SELECT 1 FROM "searchlight_conflict" WHERE "entity_id" = {{id}})
BEGIN
  INSERT INTO "searchlight_log"("token", "type", "entity_id", "object_id", "tombstone")
    SELECT {{token}}, 3, {{id}}, "c"."object_id", "c"."tombstone" FROM "searchlight_conflict" AS "c"
    WHERE "c"."entity_id" = {{id}} AND NOT EXISTS (SELECT 1 FROM {{table}} WHERE {{key}} = "c"."object_id");
  DELETE FROM "searchlight_replaced" WHERE "entity_id" = {{id}}
    AND "object_id" IN (SELECT "object_id" FROM "searchlight_conflict" WHERE "entity_id" = {{id}});
  DELETE FROM "searchlight_conflict" WHERE "entity_id" = {{id}};
END;
