/* reasoning_gym 0.1.25 `binary_matrix`: the taxicab distance from every cell of a square
 * 0/1 matrix to its nearest 0 (LeetCode "01 matrix").
 * Generator: n = randint(min_n, max_n); one guaranteed 0 followed by n*n-1 cells, each 0
 * when random() < p_zero; shuffle; distances by a breadth-first search from every 0.
 * Matrices are written row per line, cells separated by one space.
 * Verifier: 1.0 for the oracle text; otherwise the package runs Python's eval() on the
 * answer and gives 0.1 when the result, written back the same way
 * ("\n".join(" ".join(str(x) for x in row) for row in value)), equals the oracle. eval()
 * cannot be run here, so the answer is read as a Python expression of the subset that a
 * matrix is written in: list and tuple displays, parentheses, integer literals (every
 * form: 0x/0o/0b, underscores), str and bytes literals (prefixes, escapes, implicit
 * concatenation, f-strings without replacement fields), True/False/None, unary + - ~ and
 * binary + - (int arithmetic within 64 bits, concatenation), with the tokenizer's rules on
 * comments, blank lines, indentation, line continuations and nesting (200 brackets). Any
 * other construct (names, calls, other operators, subscripts, conditionals,
 * comprehensions, f-strings with replacement fields, \N{...} escapes, more than 1000
 * operators) scores 0, where Python might compute a matching value: see
 * test_binary_matrix_known_divergences in tests/reference/test_tasks_a.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/pyemu/pyrandom.h"
#include "tasks/pyemu/pyunicode.h"

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

/* ---- verifier: a Python literal reader standing in for eval() ---------------------------- */

/* A value of the subset. Text is kept one byte per code point: ASCII as itself, anything
 * else as 0xFF, which never equals a byte of an oracle (digits, spaces, newlines). */
typedef enum { V_INT, V_BOOL, V_NONE, V_STR, V_BYTES, V_LIST, V_TUPLE } ValKind;

typedef struct Val {
    ValKind kind;
    int64_t i;  /* V_INT, V_BOOL */
    int big;    /* V_INT beyond int64 */
    TextBuf text; /* V_STR, V_BYTES */
    struct Val** items; /* V_LIST, V_TUPLE */
    size_t n, cap;
} Val;

static Val* val_new(ValKind k) {
    Val* v = callocCheck(1, sizeof(Val));
    v->kind = k;
    return v;
}

static void val_free(Val* v) {
    if (!v) return;
    for (size_t k = 0; k < v->n; k++) val_free(v->items[k]);
    free(v->items);
    textbuf_free(&v->text);
    free(v);
}

static void val_push(Val* seq, Val* item) {
    if (seq->n == seq->cap) {
        seq->cap = seq->cap ? seq->cap * 2 : 4;
        Val** p = realloc(seq->items, seq->cap * sizeof(Val*));
        if (!p) sapo_die("out of memory");
        seq->items = p;
    }
    seq->items[seq->n++] = item;
}

enum { TOK_FAIL, TOK_END, TOK_NEWLINE, TOK_OP, TOK_INT, TOK_STR, TOK_BYTES, TOK_TRUE, TOK_FALSE, TOK_NONE };

#define MAX_LEVEL 200  /* CPython's tokenizer: "too many nested parentheses" beyond this */
/* Unary and binary operators in the whole answer. With at most 200 brackets every path of
 * the syntax tree stays far below the depth at which CPython's compiler runs out of
 * recursion (about 3000 levels, fewer when eval() is called deep in a stack). */
#define MAX_OPERATORS 1000

typedef struct {
    const char* s; /* source after eval()'s strip and newline translation */
    size_t n, i;
    int level;
    char brackets[MAX_LEVEL];
    int atbol, blankline;
    /* the current token */
    int kind;
    char op;
    int64_t ival;
    int big;
    int raw;     /* string prefix r */
    int fstring; /* string prefix f */
    size_t body_start, body_end; /* the literal's text between its quotes */
    int peeked;
    int operators; /* unary and binary operators read so far */
} Lexer;

