/* reasoning_gym "propositional_logic": random premises over variables P, Q, R, ...; the
 * model must state a conclusion that follows from them. The package stores no answer
 * (None); its scorer parses the answer and checks the inference by truth table: 1.0 for a
 * valid non-tautological conclusion, 0.25 for a valid trivial one (a bare variable or a
 * tautology), 0.05 for an invalid one, 0.0 for unparseable text or foreign capitals. */
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/ports/logic_formula.h"
#include "tasks/pyemu/pyjson.h"
#include "tasks/pyemu/pyrandom.h"

static const char PL_QUESTION_HEAD[] =
    "The following question is a propositional logic reasoning question.\n\n"
    "In the question we provide a list of premises. The task is to infer a correct conclusion from the "
    "premise.\n\n"
    "FORMAT INSTRUCTIONS:\n"
    "- Return the conclusion logic statement, as your final answer.\n"
    "- Use the following notation to denote symbols\n"
    "    - OR = \u2228\n"
    "    - AND = \u2227\n"
    "    - IMPLIES = \u2192\n"
    "    - IFF = \u2194\n"
    "    - NOT = \u00ac\n\n"
    "Here is the question:\n";

/* Bounds of ours, not the package's: its truth tables and expression trees grow as 2^vars
 * and 2^complexity, and larger settings take it minutes to hours per item. */
#define PL_MAX_VARS 20
#define PL_MAX_COMPLEXITY 20

typedef struct {
    int64_t min_vars, max_vars, min_statements, max_statements, min_complexity, max_complexity;
} PlConfig;

static int pl_read_config(const cJSON* config, PlConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"min_vars", "max_vars", "min_statements", "max_statements",
                                       "min_complexity", "max_complexity", NULL};
    const char* t = "propositional_logic";
    if (taskcfg_check_keys(config, t, keys, err, errlen) ||
        taskcfg_int(config, t, "min_vars", 2, &c->min_vars, err, errlen) ||
        taskcfg_int(config, t, "max_vars", 4, &c->max_vars, err, errlen) ||
        taskcfg_int(config, t, "min_statements", 2, &c->min_statements, err, errlen) ||
        taskcfg_int(config, t, "max_statements", 4, &c->max_statements, err, errlen) ||
        taskcfg_int(config, t, "min_complexity", 1, &c->min_complexity, err, errlen) ||
        taskcfg_int(config, t, "max_complexity", 3, &c->max_complexity, err, errlen)) {
        return -1;
    }
    /* The package's validate() assertions. */
    if (c->min_vars <= 0) return set_error(err, errlen, "%s config: min_vars must be positive", t);
    if (c->max_vars < c->min_vars) return set_error(err, errlen, "%s config: max_vars must be >= min_vars", t);
    if (c->min_statements <= 0) return set_error(err, errlen, "%s config: min_statements must be positive", t);
    if (c->max_statements < c->min_statements) {
        return set_error(err, errlen, "%s config: max_statements must be >= min_statements", t);
    }
    if (c->min_complexity <= 0) return set_error(err, errlen, "%s config: min_complexity must be positive", t);
    if (c->max_complexity < c->min_complexity) {
        return set_error(err, errlen, "%s config: max_complexity must be >= min_complexity", t);
    }
    if (c->max_vars > PL_MAX_VARS || c->max_complexity > PL_MAX_COMPLEXITY || c->max_statements > 1000) {
        return set_error(err, errlen, "%s config: supported up to max_vars %d, max_complexity %d, max_statements 1000",
                         t, PL_MAX_VARS, PL_MAX_COMPLEXITY);
    }
    return 0;
}

/* _generate_expression: a variable at depth <= 1, else a random operator over depth-1
 * subexpressions (the operator is drawn before its operands). */
