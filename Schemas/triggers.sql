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
