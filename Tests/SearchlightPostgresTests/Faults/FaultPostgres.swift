import Foundation
import Testing

/// The PostgreSQL side of a fault test, read and written with `psql` (the server's own client):
/// the oracles share no code with the sink.
struct FaultPostgres: Sendable {
    /// The URL the sink gets (with `schema=`).
    let url: String
    /// The schema that holds the sink's tables.
    let schema: String
    /// The server's binaries (for `psql`).
    let binDirectory: String

    /// A schema of its own on the server at `base` (the shared test server by default).
    static func fresh(_ label: String, base: String? = PostgresTestServer.url,
                      binDirectory: String? = PostgresTestServer.binDirectory) -> FaultPostgres {
        let schema = "fault_\(label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20))_\(UInt32.random(in: 0...UInt32.max))"
        let base = base ?? "postgres://nobody@127.0.0.1/none"
        return FaultPostgres(url: base + (base.contains("?") ? "&" : "?") + "schema=\(schema)", schema: schema,
                             binDirectory: binDirectory ?? "/usr/bin")
    }

    /// The URL without Searchlight's own `schema=` parameter (which `psql` does not know).
    var connectionURL: String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let parameters = url[url.index(after: question)...].split(separator: "&").filter { !$0.hasPrefix("schema=") }
        return String(url[..<question]) + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
    }

    /// The quoted schema name, to prefix table names.
    var s: String { "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// Runs `sql` (any number of statements) with `psql`; returns the last statement's rows, each
    /// a list of cells (NULL reads as "").
    @discardableResult
    func rows(_ sql: String, timeout: Double = 120) async throws -> [[String]] {
        let psql = FileManager.default.isExecutableFile(atPath: binDirectory + "/psql") ? binDirectory + "/psql" : "/usr/bin/psql"
        let result = try await FaultProcess.run(psql, ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-F", "\u{1F}", "-R", "\u{1E}",
                                                      "-d", connectionURL, "-f", "-"], input: sql, timeout: timeout)
        return result.stdout.split(separator: "\u{1E}", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .newlines) }
            .filter { !$0.isEmpty }
            .map { $0.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The first cell of the first row.
    func value(_ sql: String) async throws -> String? {
        try await rows(sql).first?.first
    }

    /// Whether the sink has created its tables in this schema.
    func hasSinkTables() async throws -> Bool {
        try await value("SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema)' AND tablename IN ('sources', 'documents')") == "2"
    }

    // MARK: - The applied log

    /// Installs the test-only applied log (after the sink created its tables):
    ///
    /// - `fault_batches`: one row per transaction that moved a source's checkpoint
    ///   (`sources.token`) or counted a resync (`sources.resyncs`), with the transaction id,
    ///   `from_token → to_token` and the resync count before and after. Its UNIQUE key is
    ///   (source, resync epoch, from_token) for the transitions that are not resyncs: a batch
    ///   applied twice from the same checkpoint, or two sinks that both moved the same checkpoint,
    ///   collide. A collision does not fail the sink's transaction (that would hide the bug behind a
    ///   stuck sink): it is recorded in `fault_duplicates`.
    /// - `fault_documents`: every row the sink wrote to or deleted from `documents`, with its
    ///   transaction id and token: documents written by a transaction that moved no checkpoint
    ///   (not atomic with it) and the same upsert (object, token) applied by two transactions of
    ///   one epoch are found by ``appliedLogProblems()``.
    func installAppliedLog() async throws {
        try await rows("""
            CREATE TABLE \(s).fault_batches(
                id bigserial PRIMARY KEY, txid bigint NOT NULL, source text NOT NULL,
                from_token bigint, to_token bigint NOT NULL, from_resyncs integer, to_resyncs integer NOT NULL,
                resync boolean NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
            CREATE UNIQUE INDEX fault_batches_once ON \(s).fault_batches(source, to_resyncs, from_token) WHERE NOT resync;
            CREATE TABLE \(s).fault_duplicates(txid bigint, source text, from_token bigint, to_token bigint, to_resyncs integer,
                at timestamptz NOT NULL DEFAULT clock_timestamp());
            CREATE TABLE \(s).fault_documents(txid bigint NOT NULL, source text NOT NULL, entity text NOT NULL,
                object_key text NOT NULL, token bigint, op text NOT NULL);
            CREATE FUNCTION \(s).fault_record_batch() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE inserted integer;
            BEGIN
                IF TG_OP = 'UPDATE' AND NEW.token IS NOT DISTINCT FROM OLD.token AND NEW.resyncs IS NOT DISTINCT FROM OLD.resyncs THEN
                    RETURN NULL;
                END IF;
                INSERT INTO \(s).fault_batches(txid, source, from_token, to_token, from_resyncs, to_resyncs, resync)
                VALUES (txid_current(), NEW.source,
                        CASE WHEN TG_OP = 'UPDATE' THEN OLD.token END, NEW.token,
                        CASE WHEN TG_OP = 'UPDATE' THEN OLD.resyncs END, NEW.resyncs,
                        TG_OP = 'INSERT' OR NEW.resyncs IS DISTINCT FROM OLD.resyncs)
                ON CONFLICT (source, to_resyncs, from_token) WHERE NOT resync DO NOTHING;
                GET DIAGNOSTICS inserted = ROW_COUNT;
                IF inserted = 0 THEN
                    INSERT INTO \(s).fault_duplicates(txid, source, from_token, to_token, to_resyncs)
                    VALUES (txid_current(), NEW.source, OLD.token, NEW.token, NEW.resyncs);
                END IF;
                RETURN NULL;
            END $$;
            CREATE TRIGGER fault_batches AFTER INSERT OR UPDATE ON \(s).sources
                FOR EACH ROW EXECUTE FUNCTION \(s).fault_record_batch();
            CREATE FUNCTION \(s).fault_record_document() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    INSERT INTO \(s).fault_documents VALUES (txid_current(), OLD.source, OLD.entity, OLD.object_key, OLD.token, 'delete');
                ELSE
                    INSERT INTO \(s).fault_documents VALUES (txid_current(), NEW.source, NEW.entity, NEW.object_key, NEW.token, 'upsert');
                END IF;
                RETURN NULL;
            END $$;
            CREATE TRIGGER fault_documents AFTER INSERT OR UPDATE OR DELETE ON \(s).documents
                FOR EACH ROW EXECUTE FUNCTION \(s).fault_record_document();
            """)
    }

    /// What the applied log shows was applied twice, or not atomically with the checkpoint (empty
    /// when all is well), and how many batches and resyncs it saw.
    func appliedLogProblems() async throws -> (problems: [String], batches: Int, resyncs: Int) {
        var problems: [String] = []
        for row in try await rows("SELECT source, from_token, to_token, to_resyncs, txid FROM \(s).fault_duplicates ORDER BY at LIMIT 5") {
            problems.append("batch applied twice from the same checkpoint: \(row)")
        }
        for row in try await rows("""
            SELECT source, from_token, to_token, txid FROM \(s).fault_batches
            WHERE NOT resync AND to_token <= from_token ORDER BY id LIMIT 5
            """) {
            problems.append("a checkpoint moved back or stood still without a resync: \(row)")
        }
        for row in try await rows("""
            SELECT d.txid, d.source, d.entity, d.object_key, d.token, d.op FROM \(s).fault_documents d
            WHERE NOT EXISTS (SELECT 1 FROM \(s).fault_batches b WHERE b.txid = d.txid)
              AND NOT EXISTS (SELECT 1 FROM \(s).fault_duplicates b WHERE b.txid = d.txid) LIMIT 5
            """) {
            problems.append("documents written by a transaction that moved no checkpoint: \(row)")
        }
        for row in try await rows("""
            WITH b AS (SELECT txid, to_resyncs FROM \(s).fault_batches WHERE NOT resync
                       UNION ALL SELECT txid, to_resyncs FROM \(s).fault_duplicates)
            SELECT d.source, d.entity, d.object_key, d.token, b.to_resyncs, count(DISTINCT d.txid)
            FROM \(s).fault_documents d JOIN b ON b.txid = d.txid
            WHERE d.op = 'upsert'
            GROUP BY d.source, d.entity, d.object_key, d.token, b.to_resyncs
            HAVING count(DISTINCT d.txid) > 1 LIMIT 5
            """) {
            problems.append("the same change upserted by two transactions: \(row)")
        }
        let counts = try await rows("SELECT count(*) FILTER (WHERE NOT resync), count(*) FILTER (WHERE resync) FROM \(s).fault_batches").first ?? ["0", "0"]
        return (problems, Int(counts[0]) ?? 0, Int(counts[1]) ?? 0)
    }

    /// A source's checkpoint row: token and resync count (nil if the source has none).
    func checkpoint(_ source: String) async throws -> (token: Int64, resyncs: Int, reason: String)? {
        guard let row = try await rows("SELECT token, resyncs, coalesce(resync_reason, '') FROM \(s).sources WHERE source = '\(source)'").first,
              let token = Int64(row[0]), let resyncs = Int(row[1]) else { return nil }
        return (token, resyncs, row[2])
    }

    /// The documents of `source`, `entity object_key` → fields (as JSON text, keys sorted by jsonb).
    func documents(_ source: String, fields: [String: [String]]) async throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for row in try await rows("SELECT entity, object_key, fields::text FROM \(s).documents WHERE source = '\(source)'") {
            let object = (try? JSONSerialization.jsonObject(with: Data(row[2].utf8))) as? [String: Any] ?? [:]
            let columns = fields[row[0]] ?? []
            result[row[0] + " " + row[1]] = columns.map { column -> String in
                guard let value = object[column], !(value is NSNull) else { return "" }
                return value as? String ?? "\(value)"
            }
        }
        return result
    }
}
