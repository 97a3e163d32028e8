-- Searchlight history log: the tables and indexes HistoryStore creates (schema version 1).
-- Generated objects must match this file: Tests/SearchlightHistoryTests/Capture/SchemaFilesTests.swift.

-- Key/value settings: schemaVersion, the installed model (JSON), purgedThroughToken and
-- purgedThroughTimestamp (how far cleanup deleted history: older starts are "expired").
CREATE TABLE "searchlight_meta" (
  "key" TEXT PRIMARY KEY NOT NULL,
  "value"
) WITHOUT ROWID;

-- Tracked entities. Changes refer to an entity by this stable integer id.
CREATE TABLE "searchlight_entity" (
  "id" INTEGER PRIMARY KEY,
  "name" TEXT NOT NULL UNIQUE,
  "table_name" TEXT NOT NULL
);

-- One row per committed transaction that changed a tracked table. Tokens come from
-- AUTOINCREMENT inside the write transaction, so they strictly increase in commit order.
-- Timestamps are seconds since 1970 (informational: never used to order or checkpoint).
-- author, context and process_id are NULL for writes made outside HistoryStore.write.
CREATE TABLE "searchlight_transaction" (
  "token" INTEGER PRIMARY KEY AUTOINCREMENT,
  "timestamp" REAL NOT NULL,
  "author" TEXT,
  "context" TEXT,
  "process_id" INTEGER
);

CREATE INDEX "searchlight_transaction_on_timestamp" ON "searchlight_transaction"("timestamp");

-- One row per changed row. type: 1 insert, 2 update, 3 delete. object_id has no type
-- affinity, so INTEGER and TEXT keys keep their type. updated_columns (updates) is a JSON
-- array of column names; tombstone (deletes) a JSON object of the preserveOnDelete values.
CREATE TABLE "searchlight_change" (
  "id" INTEGER PRIMARY KEY,
  "token" INTEGER NOT NULL,
  "entity_id" INTEGER NOT NULL,
  "object_id" NOT NULL,
  "type" INTEGER NOT NULL,
  "updated_columns" TEXT,
  "tombstone" TEXT
);

CREATE INDEX "searchlight_change_on_token" ON "searchlight_change"("token");

CREATE INDEX "searchlight_change_on_object" ON "searchlight_change"("entity_id", "object_id");

-- Inside a HistoryStore.write transaction only: the token the triggers record into.
-- Always empty once committed.
CREATE TABLE "searchlight_active_transaction" (
  "id" INTEGER PRIMARY KEY CHECK ("id" = 1),
  "token" INTEGER NOT NULL
);

-- Scratch rows used by the triggers to record INSERT OR REPLACE of an existing key as a
-- delete (with its tombstone) followed by an insert.
CREATE TABLE "searchlight_replaced" (
  "entity_id" INTEGER NOT NULL,
  "object_id" NOT NULL,
  "tombstone" TEXT,
  PRIMARY KEY ("entity_id", "object_id")
) WITHOUT ROWID;

-- Consumers (authors that read history) and their checkpoints. required = 1: cleanup
-- waits for this consumer. token / transaction_timestamp / checkpointed_at: its checkpoint.
CREATE TABLE "searchlight_consumer" (
  "author" TEXT PRIMARY KEY NOT NULL,
  "required" INTEGER NOT NULL,
  "registered_at" REAL NOT NULL,
  "token" INTEGER,
  "transaction_timestamp" REAL,
  "checkpointed_at" REAL
) WITHOUT ROWID;