static int lx_at(const Lexer* lx, size_t k) { return k < lx->n ? (unsigned char)lx->s[k] : -1; }
static int is_ident_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
static int is_ident_char(int c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Backslash at lx->i: it must end the line and more text must follow (CPython's
 * tok_continuation_line). */
static int lx_continuation(Lexer* lx) {
    if (lx_at(lx, lx->i + 1) != '\n' || lx->i + 2 >= lx->n) return -1;
    lx->i += 2;
    return 0;
}

/* value = value * base + digit, tracking overflow past int64 in `big`. */
static void acc_digit(Lexer* lx, int base, int d) {
    if (lx->big) return;
    if (lx->ival > (INT64_MAX - d) / base) lx->big = 1;
    else lx->ival = lx->ival * base + d;
}

/* An integer literal at lx->i. Anything a float or complex literal (which can never
 * print as a matrix cell) or a syntax error becomes TOK_FAIL. */
static int lx_number(Lexer* lx) {
    lx->ival = 0;
    lx->big = 0;
    int c = lx_at(lx, lx->i);
    if (c == '0') {
        int x = lx_at(lx, lx->i + 1);
        int base = (x == 'x' || x == 'X') ? 16 : (x == 'o' || x == 'O') ? 8 : (x == 'b' || x == 'B') ? 2 : 10;
        if (base != 10) {
            /* (_? digit)+ */
            lx->i += 2;
            int groups = 0;
            for (;;) {
                size_t at = lx->i;
                if (lx_at(lx, at) == '_') at++;
                int d = hex_value(lx_at(lx, at));
                if (d < 0 || d >= base) break;
                lx->i = at;
                while ((d = hex_value(lx_at(lx, lx->i))) >= 0 && d < base) {
                    acc_digit(lx, base, d);
                    lx->i++;
                }
                groups++;
            }
            if (!groups) return TOK_FAIL;
            /* A digit the base lacks, an '_' not followed by a digit, a letter: errors. */
            if (is_ident_char(lx_at(lx, lx->i))) return TOK_FAIL;
            return TOK_INT;
        }
        /* Zeros, with single underscores between them. */
        lx->i++;
        for (;;) {
            if (lx_at(lx, lx->i) == '_') {
                if (!is_digit(lx_at(lx, lx->i + 1))) return TOK_FAIL;
                lx->i++;
            }
            if (lx_at(lx, lx->i) != '0') break;
            lx->i++;
        }
        /* More digits make it a float (00.5, 01e1, 01j) or an error: never an int. */
        c = lx_at(lx, lx->i);
        if (is_digit(c) || c == '.' || is_ident_char(c)) return TOK_FAIL;
        return TOK_INT;
    }
    /* [1-9] (_? digit)* */
    for (;;) {
        while (is_digit(lx_at(lx, lx->i))) acc_digit(lx, 10, lx_at(lx, lx->i++) - '0');
        if (lx_at(lx, lx->i) != '_') break;
        if (!is_digit(lx_at(lx, lx->i + 1))) return TOK_FAIL;
        lx->i++;
    }
    c = lx_at(lx, lx->i);
    if (c == '.' || is_ident_char(c)) return TOK_FAIL; /* float, exponent, 'j', or an error */
    return TOK_INT;
}

/* A string literal whose quote is at lx->i; the prefix was already read. */
static int lx_string(Lexer* lx) {
    int q = lx_at(lx, lx->i);
    int size = 1;
    lx->i++;
    if (lx_at(lx, lx->i) == q) {
        if (lx_at(lx, lx->i + 1) == q) {
            size = 3;
            lx->i += 2;
        } else {
            lx->body_start = lx->body_end = lx->i;
            lx->i++;
            return 0;
        }
    }
    lx->body_start = lx->i;
    int run = 0;
    while (run != size) {
        int c = lx_at(lx, lx->i);
        if (c < 0) return -1;                 /* unterminated */
        if (size == 1 && c == '\n') return -1; /* unterminated single-quoted string */
        lx->i++;
        if (c == q) run++;
        else {
            run = 0;
            if (c == '\\') {
                if (lx->i >= lx->n) return -1;
                lx->i++; /* the escaped character, a newline or a quote included */
            }
        }
    }
    lx->body_end = lx->i - (size_t)size;
    return 0;
}

/* The next token (CPython's tok_get for the subset; see the file comment). */
static int lx_next(Lexer* lx) {
    if (lx->peeked) {
        lx->peeked = 0;
        return lx->kind;
    }
nextline:
    lx->blankline = 0;
    if (lx->atbol) {
        lx->atbol = 0;
        int col = 0, cont_col = 0;
        for (;;) {
            int c = lx_at(lx, lx->i);
            if (c == ' ') col++;
            else if (c == '\t') col = (col / 8 + 1) * 8;
            else if (c == '\f') col = 0;
            else if (c == '\\') {
                cont_col = cont_col ? cont_col : col;
                if (lx_continuation(lx)) return lx->kind = TOK_FAIL;
                continue;
            } else break;
            lx->i++;
        }
        int c = lx_at(lx, lx->i);
        if (c == '#' || c == '\n') lx->blankline = 1;
        /* eval input has no indented blocks: any indentation of a logical line is an error
         * (at the end of the text too, where a line of blanks is not "blank"). */
        if (!lx->blankline && lx->level == 0 && (cont_col ? cont_col : col) > 0) return lx->kind = TOK_FAIL;
    }
again:
    while (lx_at(lx, lx->i) == ' ' || lx_at(lx, lx->i) == '\t' || lx_at(lx, lx->i) == '\f') lx->i++;
    if (lx_at(lx, lx->i) == '#')
        while (lx->i < lx->n && lx->s[lx->i] != '\n') lx->i++;
    int c = lx_at(lx, lx->i);
    if (c < 0) return lx->kind = lx->level ? TOK_FAIL : TOK_END;
    if (c == '\n') {
        lx->i++;
        lx->atbol = 1;
        if (lx->blankline || lx->level > 0) goto nextline;
        return lx->kind = TOK_NEWLINE;
    }
    if (c == '\\') {
        if (lx_continuation(lx)) return lx->kind = TOK_FAIL;
        goto again;
    }
    if (is_ident_start(c)) {
        size_t start = lx->i;
        int saw_b = 0, saw_r = 0, saw_u = 0, saw_f = 0;
        for (;;) {
            c = lx_at(lx, lx->i);
            if (!(saw_b || saw_u || saw_f) && (c == 'b' || c == 'B')) saw_b = 1;
            else if (!(saw_b || saw_u || saw_r || saw_f) && (c == 'u' || c == 'U')) saw_u = 1;
            else if (!(saw_r || saw_u) && (c == 'r' || c == 'R')) saw_r = 1;
            else if (!(saw_f || saw_b || saw_u) && (c == 'f' || c == 'F')) saw_f = 1;
            else break;
            lx->i++;
            c = lx_at(lx, lx->i);
            if (c == '"' || c == '\'') {
                lx->raw = saw_r;
                lx->fstring = saw_f;
                if (lx_string(lx)) return lx->kind = TOK_FAIL;
                return lx->kind = saw_b ? TOK_BYTES : TOK_STR;
            }
        }
        while (is_ident_char(lx_at(lx, lx->i))) lx->i++;
        size_t len = lx->i - start;
        if (len == 4 && !memcmp(lx->s + start, "True", 4)) return lx->kind = TOK_TRUE;
        if (len == 5 && !memcmp(lx->s + start, "False", 5)) return lx->kind = TOK_FALSE;
        if (len == 4 && !memcmp(lx->s + start, "None", 4)) return lx->kind = TOK_NONE;
        return lx->kind = TOK_FAIL; /* any other name (or keyword) is outside the subset */
    }
    if (is_digit(c)) return lx->kind = lx_number(lx);
    if (c == '"' || c == '\'') {
        lx->raw = lx->fstring = 0;
        if (lx_string(lx)) return lx->kind = TOK_FAIL;
        return lx->kind = TOK_STR;
    }
    lx->i++;
    if (c == '(' || c == '[') {
        if (lx->level >= MAX_LEVEL) return lx->kind = TOK_FAIL;
        lx->brackets[lx->level++] = (char)c;
    } else if (c == ')' || c == ']') {
        if (lx->level == 0 || lx->brackets[lx->level - 1] != (c == ')' ? '(' : '[')) return lx->kind = TOK_FAIL;
        lx->level--;
    } else if (c == ',' || c == '+' || c == '-' || c == '~') {
        /* "+=", "-=", "->": operators outside the subset, syntax errors here anyway. */
    } else {
        return lx->kind = TOK_FAIL;
    }
    lx->op = (char)c;
    return lx->kind = TOK_OP;
}

static int lx_peek(Lexer* lx) {
    if (!lx->peeked) {
        lx_next(lx);
        lx->peeked = 1;
    }
    return lx->kind;
}

static int lx_peek_op(Lexer* lx, char op) { return lx_peek(lx) == TOK_OP && lx->op == op; }

/* Appends one code point of literal text as the one-byte stand-in (see Val). */
static void put_cp(TextBuf* b, uint32_t cp) {
    char c = cp < 0x80 ? (char)cp : (char)0xFF;
    textbuf_append_n(b, &c, 1);
}

/* Decodes a str literal body (escapes unless raw) onto b. -1 where Python raises, or on
 * \N{...} (not supported). */
static int decode_str(const char* s, size_t n, int raw, TextBuf* b) {
    size_t i = 0;
    while (i < n) {
        if (raw || s[i] != '\\') {
            put_cp(b, pyu_next(s, n, &i));
            continue;
        }
        i++; /* the body never ends in a lone backslash: it would have escaped the quote */
        char c = s[i];
        int v = -1;
        switch (c) {
            case '\n': i++; continue;
            case '\\': case '\'': case '"': v = c; break;
            case 'a': v = 7; break;
            case 'b': v = 8; break;
            case 'f': v = 12; break;
            case 'n': v = 10; break;
            case 'r': v = 13; break;
            case 't': v = 9; break;
            case 'v': v = 11; break;
            default: break;
        }
        if (v >= 0) {
            put_cp(b, (uint32_t)v);
            i++;
            continue;
        }
        if (c >= '0' && c <= '7') {
            uint32_t o = 0;
            for (int k = 0; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++) o = o * 8 + (uint32_t)(s[i++] - '0');
            put_cp(b, o);
            continue;
        }
        if (c == 'x' || c == 'u' || c == 'U') {
            int digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t h = 0;
            i++;
            for (int k = 0; k < digits; k++) {
                int d = i < n ? hex_value((unsigned char)s[i]) : -1;
                if (d < 0) return -1;
                h = h * 16 + (uint32_t)d;
                i++;
            }
            if (h > 0x10FFFF) return -1;
            put_cp(b, h);
            continue;
        }
        if (c == 'N') return -1;
        /* An unknown escape keeps its backslash (a DeprecationWarning, not an error). */
        put_cp(b, '\\');
    }
    return 0;
}

/* Decodes a bytes literal body onto b (one byte per element). -1 where Python raises. */
static int decode_bytes(const char* s, size_t n, int raw, TextBuf* b) {
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)s[k] >= 0x80) return -1; /* bytes can only contain ASCII literal characters */
    size_t i = 0;
    while (i < n) {
        if (raw || s[i] != '\\') {
            textbuf_append_n(b, s + i, 1);
            i++;
            continue;
        }
        i++;
        char c = s[i];
        int v = -1;
        switch (c) {
            case '\n': i++; continue;
            case '\\': case '\'': case '"': v = c; break;
            case 'a': v = 7; break;
            case 'b': v = 8; break;
            case 'f': v = 12; break;
            case 'n': v = 10; break;
            case 'r': v = 13; break;
            case 't': v = 9; break;
            case 'v': v = 11; break;
            default: break;
        }
        if (v < 0 && c >= '0' && c <= '7') {
            unsigned o = 0;
            for (int k = 0; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++) o = o * 8 + (unsigned)(s[i++] - '0');
            char byte = (char)(o & 0xFF); /* values past 0o377 wrap (a DeprecationWarning) */
            textbuf_append_n(b, &byte, 1);
            continue;
        }
        if (v < 0 && c == 'x') {
            int h1 = i + 1 < n ? hex_value((unsigned char)s[i + 1]) : -1;
            int h2 = i + 2 < n ? hex_value((unsigned char)s[i + 2]) : -1;
            if (h1 < 0 || h2 < 0) return -1;
            char byte = (char)(h1 * 16 + h2);
            textbuf_append_n(b, &byte, 1);
            i += 3;
            continue;
        }
        if (v >= 0) {
            char byte = (char)v;
            textbuf_append_n(b, &byte, 1);
            i++;
            continue;
        }
        textbuf_append_n(b, "\\", 1); /* unknown escapes (\N, \u, \U too) stay as written */
    }
    return 0;
}

