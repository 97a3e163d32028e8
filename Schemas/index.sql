-- Searchlight search index: the tables an Indexer creates, shown for generation 1 of a model with
-- one entity (id 1) whose fields are "title" and "body", and whose attributes are "year" (an
-- INTEGER column) and "tag" (a TEXT COLLATE NOCASE column). What the library creates must match this
-- file: Tests/SearchlightTests/Index/IndexSchemaFileTests.swift.
--
-- The index's own bookkeeping (created once, at index schema version 1; Searchlight 0.1.0 kept
-- 'index.generation' and 'index.fingerprint' in searchlight_meta, and they move here). Keys:
--   schemaVersion      the index schema version (1)
--   generation         the live generation N of the tables below
--   layout             what generation N holds, as JSON: its version (6: text prepared as below, and a vocabulary),
--                      tokenizer, foldsChineseVariants (only when set), prefixes, and per entity
--                      its id, table, key, fields (column, weight, role), whether object ids
--                      are the FTS rowids, and (only when declared) its attributes (name,
--                      column, affinity, collation) and ranking hints. Searches read it; a
--                      different layout forces a rebuild.
--   rebuildOwner, rebuildExpiresAt
--                      the rebuild lease: one process rebuilds at a time; it renews the lease with
--                      every chunk, and another process takes over once it expires
--   rebuildGeneration, rebuildLayout, rebuildStartToken, rebuildEntity, rebuildAfter
--                      the rebuild under way: its generation, its layout, the history token it
--                      started from, and how far it got (entity position, last key copied)
-- While a rebuild runs, the consumer "<indexer author>.rebuild" holds cleanup at its start token.
CREATE TABLE "searchlight_index_state" (
  "key" TEXT PRIMARY KEY NOT NULL,
  "value"
) WITHOUT ROWID;

-- Generations: a rebuild fills generation N+1 beside the live one, then one transaction sets
-- generation = N+1 and its layout, saves the indexer's checkpoint at the rebuild's start token,
-- and drops generation N.

-- Maps (entity, object id) to the full-text rowid, for tables whose key is not an INTEGER
-- PRIMARY KEY. (For INTEGER PRIMARY KEY tables the object id is the full-text rowid.)
CREATE TABLE "searchlight_document_g1" (
  "id" INTEGER PRIMARY KEY,
  "entity_id" INTEGER NOT NULL,
  "object_id" NOT NULL,
  UNIQUE ("entity_id", "object_id")
);

-- The vocabulary (word tokenizers only: not trigram, not porter): every token of the indexed text,
-- as the index's tokenizer makes it, with the number of documents (of all entities) that hold it.
-- CJK characters and tokens of over 64 bytes are left out. The indexer keeps it in step with the
-- text in the same transaction. Typo-tolerant search walks it for the words a few edits from a
-- query word; suggestions complete a prefix from it, by document count.
CREATE TABLE "searchlight_terms_g1" (
  "term" TEXT PRIMARY KEY NOT NULL,
  "documents" INTEGER NOT NULL
) WITHOUT ROWID;

-- One regular (contentful) FTS5 table per entity: the index keeps its own copy of the text, so
-- a changed or deleted source row never leaves a stale match. Columns are the entity's fields.
-- The text is stored as prepared for the tokenizer (Sources/Searchlight/Text/IndexedText.swift):
-- letters and numbers NFKC-normalized, ß as ss; with a word tokenizer (not trigram), U+001F
-- between two CJK characters and where CJK meets a letter or digit, and U+001F U+10FFFD U+001F
-- where punctuation separates them (a token that keeps a phrase from matching across it); and
-- U+001F on each side of every character beyond ASCII that is no letter, number, mark or white
-- space (symbols, emoji, punctuation, private use), so that one unicode61 keeps in tokens (with
-- its Unicode 6.1 tables: 🙂, ₽, private use) is a token of its own and never part of a word.
-- In the sqlite3 shell, match CJK text as a phrase of its characters: MATCH '"持 久 化"'.
CREATE VIRTUAL TABLE "searchlight_fts_1_g1" USING fts5("title", "body", tokenize = 'unicode61 remove_diacritics 2', prefix = '1 2 3');

-- Ranking: bm25 with the fields' weights, as the table's configured rank function.
INSERT INTO "searchlight_fts_1_g1"("searchlight_fts_1_g1", rank) VALUES ('rank', 'bm25(10.0, 1.0)');

-- The attribute values of an entity's documents (only for an entity that declares attributes):
-- rowid is the FTS rowid; each value as the source row stores it (storage class included), in
-- a column with the source column's type affinity (INTEGER, REAL, NUMERIC, TEXT, or none) and
-- collation (BINARY, NOCASE or RTRIM; another one is BINARY here), so that a filter compares
-- as the same WHERE on the source table. Written in the transaction that writes the text.
CREATE TABLE "searchlight_attr_1_g1" (
  "year" INTEGER COLLATE BINARY,
  "tag" TEXT COLLATE NOCASE
);
