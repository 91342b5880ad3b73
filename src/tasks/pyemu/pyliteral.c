/* The Python literal reader behind pyliteral_eval (see pyliteral.h): CPython's tokenizer
 * for the subset (tok_get's rules on lines, brackets, numbers and string prefixes), the
 * string and bytes escape decoders, and a recursive descent over its grammar. */
#include "tasks/pyemu/pyliteral.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/pyemu/pyunicode.h"

static PyLiteral* literal_new(PyLiteralKind k) {
    PyLiteral* v = callocCheck(1, sizeof(PyLiteral));
    v->kind = k;
    return v;
}

void pyliteral_free(PyLiteral* v) {
    if (!v) return;
    for (size_t k = 0; k < v->n; k++) pyliteral_free(v->items[k]);
    free(v->items);
    free(v->text);
    free(v);
}

static void literal_push(PyLiteral* seq, PyLiteral* item) {
    if (seq->n == seq->cap) {
        seq->cap = seq->cap ? seq->cap * 2 : 4;
        PyLiteral** p = realloc(seq->items, seq->cap * sizeof(PyLiteral*));
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

/* The next token (CPython's tok_get for the subset; see pyliteral.h). */
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

/* Makes room in v's text for n more bytes. */
static void text_reserve(PyLiteral* v, size_t n) {
    if (v->len + n <= v->text_cap) return;
    v->text_cap = v->len + n;
    char* p = realloc(v->text, v->text_cap);
    if (!p) sapo_die("out of memory");
    v->text = p;
}

/* Appends one byte to v's text, within the room text_reserve made. */
static void put_byte(PyLiteral* v, char c) {
    if (v->len >= v->text_cap) sapo_die("pyliteral: decoded text outgrew its literal");
    v->text[v->len++] = c;
}

/* Appends one code point of literal text as the one-byte stand-in (see pyliteral.h). */
static void put_cp(PyLiteral* v, uint32_t cp) { put_byte(v, cp < 0x80 ? (char)cp : (char)0xFF); }

/* Decodes a str literal body (escapes unless raw) onto out's text. -1 where Python raises, or
 * on \N{...} (not supported). Every decoded byte consumes at least one byte of the body, so
 * room for n bytes suffices (the caller's text_reserve). */
static int decode_str(const char* s, size_t n, int raw, PyLiteral* out) {
    size_t i = 0;
    while (i < n) {
        if (raw || s[i] != '\\') {
            put_cp(out, pyu_next(s, n, &i));
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
            put_cp(out, (uint32_t)v);
            i++;
            continue;
        }
        if (c >= '0' && c <= '7') {
            uint32_t o = 0;
            for (int k = 0; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++) o = o * 8 + (uint32_t)(s[i++] - '0');
            put_cp(out, o);
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
            put_cp(out, h);
            continue;
        }
        if (c == 'N') return -1;
        /* An unknown escape keeps its backslash (a DeprecationWarning, not an error). */
        put_cp(out, '\\');
    }
    return 0;
}

/* Decodes a bytes literal body onto out's text (one byte per element; room as for
 * decode_str). -1 where Python raises. */
static int decode_bytes(const char* s, size_t n, int raw, PyLiteral* out) {
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)s[k] >= 0x80) return -1; /* bytes can only contain ASCII literal characters */
    size_t i = 0;
    while (i < n) {
        if (raw || s[i] != '\\') {
            put_byte(out, s[i]);
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
            put_byte(out, byte);
            continue;
        }
        if (v < 0 && c == 'x') {
            int h1 = i + 1 < n ? hex_value((unsigned char)s[i + 1]) : -1;
            int h2 = i + 2 < n ? hex_value((unsigned char)s[i + 2]) : -1;
            if (h1 < 0 || h2 < 0) return -1;
            char byte = (char)(h1 * 16 + h2);
            put_byte(out, byte);
            i += 3;
            continue;
        }
        if (v >= 0) {
            char byte = (char)v;
            put_byte(out, byte);
            i++;
            continue;
        }
        put_byte(out, '\\'); /* unknown escapes (\N, \u, \U too) stay as written */
    }
    return 0;
}

