#!/usr/bin/env python3
"""Instructions one row of a write costs on a prepared database, counted by callgrind.

Runs `run` (run.c: one statement, prepared once, bound and stepped N times in one transaction,
only the loop collected) at N = 1,000 and 2,000 and prints the difference per row.

    gcc -O2 -o run run.c -lsqlite3            # Debian: libsqlite3-dev, valgrind
    ./measure.py insert DB "INSERT INTO docs(id, key, title, body) VALUES (?1 + 100000, 'k', ?2, ?2)"
    ./measure.py delete DB "DELETE FROM docs WHERE id = ?1" --seed

DB is copied for each count (a database `searchlight-workload prepare foreign-insert --tracked`
made, or an untracked one with the same table); --seed first inserts docs 1 to 2,000.
"""
import argparse, os, re, shutil, sqlite3, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("name"); parser.add_argument("base"); parser.add_argument("statement")
parser.add_argument("--seed", action="store_true")
arguments = parser.parse_args()

def count(n):
    directory = tempfile.mkdtemp()
    path = os.path.join(directory, "t.sqlite")
    shutil.copy(arguments.base, path)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    if arguments.seed:
        connection.execute("BEGIN")
        connection.executemany("INSERT INTO docs(id, key, title, body) VALUES (?, ?, ?, ?)",
                               [(i, "k%d" % i, "title %d" % i, "body of %d" % i) for i in range(1, 2001)])
        connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    out = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--callgrind-out-file=/dev/null",
                          os.path.join(here, "run"), path, "PRAGMA journal_mode=WAL;", arguments.statement, str(n)],
                         capture_output=True, text=True)
    shutil.rmtree(directory)
    match = re.search(r"Collected : (\d+)", out.stderr)
    if not match: sys.exit(out.stderr[-2000:])
    return int(match.group(1))

print("%-30s %8.0f instructions a row" % (arguments.name, (count(2000) - count(1000)) / 1000))
