import Searchlight

/// The vocabulary of schema version 5: each source's words with the number of its documents that
/// hold them, kept by triggers on `documents`:
///
/// ```sql
/// searchlight.vocabulary(word text COLLATE "C", source text, documents integer,  -- PRIMARY KEY (word, source)
/// ```
///
/// A document's words are its vector's lexemes without their field (`body\u{1F}kernel` is
/// `kernel`), each counted once per document, and only those the local index's vocabulary keeps
/// (``Searchlight/SearchTextAnalyzer/isVocabularyWord(_:)``): at most 64 bytes, no CJK character. Statement triggers with
/// transition tables count a whole statement's documents at once (a batch's upsert, a
/// snapshot's `COPY`, a resync's `DELETE`), adding the new documents' words and subtracting
/// the old ones', in word order, and delete the words no document holds any more. Two sinks of
/// one source never write at once and two sources touch different rows; a DBA's writes beside a
/// sink of the same source may meet it in a deadlock, which the sink retries (`40P01`):
///
/// ```sql
/// INSERT INTO vocabulary AS v (word, source, documents)
/// SELECT word, source, sum(n) FROM (SELECT a.source, w, 1 FROM added a, vocabulary_words(a.vector) w
///                                   UNION ALL SELECT r.source, w, -1 FROM removed r, vocabulary_words(r.vector) w) x
/// GROUP BY word, source HAVING sum(n) <> 0 ORDER BY word, source
/// ON CONFLICT (word, source) DO UPDATE SET documents = v.documents + excluded.documents;
/// ```
extension PostgresSchema {
    /// Its statements, in a migration's transaction: the triggers come before the count of
    /// what is there, so that no write falls between them (creating a trigger waits for the
    /// writers of `documents` and holds back new ones until the migration commits). Run again
    /// on a schema that has them (a migration from an older version marker), they count it all
    /// again.
    static var vocabularyStatements: [String] {
        let keeps = "octet_length(w) BETWEEN 1 AND " + String(SearchTextAnalyzer.maximumVocabularyWordBytes)
            + " AND (w ~ '^[\\x01-\\x7f]+$' OR w !~ '" + nonWordCharacters + "')"
        return [
            "CREATE TABLE IF NOT EXISTS %S.vocabulary (word text COLLATE \"C\" NOT NULL, source text NOT NULL, documents integer NOT NULL, PRIMARY KEY (word, source))",
            """
            CREATE OR REPLACE FUNCTION %S.vocabulary_words(vector tsvector) RETURNS SETOF text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $words$
                SELECT DISTINCT w FROM (SELECT substr(l, strpos(l, E'\\x1f') + 1) AS w FROM unnest(tsvector_to_array(vector)) l) x WHERE
            """ + " " + keeps + "\n$words$",
            """
            CREATE OR REPLACE FUNCTION %S.vocabulary_count() RETURNS trigger LANGUAGE plpgsql SET search_path = %S AS $count$
            DECLARE
                gone_words text[];
                gone_sources text[];
            BEGIN
                IF TG_OP = 'TRUNCATE' THEN
                    DELETE FROM vocabulary;
                ELSIF TG_OP = 'INSERT' THEN
                    INSERT INTO vocabulary AS v (word, source, documents)
                    SELECT w, a.source, count(*) FROM added a, vocabulary_words(a.vector) w GROUP BY w, a.source ORDER BY w, a.source
                    ON CONFLICT (word, source) DO UPDATE SET documents = v.documents + excluded.documents;
                ELSE
                    -- The words whose count reaches 0 are noted as they are counted, then deleted.
                    IF TG_OP = 'UPDATE' THEN
                        WITH counted AS (
                            INSERT INTO vocabulary AS v (word, source, documents)
                            SELECT w, source, sum(n) FROM (
                                SELECT a.source, w, 1 AS n FROM added a, vocabulary_words(a.vector) w
                                UNION ALL
                                SELECT r.source, w, -1 FROM removed r, vocabulary_words(r.vector) w
                            ) x GROUP BY w, source HAVING sum(n) <> 0 ORDER BY w, source
                            ON CONFLICT (word, source) DO UPDATE SET documents = v.documents + excluded.documents
                            RETURNING v.word, v.source, v.documents)
                        SELECT array_agg(word), array_agg(source) INTO gone_words, gone_sources FROM counted WHERE documents <= 0;
                    ELSE
                        WITH counted AS (
                            UPDATE vocabulary v SET documents = v.documents - x.n
                            FROM (SELECT w, r.source, count(*) AS n FROM removed r, vocabulary_words(r.vector) w GROUP BY w, r.source) x
                            WHERE v.word = x.w AND v.source = x.source
                            RETURNING v.word, v.source, v.documents)
                        SELECT array_agg(word), array_agg(source) INTO gone_words, gone_sources FROM counted WHERE documents <= 0;
                    END IF;
                    IF gone_words IS NOT NULL THEN
                        DELETE FROM vocabulary v USING unnest(gone_words, gone_sources) AS g(w, s)
                        WHERE v.word = g.w AND v.source = g.s AND v.documents <= 0;
                    END IF;
                END IF;
                RETURN NULL;
            END
            $count$
            """,
            "DROP TRIGGER IF EXISTS vocabulary_insert ON %S.documents",
            "CREATE TRIGGER vocabulary_insert AFTER INSERT ON %S.documents REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION %S.vocabulary_count()",
            "DROP TRIGGER IF EXISTS vocabulary_update ON %S.documents",
            "CREATE TRIGGER vocabulary_update AFTER UPDATE ON %S.documents REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION %S.vocabulary_count()",
            "DROP TRIGGER IF EXISTS vocabulary_delete ON %S.documents",
            "CREATE TRIGGER vocabulary_delete AFTER DELETE ON %S.documents REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION %S.vocabulary_count()",
            "DROP TRIGGER IF EXISTS vocabulary_truncate ON %S.documents",
            "CREATE TRIGGER vocabulary_truncate AFTER TRUNCATE ON %S.documents FOR EACH STATEMENT EXECUTE FUNCTION %S.vocabulary_count()",
            "DELETE FROM %S.vocabulary",
            "INSERT INTO %S.vocabulary (word, source, documents) SELECT w, d.source, count(*) FROM %S.documents d, %S.vocabulary_words(d.vector) w GROUP BY w, d.source",
        ]
    }

    /// A regular expression class of the characters other than ASCII that a vocabulary word may
    /// not hold (``Searchlight/SearchTextAnalyzer/isVocabularyWord(_:)``: CJK characters, the
    /// CJK break token), found by asking of every one.
    static let nonWordCharacters: String = {
        var ranges: [ClosedRange<UInt32>] = []
        var start: UInt32?
        for value in UInt32(0x80)...0x10FFFF {
            let excluded = Unicode.Scalar(value).map { !SearchTextAnalyzer.isVocabularyWord(String(Character($0))) } ?? false
            if excluded, start == nil { start = value }
            if !excluded, let first = start { ranges.append(first...(value - 1)); start = nil }
        }
        if let first = start { ranges.append(first...0x10FFFF) }
        func escaped(_ value: UInt32) -> String { value <= 0xFFFF ? String(format: "\\u%04X", value) : String(format: "\\U%08X", value) }
        return "[" + ranges.map { $0.lowerBound == $0.upperBound ? escaped($0.lowerBound) : escaped($0.lowerBound) + "-" + escaped($0.upperBound) }.joined() + "]"
    }()
}
