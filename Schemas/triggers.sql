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
