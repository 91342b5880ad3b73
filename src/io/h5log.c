/* HDF5 round logs (see h5log.h for the layout and how to read them).
 *
 * Why SWMR (single writer, multiple readers; H5F_ACC_SWMR_WRITE, 1.10 file format):
 *   - Reading while the writer runs. A plain (non-SWMR) writer holds an exclusive flock on
 *     the file, so h5py cannot even open it ("unable to lock file") unless the reader turns
 *     locking off; and then it reads metadata the writer may be rewriting half-way through,
 *     because a plain HDF5 flush writes its metadata in no particular order. A SWMR writer
 *     drops the lock and writes metadata in dependency order (children before the index
 *     that points to them), and readers verify checksums and retry, so an h5py reader with
 *     swmr=True sees a consistent prefix of the rows at any moment.
 *   - kill -9. The same ordering means the bytes on disk are a consistent file at every
 *     instant, not only between flushes: after a kill the file holds every row that was
 *     flushed. Plain mode is consistent only between flushes, and a kill inside H5Fflush can
 *     leave the stored end-of-file address ahead of the real size ("truncated file").
 *   Measured on this branch (HDF5 1.10.8, h5py 3.7, ext4; writer in a tight append loop so
 *   kills and reads land inside appends and flushes; plain = same code without SWMR and with
 *   the default file format):
 *     kill -9 at a random moment, 100 times each: SWMR 100/100 files open (swmr=True) with
 *     every row reported flushed; plain 99/100 (one "addr overflow ... eoa" on read).
 *     a reader reopening and checking every row for 4 s during the writes: SWMR 0 of 283
 *     opens failed; plain (reader with HDF5_USE_FILE_LOCKING=FALSE, else every open fails)
 *     10 of 276 failed ("truncated file", "addr overflow"). At one row per 20 ms neither
 *     failed in ~3000 opens, but plain still only with locking turned off.
 *   tests/unit/test_h5log_crash.sh repeats the live read, the kill and the resume.
 *   "Durable" means durable against the death of the process: rows are in the kernel's
 *   page cache, not fsync'ed, so a power loss can still cost the last rounds.
 *   The costs: the file format needs HDF5 >= 1.10 readers; attributes must be written before
 *   the first append (SWMR cannot add them; h5log_set_attr_* refuse afterwards); a crashed
 *   log is marked "open for write", so readers pass swmr=True (or run `h5clear -s`), and
 *   h5log_open_append clears the mark itself.
 *
 * Row order on disk: each append extends and writes every column, flushes each column
 * (H5Dflush: its raw chunk, then its metadata), then /round, then the file. So /round is
 * never longer than any column, and len(/round) is the number of complete rows.
 *
 * Errors: the public API returns -1/NULL with one line in err and keeps HDF5's own error
 * stack quiet; the innermost HDF5 message (e.g. the errno text) goes into that line. h5Check
 * is kept for calls that only fail on a broken library (property lists, dataspaces). */
#include "io/h5log.h"

#include "io/atomic_file.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"

enum { H5LOG_VERSION = 1, H5LOG_MAX_VEC = 1 << 16 };
/* Chunks of about 16 KiB: each flush rewrites the last chunk of every column, so small
 * chunks keep the per-round write small while a long run still has few chunks. */
enum { CHUNK_BYTES = 16384, CHUNK_MAX_ROWS = 1024 };

struct H5Log {
    char* path;
    hid_t file;
    int n_columns;
    char** names;
    H5LogKind* kinds;
    int* lengths;
    hid_t* dsets;      /* one per column */
    hid_t round_dset;
    int64_t n_rows;
    int64_t last_round;
    int swmr;          /* H5Fstart_swmr_write done (at the first append) */
};

/* ---- errors ------------------------------------------------------------------------- */

typedef struct {
    H5E_auto2_t func;
    void* data;
} QuietH5;

/* The innermost message of the first HDF5 failure since quiet_begin: the root cause (later
 * clean-up calls would clear HDF5's stack before h5fail could read it). */
static char first_detail[256];

static herr_t innermost_cb(unsigned n, const H5E_error2_t* e, void* data) {
    char* buf = data;
    if (n == 0 && e->desc && e->desc[0]) {
        snprintf(buf, sizeof first_detail, "%s", e->desc);
        for (char* c = buf; *c; c++) /* one line: the sec2 driver's message holds ctime()'s newline */
            if (*c == '\n') *c = ' ';
    }
    return 0;
}

