/* The harness every benchmark shares (as nccl-tests' common file): this binary's path and the
 * Python of the PyTorch sides, a field of /proc/self/status and the peak RSS, the timing
 * engine and its JSON form, a side run in a child process of its own (so neither side's
 * memory mixes into the other's peak) and the ours.json it leaves, the thread count the
 * sides' processes get, the JSON files and JSON lines the sides exchange, a fresh work
 * directory, the option parsing and help, and the one table of ours against torch. Each
 * benchmark keeps only its own work and option table (bench_model.c, bench_round.c, bench_llama.c). */
#ifndef SAPO_BENCH_BENCH_HARNESS_H
#define SAPO_BENCH_BENCH_HARNESS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/cli_options.h"

/* What the benchmarks' help says of the PyTorch sides' python (see bench_python). */
#define BENCH_PYTHON_HELP "python: $SAPO_PYTHON, else BUILD/venv/bin/python next to this binary, else /usr/bin/python3"

/* This binary's path (/proc/self/exe); dies when it cannot be read. */
const char* bench_self_path(void);
/* The Python of the PyTorch sides: $SAPO_PYTHON when set, else the venv next to this binary
 * (BUILD/venv/bin/python, what scripts/install-deps.sh makes), else /usr/bin/python3. */
const char* bench_python(void);

/* A field of /proc/self/status in kB (VmHWM, VmRSS), or -1. */
long bench_status_kb(const char* field);
/* This process's peak RSS in kB: VmHWM, else getrusage's ru_maxrss. */
double bench_peak_rss_kb(void);
/* Resets VmHWM to the current RSS (Linux clear_refs 5); 0 where that is refused. */
int bench_peak_reset(void);

typedef struct {
    double avg, min, max; /* seconds per repeat */
    int repeats;
} BenchTiming;
/* avg / min / max of v[0..n), n repeats; all NaN when n is 0. */
BenchTiming bench_timing_of(const double* v, int n);
/* Calls fn(arg) warmup times untimed, then repeats times timed one by one. */
BenchTiming bench_time(void (*fn)(void* arg), void* arg, int warmup, int repeats);
/* t as {"avg", "min", "max", "repeats"}; and back: `repeats` when avg > 0, else 0 (not run). */
cJSON* bench_timing_json(const BenchTiming* t);
BenchTiming bench_timing_read(const cJSON* j, int repeats);

/* cli_parse of a benchmark's options; on -h/--help prints `about` (its usage and what it
 * measures), "options:", the table and `more` (NULL: nothing) to stdout. cli_parse's result. */
int bench_parse(const char* command, const CliOption* opts, const char* about, const char* more, int argc, char** argv,
                CliArgs* a);

/* Runs fn(arg) in a forked child and waits for it; the child's exit status is fn's. 0 when it
 * exited 0; else -1 with "PREFIXfork: why" or "PREFIXSIDE failed (exit|signal N)" on stderr. */
int bench_child(int (*fn)(void* arg), void* arg, const char* prefix, const char* side);
/* bench_child, then DIR/ours.json (what fn wrote there) parsed; NULL when the child failed or
 * after "PREFIXthe C side wrote no readable PATH" on stderr. */
cJSON* bench_child_json(int (*fn)(void* arg), void* arg, const char* prefix, const char* side, const char* dir);
/* OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS for the processes started from here on. */
void bench_thread_env(int threads);

/* A key and its number, for bench_json_numbers. */
typedef struct {
    const char* key;
    double value;
} BenchNumber;
/* Adds the numbers f[0..n) to the object j, in order. */
void bench_json_numbers(cJSON* j, const BenchNumber* f, size_t n);
/* j as one unformatted line in path: 0 or -1. */
int bench_json_write(const char* path, const cJSON* j);
/* path parsed as JSON; NULL when it cannot be read or is not JSON. */
cJSON* bench_json_read(const char* path);
/* The number at key in j (NaN when there is none); the string at key (NULL when there is none). */
double bench_num(const cJSON* j, const char* key);
const char* bench_str(const cJSON* j, const char* key);
/* Runs cmd (stdout flushed first) and hands each line of its output that parses as JSON to
 * on_line with its "what" ("" when it has none), which keeps the object by returning 1 (else
 * it is deleted here). pclose's status, or -1 when cmd cannot be started. */
int bench_json_lines(const char* cmd, int (*on_line)(const char* what, cJSON* j, void* arg), void* arg);

/* A fresh directory $TMPDIR/NAME-XXXXXX (TMPDIR unset or empty: /tmp) into dir: 0, or -1
 * (errno set; dir holds the template tried). */
int bench_work_dir(const char* name, char* dir, size_t n);
/* One side of a train-and-generate benchmark (bench model, --family llama): the timings
 * (repeats 0: not run) and the tokens each covers. */
typedef struct {
    BenchTiming train, gen;
    double train_tokens, gen_tokens;
    int repeats; /* the timed repeats, for the timings read back */
} BenchSide;
/* bench_json_lines' on_line for a side's "train" and "generate" lines ({avg, min, max,
 * tokens}) into the BenchSide at arg; other lines are left alone. Keeps nothing (0). */
int bench_side_line(const char* what, cJSON* j, void* arg);

/* The ours-against-PyTorch table of every benchmark, one format: the column header (first:
 * "model" or "config"), then one row per phase with, per side, the rate work / avg (tok/s; "-"
 * when work is 0, a row without a rate) and avg / min / max ("-" where NaN or the side did not
 * run: repeats 0), each to `decimals`, then how many times better ours is: rates ours / torch,
 * else torch / ours of the averages (seconds, MB). */
void bench_table_header(const char* first);
void bench_row(const char* name, const char* phase, const BenchTiming* ours, const BenchTiming* torch,
               double ours_work, double torch_work, int decimals);
/* The train and generate rows of two BenchSides. */
void bench_side_rows(const char* name, const BenchSide* ours, const BenchSide* torch, int decimals);

#endif
