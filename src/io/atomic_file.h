/* Files a reader must never see half-written (DONE, ckpt/LATEST, config.ini, summary.json,
 * NODES, checkpoints): written to PATH.tmp, flushed, fsync'ed, closed with the result
 * checked, then renamed over PATH, and PATH's directory fsync'ed so the rename itself
 * survives a power loss. A reader (or a resume after a crash or a full disk) sees
 * the old file or the complete new one, never a prefix; on any failure PATH is untouched and
 * PATH.tmp is removed. The one place that implements this: every marker goes through here. */
#ifndef SAPO_IO_ATOMIC_FILE_H
#define SAPO_IO_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Opens PATH.tmp for writing (binary-safe). NULL with "cannot create PATH.tmp: OS error" in err. */
FILE* atomic_file_begin(const char* path, char* err, size_t errlen);
/* Flushes, fsyncs, closes f (from atomic_file_begin(path)) and renames it over path; an
 * earlier failed write on f fails it too. 0, or -1 with "cannot write PATH: OS error". */
int atomic_file_commit(FILE* f, const char* path, char* err, size_t errlen);
/* Renames tmp over path, then fsyncs path's directory. 0, or the errno of what failed. */
int atomic_rename(const char* tmp, const char* path);
/* Gives up: closes f and removes PATH.tmp; path is untouched. */
void atomic_file_abort(FILE* f, const char* path);
/* The whole of `text` as path's new content, atomically. 0, or -1 with err. */
int atomic_file_write(const char* path, const char* text, char* err, size_t errlen);
/* root printed as indented JSON and a newline, as path's new content, atomically (cJSON
 * prints NaN as null); root stays the caller's. 0, or -1 with err. */
struct cJSON;
int atomic_file_write_json(const char* path, const struct cJSON* root, char* err, size_t errlen);

#endif