/* HDF5 calls this when an API call fails, instead of printing its whole stack. */
static herr_t record_cb(hid_t estack, void* data) {
    if (!first_detail[0]) H5Ewalk2(estack, H5E_WALK_UPWARD, innermost_cb, first_detail);
    return 0;
}

static QuietH5 quiet_begin(void) {
    QuietH5 q;
    H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
    H5Eset_auto2(H5E_DEFAULT, record_cb, NULL);
    first_detail[0] = '\0';
    return q;
}

static void quiet_end(QuietH5 q) { H5Eset_auto2(H5E_DEFAULT, q.func, q.data); }

/* "h5log: PATH: WHAT (hdf5: innermost message of the first failure)"; returns -1. */
static int h5fail(char* err, size_t errlen, const char* path, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int h5fail(char* err, size_t errlen, const char* path, const char* fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (first_detail[0]) return set_error(err, errlen, "h5log: %s: %s (hdf5: %s)", path, what, first_detail);
    return set_error(err, errlen, "h5log: %s: %s", path, what);
}

void h5log_library_init(void) {
    H5dont_atexit();
    H5open();
}

/* ---- helpers ------------------------------------------------------------------------ */

static hid_t file_access(int clear_status_flags) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    h5Check(fapl);
    /* SWMR needs the 1.10 file format (superblock v3, extensible-array chunk index); pinned
     * to 1.10 rather than "latest" so a build against a newer HDF5 still writes logs that
     * every HDF5 >= 1.10 reader (h5py included) can open. */
    h5Check(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110));
#if H5_VERSION_GE(1, 10, 7)
    /* Cluster file systems without flock() would make every open fail; the lock is only a
     * guard against a second writer, so go on without it there. */
    h5Check(H5Pset_file_locking(fapl, 1, 1));
#endif
    if (clear_status_flags) {
        /* What `h5clear -s` sets: forget the "open for (SWMR) write" mark a killed writer
         * left in the superblock. A named library property; if a future HDF5 drops it the
         * open below fails with HDF5's own message, which names h5clear. */
        hbool_t yes = 1;
        if (H5Pset(fapl, "clear_status_flags", &yes) < 0) first_detail[0] = '\0'; /* not the root cause */
    }
    return fapl;
}

static hid_t string_type(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    h5Check(t);
    h5Check(H5Tset_size(t, H5T_VARIABLE));
    h5Check(H5Tset_cset(t, H5T_CSET_UTF8));
    return t;
}

static int is_float_kind(H5LogKind k) { return k == H5LOG_F64 || k == H5LOG_F64_VEC; }
static int vec_len(const H5Log* log, int c) { return log->kinds[c] == H5LOG_F64_VEC ? log->lengths[c] : 0; }

static int check_columns(const H5LogColumn* columns, int n, char* err, size_t errlen) {
    if (n < 0 || (n > 0 && !columns)) return set_error(err, errlen, "h5log: %d columns given, expected >= 0 with a column array", n);
    for (int c = 0; c < n; c++) {
        const H5LogColumn* col = &columns[c];
        const char* name = col->name ? col->name : "(null)";
        if (!col->name || !col->name[0] || strchr(col->name, '/') || !strcmp(col->name, ".") || !strcmp(col->name, "round"))
            return set_error(err, errlen, "h5log: column %d name \"%s\": expected a non-empty name without '/', not \"round\"", c, name);
        for (int d = 0; d < c; d++)
            if (!strcmp(columns[d].name, col->name))
                return set_error(err, errlen, "h5log: column %d name \"%s\" repeats column %d", c, name, d);
        if (col->kind != H5LOG_F64 && col->kind != H5LOG_I64 && col->kind != H5LOG_F64_VEC)
            return set_error(err, errlen, "h5log: column %d (\"%s\") kind %d: expected H5LOG_F64, H5LOG_I64 or H5LOG_F64_VEC", c, name, (int)col->kind);
        if (col->kind == H5LOG_F64_VEC && (col->length < 1 || col->length > H5LOG_MAX_VEC))
            return set_error(err, errlen, "h5log: column %d (\"%s\") length %d: expected 1..%d for a vector column", c, name, col->length, H5LOG_MAX_VEC);
        if (col->labels && col->kind != H5LOG_F64_VEC)
            return set_error(err, errlen, "h5log: column %d (\"%s\") has labels: only vector columns take labels", c, name);
        if (col->labels)
            for (int i = 0; i < col->length; i++)
                if (!col->labels[i])
                    return set_error(err, errlen, "h5log: column %d (\"%s\") label %d is NULL: expected %d labels", c, name, i, col->length);
    }
    return 0;
}

