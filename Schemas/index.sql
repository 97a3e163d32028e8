-- Searchlight search index: the tables an Indexer creates, shown for generation 1 of a model with
-- one entity (id 1) whose fields are "title" and "body". What the library creates must match this
-- file: Tests/SearchlightTests/Index/IndexSchemaFileTests.swift.
--
-- Generations: a rebuild fills generation N+1 beside the live one, then one transaction sets
-- searchlight_meta 'index.generation' = N+1, 'index.fingerprint' (what the index was built for:
-- fields, weights, tokenizer, key modes) and the indexer's checkpoint, and drops generation N.

-- Maps (entity, object id) to the full-text rowid, for tables whose key is not an INTEGER
-- PRIMARY KEY. (For INTEGER PRIMARY KEY tables the object id is the full-text rowid.)
CREATE TABLE "searchlight_document_g1" (
  "id" INTEGER PRIMARY KEY,
  "entity_id" INTEGER NOT NULL,
  "object_id" NOT NULL,
  UNIQUE ("entity_id", "object_id")
);

-- One regular (contentful) FTS5 table per entity: the index keeps its own copy of the text, so
-- a changed or deleted source row never leaves a stale match. Columns are the entity's fields.
CREATE VIRTUAL TABLE "searchlight_fts_1_g1" USING fts5("title", "body", tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4');

-- Ranking: bm25 with the fields' weights, as the table's configured rank function.
INSERT INTO "searchlight_fts_1_g1"("searchlight_fts_1_g1", rank) VALUES ('rank', 'bm25(10.0, 1.0)');
