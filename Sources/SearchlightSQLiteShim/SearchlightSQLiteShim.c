#include "SearchlightSQLiteShim.h"

int searchlight_sqlite3_no_checkpoint_on_close(sqlite3 *db) {
    int enabled = 0;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &enabled);
}