static H5Log* log_new(const char* path, hid_t file, const H5LogColumn* columns, int n) {
    H5Log* log = callocCheck(1, sizeof *log);
    log->path = strdup(path);
    if (!log->path) sapo_die("out of memory");
    log->file = file;
    log->n_columns = n;
    log->names = callocCheck(n ? n : 1, sizeof(char*));
    log->kinds = callocCheck(n ? n : 1, sizeof(H5LogKind));
    log->lengths = callocCheck(n ? n : 1, sizeof(int));
    log->dsets = callocCheck(n ? n : 1, sizeof(hid_t));
    for (int c = 0; c < n; c++) {
        log->names[c] = strdup(columns[c].name);
        if (!log->names[c]) sapo_die("out of memory");
        log->kinds[c] = columns[c].kind;
        log->lengths[c] = columns[c].kind == H5LOG_F64_VEC ? columns[c].length : 1;
        log->dsets[c] = H5I_INVALID_HID;
    }
    log->round_dset = H5I_INVALID_HID;
    log->last_round = -1;
    return log;
}

/* Closes every handle; 0, or -1 if HDF5 reported a failure (the message is on its stack). */
static int log_free(H5Log* log) {
    int rc = 0;
    for (int c = 0; c < log->n_columns; c++) {
        if (log->dsets[c] >= 0 && H5Dclose(log->dsets[c]) < 0) rc = -1;
        free(log->names[c]);
    }
    if (log->round_dset >= 0 && H5Dclose(log->round_dset) < 0) rc = -1;
    if (log->file >= 0 && H5Fclose(log->file) < 0) rc = -1;
    free(log->names);
    free(log->kinds);
    free(log->lengths);
    free(log->dsets);
    free(log->path);
    free(log);
    return rc;
}

static int write_string_attr(hid_t obj, const char* name, const char* value) {
    hid_t t = string_type(), s = H5Screate(H5S_SCALAR);
    h5Check(s);
    hid_t a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &value);
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    h5Check(H5Sclose(s));
    h5Check(H5Tclose(t));
    return rc < 0 ? -1 : 0;
}

static int write_labels_attr(hid_t obj, const char* const* labels, int n) {
    hid_t t = string_type();
    hsize_t dims[1] = {(hsize_t)n};
    hid_t s = H5Screate_simple(1, dims, NULL);
    h5Check(s);
    hid_t a = H5Acreate2(obj, "labels", t, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, t, labels);
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    h5Check(H5Sclose(s));
    h5Check(H5Tclose(t));
    return rc < 0 ? -1 : 0;
}

static int write_number_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, const void* value) {
    hid_t s = H5Screate(H5S_SCALAR);
    h5Check(s);
    hid_t a = H5Acreate2(obj, name, file_type, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, mem_type, value);
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    h5Check(H5Sclose(s));
    return rc < 0 ? -1 : 0;
}

/* An empty chunked dataset: (0,) or (0, len) growing along the first axis. */
static hid_t dataset_create(hid_t file, const char* name, int is_float, int len) {
    int rank = len > 0 ? 2 : 1;
    hsize_t row_bytes = 8 * (hsize_t)(len > 0 ? len : 1);
    hsize_t rows = CHUNK_BYTES / row_bytes;
    if (rows < 1) rows = 1;
    if (rows > CHUNK_MAX_ROWS) rows = CHUNK_MAX_ROWS;
    hsize_t dims[2] = {0, (hsize_t)len}, maxdims[2] = {H5S_UNLIMITED, (hsize_t)len}, chunk[2] = {rows, (hsize_t)len};
    hid_t space = H5Screate_simple(rank, dims, maxdims);
    h5Check(space);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    h5Check(dcpl);
    h5Check(H5Pset_chunk(dcpl, rank, chunk));
    /* A row a reader sees before its data (it should not, see the top comment) reads as
     * NaN / -1, never as a plausible 0. */
    double fill_f = NAN;
    int64_t fill_i = -1;
    if (is_float)
        h5Check(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill_f));
    else
        h5Check(H5Pset_fill_value(dcpl, H5T_NATIVE_INT64, &fill_i));
    hid_t d = H5Dcreate2(file, name, is_float ? H5T_IEEE_F64LE : H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    h5Check(H5Pclose(dcpl));
    h5Check(H5Sclose(space));
    return d;
}