static Val* parse_expr(Lexer* lx);

/* Items of a list display or a tuple after its first item, up to the closing bracket. */
static int parse_items(Lexer* lx, Val* seq, char close) {
    for (;;) {
        if (lx_peek_op(lx, close)) {
            lx_next(lx);
            return 0;
        }
        Val* item = parse_expr(lx);
        if (!item) return -1;
        val_push(seq, item);
        if (lx_peek_op(lx, ',')) {
            lx_next(lx);
            continue;
        }
        if (lx_peek_op(lx, close)) {
            lx_next(lx);
            return 0;
        }
        return -1;
    }
}

static Val* parse_atom(Lexer* lx) {
    int k = lx_next(lx);
    switch (k) {
        case TOK_INT: {
            Val* v = val_new(V_INT);
            v->i = lx->ival;
            v->big = lx->big;
            return v;
        }
        case TOK_TRUE: case TOK_FALSE: {
            Val* v = val_new(V_BOOL);
            v->i = k == TOK_TRUE;
            return v;
        }
        case TOK_NONE: return val_new(V_NONE);
        case TOK_STR: case TOK_BYTES: {
            /* Adjacent literals concatenate; bytes and str do not mix; f-strings are out. */
            Val* v = val_new(k == TOK_STR ? V_STR : V_BYTES);
            for (;;) {
                const char* body = lx->s + lx->body_start;
                size_t len = lx->body_end - lx->body_start;
                /* An f-string without replacement fields is a plain string; one with braces
                 * would need evaluation. */
                int bad = (lx->fstring && (memchr(body, '{', len) || memchr(body, '}', len))) ||
                          (k == TOK_STR ? decode_str(body, len, lx->raw, &v->text)
                                        : decode_bytes(body, len, lx->raw, &v->text));
                if (bad) {
                    val_free(v);
                    return NULL;
                }
                int next = lx_peek(lx);
                if (next != TOK_STR && next != TOK_BYTES) break;
                if ((next == TOK_STR) != (v->kind == V_STR)) {
                    val_free(v);
                    return NULL;
                }
                k = lx_next(lx);
            }
            return v;
        }
        case TOK_OP:
            if (lx->op == '[') {
                Val* v = val_new(V_LIST);
                if (parse_items(lx, v, ']')) {
                    val_free(v);
                    return NULL;
                }
                return v;
            }
            if (lx->op == '(') {
                if (lx_peek_op(lx, ')')) {
                    lx_next(lx);
                    return val_new(V_TUPLE);
                }
                Val* first = parse_expr(lx);
                if (!first) return NULL;
                if (lx_peek_op(lx, ')')) { /* a parenthesized expression */
                    lx_next(lx);
                    return first;
                }
                if (!lx_peek_op(lx, ',')) {
                    val_free(first);
                    return NULL;
                }
                lx_next(lx);
                Val* v = val_new(V_TUPLE);
                val_push(v, first);
                if (parse_items(lx, v, ')')) {
                    val_free(v);
                    return NULL;
                }
                return v;
            }
            return NULL;
        default: return NULL;
    }
}