static int pl_generate_expression(LogicForm* f, PyRandom* rng, const uint32_t* var_cps, int n_vars, int64_t depth) {
    if (depth <= 1) {
        size_t v = pyrandom_choice_index(rng, (size_t)n_vars);
        return lf_var(f, &var_cps[v], 1);
    }
    int op = (int)pyrandom_choice_index(rng, 5);
    if (op == LF_NOT) {
        int sub = pl_generate_expression(f, rng, var_cps, n_vars, depth - 1);
        return lf_node(f, LF_NOT, sub, -1);
    }
    int left = pl_generate_expression(f, rng, var_cps, n_vars, depth - 1);
    int right = pl_generate_expression(f, rng, var_cps, n_vars, depth - 1);
    return lf_node(f, op, left, right);
}

static int pl_is_trivial(const LogicForm* f, int root) {
    if (f->nodes[root].op == LF_VAR) return 1;
    return lf_entails(f, NULL, 0, root, LF_MAX_TABLE_VARS) == 1;
}

static cJSON* pl_pair(int64_t lo, int64_t hi) {
    cJSON* a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)lo));
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)hi));
    return a;
}

static int pl_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err, size_t errlen) {
    PlConfig c;
    memset(out, 0, sizeof *out);
    if (pl_read_config(config, &c, err, errlen)) return -1;

    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    int n_vars = (int)pyrandom_randint(&rng, c.min_vars, c.max_vars);
    uint32_t var_cps[PL_MAX_VARS];
    for (int i = 0; i < n_vars; i++) var_cps[i] = (uint32_t)('P' + i); /* chr(ord("P") + i) */

    int n_statements = (int)pyrandom_randint(&rng, c.min_statements, c.max_statements);
    LogicForm f;
    lf_init(&f);
    int* premises = mallocCheck((size_t)n_statements * sizeof *premises);
    for (int i = 0; i < n_statements; i++) {
        int64_t depth = pyrandom_randint(&rng, c.min_complexity, c.max_complexity);
        premises[i] = pl_generate_expression(&f, &rng, var_cps, n_vars, depth);
    }

    /* _find_valid_conclusion: up to 100 simplified depth-2 candidates, else the first
     * variable. */
    int conclusion = -1;
    for (int attempt = 0; attempt < 100 && conclusion < 0; attempt++) {
        int cand = lf_simplify(&f, pl_generate_expression(&f, &rng, var_cps, n_vars, 2));
        if (lf_entails(&f, premises, n_statements, cand, LF_MAX_TABLE_VARS) == 1 && !pl_is_trivial(&f, cand)) {
            conclusion = cand;
        }
    }
    if (conclusion < 0) conclusion = lf_var(&f, &var_cps[0], 1);

    TextBuf q = {0}, s;
    textbuf_append(&q, PL_QUESTION_HEAD);
    textbuf_append(&q, "Given:\n");
    cJSON* meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "source_dataset", "propositional_logic");
    cJSON_AddNumberToObject(meta, "source_index", (double)index);
    cJSON* prem_json = cJSON_AddArrayToObject(meta, "premises");
    for (int i = 0; i < n_statements; i++) {
        s = (TextBuf){0};
        lf_format(&f, premises[i], &s);
        /* The package's own format: "{i}. {premise}\n." */
        textbuf_printf(&q, "%d. %s\n.", i + 1, s.data);
        cJSON_AddItemToArray(prem_json, cJSON_CreateString(s.data));
        textbuf_free(&s);
    }
    textbuf_append(&q, "What can we conclude from the above statements?");
    cJSON* vars_json = cJSON_AddArrayToObject(meta, "variables");
    for (int i = 0; i < n_vars; i++) {
        s = (TextBuf){0};
        textbuf_append_codepoint(&s, var_cps[i]);
        cJSON_AddItemToArray(vars_json, cJSON_CreateString(s.data));
        textbuf_free(&s);
    }
    cJSON_AddNumberToObject(meta, "complexity", lf_count_nodes(&f, conclusion));
    s = (TextBuf){0};
    lf_format(&f, conclusion, &s);
    cJSON_AddStringToObject(meta, "example_answer", s.data);
    textbuf_free(&s);
    cJSON* diff = cJSON_AddObjectToObject(meta, "difficulty");
    cJSON_AddItemToObject(diff, "vars", pl_pair(c.min_vars, c.max_vars));
    cJSON_AddItemToObject(diff, "statements", pl_pair(c.min_statements, c.max_statements));
    cJSON_AddItemToObject(diff, "complexity", pl_pair(c.min_complexity, c.max_complexity));

    out->question = textbuf_take(&q);
    out->answer = NULL; /* the package stores None */
    out->metadata = meta;
    free(premises);
    lf_free(&f);
    return 0;
}