/* Grows d to row+1 rows and writes row `row` from buf (len values, or 1 when len == 0). */
static int write_row(hid_t d, int is_float, int len, hsize_t row, const void* buf) {
    int rank = len > 0 ? 2 : 1;
    hsize_t dims[2] = {row + 1, (hsize_t)len}, start[2] = {row, 0}, count[2] = {1, (hsize_t)len};
    if (H5Dset_extent(d, dims) < 0) return -1;
    hid_t fs = H5Dget_space(d);
    if (fs < 0) return -1;
    hid_t ms = H5Screate_simple(rank, count, NULL);
    h5Check(ms);
    herr_t rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (rc >= 0) rc = H5Dwrite(d, is_float ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, buf);
    h5Check(H5Sclose(ms));
    h5Check(H5Sclose(fs));
    return rc < 0 ? -1 : 0;
}

static int set_rows(hid_t d, int len, hsize_t rows) {
    hsize_t dims[2] = {rows, (hsize_t)len};
    return H5Dset_extent(d, dims) < 0 ? -1 : 0;
}

/* Rows of a dataset (its first dimension), -1 on failure. */
static int64_t dataset_rows(hid_t d) {
    hid_t s = H5Dget_space(d);
    if (s < 0) return -1;
    hsize_t dims[2] = {0, 0};
    int rank = H5Sget_simple_extent_dims(s, dims, NULL);
    h5Check(H5Sclose(s));
    return rank < 1 ? -1 : (int64_t)dims[0];
}

/* ---- create ------------------------------------------------------------------------- */

H5Log* h5log_create(const char* path, const H5LogColumn* columns, int n_columns, char* err, size_t errlen) {
    if (!path || !path[0]) {
        set_error(err, errlen, "h5log: empty path for a new log");
        return NULL;
    }
    if (check_columns(columns, n_columns, err, errlen)) return NULL;
    QuietH5 q = quiet_begin();
    hid_t fapl = file_access(0);
    /* EXCL: a new run never silently overwrites another run's log. */
    hid_t file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    h5Check(H5Pclose(fapl));
    if (file < 0) {
        if (access(path, F_OK) == 0)
            set_error(err, errlen, "h5log: %s: cannot create the log: the file exists (a resumed run uses h5log_open_append)", path);
        else
            h5fail(err, errlen, path, "cannot create the log");
        quiet_end(q);
        return NULL;
    }
    H5Log* log = log_new(path, file, columns, n_columns);
    const char* failed = NULL;
    log->round_dset = dataset_create(file, "round", 0, 0);
    if (log->round_dset < 0) failed = "round";
    for (int c = 0; c < n_columns && !failed; c++) {
        const H5LogColumn* col = &columns[c];
        log->dsets[c] = dataset_create(file, col->name, is_float_kind(col->kind), vec_len(log, c));
        if (log->dsets[c] < 0 ||
            (col->help && write_string_attr(log->dsets[c], "help", col->help)) ||
            (col->labels && write_labels_attr(log->dsets[c], col->labels, col->length)))
            failed = col->name;
    }
    if (!failed && write_string_attr(log->round_dset, "help", "training round of this row (rows are in increasing round order)"))
        failed = "round";
    int64_t version = H5LOG_VERSION;
    if (!failed && write_number_attr(file, "h5log_version", H5T_STD_I64LE, H5T_NATIVE_INT64, &version))
        failed = "h5log_version";
    if (!failed && H5Fflush(file, H5F_SCOPE_LOCAL) < 0) failed = "(flush)";
    if (failed) {
        h5fail(err, errlen, path, "cannot create dataset or attribute \"%s\"", failed);
        log_free(log);
        unlink(path); /* ours: created with EXCL just above */
        quiet_end(q);
        return NULL;
    }
    quiet_end(q);
    return log;
}

/* ---- reopen for a resumed run -------------------------------------------------------- */

typedef struct {
    const H5Log* log;
    char extra[256];
} ExtraScan;

static herr_t extra_cb(hid_t g, const char* name, const H5L_info_t* info, void* data) {
    ExtraScan* s = data;
    if (!strcmp(name, "round")) return 0;
    for (int c = 0; c < s->log->n_columns; c++)
        if (!strcmp(name, s->log->names[c])) return 0;
    snprintf(s->extra, sizeof s->extra, "%s", name);
    return 1; /* stop */
}