/* factor: ('+' | '-' | '~')* atom. */
static Val* parse_factor(Lexer* lx) {
    char ops[MAX_OPERATORS];
    int n_ops = 0;
    while (lx_peek_op(lx, '+') || lx_peek_op(lx, '-') || lx_peek_op(lx, '~')) {
        if (++lx->operators > MAX_OPERATORS) return NULL;
        ops[n_ops++] = lx->op;
        lx_next(lx);
    }
    Val* v = parse_atom(lx);
    if (!v) return NULL;
    while (n_ops > 0) {
        char op = ops[--n_ops];
        if (v->kind != V_INT && v->kind != V_BOOL) { /* TypeError: bad operand type for unary op */
            val_free(v);
            return NULL;
        }
        v->kind = V_INT;
        if (v->big) continue; /* stays beyond int64: never a matrix cell */
        if (op == '-') {
            if (v->i == INT64_MIN) v->big = 1;
            else v->i = -v->i;
        } else if (op == '~') {
            v->i = -v->i - 1; /* never overflows: |v->i| < 2^63 */
        }
    }
    return v;
}

/* a + b and a - b as Python computes them for the subset: int/bool arithmetic, and
 * concatenation of two str, two bytes, two lists or two tuples. NULL where Python raises
 * TypeError, and where int64 overflows (see the file comment). Consumes a and b. */