static PyLiteral* parse_expr(Lexer* lx);

/* Items of a list display or a tuple after its first item, up to the closing bracket. */
static int parse_items(Lexer* lx, PyLiteral* seq, char close) {
    for (;;) {
        if (lx_peek_op(lx, close)) {
            lx_next(lx);
            return 0;
        }
        PyLiteral* item = parse_expr(lx);
        if (!item) return -1;
        literal_push(seq, item);
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

static PyLiteral* parse_atom(Lexer* lx) {
    int k = lx_next(lx);
    switch (k) {
        case TOK_INT: {
            PyLiteral* v = literal_new(PYLIT_INT);
            v->i = lx->ival;
            v->big = lx->big;
            return v;
        }
        case TOK_TRUE: case TOK_FALSE: {
            PyLiteral* v = literal_new(PYLIT_BOOL);
            v->i = k == TOK_TRUE;
            return v;
        }
        case TOK_NONE: return literal_new(PYLIT_NONE);
        case TOK_STR: case TOK_BYTES: {
            /* Adjacent literals concatenate; bytes and str do not mix; f-strings are out. */
            PyLiteral* v = literal_new(k == TOK_STR ? PYLIT_STR : PYLIT_BYTES);
            for (;;) {
                const char* body = lx->s + lx->body_start;
                size_t len = lx->body_end - lx->body_start;
                /* An f-string without replacement fields is a plain string; one with braces
                 * would need evaluation. */
                text_reserve(v, len);
                int bad = (lx->fstring && (memchr(body, '{', len) || memchr(body, '}', len))) ||
                          (k == TOK_STR ? decode_str(body, len, lx->raw, v) : decode_bytes(body, len, lx->raw, v));
                if (bad) {
                    pyliteral_free(v);
                    return NULL;
                }
                int next = lx_peek(lx);
                if (next != TOK_STR && next != TOK_BYTES) break;
                if ((next == TOK_STR) != (v->kind == PYLIT_STR)) {
                    pyliteral_free(v);
                    return NULL;
                }
                k = lx_next(lx);
            }
            return v;
        }
        case TOK_OP:
            if (lx->op == '[') {
                PyLiteral* v = literal_new(PYLIT_LIST);
                if (parse_items(lx, v, ']')) {
                    pyliteral_free(v);
                    return NULL;
                }
                return v;
            }
            if (lx->op == '(') {
                if (lx_peek_op(lx, ')')) {
                    lx_next(lx);
                    return literal_new(PYLIT_TUPLE);
                }
                PyLiteral* first = parse_expr(lx);
                if (!first) return NULL;
                if (lx_peek_op(lx, ')')) { /* a parenthesized expression */
                    lx_next(lx);
                    return first;
                }
                if (!lx_peek_op(lx, ',')) {
                    pyliteral_free(first);
                    return NULL;
                }
                lx_next(lx);
                PyLiteral* v = literal_new(PYLIT_TUPLE);
                literal_push(v, first);
                if (parse_items(lx, v, ')')) {
                    pyliteral_free(v);
                    return NULL;
                }
                return v;
            }
            return NULL;
        default: return NULL;
    }
}

/* factor: ('+' | '-' | '~')* atom. */
static PyLiteral* parse_factor(Lexer* lx) {
    char ops[MAX_OPERATORS];
    int n_ops = 0;
    while (lx_peek_op(lx, '+') || lx_peek_op(lx, '-') || lx_peek_op(lx, '~')) {
        if (++lx->operators > MAX_OPERATORS) return NULL;
        ops[n_ops++] = lx->op;
        lx_next(lx);
    }
    PyLiteral* v = parse_atom(lx);
    if (!v) return NULL;
    while (n_ops > 0) {
        char op = ops[--n_ops];
        if (v->kind != PYLIT_INT && v->kind != PYLIT_BOOL) { /* TypeError: bad operand type for unary op */
            pyliteral_free(v);
            return NULL;
        }
        v->kind = PYLIT_INT;
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
 * TypeError, and where int64 overflows (see pyliteral.h). Consumes a and b. */
static PyLiteral* binary_op(char op, PyLiteral* a, PyLiteral* b) {
    int a_int = a->kind == PYLIT_INT || a->kind == PYLIT_BOOL, b_int = b->kind == PYLIT_INT || b->kind == PYLIT_BOOL;
    PyLiteral* r = NULL;
    if (a_int && b_int) {
        int64_t x;
        if (!a->big && !b->big &&
            !(op == '+' ? __builtin_add_overflow(a->i, b->i, &x) : __builtin_sub_overflow(a->i, b->i, &x))) {
            r = a;
            r->kind = PYLIT_INT;
            r->i = x;
            a = NULL;
        }
    } else if (op == '+' && a->kind == b->kind && (a->kind == PYLIT_STR || a->kind == PYLIT_BYTES)) {
        if (b->len) {
            text_reserve(a, b->len);
            memcpy(a->text + a->len, b->text, b->len);
            a->len += b->len;
        }
        r = a;
        a = NULL;
    } else if (op == '+' && a->kind == b->kind && (a->kind == PYLIT_LIST || a->kind == PYLIT_TUPLE)) {
        for (size_t k = 0; k < b->n; k++) literal_push(a, b->items[k]);
        b->n = 0;
        r = a;
        a = NULL;
    }
    pyliteral_free(a);
    pyliteral_free(b);
    return r;
}

/* arith: factor (('+' | '-') factor)*, with no trailer (call, subscript, attribute) and no
 * other operator after it. */
static PyLiteral* parse_expr(Lexer* lx) {
    PyLiteral* v = parse_factor(lx);
    while (v && (lx_peek_op(lx, '+') || lx_peek_op(lx, '-'))) {
        char op = lx->op;
        lx_next(lx);
        if (++lx->operators > MAX_OPERATORS) {
            pyliteral_free(v);
            return NULL;
        }
        PyLiteral* rhs = parse_factor(lx);
        if (!rhs) {
            pyliteral_free(v);
            return NULL;
        }
        v = binary_op(op, v, rhs);
    }
    if (!v) return NULL;
    /* The next token must end the expression: ',' ')' ']' or the end of the input. */
    int k = lx_peek(lx);
    if (!(k == TOK_NEWLINE || k == TOK_END || (k == TOK_OP && (lx->op == ',' || lx->op == ')' || lx->op == ']')))) {
        pyliteral_free(v);
        return NULL;
    }
    return v;
}

/* eval(text): see pyliteral.h. */
PyLiteral* pyliteral_eval(const char* text, size_t n) {
    if (memchr(text, '\0', n)) return NULL; /* "source code string cannot contain null bytes" */
    while (n && (*text == ' ' || *text == '\t')) text++, n--;
    /* The compiler reads "\r\n" and a lone "\r" as "\n". */
    char* src = mallocCheck(n + 1);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (text[k] == '\r') {
            src[m++] = '\n';
            if (k + 1 < n && text[k + 1] == '\n') k++;
        } else src[m++] = text[k];
    }
    src[m] = '\0';
    Lexer lx = {.s = src, .n = m, .atbol = 1};
    PyLiteral* top = parse_expr(&lx);
    if (top && lx_peek_op(&lx, ',')) { /* a bare tuple: a, b, ... */
        lx_next(&lx);
        PyLiteral* t = literal_new(PYLIT_TUPLE);
        literal_push(t, top);
        top = t;
        while (lx_peek(&lx) != TOK_NEWLINE && lx.kind != TOK_END) {
            PyLiteral* item = parse_expr(&lx);
            if (!item) {
                pyliteral_free(top);
                top = NULL;
                break;
            }
            literal_push(top, item);
            if (lx_peek_op(&lx, ',')) lx_next(&lx);
            else break;
        }
    }
    /* expressions NEWLINE* ENDMARKER */
    if (top) {
        while (lx_peek(&lx) == TOK_NEWLINE) lx_next(&lx);
        if (lx_peek(&lx) != TOK_END) {
            pyliteral_free(top);
            top = NULL;
        }
    }
    free(src);
    return top;
}

