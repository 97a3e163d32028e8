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