static Val* binary_op(char op, Val* a, Val* b) {
    int a_int = a->kind == V_INT || a->kind == V_BOOL, b_int = b->kind == V_INT || b->kind == V_BOOL;
    Val* r = NULL;
    if (a_int && b_int) {
        int64_t x;
        if (!a->big && !b->big &&
            !(op == '+' ? __builtin_add_overflow(a->i, b->i, &x) : __builtin_sub_overflow(a->i, b->i, &x))) {
            r = a;
            r->kind = V_INT;
            r->i = x;
            a = NULL;
        }
    } else if (op == '+' && a->kind == b->kind && (a->kind == V_STR || a->kind == V_BYTES)) {
        textbuf_append_n(&a->text, b->text.data ? b->text.data : "", b->text.len);
        r = a;
        a = NULL;
    } else if (op == '+' && a->kind == b->kind && (a->kind == V_LIST || a->kind == V_TUPLE)) {
        for (size_t k = 0; k < b->n; k++) val_push(a, b->items[k]);
        b->n = 0;
        r = a;
        a = NULL;
    }
    val_free(a);
    val_free(b);
    return r;
}

/* arith: factor (('+' | '-') factor)*, with no trailer (call, subscript, attribute) and no
 * other operator after it. */
static Val* parse_expr(Lexer* lx) {
    Val* v = parse_factor(lx);
    while (v && (lx_peek_op(lx, '+') || lx_peek_op(lx, '-'))) {
        char op = lx->op;
        lx_next(lx);
        if (++lx->operators > MAX_OPERATORS) {
            val_free(v);
            return NULL;
        }
        Val* rhs = parse_factor(lx);
        if (!rhs) {
            val_free(v);
            return NULL;
        }
        v = binary_op(op, v, rhs);
    }
    if (!v) return NULL;
    /* The next token must end the expression: ',' ')' ']' or the end of the input. */
    int k = lx_peek(lx);
    if (!(k == TOK_NEWLINE || k == TOK_END || (k == TOK_OP && (lx->op == ',' || lx->op == ')' || lx->op == ']')))) {
        val_free(v);
        return NULL;
    }
    return v;
}