/* Opens column c (or /round when c < 0) and checks its type and shape. */
static int open_column(H5Log* log, int c, char* err, size_t errlen) {
    const char* name = c < 0 ? "round" : log->names[c];
    int want_float = c < 0 ? 0 : is_float_kind(log->kinds[c]);
    int want_len = c < 0 ? 0 : vec_len(log, c);
    hid_t d = H5Dopen2(log->file, name, H5P_DEFAULT);
    if (d < 0 && c >= 0) return 1; /* a column this version logs and the log's writer did not: added later */
    if (d < 0) return h5fail(err, errlen, log->path, "has no dataset \"%s\": the log's columns differ from this run's", name);
    if (c < 0)
        log->round_dset = d;
    else
        log->dsets[c] = d;
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    H5T_class_t cls = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    size_t size = t < 0 ? 0 : H5Tget_size(t);
    hsize_t dims[2] = {0, 0};
    int rank = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
    if (rank >= 1 && rank <= 2) H5Sget_simple_extent_dims(s, dims, NULL);
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    if (cls != (want_float ? H5T_FLOAT : H5T_INTEGER) || size != 8)
        return set_error(err, errlen, "h5log: %s: dataset \"%s\" is not %s: the log's columns differ from this run's",
                         log->path, name, want_float ? "float64" : "int64");
    int want_rank = want_len > 0 ? 2 : 1;
    if (rank != want_rank)
        return set_error(err, errlen, "h5log: %s: dataset \"%s\" has rank %d, expected %d: the log's columns differ from this run's",
                         log->path, name, rank, want_rank);
    if (want_len > 0 && dims[1] != (hsize_t)want_len)
        return set_error(err, errlen, "h5log: %s: dataset \"%s\" has %llu entries per row, expected %d: the log's columns differ from this run's",
                         log->path, name, (unsigned long long)dims[1], want_len);
    return 0;
}

