/* HDF5 round logs: every swarm node (MPI rank) appends one row per training round to its own
 * HDF5 file and makes it durable before the next round, so the log can be read while the
 * run goes on and still holds every finished round after a crash (kill -9). A run-level
 * index file exposes every node's log as /node/NNNN through external links.
 *
 * File layout (one file per node, written with the default sequential driver, no MPI-IO):
 *   /round          int64 (rows,)      the round of each row, strictly increasing
 *   /<column>       float64 (rows,) | int64 (rows,) | float64 (rows, n)
 *                   attribute "help" (string), vector columns optionally "labels" (n strings)
 *   root attributes "h5log_version" (= 1) plus whatever the caller sets (config text, ...)
 * All datasets are chunked with an unlimited first dimension; float64 fill value is NaN.
 *
 * Readers (see h5log.c for why the file is written in SWMR mode):
 *   - open with h5py.File(path, "r", swmr=True) (or H5F_ACC_SWMR_READ): this works while the
 *     writer runs, after a clean close, and after a crash. Without swmr=True a log whose
 *     writer is running or was killed is refused ("file is already open for write");
 *     h5log_open_append or `h5clear -s` clears that. A log killed before its first append
 *     (no rows yet) is refused even with swmr=True until cleared the same way.
 *   - through the run index: h5py.File("run.h5", "r", swmr=True) also opens the node files
 *     in SWMR mode (HDF5 passes the parent's access flags on through external links).
 *   - complete rows: the smallest length over all datasets is always safe. The writer makes
 *     every column durable before /round, so len(/round) is the same number provided /round
 *     is read before the columns are opened (a SWMR reader caches what it has read); with
 *     long-lived handles, refresh() /round first, then the columns. Slice columns to it.
 */
#ifndef SAPO_IO_H5LOG_H
#define SAPO_IO_H5LOG_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    H5LOG_F64 = 0,     /* one float64 per round (NaN allowed: "not measured this round") */
    H5LOG_I64 = 1,     /* one int64 per round */
    H5LOG_F64_VEC = 2, /* `length` float64 per round, e.g. one value per task */
} H5LogKind;

typedef struct {
    const char* name;          /* dataset name: not empty, no '/', not "round", unique */
    H5LogKind kind;
    int length;                /* H5LOG_F64_VEC: entries per row (>= 1); else ignored */
    const char* help;          /* attribute "help"; NULL for none */
    const char* const* labels; /* H5LOG_F64_VEC only: `length` names (attribute "labels"); NULL for none */
} H5LogColumn;

/* One value per column for h5log_append, indexed like the column array. */
typedef union {
    double f;        /* H5LOG_F64 */
    int64_t i;       /* H5LOG_I64 */
    const double* v; /* H5LOG_F64_VEC: `length` values */
} H5LogValue;

typedef struct H5Log H5Log;

/* Call before MPI_Init in a program that writes logs: HDF5 then neither closes files itself at
 * MPI_Finalize nor at exit. HDF5 1.10 segfaults there on a file whose H5Fclose failed (any
 * flush that failed once, e.g. on a full disk, makes every later close fail); every log is
 * closed by its owner, and one that could not be closed is left as a killed writer leaves it
 * (rows up to the last good flush). */
void h5log_library_init(void);

/* Creates a new log at `path` (fails if the file exists: a resumed run uses
 * h5log_open_append). Returns NULL with a one-line reason in err on failure. */
H5Log* h5log_create(const char* path, const H5LogColumn* columns, int n_columns, char* err, size_t errlen);

/* Reopens an existing log to continue a resumed run: checks it has these columns (name,
 * kind, length) and no other; a column the log lacks (one a newer sapo added) is created,
 * its earlier rows NaN (-1 for integers), once every other check passed. Then it drops every row whose round is after `keep_through_round` (the
 * checkpoint round the run replays from; INT64_MAX keeps all, -1 drops all), clears the
 * "open for write" mark a killed writer leaves, walks every chunk index (a log a full disk
 * damaged is refused here, at once) and sets *last_round to the last round kept (-1 when no
 * row is left). The caller guarantees no other process writes the file. */
H5Log* h5log_open_append(const char* path, const H5LogColumn* columns, int n_columns,
                         int64_t keep_through_round, int64_t* last_round, char* err, size_t errlen);

/* Root attributes (replacing one of the same name), flushed at once. Only before the first
 * h5log_append of this H5Log: in SWMR mode HDF5 cannot add attributes. 0, or -1 with err. */
int h5log_set_attr_string(H5Log* log, const char* name, const char* value, char* err, size_t errlen);
int h5log_set_attr_int(H5Log* log, const char* name, int64_t value, char* err, size_t errlen);
int h5log_set_attr_double(H5Log* log, const char* name, double value, char* err, size_t errlen);

/* Appends one row (values[c] for column c) for `round`, which must be >= 0 and after the
 * last round in the file, then flushes it to the file. 0, or -1 with err (the row is then
 * not in the file and the log can still be appended to or closed). */
int h5log_append(H5Log* log, int64_t round, const H5LogValue* values, char* err, size_t errlen);

/* Rows in the log and the last round (-1 when empty). */
int64_t h5log_rows(const H5Log* log);
int64_t h5log_last_round(const H5Log* log);

/* Flushes and closes (clearing the file's "open for write" mark); NULL is fine. A failure
 * (rows already appended are kept) is printed on stderr; h5log_close_checked returns it
 * instead: 0, or -1 with err. */
void h5log_close(H5Log* log);
int h5log_close_checked(H5Log* log, char* err, size_t errlen);

/* Reads up to max values of the float column `name` of a closed log into out and sets *n to
 * how many it read. 0, or -1 with err (no such file or column, not a float column). */
int h5log_read_column(const char* path, const char* name, double* out, int64_t max, int64_t* n, char* err,
                      size_t errlen);

/* Writes (replaces) the run index run_h5_path: group /node with one external link per
 * node, /node/0000 ... (4 digits, more when n_nodes > 10000), each pointing at the root
 * group of node_file_relpaths[i] (relative to run_h5_path's directory), so
 * run["node/0003/reward"] is node 3's reward column. Root attribute "n_nodes".
 * The node files need not exist yet. 0, or -1 with err. */
int h5log_write_run_index(const char* run_h5_path, int n_nodes, const char* const* node_file_relpaths,
                          char* err, size_t errlen);

#endif
