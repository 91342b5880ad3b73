/* reasoning_gym 0.1.25 `binary_matrix`: the taxicab distance from every cell of a square
 * 0/1 matrix to its nearest 0 (LeetCode "01 matrix").
 * Generator: n = randint(min_n, max_n); one guaranteed 0 followed by n*n-1 cells, each 0
 * when random() < p_zero; shuffle; distances by a breadth-first search from every 0.
 * Matrices are written row per line, cells separated by one space.
 * Verifier: 1.0 for the oracle text; otherwise the package runs Python's eval() on the
 * answer and gives 0.1 when the result, written back the same way
 * ("\n".join(" ".join(str(x) for x in row) for row in value)), equals the oracle. eval()
 * cannot be run here, so the answer is read as a Python expression of the subset that a
 * matrix is written in (pyliteral.h: displays, int/str/bytes literals, True/False/None,
 * unary + - ~ and binary + -). Any other construct scores 0, where Python might compute a
 * matching value: see test_binary_matrix_known_divergences in tests/reference/test_tasks_a.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/pyemu/pyliteral.h"
#include "tasks/pyemu/pyrandom.h"

#define NAME "binary_matrix"
#define MAX_N 2000 /* n*n cells are held in memory; the package has no limit */

typedef struct {
    int64_t min_n, max_n;
    double p_zero;
} MatrixConfig;

static int matrix_config(const cJSON* cfg, MatrixConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"min_n", "max_n", "p_zero", NULL};
    if (taskcfg_check_keys(cfg, NAME, keys, err, errlen)) return -1;
    if (taskcfg_int(cfg, NAME, "min_n", 3, &c->min_n, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_n", 10, &c->max_n, err, errlen) ||
        taskcfg_double(cfg, NAME, "p_zero", 0.25, &c->p_zero, err, errlen))
        return -1;
    if (c->min_n < 1) return set_error(err, errlen, NAME ": min_n must be at least 1");
    if (c->min_n > c->max_n) return set_error(err, errlen, NAME ": min_n must be less than or equal to max_n");
    if (!(c->p_zero > 0 && c->p_zero <= 1)) return set_error(err, errlen, NAME ": p_zero must be between 0 and 1");
    if (c->max_n > MAX_N) return set_error(err, errlen, NAME ": max_n must be <= %d here", MAX_N);
    return 0;
}

static void matrix_write(TextBuf* b, const int* m, int n) {
    for (int r = 0; r < n; r++) {
        if (r) textbuf_append(b, "\n");
        for (int c = 0; c < n; c++) textbuf_printf(b, c ? " %d" : "%d", m[r * n + c]);
    }
}

static cJSON* matrix_json(const int* m, int n) {
    cJSON* rows = cJSON_CreateArray();
    for (int r = 0; r < n; r++) {
        cJSON* row = cJSON_CreateArray();
        for (int c = 0; c < n; c++) cJSON_AddItemToArray(row, cJSON_CreateNumber(m[r * n + c]));
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
}

static int matrix_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err,
                           size_t errlen) {
    MatrixConfig c;
    if (matrix_config(config, &c, err, errlen)) return -1;
    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    int n = (int)pyrandom_randint(&rng, c.min_n, c.max_n);
    size_t cells = (size_t)n * (size_t)n;
    int* m = mallocCheck(cells * sizeof(int));
    int* dist = mallocCheck(cells * sizeof(int));
    int* queue = mallocCheck(cells * sizeof(int));
    m[0] = 0;
    for (size_t k = 1; k < cells; k++) m[k] = pyrandom_random(&rng) < c.p_zero ? 0 : 1;
    pyrandom_shuffle(&rng, m, cells, sizeof(int));

    /* Multi-source breadth-first search: every 0 at distance 0, then rings outward. */
    size_t head = 0, tail = 0;
    for (size_t k = 0; k < cells; k++) {
        dist[k] = m[k] == 0 ? 0 : -1;
        if (m[k] == 0) queue[tail++] = (int)k;
    }
    while (head < tail) {
        int k = queue[head++], r = k / n, col = k % n;
        const int dr[4] = {1, -1, 0, 0}, dc[4] = {0, 0, 1, -1};
        for (int d = 0; d < 4; d++) {
            int nr = r + dr[d], nc = col + dc[d];
            if (nr < 0 || nr >= n || nc < 0 || nc >= n || dist[nr * n + nc] >= 0) continue;
            dist[nr * n + nc] = dist[k] + 1;
            queue[tail++] = nr * n + nc;
        }
    }

    TextBuf q = {0}, a = {0};
    textbuf_append(&q,
                   "Given a square matrix, your job is to find the taxicab (Manhattan) distance of the nearest 0 for "
                   "each cell.\n\nThe output should be a matrix of the same size as the input matrix, where each cell "
                   "contains the distance to the nearest 0.\n\nFind the distance to the nearest 0 for each cell in the "
                   "matrix below:\n");
    matrix_write(&q, m, n);
    textbuf_append(&q, "\n");
    matrix_write(&a, dist, n);
    out->question = textbuf_take(&q);
    out->answer = textbuf_take(&a);

    cJSON* meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "source_dataset", NAME);
    cJSON_AddNumberToObject(meta, "source_index", (double)index);
    cJSON_AddItemToObject(meta, "matrix", matrix_json(m, n));
    cJSON_AddItemToObject(meta, "solution", matrix_json(dist, n));
    cJSON_AddNumberToObject(meta, "n", n);
    cJSON* diff = cJSON_AddObjectToObject(meta, "difficulty");
    cJSON* nr = cJSON_AddArrayToObject(diff, "n");
    cJSON_AddItemToArray(nr, cJSON_CreateNumber((double)c.min_n));
    cJSON_AddItemToArray(nr, cJSON_CreateNumber((double)c.max_n));
    cJSON_AddNumberToObject(diff, "p_zero", c.p_zero);
    out->metadata = meta;
    free(m);
    free(dist);
    free(queue);
    return 0;
}