H5Log* h5log_open_append(const char* path, const H5LogColumn* columns, int n_columns,
                         int64_t keep_through_round, int64_t* last_round, char* err, size_t errlen) {
    if (!path || !path[0]) {
        set_error(err, errlen, "h5log: empty path for the log to continue");
        return NULL;
    }
    if (check_columns(columns, n_columns, err, errlen)) return NULL;
    QuietH5 q = quiet_begin();
    hid_t fapl = file_access(1);
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    h5Check(H5Pclose(fapl));
    if (file < 0) {
        h5fail(err, errlen, path, "cannot open the log to continue it");
        quiet_end(q);
        return NULL;
    }
    H5Log* log = log_new(path, file, columns, n_columns);
    int64_t* rounds = NULL;
    int rc = open_column(log, -1, err, errlen), n_missing = 0;
    int* missing = mallocCheck(sizeof(int) * (size_t)(n_columns > 0 ? n_columns : 1));
    for (int c = 0; c < n_columns && !rc; c++) {
        int r = open_column(log, c, err, errlen);
        if (r == 1) missing[n_missing++] = c;
        else rc = r;
    }
    if (!rc) {
        ExtraScan scan = {.log = log, .extra = ""};
        hsize_t idx = 0;
        if (H5Literate(file, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, extra_cb, &scan) < 0)
            rc = h5fail(err, errlen, path, "cannot list the log's datasets");
        else if (scan.extra[0])
            rc = set_error(err, errlen, "h5log: %s: has dataset \"%s\" that this run does not log: the log's columns differ from this run's",
                           path, scan.extra);
    }
    /* A log written by an older sapo lacks the columns added since: they are created now,
     * their earlier rows the fill value (NaN, or -1 for integers: "not logged"), so a run
     * resumes across versions. Only once every other check passed: a refused log is untouched. */
    int64_t round_rows = rc ? -1 : dataset_rows(log->round_dset);
    for (int i = 0; i < n_missing && !rc; i++) {
        int c = missing[i];
        hid_t d = round_rows < 0 ? -1 : dataset_create(file, log->names[c], is_float_kind(log->kinds[c]), vec_len(log, c));
        const H5LogColumn* col = &columns[c];
        if (d < 0 || set_rows(d, vec_len(log, c), (hsize_t)round_rows) ||
            (col->help && write_string_attr(d, "help", col->help)) ||
            (col->labels && write_labels_attr(d, col->labels, col->length)))
            rc = h5fail(err, errlen, path, "cannot add dataset \"%s\" (a column this version logs) to the log", log->names[c]);
        log->dsets[c] = d;
    }
    free(missing);
    /* Complete rows: /round is flushed last, but take the minimum anyway. */
    int64_t n = -1;
    for (int c = -1; c < n_columns && !rc; c++) {
        int64_t r = dataset_rows(c < 0 ? log->round_dset : log->dsets[c]);
        if (r < 0) rc = h5fail(err, errlen, path, "cannot read the length of \"%s\"", c < 0 ? "round" : log->names[c]);
        if (n < 0 || r < n) n = r;
    }
    int64_t keep = 0;
    if (!rc && n > 0) {
        rounds = mallocCheck((size_t)n * sizeof(int64_t));
        hsize_t start[1] = {0}, count[1] = {(hsize_t)n};
        hid_t fs = H5Dget_space(log->round_dset), ms = H5Screate_simple(1, count, NULL);
        h5Check(ms);
        herr_t r = fs < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
        if (r >= 0) r = H5Dread(log->round_dset, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, rounds);
        if (fs >= 0) H5Sclose(fs);
        H5Sclose(ms);
        if (r < 0) rc = h5fail(err, errlen, path, "cannot read dataset \"round\"");
        for (int64_t i = 0; i < n && !rc; i++) {
            if (rounds[i] < 0 || (i > 0 && rounds[i] <= rounds[i - 1]))
                rc = set_error(err, errlen, "h5log: %s: round[%lld] = %lld after %lld: expected rounds >= 0 in increasing order",
                               path, (long long)i, (long long)rounds[i], i > 0 ? (long long)rounds[i - 1] : -1LL);
            else if (rounds[i] <= keep_through_round)
                keep = i + 1;
        }
    }
    /* Cut every dataset (including a column a crash left one row longer) to `keep` rows. */
    for (int c = -1; c < n_columns && !rc; c++) {
        hid_t d = c < 0 ? log->round_dset : log->dsets[c];
        if (set_rows(d, c < 0 ? 0 : vec_len(log, c), (hsize_t)keep))
            rc = h5fail(err, errlen, path, "cannot truncate \"%s\" to %lld rows", c < 0 ? "round" : log->names[c], (long long)keep);
    }
    /* Walk every chunk index now, while the file is not in SWMR mode: a block a full disk
     * left unwritten fails its checksum here at once, where after H5Fstart_swmr_write HDF5
     * would re-read it with doubling sleeps (a writer stalled for good). */
    for (int c = -1; c < n_columns && !rc; c++) {
        hid_t d = c < 0 ? log->round_dset : log->dsets[c], space = H5Dget_space(d);
        hsize_t chunks = 0;
        herr_t walked = space < 0 ? -1 : H5Dget_num_chunks(d, space, &chunks);
        if (space >= 0) H5Sclose(space);
        if (walked < 0)
            rc = h5fail(err, errlen, path, "the chunk index of \"%s\" is damaged", c < 0 ? "round" : log->names[c]);
    }
    if (!rc && H5Fflush(file, H5F_SCOPE_LOCAL) < 0) rc = h5fail(err, errlen, path, "cannot flush the truncated log");
    if (!rc) {
        log->n_rows = keep;
        log->last_round = keep > 0 ? rounds[keep - 1] : -1;
        if (last_round) *last_round = log->last_round;
    }
    free(rounds);
    if (rc) {
        log_free(log);
        log = NULL;
    }
    quiet_end(q);
    return log;
}

/* ---- attributes --------------------------------------------------------------------- */

typedef enum { ATTR_STRING, ATTR_INT, ATTR_DOUBLE } AttrKind;

static int set_attr(H5Log* log, const char* name, AttrKind kind, const void* value, char* err, size_t errlen) {
    if (!log) return set_error(err, errlen, "h5log: attribute set on a NULL log");
    if (!name || !name[0]) return set_error(err, errlen, "h5log: %s: empty attribute name", log->path);
    if (log->swmr)
        return set_error(err, errlen, "h5log: %s: attribute \"%s\" set after the first append: set attributes before it (SWMR files cannot take new ones)",
                         log->path, name);
    QuietH5 q = quiet_begin();
    int rc = 0;
    htri_t exists = H5Aexists(log->file, name);
    if (exists < 0 || (exists > 0 && H5Adelete(log->file, name) < 0)) rc = -1;
    if (!rc) {
        if (kind == ATTR_STRING)
            rc = write_string_attr(log->file, name, *(const char* const*)value);
        else if (kind == ATTR_INT)
            rc = write_number_attr(log->file, name, H5T_STD_I64LE, H5T_NATIVE_INT64, value);
        else
            rc = write_number_attr(log->file, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, value);
    }
    /* Durable now, like a row: a run that dies before its first append still leaves its
     * config and identity in the log. */
    if (!rc && H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) rc = -1;
    if (rc) h5fail(err, errlen, log->path, "cannot write attribute \"%s\"", name);
    quiet_end(q);
    return rc;
}