/* eval(text): the value, or NULL where Python raises or the text is outside the subset. */
static Val* py_eval_literal(const char* answer, size_t n) {
    if (memchr(answer, '\0', n)) return NULL; /* "source code string cannot contain null bytes" */
    while (n && (*answer == ' ' || *answer == '\t')) answer++, n--;
    /* The compiler reads "\r\n" and a lone "\r" as "\n". */
    char* src = mallocCheck(n + 1);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (answer[k] == '\r') {
            src[m++] = '\n';
            if (k + 1 < n && answer[k + 1] == '\n') k++;
        } else src[m++] = answer[k];
    }
    src[m] = '\0';
    Lexer lx = {.s = src, .n = m, .atbol = 1};
    Val* top = parse_expr(&lx);
    if (top && lx_peek_op(&lx, ',')) { /* a bare tuple: a, b, ... */
        lx_next(&lx);
        Val* t = val_new(V_TUPLE);
        val_push(t, top);
        top = t;
        while (lx_peek(&lx) != TOK_NEWLINE && lx.kind != TOK_END) {
            Val* item = parse_expr(&lx);
            if (!item) {
                val_free(top);
                top = NULL;
                break;
            }
            val_push(top, item);
            if (lx_peek_op(&lx, ',')) lx_next(&lx);
            else break;
        }
    }
    /* expressions NEWLINE* ENDMARKER */
    if (top) {
        while (lx_peek(&lx) == TOK_NEWLINE) lx_next(&lx);
        if (lx_peek(&lx) != TOK_END) {
            val_free(top);
            top = NULL;
        }
    }
    free(src);
    return top;
}

