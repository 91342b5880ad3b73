/* HDF5 round logs: 50 rows of known values (NaN, inf, -0.0, large int64, vectors) read back
 * bit for bit with the plain HDF5 C API; attributes; a resumed log cut after round 30 and
 * continued, and one continued by a version that logs a column more; the run index reaching 3 node files through external links; and every
 * misuse (bad column specs, unwritable paths, mismatched columns, late attributes, rounds
 * out of order) answered with a one-line error. */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/files.h"
#include "io/h5log.h"
#include "../test_assert.h"

enum { ROWS = 50, NACC = 4, NHIST = 3, NCOL = 5, KEEP = 30, MORE = 10 };

static const char* const ACC_LABELS[NACC] = {"arc_agi", "base_conversion", "basic_arithmetic", "büchi"};
static const H5LogColumn COLUMNS[NCOL] = {
    {"loss", H5LOG_F64, 0, "mean GRPO loss", NULL},
    {"tokens", H5LOG_I64, 0, "tokens generated", NULL},
    {"eval", H5LOG_F64, 0, "eval score, NaN without evaluation", NULL},
    {"task_acc", H5LOG_F64_VEC, NACC, "accuracy per task", ACC_LABELS},
    {"hist", H5LOG_F64_VEC, NHIST, NULL, NULL},
};

/* The value logged for round r; phase 1 is the first run, phase 2 the resumed one (so the
 * test can tell a replayed row from the original). */
static double loss_of(int64_t r, int phase) { return sin((double)r + phase) * 1e3; }
static int64_t tokens_of(int64_t r, int phase) { return r * 3000000007LL - 5 + phase; }
static double eval_of(int64_t r, int phase) {
    if (r == 7) return INFINITY;
    if (r == 11) return -0.0;
    return r % 5 == 0 ? (double)r / 3.0 + phase : NAN;
}
/* Divisions and sums only: no a*b+c the compiler could fuse differently at each call site. */
static double acc_of(int64_t r, int j, int phase) { return (double)r / 10.0 + (double)j / 1000.0 + phase; }
static double hist_of(int64_t r, int j, int phase) { return 1.0 / (double)(r + j + phase); }

static int append_round(H5Log* log, int64_t r, int phase, char* err, size_t errlen) {
    double acc[NACC], hist[NHIST];
    for (int j = 0; j < NACC; j++) acc[j] = acc_of(r, j, phase);
    for (int j = 0; j < NHIST; j++) hist[j] = hist_of(r, j, phase);
    H5LogValue v[NCOL];
    v[0].f = loss_of(r, phase);
    v[1].i = tokens_of(r, phase);
    v[2].f = eval_of(r, phase);
    v[3].v = acc;
    v[4].v = hist;
    return h5log_append(log, r, v, err, errlen);
}