int h5log_set_attr_string(H5Log* log, const char* name, const char* value, char* err, size_t errlen) {
    if (!value) return set_error(err, errlen, "h5log: attribute \"%s\": NULL string value", name ? name : "");
    return set_attr(log, name, ATTR_STRING, &value, err, errlen);
}

int h5log_set_attr_int(H5Log* log, const char* name, int64_t value, char* err, size_t errlen) {
    return set_attr(log, name, ATTR_INT, &value, err, errlen);
}

int h5log_set_attr_double(H5Log* log, const char* name, double value, char* err, size_t errlen) {
    return set_attr(log, name, ATTR_DOUBLE, &value, err, errlen);
}

/* ---- append ------------------------------------------------------------------------- */

int h5log_append(H5Log* log, int64_t round, const H5LogValue* values, char* err, size_t errlen) {
    if (!log) return set_error(err, errlen, "h5log: append to a NULL log");
    if (round < 0 || (log->n_rows > 0 && round <= log->last_round))
        return set_error(err, errlen, "h5log: %s: append round %lld: expected a round >= 0 after the last logged round %lld",
                         log->path, (long long)round, (long long)log->last_round);
    if (log->n_columns > 0 && !values) return set_error(err, errlen, "h5log: %s: append round %lld: NULL values", log->path, (long long)round);
    for (int c = 0; c < log->n_columns; c++)
        if (log->kinds[c] == H5LOG_F64_VEC && !values[c].v)
            return set_error(err, errlen, "h5log: %s: append round %lld: column \"%s\" is a vector and its pointer is NULL",
                             log->path, (long long)round, log->names[c]);
    QuietH5 q = quiet_begin();
    if (!log->swmr) {
        /* From here on readers with swmr=True can open the file while we write. */
        if (H5Fstart_swmr_write(log->file) < 0) {
            h5fail(err, errlen, log->path, "cannot start SWMR writing");
            quiet_end(q);
            return -1;
        }
        log->swmr = 1;
    }
    hsize_t row = (hsize_t)log->n_rows;
    const char* failed = NULL;
    for (int c = 0; c < log->n_columns && !failed; c++) {
        const void* buf = log->kinds[c] == H5LOG_F64_VEC ? (const void*)values[c].v
                          : log->kinds[c] == H5LOG_F64 ? (const void*)&values[c].f
                                                       : (const void*)&values[c].i;
        if (write_row(log->dsets[c], is_float_kind(log->kinds[c]), vec_len(log, c), row, buf)) failed = log->names[c];
    }
    for (int c = 0; c < log->n_columns && !failed; c++)
        if (H5Dflush(log->dsets[c]) < 0) failed = log->names[c];
    if (!failed && (write_row(log->round_dset, 0, 0, row, &round) || H5Dflush(log->round_dset) < 0)) failed = "round";
    if (!failed && H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) failed = "(file flush)";
    if (failed) {
        h5fail(err, errlen, log->path, "append round %lld: cannot write \"%s\"", (long long)round, failed);
        /* Put every dataset back to the rows it had, so the log stays appendable. */
        set_rows(log->round_dset, 0, row);
        for (int c = 0; c < log->n_columns; c++) set_rows(log->dsets[c], vec_len(log, c), row);
        quiet_end(q);
        return -1;
    }
    quiet_end(q);
    log->n_rows++;
    log->last_round = round;
    return 0;
}

int64_t h5log_rows(const H5Log* log) { return log ? log->n_rows : 0; }
int64_t h5log_last_round(const H5Log* log) { return log ? log->last_round : -1; }

int h5log_close_checked(H5Log* log, char* err, size_t errlen) {
    if (!log) return 0;
    QuietH5 q = quiet_begin();
    char path[4096];
    snprintf(path, sizeof path, "%s", log->path);
    /* Every row was flushed when appended, so a failure here loses nothing but is reported. */
    int rc = log_free(log) < 0 ? h5fail(err, errlen, path, "closing the log failed (rows already flushed are kept)") : 0;
    quiet_end(q);
    return rc;
}

void h5log_close(H5Log* log) {
    char msg[1024];
    if (h5log_close_checked(log, msg, sizeof msg)) fprintf(stderr, "%s\n", msg);
}

/* ---- run index ---------------------------------------------------------------------- */

