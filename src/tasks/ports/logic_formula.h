/* Propositional formulas as reasoning_gym's propositional_logic task builds, prints, parses
 * and evaluates them: an arena of nodes (children always before their parent), variables
 * named by code-point strings, Python-exact parsing of answers (including its behaviour on
 * malformed text), and truth-table validity checks done 64 assignments at a time. */
#ifndef SAPO_TASKS_LOGIC_FORMULA_H
#define SAPO_TASKS_LOGIC_FORMULA_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/infra/textbuf.h"

/* Operators in the order of reasoning_gym's Operator enum (list(Operator) order), after
 * the variable leaf. */
typedef enum { LF_VAR = -1, LF_AND = 0, LF_OR = 1, LF_NOT = 2, LF_IMPLIES = 3, LF_IFF = 4 } LfOp;

#define LF_CP_AND 0x2227u
#define LF_CP_OR 0x2228u
#define LF_CP_NOT 0x00ACu
#define LF_CP_IMPLIES 0x2192u
#define LF_CP_IFF 0x2194u

/* The deepest nesting of parse_expr calls that Python's default recursion limit (1000)
 * lets through when score_answer is called from the top level of a script (measured:
 * 3 frames above parse_expr); deeper input raises RecursionError there, and scores 0 here. */
#define LF_MAX_PARSE_DEPTH 995
/* The truth table is built as a Python list of 2^n dicts; beyond this many variables the
 * package runs out of memory, and the check answers "error" here. */
#define LF_MAX_TABLE_VARS 24

typedef struct {
    int op;    /* LfOp */
    int a, b;  /* children (node indices); for LF_VAR a is the variable id */
} LfNode;

typedef struct {
    LfNode* nodes;
    int n_nodes, cap_nodes;
    /* variable names: code points, interned (id = order of first appearance) */
    uint32_t* pool;
    size_t pool_len, pool_cap;
    size_t* name_off;
    size_t* name_len;
    int n_vars, cap_vars;
    int* hash; /* open addressing over variable ids, -1 = empty */
    int hash_cap;
} LogicForm;

enum { LF_OK = 0, LF_EVALUE = -1, LF_EDEPTH = -2, LF_ETOOBIG = -3 };

void lf_init(LogicForm* f);
void lf_free(LogicForm* f);

/* A leaf for the variable named by cps[0..n) (interned). Returns its node index. */
int lf_var(LogicForm* f, const uint32_t* cps, size_t n);
/* An operator node over existing nodes (b ignored for LF_NOT). */
int lf_node(LogicForm* f, int op, int a, int b);

/* parse_expr of the package on cps[0..n): LF_OK with *root set, LF_EVALUE where Python
 * raises ValueError ("Empty expression"), LF_EDEPTH where it raises RecursionError. */
int lf_parse(LogicForm* f, const uint32_t* cps, size_t n, int* root);

/* str(expr): variables as named, ¬X, and (X op Y) with spaces around op. */
void lf_format(const LogicForm* f, int root, TextBuf* out);
/* Expression.simplify(): implications rewritten as (¬X ∨ Y), double negations removed. */
int lf_simplify(LogicForm* f, int root);
/* _measure_complexity: the number of nodes. */
int lf_count_nodes(const LogicForm* f, int root);

/* 1 when every assignment of the variables in premises and conclusion that makes all
 * premises true makes the conclusion true (n_premises may be 0: a tautology check), 0 when
 * not, LF_ETOOBIG when more than max_vars distinct variables are involved. */
int lf_entails(const LogicForm* f, const int* premises, int n_premises, int conclusion, int max_vars);

/* s[0..len) (U+0000 included) to code points; each byte of an invalid sequence becomes
 * U+DC80+byte-0x80 (as Python's surrogateescape). Returns a heap array (never NULL) and its
 * length in *n. */
uint32_t* lf_decode_utf8(const char* s, size_t len, size_t* n);
/* Python's str.isspace() for one code point. */
int lf_is_space(uint32_t cp);

#endif