/* Bitwise: NaN must come back as NaN, -0.0 as -0.0. */
static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Reads a whole dataset (rows x width values, float64 or int64); NULL if shape differs. */
static void* read_all(hid_t file, const char* name, int is_float, hsize_t rows, hsize_t width) {
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    hsize_t dims[2] = {0, 0}, maxdims[2] = {0, 0};
    int rank = H5Sget_simple_extent_dims(s, dims, maxdims);
    H5Sclose(s);
    int want_rank = width > 1 ? 2 : 1;
    if (rank != want_rank || dims[0] != rows || (rank == 2 && dims[1] != width) || maxdims[0] != H5S_UNLIMITED) {
        printf("  %s: rank %d dims %llu x %llu maxdims[0] %llu, expected %llu x %llu unlimited\n", name, rank,
               (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)maxdims[0],
               (unsigned long long)rows, (unsigned long long)width);
        H5Dclose(d);
        return NULL;
    }
    void* buf = malloc((rows ? rows : 1) * width * 8);
    herr_t rc = H5Dread(d, is_float ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(d);
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static char* read_string_attr(hid_t obj, const char* name) {
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return NULL;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    char* s = NULL;
    char* out = NULL;
    if (H5Aread(a, t, &s) >= 0 && s) {
        out = strdup(s);
        H5free_memory(s);
    }
    H5Tclose(t);
    H5Aclose(a);
    return out;
}

static int read_number_attr(hid_t obj, const char* name, hid_t mem_type, void* out) {
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    herr_t rc = H5Aread(a, mem_type, out);
    H5Aclose(a);
    return rc < 0 ? -1 : 0;
}

/* Every value of rows [0, n): rows up to `switch_round` from phase 1, the rest phase 2. */
static void check_file(const char* path, int64_t n, int64_t switch_round, int64_t want_node, const char* what) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT(f >= 0, "%s: plain H5Fopen of a closed log failed", what);
    if (f < 0) return;
    int64_t* round = read_all(f, "round", 0, n, 1);
    double* loss = read_all(f, "loss", 1, n, 1);
    int64_t* tokens = read_all(f, "tokens", 0, n, 1);
    double* eval = read_all(f, "eval", 1, n, 1);
    double* acc = read_all(f, "task_acc", 1, n, NACC);
    double* hist = read_all(f, "hist", 1, n, NHIST);
    EXPECT(round && loss && tokens && eval && acc && hist, "%s: a dataset is missing or has the wrong shape", what);
    int bad = 0, nan_rows = 0;
    for (int64_t i = 0; round && loss && tokens && eval && acc && hist && i < n; i++) {
        int phase = i <= switch_round ? 1 : 2;
        int ok = round[i] == i && same_bits(loss[i], loss_of(i, phase)) && tokens[i] == tokens_of(i, phase) &&
                 same_bits(eval[i], eval_of(i, phase));
        for (int j = 0; j < NACC; j++) ok &= same_bits(acc[i * NACC + j], acc_of(i, j, phase));
        for (int j = 0; j < NHIST; j++) ok &= same_bits(hist[i * NHIST + j], hist_of(i, j, phase));
        nan_rows += isnan(eval[i]) != 0;
        if (!ok && bad++ < 3)
            printf("  %s row %lld: round %lld loss %.17g (want %.17g) tokens %lld (want %lld) eval %g (want %g)\n", what,
                   (long long)i, (long long)round[i], loss[i], loss_of(i, phase), (long long)tokens[i],
                   (long long)tokens_of(i, phase), eval[i], eval_of(i, phase));
    }
    EXPECT(bad == 0, "%s: %d of %lld rows differ from what was appended", what, bad, (long long)n);
    EXPECT(nan_rows > 0, "%s: no NaN eval rows came back", what);
    printf("%s: %lld rows compared bit for bit (%d with NaN eval)\n", what, (long long)n, nan_rows);
    free(round), free(loss), free(tokens), free(eval), free(acc), free(hist);

    /* Attributes: help, labels, root attributes. */
    hid_t d = H5Dopen2(f, "loss", H5P_DEFAULT);
    char* help = d >= 0 ? read_string_attr(d, "help") : NULL;
    EXPECT(help && !strcmp(help, "mean GRPO loss"), "%s: loss help is \"%s\"", what, help ? help : "(none)");
    free(help);
    if (d >= 0) H5Dclose(d);
    d = H5Dopen2(f, "hist", H5P_DEFAULT);
    EXPECT(d >= 0 && H5Aexists(d, "help") == 0 && H5Aexists(d, "labels") == 0, "%s: hist has help/labels it was not given", what);
    if (d >= 0) H5Dclose(d);
    d = H5Dopen2(f, "task_acc", H5P_DEFAULT);
    hid_t a = d >= 0 ? H5Aopen(d, "labels", H5P_DEFAULT) : -1;
    EXPECT(a >= 0, "%s: task_acc has no labels", what);
    if (a >= 0) {
        char* labels[NACC] = {0};
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        H5Tset_cset(t, H5T_CSET_UTF8);
        hid_t s = H5Aget_space(a);
        EXPECT(H5Sget_simple_extent_npoints(s) == NACC, "%s: %lld labels", what, (long long)H5Sget_simple_extent_npoints(s));
        if (H5Sget_simple_extent_npoints(s) == NACC && H5Aread(a, t, labels) >= 0)
            for (int j = 0; j < NACC; j++) {
                EXPECT(labels[j] && !strcmp(labels[j], ACC_LABELS[j]), "%s: label %d is \"%s\"", what, j, labels[j] ? labels[j] : "(null)");
                H5free_memory(labels[j]);
            }
        H5Sclose(s);
        H5Tclose(t);
        H5Aclose(a);
    }
    if (d >= 0) H5Dclose(d);
    char* config = read_string_attr(f, "config");
    EXPECT(config && !strcmp(config, "[model]\nn_layer = 2\n"), "%s: config attribute \"%s\"", what, config ? config : "(none)");
    free(config);
    int64_t node = -1, version = -1;
    double lr = 0;
    EXPECT(!read_number_attr(f, "node", H5T_NATIVE_INT64, &node) && node == want_node, "%s: node attribute %lld, expected %lld", what, (long long)node, (long long)want_node);
    EXPECT(!read_number_attr(f, "lr", H5T_NATIVE_DOUBLE, &lr) && lr == 3e-4, "%s: lr attribute %g", what, lr);
    EXPECT(!read_number_attr(f, "h5log_version", H5T_NATIVE_INT64, &version) && version == 1, "%s: h5log_version %lld", what, (long long)version);
    H5Fclose(f);
}

static void test_create_append(const char* dir, char* path) {
    char err[512] = "";
    H5Log* log = h5log_create(path, COLUMNS, NCOL, err, sizeof err);
    EXPECT(log, "create failed: %s", err);
    if (!log) return;
    EXPECT(!h5log_set_attr_string(log, "config", "old", err, sizeof err), "set config: %s", err);
    EXPECT(!h5log_set_attr_string(log, "config", "[model]\nn_layer = 2\n", err, sizeof err), "replace config: %s", err);
    EXPECT(!h5log_set_attr_int(log, "node", 4, err, sizeof err), "set node: %s", err);
    EXPECT(!h5log_set_attr_double(log, "lr", 3e-4, err, sizeof err), "set lr: %s", err);
    for (int64_t r = 0; r < ROWS; r++) EXPECT(!append_round(log, r, 1, err, sizeof err), "append %lld: %s", (long long)r, err);
    EXPECT(h5log_rows(log) == ROWS && h5log_last_round(log) == ROWS - 1, "rows %lld last %lld", (long long)h5log_rows(log),
           (long long)h5log_last_round(log));

    /* Misuse after the first append: refused, and the log is unchanged and still usable. */
    EXPECT(h5log_set_attr_int(log, "late", 1, err, sizeof err) == -1, "an attribute after the first append was accepted");
    EXPECT_MSG(err, "after the first append");
    printf("late attribute -> %s\n", err);
    EXPECT(append_round(log, ROWS - 1, 1, err, sizeof err) == -1, "a repeated round was accepted");
    EXPECT_MSG(err, "after the last logged round 49");
    printf("repeated round -> %s\n", err);
    EXPECT(append_round(log, -3, 1, err, sizeof err) == -1, "a negative round was accepted");
    H5LogValue nullvec[NCOL] = {{.f = 1}, {.i = 1}, {.f = 1}, {.v = NULL}, {.v = NULL}};
    EXPECT(h5log_append(log, ROWS, nullvec, err, sizeof err) == -1, "a NULL vector was accepted");
    EXPECT_MSG(err, "task_acc");
    EXPECT(h5log_rows(log) == ROWS, "a refused append changed the rows to %lld", (long long)h5log_rows(log));
    h5log_close(log);
    check_file(path, ROWS, ROWS, 4, "after create+append");
    (void)dir;
}

static void test_resume(const char* path) {
    char err[512] = "";
    int64_t last = -7;
    H5Log* log = h5log_open_append(path, COLUMNS, NCOL, KEEP, &last, err, sizeof err);
    EXPECT(log, "open_append failed: %s", err);
    if (!log) return;
    EXPECT(last == KEEP && h5log_rows(log) == KEEP + 1, "after cutting at round %d: last %lld rows %lld", KEEP,
           (long long)last, (long long)h5log_rows(log));
    EXPECT(!h5log_set_attr_int(log, "node", 5, err, sizeof err), "replace node attribute on a reopened log: %s", err);
    EXPECT(append_round(log, KEEP, 2, err, sizeof err) == -1, "round %d accepted again after the cut", KEEP);
    for (int64_t r = KEEP + 1; r <= KEEP + MORE; r++) EXPECT(!append_round(log, r, 2, err, sizeof err), "append %lld: %s", (long long)r, err);
    h5log_close(log);
    check_file(path, KEEP + 1 + MORE, KEEP, 5, "after open_append at 30 + 10 rows");

    /* Keep everything: nothing cut. */
    log = h5log_open_append(path, COLUMNS, NCOL, INT64_MAX, &last, err, sizeof err);
    EXPECT(log && last == KEEP + MORE && h5log_rows(log) == KEEP + MORE + 1, "keep-all reopen: last %lld (%s)", (long long)last, log ? "" : err);
    h5log_close(log);
    check_file(path, KEEP + MORE + 1, KEEP, 5, "after a keep-all reopen");

    /* Columns that differ from the file's: refused, file untouched. */
    H5LogColumn cols[NCOL];
    memcpy(cols, COLUMNS, sizeof cols);
    cols[4].length = NHIST + 1;
    EXPECT(!h5log_open_append(path, cols, NCOL, INT64_MAX, &last, err, sizeof err), "a different vector length was accepted");
    EXPECT_MSG(err, "\"hist\" has 3 entries per row, expected 4");
    printf("vector length changed -> %s\n", err);
    memcpy(cols, COLUMNS, sizeof cols);
    cols[1].kind = H5LOG_F64;
    EXPECT(!h5log_open_append(path, cols, NCOL, INT64_MAX, &last, err, sizeof err), "int column reopened as float");
    EXPECT_MSG(err, "\"tokens\" is not float64");
    EXPECT(!h5log_open_append(path, COLUMNS, NCOL - 1, INT64_MAX, &last, err, sizeof err), "a log with an extra column was accepted");
    EXPECT_MSG(err, "has dataset \"hist\" that this run does not log");
    printf("column missing from the run -> %s\n", err);
    memcpy(cols, COLUMNS, sizeof cols);
    cols[0].name = "loss2";
    EXPECT(!h5log_open_append(path, cols, NCOL, INT64_MAX, &last, err, sizeof err), "a renamed column was accepted");
    EXPECT_MSG(err, "has dataset \"loss\" that this run does not log");
    check_file(path, KEEP + MORE + 1, KEEP, 5, "after refused reopens");

    /* Drop everything: the log restarts empty with its attributes. */
    log = h5log_open_append(path, COLUMNS, NCOL, -1, &last, err, sizeof err);
    EXPECT(log && last == -1 && h5log_rows(log) == 0, "drop-all reopen: last %lld (%s)", (long long)last, log ? "" : err);
    EXPECT(log && !append_round(log, 0, 1, err, sizeof err), "append after drop-all: %s", err);
    h5log_close(log);
}

/* A log written before a column existed resumes under the version that logs it: the column
 * is created with its earlier rows NaN, and the next append fills it. */
static void test_added_column(const char* dir) {
    char err[512] = "", path[1024];
    snprintf(path, sizeof path, "%s/older.h5", dir);
    H5Log* log = h5log_create(path, COLUMNS, 1, err, sizeof err);
    EXPECT(log, "create: %s", err);
    H5LogValue one[2] = {{.f = 1.5}, {.f = 2.5}};
    for (int64_t r = 0; r < 3 && log; r++) EXPECT(!h5log_append(log, r, one, err, sizeof err), "append: %s", err);
    h5log_close(log);
    const H5LogColumn newer[2] = {COLUMNS[0], {"added", H5LOG_F64, 0, "a column a later version logs", NULL}};
    int64_t last = -7;
    log = h5log_open_append(path, newer, 2, INT64_MAX, &last, err, sizeof err);
    EXPECT(log, "a log lacking a newer column was refused: %s", err);
    if (!log) return;
    EXPECT(last == 2 && h5log_rows(log) == 3, "after adding a column: last %lld rows %lld", (long long)last,
           (long long)h5log_rows(log));
    EXPECT(!h5log_append(log, 3, one, err, sizeof err), "append after adding a column: %s", err);
    h5log_close(log);
    double got[8];
    int64_t n = 0;
    EXPECT(!h5log_read_column(path, "added", got, 8, &n, err, sizeof err), "read the added column: %s", err);
    EXPECT(n == 4 && isnan(got[0]) && isnan(got[2]) && got[3] == 2.5, "added column: n %lld, %g %g %g", (long long)n,
           got[0], got[2], got[3]);
    EXPECT(!h5log_read_column(path, "loss", got, 8, &n, err, sizeof err) && n == 4 && got[0] == 1.5,
           "the old column after the reopen: n %lld (%s)", (long long)n, err);
}

static void test_run_index(const char* dir) {
    char err[512] = "", path[1024], run[1024];
    const char* rel[3] = {"nodes/node_0000.h5", "nodes/node_0001.h5", "nodes/node_0002.h5"};
    snprintf(path, sizeof path, "%s/nodes", dir);
    EXPECT(mkdir(path, 0755) == 0, "mkdir %s", path);
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, rel[k]);
        H5Log* log = h5log_create(path, COLUMNS, NCOL, err, sizeof err);
        EXPECT(log, "node %d: %s", k, err);
        if (!log) return;
        EXPECT(!h5log_set_attr_int(log, "node", k, err, sizeof err), "node attr: %s", err);
        for (int64_t r = 0; r < 5 + k; r++) EXPECT(!append_round(log, r, 1, err, sizeof err), "node %d append: %s", k, err);
        h5log_close(log);
    }
    snprintf(run, sizeof run, "%s/run.h5", dir);
    EXPECT(!h5log_write_run_index(run, 3, rel, err, sizeof err), "run index: %s", err);
    /* Written twice: the second replaces the first. */
    EXPECT(!h5log_write_run_index(run, 3, rel, err, sizeof err), "run index rewrite: %s", err);

    /* Read through the links from another working directory: targets resolve beside run.h5. */
    char cwd[1024];
    EXPECT(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    EXPECT(chdir("/") == 0, "chdir /");
    hid_t f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT(f >= 0, "cannot open %s", run);
    int64_t n_nodes = 0;
    EXPECT(f >= 0 && !read_number_attr(f, "n_nodes", H5T_NATIVE_INT64, &n_nodes) && n_nodes == 3, "n_nodes %lld", (long long)n_nodes);
    for (int k = 0; f >= 0 && k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "node/%04d", k);
        H5L_info_t info;
        EXPECT(H5Lget_info(f, name, &info, H5P_DEFAULT) >= 0 && info.type == H5L_TYPE_EXTERNAL, "%s is not an external link", name);
        snprintf(name, sizeof name, "node/%04d/loss", k);
        double* loss = read_all(f, name, 1, 5 + k, 1);
        EXPECT(loss, "cannot read %s through the run index", name);
        for (int r = 0; loss && r < 5 + k; r++) EXPECT(same_bits(loss[r], loss_of(r, 1)), "%s[%d] = %g", name, r, loss[r]);
        free(loss);
        snprintf(name, sizeof name, "node/%04d", k);
        hid_t g = H5Oopen(f, name, H5P_DEFAULT);
        int64_t node = -1;
        EXPECT(g >= 0 && !read_number_attr(g, "node", H5T_NATIVE_INT64, &node) && node == k, "%s: node attribute %lld", name, (long long)node);
        if (g >= 0) H5Oclose(g);
    }
    if (f >= 0) H5Fclose(f);
    EXPECT(chdir(cwd) == 0, "chdir back");
    printf("run index: 3 node files read through %s\n", run);

    EXPECT(h5log_write_run_index(run, -1, rel, err, sizeof err) == -1, "-1 nodes accepted");
    const char* holes[3] = {"a.h5", "", "c.h5"};
    EXPECT(h5log_write_run_index(run, 3, holes, err, sizeof err) == -1, "an empty node path accepted");
    EXPECT_MSG(err, "node 1 has an empty file path");
    EXPECT(h5log_write_run_index("/nonexistent-dir/run.h5", 3, rel, err, sizeof err) == -1, "index in a missing directory");
    EXPECT_MSG(err, "/nonexistent-dir/run.h5");
    printf("index in a missing directory -> %s\n", err);
}

