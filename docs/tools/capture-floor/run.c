// Counts one statement run N times in one transaction, on a prepared database.
// usage: run DB SETUP_SQL STATEMENT N [MODE]
// The statement is bound with ?1 = i (1..N) and ?2 = a text of the i-th row.
// Only the loop is collected (callgrind toggle).
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>
static void check(int rc, sqlite3 *db, const char *what) { if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) { fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db)); exit(1); } }
int main(int argc, char **argv) {
  sqlite3 *db; check(sqlite3_open(argv[1], &db), db, "open");
  char *err = 0;
  if (sqlite3_exec(db, argv[2], 0, 0, &err) != SQLITE_OK) { fprintf(stderr, "setup: %s\n", err); return 1; }
  sqlite3_stmt *st; check(sqlite3_prepare_v2(db, argv[3], -1, &st, 0), db, "prepare");
  int n = atoi(argv[4]);
  char text[200];
  check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
  CALLGRIND_TOGGLE_COLLECT;
  for (int i = 1; i <= n; i++) {
    snprintf(text, sizeof text, "title of row %d, some words here", i);
    sqlite3_bind_int(st, 1, i);
    sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
    check(sqlite3_step(st), db, "step");
    sqlite3_reset(st);
  }
  CALLGRIND_TOGGLE_COLLECT;
  check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
  sqlite3_finalize(st);
  sqlite3_close(db);
  return 0;
}