/* str(x) for a matrix cell, in the one-byte-per-code-point form. */
static void cell_str(TextBuf* b, const Val* x) {
    char tmp[32];
    switch (x->kind) {
        case V_INT:
            if (x->big) textbuf_append_n(b, "\xFF", 1);
            else {
                snprintf(tmp, sizeof tmp, "%lld", (long long)x->i);
                textbuf_append(b, tmp);
            }
            break;
        case V_BOOL: textbuf_append(b, x->i ? "True" : "False"); break;
        case V_NONE: textbuf_append(b, "None"); break;
        case V_STR: textbuf_append_n(b, x->text.data ? x->text.data : "", x->text.len); break;
        default: textbuf_append_n(b, "\xFF", 1); break; /* a repr with brackets or quotes */
    }
}

/* " ".join(str(x) for x in row): -1 where the row is not iterable (TypeError). */
static int row_str(TextBuf* b, const Val* row) {
    switch (row->kind) {
        case V_LIST: case V_TUPLE:
            for (size_t k = 0; k < row->n; k++) {
                if (k) textbuf_append(b, " ");
                cell_str(b, row->items[k]);
            }
            return 0;
        case V_STR: /* its characters */
            for (size_t k = 0; k < row->text.len; k++) {
                if (k) textbuf_append(b, " ");
                textbuf_append_n(b, row->text.data + k, 1);
            }
            return 0;
        case V_BYTES: /* its byte values */
            for (size_t k = 0; k < row->text.len; k++)
                textbuf_printf(b, k ? " %u" : "%u", (unsigned)(unsigned char)row->text.data[k]);
            return 0;
        default: return -1;
    }
}

/* The package's _matrix_to_str(value): -1 where it raises. */
static int matrix_str(TextBuf* b, const Val* v) {
    switch (v->kind) {
        case V_LIST: case V_TUPLE:
            for (size_t k = 0; k < v->n; k++) {
                if (k) textbuf_append(b, "\n");
                if (row_str(b, v->items[k])) return -1;
            }
            return 0;
        case V_STR: /* rows are its one-character strings, each written as itself */
            for (size_t k = 0; k < v->text.len; k++) {
                if (k) textbuf_append(b, "\n");
                textbuf_append_n(b, v->text.data + k, 1);
            }
            return 0;
        case V_BYTES: return v->text.len ? -1 : 0; /* rows would be ints */
        default: return -1;
    }
}

static double matrix_score(const char* answer, size_t len, const cJSON* entry) {
    if (!answer) return 0.0;
    size_t oracle_len = 0;
    const char* oracle = task_entry_answer(entry, &oracle_len);
    if (oracle && len == oracle_len && !memcmp(answer, oracle, len)) return 1.0;
    Val* v = py_eval_literal(answer, len);
    if (!v) return 0.0;
    TextBuf b = {0};
    int ok = matrix_str(&b, v) == 0;
    double score = 0.0;
    if (ok && oracle && b.len == oracle_len && (b.len == 0 || !memcmp(b.data, oracle, b.len))) score = 0.1;
    textbuf_free(&b);
    val_free(v);
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