static void expect_bad_columns(const char* dir, const H5LogColumn* cols, int n, const char* fragment) {
    char err[512] = "", path[1024];
    snprintf(path, sizeof path, "%s/bad.h5", dir);
    H5Log* log = h5log_create(path, cols, n, err, sizeof err);
    EXPECT(!log, "bad column spec accepted (%s)", fragment);
    EXPECT_MSG(err, fragment);
    EXPECT(access(path, F_OK) != 0, "a refused create left %s behind", path);
    h5log_close(log);
    printf("bad columns -> %s\n", err);
}

static void test_errors(const char* dir, const char* existing) {
    char err[512] = "", path[1024];
    H5Log* log = h5log_create("/nonexistent-dir/node.h5", COLUMNS, NCOL, err, sizeof err);
    EXPECT(!log, "create in a missing directory succeeded");
    EXPECT_MSG(err, "/nonexistent-dir/node.h5");
    EXPECT_MSG(err, "No such file or directory");
    printf("unwritable path -> %s\n", err);
    EXPECT(!h5log_create(dir, COLUMNS, NCOL, err, sizeof err), "create over a directory succeeded");
    EXPECT(!h5log_create(existing, COLUMNS, NCOL, err, sizeof err), "create over an existing log succeeded");
    EXPECT_MSG(err, "the file exists");
    printf("existing file -> %s\n", err);
    int64_t last = 0;
    EXPECT(!h5log_open_append("/nonexistent-dir/node.h5", COLUMNS, NCOL, 0, &last, err, sizeof err), "open_append of a missing file");
    EXPECT_MSG(err, "cannot open the log to continue it");
    snprintf(path, sizeof path, "%s/not_hdf5.h5", dir);
    FILE* fp = fopen(path, "w");
    fputs("not an HDF5 file\n", fp);
    fclose(fp);
    EXPECT(!h5log_open_append(path, COLUMNS, NCOL, 0, &last, err, sizeof err), "open_append of a text file");
    printf("not an HDF5 file -> %s\n", err);

    H5LogColumn c[2] = {{"a", H5LOG_F64, 0, NULL, NULL}, {"b", H5LOG_F64, 0, NULL, NULL}};
    c[1].name = "";
    expect_bad_columns(dir, c, 2, "column 1 name \"\"");
    c[1].name = NULL;
    expect_bad_columns(dir, c, 2, "column 1 name \"(null)\"");
    c[1].name = "round";
    expect_bad_columns(dir, c, 2, "not \"round\"");
    c[1].name = "x/y";
    expect_bad_columns(dir, c, 2, "without '/'");
    c[1].name = "a";
    expect_bad_columns(dir, c, 2, "repeats column 0");
    c[1].name = "b";
    c[1].kind = (H5LogKind)9;
    expect_bad_columns(dir, c, 2, "kind 9");
    c[1].kind = H5LOG_F64_VEC;
    c[1].length = 0;
    expect_bad_columns(dir, c, 2, "length 0: expected 1..65536");
    c[1].kind = H5LOG_I64;
    c[1].labels = ACC_LABELS;
    expect_bad_columns(dir, c, 2, "only vector columns take labels");
    const char* holes[2] = {"x", NULL};
    c[1].kind = H5LOG_F64_VEC;
    c[1].length = 2;
    c[1].labels = holes;
    expect_bad_columns(dir, c, 2, "label 1 is NULL");
    expect_bad_columns(dir, c, -1, "-1 columns");
    EXPECT(h5log_append(NULL, 0, NULL, err, sizeof err) == -1, "append to NULL");
}

int main(void) {
    char dir[] = "/tmp/sapo_h5log_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/node_0005.h5", dir);
    test_create_append(dir, path);
    test_resume(path);
    test_added_column(dir);
    test_run_index(dir);
    test_errors(dir, path);
    if (!test_failures && remove_tree(dir) != 0) printf("could not remove %s\n", dir);
    return test_finish("test_h5log");
}
