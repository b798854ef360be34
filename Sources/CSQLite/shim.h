#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

/// `sqlite3_bind_blob` with `SQLITE_TRANSIENT` (SQLite copies the bytes before it returns); Swift cannot import
/// the `SQLITE_TRANSIENT` macro, a cast of -1 to a function pointer.
static inline int csqlite_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(statement, index, bytes, count, SQLITE_TRANSIENT);
}

/// `sqlite3_bind_text` with `SQLITE_TRANSIENT`.
static inline int csqlite_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int count) {
    return sqlite3_bind_text(statement, index, text, count, SQLITE_TRANSIENT);
}

/// errno is a macro on glibc; Swift reads it through this wrapper.
static inline int csqlite_errno(void) { return errno; }

/// `open(2)` with a mode (Swift cannot call the variadic `open`).
static inline int csqlite_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }
#endif
