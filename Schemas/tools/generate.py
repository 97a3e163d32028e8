#!/usr/bin/env python3
"""Regenerates Schemas/history.sql and Schemas/triggers.sql from the library's Swift sources.

The library is the source of truth for what it creates; these files document it, and
Tests/SearchlightHistoryTests/Capture/SchemaFilesTests.swift fails when they drift.
Run from the package root: python3 Schemas/tools/generate.py
"""
import re

COMMENTS = {
    "searchlight_meta": """Key/value settings: schemaVersion, the installed model (JSON), modelRevision (incremented
whenever an install changes the model: running indexers compare it to reload the model),
purgedThroughToken and purgedThroughTimestamp (how far cleanup deleted history: fetching
from an older point throws historyExpired), installationID (a random id written when the
tables are created: a process that opened the database before an uninstall, or before an
uninstall and a new init, finds another one or none, and stops), and what capture healing
keeps (captureStatus, captureVersion, captureSchemaVersion, declaredModel, captureRootPages,
resyncThroughToken), and walFills (a counter a store opening a database whose WAL is empty
writes, instead of the table GRDB would create and drop). The index keeps its own state in searchlight_index_state
(Schemas/index.sql).""",
    "searchlight_conflict": """The rows a REPLACE may delete for colliding on a unique key other than the primary key,
kept by the capture triggers between a statement row's BEFORE and AFTER triggers (history
schema version 3). A handful of rows at most.""",
    "searchlight_entity": "Tracked entities. Log rows refer to an entity by this stable integer id.",
    "searchlight_log": """The history log, append-only. A HistoryStore.write's transaction is a header row (type 0)
whose id is its token, followed by its change rows (type 1 insert, 2 update, 3 delete;
token = the header's id). Any other writer's change is a row of its own with token 0: a
transaction whose token is its id, and which holds its own timestamp (capture triggers 8;
a REPLACE's delete and insert share one: the insert's token is the delete's id). SQLite
serializes writers, so a transaction's rows are contiguous and tokens strictly increase in
commit order. Ids are SQLite's next rowid (a header's is max(max(id), purgedThroughToken) +
1), and cleanup never deletes the newest row: never reused.
Reading after a token is one range scan of the rowid: no index is needed.
Changes: object_id has no type affinity (INTEGER and TEXT keys keep their type);
updated_columns (updates) is a JSON array of column names; tombstone (deletes) is a JSON
object of the preserveOnDelete values (BLOBs as hex text).
Timestamps in seconds since 1970 (informational: never used to order or checkpoint);
author, context and process_id are NULL for writes made outside HistoryStore.write; open
was 1 inside an uncommitted HistoryStore.write before capture triggers 8 (searchlight_open).""",
    "searchlight_open": """The token of the HistoryStore.write running now (history schema version 4): put here when
it starts, removed before it commits, so no other writer ever sees a row. A change the
capture triggers record while it is empty (any other writer's) is a transaction of its own.""",
    "searchlight_replaced": """Scratch rows the triggers use to record INSERT OR REPLACE of an existing key as a
delete (with its tombstone) followed by an insert. object_id has no type affinity; the
triggers compare it with +NEW."k" (no affinity either), so that the primary key answers.""",
    "searchlight_replaced_nocase": """Scratch lookups of NOCASE and RTRIM keys compare with the key's collation: these
indexes answer them as the primary key answers BINARY keys (history schema version 2). They
cover the tombstone, so that no plan prefers scanning the primary key's entity_id prefix.""",
    "searchlight_consumer": """Consumers (authors that read history) and their checkpoints. required = 1: cleanup
waits for this consumer. token, transaction_timestamp, checkpointed_at: its checkpoint.""",
}


def swift_statements(path):
    source = open(path).read()
    statements = re.findall(r'"""\n(.*?)\n\s*"""', source, re.S)
    return ["\n".join(line[12:] if line.startswith(" " * 12) else line.strip() for line in s.splitlines()) for s in statements]


def history_sql():
    out = [
        "-- Searchlight history log: the tables HistoryStore creates (history schema version 4).",
        "-- What the library creates must match this file: Tests/SearchlightHistoryTests/Capture/SchemaFilesTests.swift.",
        "-- Regenerate with: python3 Schemas/tools/generate.py",
        "",
    ]
    for statement in swift_statements("Sources/SearchlightHistory/Capture/HistorySchema.swift"):
        if not statement.startswith("CREATE"):
            continue  # a query of the schema's code, not part of the schema
        name = statement.split()[2].strip('"')
        if name in COMMENTS:
            out += ["-- " + line for line in COMMENTS[name].splitlines()]
        out.append(statement + ";\n")
    open("Schemas/history.sql", "w").write("\n".join(out))


def triggers_sql():
    source = open("Sources/SearchlightHistory/Capture/CaptureTriggers.swift").read()
    # The template, then the triggers added on tables with another unique key (conflictTemplate).
    parts = [re.search(r'static let %s = #"""\n(.*?)\n    """#' % name, source, re.S).group(1) for name in ("template", "conflictTemplate")]
    open("Schemas/triggers.sql", "w").write("".join("\n".join(line[4:] for line in part.splitlines()) + "\n" for part in parts))


if __name__ == "__main__":
    history_sql()
    triggers_sql()
