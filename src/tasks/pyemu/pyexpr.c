/* The arithmetic expression evaluator (see pyexpr.h): a recursive descent over
 * expr := term (('+' | '-') term)*, term := factor (('*' | '/') factor)*,
 * factor := ('+' | '-') factor | NUMBER | '(' expr ')'. */
#include "tasks/pyemu/pyexpr.h"

#include <stdalign.h>
#include <stddef.h>

#include "core/check.h"

typedef struct {
    const char* s;
    size_t i;
    const PyExprOps* ops;
    void* ctx;
    const char* why; /* set on failure */
} ExprParser;

/* Room for one temporary value of the number type. */
typedef struct {
    alignas(max_align_t) unsigned char bytes[PYEXPR_VALUE_MAX];
} ValueSlot;

static void skip_spaces(ExprParser* p) {
    while (p->s[p->i] == ' ') p->i++;
}

static int parse_expr(ExprParser* p, void* out);

static int parse_factor(ExprParser* p, void* out) {
    skip_spaces(p);
    char c = p->s[p->i];
    if ((c == '-' || c == '+') && p->ops->negate) {
        p->i++;
        if (parse_factor(p, out)) return -1;
        if (c == '-') p->ops->negate(out, p->ctx);
        return 0;
    }
    if (c == '(') {
        p->i++;
        if (parse_expr(p, out)) return -1;
        skip_spaces(p);
        if (p->s[p->i] != ')') {
            p->why = "syntax error: ')' expected";
            return -1;
        }
        p->i++;
        return 0;
    }
    size_t start = p->i;
    while ((p->s[p->i] >= '0' && p->s[p->i] <= '9') || (p->s[p->i] == '.' && p->ops->decimal_point)) p->i++;
    if (p->i == start) {
        p->why = "syntax error: number expected";
        return -1;
    }
    p->ops->literal(out, p->s + start, p->i - start, p->ctx);
    return 0;
}

/* One level of left-associative binary operators: operand (op operand)* with op in ops_here. */
static int parse_binary_level(ExprParser* p, void* out, const char* ops_here, int (*operand)(ExprParser*, void*)) {
    if (operand(p, out)) return -1;
    ValueSlot rhs;
    p->ops->init(rhs.bytes);
    int rc = 0;
    for (;;) {
        skip_spaces(p);
        char op = p->s[p->i];
        if (op != ops_here[0] && op != ops_here[1]) break;
        p->i++;
        if ((rc = operand(p, rhs.bytes))) break;
        const char* raised = p->ops->binary(op, out, rhs.bytes, p->ctx);
        if (raised) {
            p->why = raised;
            rc = -1;
            break;
        }
    }
    p->ops->free(rhs.bytes);
    return rc;
}

static int parse_term(ExprParser* p, void* out) { return parse_binary_level(p, out, "*/", parse_factor); }

static int parse_expr(ExprParser* p, void* out) { return parse_binary_level(p, out, "+-", parse_term); }

int pyexpr_eval(const char* text, const PyExprOps* ops, void* ctx, void* value, const char** why) {
    if (ops->value_size > PYEXPR_VALUE_MAX) sapo_die("pyexpr: a value of %zu bytes exceeds PYEXPR_VALUE_MAX", ops->value_size);
    ExprParser p = {text, 0, ops, ctx, NULL};
    if (parse_expr(&p, value) == 0) {
        skip_spaces(&p);
        if (!p.s[p.i]) return 0;
        p.why = "syntax error: trailing text";
    }
    *why = p.why;
    return -1;
}