int h5log_write_run_index(const char* run_h5_path, int n_nodes, const char* const* node_file_relpaths,
                          char* err, size_t errlen) {
    if (!run_h5_path || !run_h5_path[0]) return set_error(err, errlen, "h5log: empty path for the run index");
    if (n_nodes < 0 || (n_nodes > 0 && !node_file_relpaths))
        return set_error(err, errlen, "h5log: %s: %d nodes: expected >= 0 with one node file path each", run_h5_path, n_nodes);
    for (int i = 0; i < n_nodes; i++)
        if (!node_file_relpaths[i] || !node_file_relpaths[i][0])
            return set_error(err, errlen, "h5log: %s: node %d has an empty file path", run_h5_path, i);
    /* Written beside the target and renamed over it: a reader never sees half an index. */
    size_t n = strlen(run_h5_path) + 16;
    char* tmp = mallocCheck(n);
    snprintf(tmp, n, "%s.tmp%ld", run_h5_path, (long)getpid());
    QuietH5 q = quiet_begin();
    hid_t fapl = file_access(0);
    hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    h5Check(H5Pclose(fapl));
    int rc = 0;
    if (file < 0) {
        rc = h5fail(err, errlen, run_h5_path, "cannot create the run index (as %s)", tmp);
    } else {
        int width = 4; /* digits of the largest node id, at least 4 */
        for (long long m = 10000; m < n_nodes && width < 10; m *= 10) width++;
        hid_t g = H5Gcreate2(file, "node", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g < 0) rc = h5fail(err, errlen, run_h5_path, "cannot create group /node");
        for (int i = 0; i < n_nodes && !rc; i++) {
            char name[16];
            snprintf(name, sizeof name, "%0*d", width & 15, i); /* width <= 10; the mask tells gcc */
            /* One link to the node file's root: /node/NNNN behaves as that file's root group,
             * its datasets and attributes included. A relative target is looked up beside
             * the index file (HDF5 tries the parent file's directory). */
            if (H5Lcreate_external(node_file_relpaths[i], "/", g, name, H5P_DEFAULT, H5P_DEFAULT) < 0)
                rc = h5fail(err, errlen, run_h5_path, "cannot link node %d to %s", i, node_file_relpaths[i]);
        }
        if (g >= 0 && H5Gclose(g) < 0 && !rc) rc = h5fail(err, errlen, run_h5_path, "cannot close group /node");
        int64_t nn = n_nodes;
        if (!rc && write_number_attr(file, "n_nodes", H5T_STD_I64LE, H5T_NATIVE_INT64, &nn))
            rc = h5fail(err, errlen, run_h5_path, "cannot write attribute n_nodes");
        if (H5Fclose(file) < 0 && !rc) rc = h5fail(err, errlen, run_h5_path, "cannot close the run index");
        int e = rc ? 0 : atomic_rename(tmp, run_h5_path);
        if (e) rc = set_error(err, errlen, "h5log: %s: cannot move %s over it: %s", run_h5_path, tmp, strerror(e));
        if (rc) unlink(tmp);
    }
    quiet_end(q);
    free(tmp);
    return rc;
}

int h5log_read_column(const char* path, const char* name, double* out, int64_t max, int64_t* n, char* err,
                      size_t errlen) {
    *n = 0;
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
    if (file < 0) return set_error(err, errlen, "h5log: cannot open %s to read", path);
    int rc = -1;
    hid_t d = H5Lexists(file, name, H5P_DEFAULT) > 0 ? H5Dopen2(file, name, H5P_DEFAULT) : -1;
    if (d < 0) {
        set_error(err, errlen, "h5log: %s has no column \"%s\"", path, name);
    } else {
        hid_t type = H5Dget_type(d), space = H5Dget_space(d);
        hsize_t dims[2] = {0, 0};
        int nd = H5Sget_simple_extent_ndims(space);
        if (H5Tget_class(type) != H5T_FLOAT || nd != 1) {
            set_error(err, errlen, "h5log: %s column \"%s\" is not a float column", path, name);
        } else {
            H5Sget_simple_extent_dims(space, dims, NULL);
            hsize_t count = dims[0] < (hsize_t)max ? dims[0] : (hsize_t)max, start = 0;
            hid_t ms = H5Screate_simple(1, &count, NULL);
            H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL);
            if (count == 0 || H5Dread(d, H5T_NATIVE_DOUBLE, ms, space, H5P_DEFAULT, out) >= 0) {
                *n = (int64_t)count;
                rc = 0;
            } else {
                set_error(err, errlen, "h5log: reading %s column \"%s\" failed", path, name);
            }
            H5Sclose(ms);
        }
        H5Tclose(type);
        H5Sclose(space);
        H5Dclose(d);
    }
    H5Fclose(file);
    return rc;
}
