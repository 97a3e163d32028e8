import SearchlightHistory

/// The tables the sink keeps in PostgreSQL, in a schema of their own (`searchlight` by default),
/// created and migrated by the sink itself (``migrations``; the version is in `meta`).
///
/// ```sql
/// searchlight.meta(key text PRIMARY KEY, value text NOT NULL)      -- schema_version
/// searchlight.sources(                                             -- one row per source database
///     source text PRIMARY KEY,            -- its source id (HistoryStore.sourceID(), or --source)
///     token bigint NOT NULL,              -- checkpoint: the last history token applied
///     token_timestamp double precision,   -- the source's commit time of that token (seconds since 1970): with the token, the lineage check
///     previous_token bigint,              -- the checkpoint before the last batch, and its commit time:
///     previous_timestamp double precision,--   a sink that crashed between the two commits recognizes its own batch
///     batch_digest text,                  -- digest of the last batch's transactions (token, time, changes)
///     head_token bigint, head_timestamp double precision,  -- the source's newest token when last read (lag)
///     applied_at timestamptz NOT NULL,    -- when the last batch committed
///     resyncs integer NOT NULL DEFAULT 0, resync_reason text, resynced_at timestamptz,
///     database_path text,                 -- the file the last sink read
///     model jsonb NOT NULL,               -- the source's model (entities, fields, weights)
///     attributes jsonb)                   -- version 6: how each entity's attributes compare (affinity, collation)
/// searchlight.documents(
///     source text, entity text, object_key text,   -- PRIMARY KEY; object_key: PostgresDocument.key(id)
///     object_id jsonb NOT NULL,           -- the id as search results show it
///     title text, fields jsonb NOT NULL,  -- the values as read, by column
///     body text NOT NULL,                 -- the other fields, prepared: snippets
///     cjk text NOT NULL,                  -- CJK runs, prepared: exact check of a CJK query run
///     vector tsvector NOT NULL,           -- GIN-indexed
///     token bigint NOT NULL,              -- the history token of the last change applied
///     attributes jsonb,                   -- version 6: the attribute values (PostgresAttributes)
///     boosts jsonb)                       -- version 6: what the ranking hints read, one number (or null) per hint
/// searchlight.vocabulary(word text COLLATE "C", source text, documents integer)  -- version 5, kept by triggers
/// ```
///
/// Version 2 keeps planner statistics only for the columns queries filter on (source, entity,
/// vector, token): `ANALYZE` then skips sorting samples of long texts nobody filters by.
/// Version 3 adds the btree indexes a search walks newest first when a word is too common to
/// rank every match: `documents_newest (entity, token, source, object_key)` (every source) and
/// `documents_source_newest (source, entity, token, object_key)` (one source): a snapshot gives
/// every document of a source the same token, so the key orders them too. Building them locks out
/// the sinks' writes for as long as it takes (seconds a million documents).
/// Version 4 keeps the GIN index's pending list small (`gin_pending_list_limit = 256`, in kB;
/// PostgreSQL's default is 4 MB) and empties it: the write that fills the list moves it into the
/// index, and every search scans it until then, so a smaller list makes that write and those
/// searches cheaper, for a slower bulk load. Scenario 15 of the benchmark chose it among the
/// default, this and no list (`fastupdate = off`): docs/Figures.md.
/// Version 5 adds the vocabulary: each word of each source's documents with the number of its
/// documents that hold it (what typo tolerance and suggestions read, as the local index's
/// vocabulary, ``Searchlight/SearchIndex``). Triggers on `documents` keep it in step in the
/// same transaction as any write, whoever makes it; the migration counts what is there
/// (``vocabularyStatements``).
/// Version 6 adds the attributes: each document's values (``PostgresAttributes``, what filters
/// and facets read) and each source's columns' affinity and collation (`sources.attributes`).
/// Adding the columns rewrites nothing; a source whose model declares attributes is then
/// written again by its sink's next run (a resync: "the documents in PostgreSQL carry no
/// attribute values"), and until then its documents have none (filters on them match nothing).
public enum PostgresSchema {
    /// The schema version this release creates and reads.
    public static let currentVersion = 6

    /// The statements of each version, in order (`%S` stands for the quoted schema name, `%L`
    /// for it as a string literal).
    static let migrations: [[String]] = [
        [
            "CREATE SCHEMA IF NOT EXISTS %S",
            "CREATE TABLE IF NOT EXISTS %S.meta (key text PRIMARY KEY, value text NOT NULL)",
            """
            CREATE TABLE %S.sources (
                source text PRIMARY KEY,
                token bigint NOT NULL,
                token_timestamp double precision,
                previous_token bigint,
                previous_timestamp double precision,
                batch_digest text,
                head_token bigint,
                head_timestamp double precision,
                applied_at timestamptz NOT NULL DEFAULT now(),
                resyncs integer NOT NULL DEFAULT 0,
                resync_reason text,
                resynced_at timestamptz,
                database_path text,
                model jsonb NOT NULL
            )
            """,
            """
            CREATE TABLE %S.documents (
                source text NOT NULL,
                entity text NOT NULL,
                object_key text NOT NULL,
                object_id jsonb NOT NULL,
                title text,
                fields jsonb NOT NULL,
                body text NOT NULL,
                cjk text NOT NULL,
                vector tsvector NOT NULL,
                token bigint NOT NULL,
                PRIMARY KEY (source, entity, object_key)
            )
            """,
            "CREATE INDEX documents_vector ON %S.documents USING gin (vector)",
        ],
        [
            """
            ALTER TABLE %S.documents ALTER COLUMN object_key SET STATISTICS 0, ALTER COLUMN object_id SET STATISTICS 0,
                ALTER COLUMN title SET STATISTICS 0, ALTER COLUMN fields SET STATISTICS 0,
                ALTER COLUMN body SET STATISTICS 0, ALTER COLUMN cjk SET STATISTICS 0
            """,
        ],
        [
            "CREATE INDEX IF NOT EXISTS documents_newest ON %S.documents (entity, token, source COLLATE \"C\", object_key COLLATE \"C\")",
            "CREATE INDEX IF NOT EXISTS documents_source_newest ON %S.documents (source, entity, token, object_key COLLATE \"C\")",
        ],
        [
            "ALTER INDEX %S.documents_vector SET (gin_pending_list_limit = 256)",
            "SELECT gin_clean_pending_list(to_regclass(%L || '.documents_vector'))",
        ],
        vocabularyStatements,
        [
            "ALTER TABLE %S.documents ADD COLUMN IF NOT EXISTS attributes jsonb",
            "ALTER TABLE %S.documents ADD COLUMN IF NOT EXISTS boosts jsonb",
            "ALTER TABLE %S.sources ADD COLUMN IF NOT EXISTS attributes jsonb",
        ],
    ]

    /// A schema name as a message shows it: quoted as an identifier (an inner `"` doubled, so
    /// that its bounds are plain), control characters escaped.
    static func shown(_ name: String) -> String {
        quoted(UserText.shown(name, limit: 63))
    }

    /// A schema name, quoted as a PostgreSQL identifier.
    public static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The statements that bring a schema at `version` to ``currentVersion``.
    static func statements(from version: Int, schema: String) -> [String] {
        let literal = "'" + quoted(schema).replacingOccurrences(of: "'", with: "''") + "'"
        return migrations[version...].flatMap { $0 }.map {
            $0.replacingOccurrences(of: "%S", with: quoted(schema)).replacingOccurrences(of: "%L", with: literal)
        }
    }
}