/* Is the one-letter string `letter` among metadata["variables"]? */
static int pl_has_variable(const cJSON* variables, char letter) {
    for (const cJSON* v = variables->child; v; v = v->next) {
        size_t n;
        const char* s = pyjson_string(v, &n);
        if (s && n == 1 && s[0] == letter) return 1;
    }
    return 0;
}

static double pl_score(const char* answer, size_t len, const cJSON* entry) {
    if (!answer) return 0.0;
    const cJSON* meta = task_entry_metadata(entry);
    const cJSON* variables = meta ? cJSON_GetObjectItemCaseSensitive(meta, "variables") : NULL;
    const cJSON* premises_json = meta ? cJSON_GetObjectItemCaseSensitive(meta, "premises") : NULL;
    if (!cJSON_IsArray(variables)) return 0.0;
    /* re.findall(r"([A-Z])"): every ASCII capital must name one of the task's variables. */
    for (size_t k = 0; k < len; k++) {
        if (answer[k] >= 'A' && answer[k] <= 'Z' && !pl_has_variable(variables, answer[k])) return 0.0;
    }
    if (!cJSON_IsArray(premises_json)) return 0.0;

    double score = 0.0;
    LogicForm f;
    lf_init(&f);
    int n_premises = cJSON_GetArraySize(premises_json);
    int* premises = mallocCheck(((size_t)n_premises + 1) * sizeof *premises);
    int k = 0, ok = 1;
    for (const cJSON* p = premises_json->child; p && ok; p = p->next) {
        size_t plen, n;
        const char* text = pyjson_string(p, &plen);
        if (!text) {
            ok = 0;
            break;
        }
        uint32_t* cps = lf_decode_utf8(text, plen, &n);
        ok = lf_parse(&f, cps, n, &premises[k++]) == LF_OK;
        free(cps);
    }
    int root = -1;
    if (ok) {
        size_t n;
        uint32_t* cps = lf_decode_utf8(answer, len, &n);
        ok = lf_parse(&f, cps, n, &root) == LF_OK;
        free(cps);
    }
    if (ok) {
        int valid = lf_entails(&f, premises, k, root, LF_MAX_TABLE_VARS);
        if (valid == 1) {
            score = pl_is_trivial(&f, root) ? 0.25 : 1.0;
        } else if (valid == 0) {
            score = 0.05;
        }
    }
    free(premises);
    lf_free(&f);
    return score;
}

/* paper: rl-swarm's settings (the package defaults). small/tiny: two variables and fewer,
 * shallower premises, so conclusions are short (e.g. "(P ∨ Q)"). */
const TaskSpec task_propositional_logic = {
    .name = "propositional_logic",
    .generate = pl_generate,
    .score = pl_score,
    .preset_paper = "{\"min_vars\": 2, \"max_vars\": 4, \"min_statements\": 2, \"max_statements\": 4, "
                    "\"min_complexity\": 1, \"max_complexity\": 3}",
    .preset_small = "{\"min_vars\": 2, \"max_vars\": 3, \"min_statements\": 1, \"max_statements\": 3, "
                    "\"min_complexity\": 1, \"max_complexity\": 2}",
    .preset_tiny = "{\"min_vars\": 2, \"max_vars\": 2, \"min_statements\": 1, \"max_statements\": 2, "
                   "\"min_complexity\": 1, \"max_complexity\": 2}",
};