/* ---- verifier: the answer read as a Python literal (pyliteral.h), as eval() would ---------- */

/* str(x) for a matrix cell, in the one-byte-per-code-point form. */
static void cell_str(TextBuf* b, const PyLiteral* x) {
    char tmp[32];
    switch (x->kind) {
        case PYLIT_INT:
            if (x->big) textbuf_append_n(b, "\xFF", 1);
            else {
                snprintf(tmp, sizeof tmp, "%lld", (long long)x->i);
                textbuf_append(b, tmp);
            }
            break;
        case PYLIT_BOOL: textbuf_append(b, x->i ? "True" : "False"); break;
        case PYLIT_NONE: textbuf_append(b, "None"); break;
        case PYLIT_STR: textbuf_append_n(b, x->text ? x->text : "", x->len); break;
        default: textbuf_append_n(b, "\xFF", 1); break; /* a repr with brackets or quotes */
    }
}

/* " ".join(str(x) for x in row): -1 where the row is not iterable (TypeError). */
static int row_str(TextBuf* b, const PyLiteral* row) {
    switch (row->kind) {
        case PYLIT_LIST: case PYLIT_TUPLE:
            for (size_t k = 0; k < row->n; k++) {
                if (k) textbuf_append(b, " ");
                cell_str(b, row->items[k]);
            }
            return 0;
        case PYLIT_STR: /* its characters */
            for (size_t k = 0; k < row->len; k++) {
                if (k) textbuf_append(b, " ");
                textbuf_append_n(b, row->text + k, 1);
            }
            return 0;
        case PYLIT_BYTES: /* its byte values */
            for (size_t k = 0; k < row->len; k++)
                textbuf_printf(b, k ? " %u" : "%u", (unsigned)(unsigned char)row->text[k]);
            return 0;
        default: return -1;
    }
}

/* The package's _matrix_to_str(value): -1 where it raises. */
static int matrix_str(TextBuf* b, const PyLiteral* v) {
    switch (v->kind) {
        case PYLIT_LIST: case PYLIT_TUPLE:
            for (size_t k = 0; k < v->n; k++) {
                if (k) textbuf_append(b, "\n");
                if (row_str(b, v->items[k])) return -1;
            }
            return 0;
        case PYLIT_STR: /* rows are its one-character strings, each written as itself */
            for (size_t k = 0; k < v->len; k++) {
                if (k) textbuf_append(b, "\n");
                textbuf_append_n(b, v->text + k, 1);
            }
            return 0;
        case PYLIT_BYTES: return v->len ? -1 : 0; /* rows would be ints */
        default: return -1;
    }
}

static double matrix_score(const char* answer, size_t len, const cJSON* entry) {
    if (!answer) return 0.0;
    size_t oracle_len = 0;
    const char* oracle = task_entry_answer(entry, &oracle_len);
    if (oracle && len == oracle_len && !memcmp(answer, oracle, len)) return 1.0;
    PyLiteral* v = pyliteral_eval(answer, len);
    if (!v) return 0.0;
    TextBuf b = {0};
    int ok = matrix_str(&b, v) == 0;
    double score = 0.0;
    if (ok && oracle && b.len == oracle_len && (b.len == 0 || !memcmp(b.data, oracle, b.len))) score = 0.1;
    textbuf_free(&b);
    pyliteral_free(v);
    return score;
}

const TaskSpec task_binary_matrix = {
    .name = NAME,
    .generate = matrix_generate,
    .score = matrix_score,
    .preset_paper = "{\"min_n\": 3, \"max_n\": 10, \"p_zero\": 0.25}",
    .preset_small = "{\"min_n\": 3, \"max_n\": 5, \"p_zero\": 0.3}",
    .preset_tiny = "{\"min_n\": 2, \"max_n\": 3, \"p_zero\": 0.5}",
};
