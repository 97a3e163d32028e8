#ifndef SEARCHLIGHT_SQLITE_SHIM_H
#define SEARCHLIGHT_SQLITE_SHIM_H

#include <sqlite3.h>

/// `sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, 0)`: the connection will not
/// checkpoint the WAL when it is the last to close. (`sqlite3_db_config` is variadic: Swift
/// cannot call it.) Returns SQLite's result code.
int searchlight_sqlite3_no_checkpoint_on_close(sqlite3 *db);

#endif
