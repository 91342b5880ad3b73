/* Budget check of a task set (see budget_check.h): sample items once per task and unit (bytes,
 * or one llama tokenizer), then measure the answer and prompt lengths against each distinct
 * (unit, n_ctx, max_new_tokens) of the swarm. */
#include "swarm/budget_check.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/rng.h"
#include "model/policy.h"
#include "model/prompt_codec.h"
#include "swarm/node_settings.h"
#include "tasks/infra/registry.h"

const char* budget_unit(const Tokenizer* tok) { return tok ? "tokens" : "bytes"; }

int budget_sample_in(const TaskSet* ts, const Tokenizer* tok, int n_items, BudgetSample* out, char* err,
                     size_t errlen) {
    memset(out, 0, sizeof *out * (size_t)ts->n);
    PromptCodec codec = tok ? prompt_codec_chat(tok, PROMPT_CODEC_SYSTEM) : prompt_codec_byte();
    for (int t = 0; t < ts->n; t++) {
        TaskSet one = {.n = 1};
        one.slots[0] = ts->slots[t];
        BudgetSample* s = &out[t];
        s->slot = &ts->slots[t];
        s->tok = tok;
        s->n_items = n_items;
        s->prompt_len = mallocCheck(sizeof(int) * (size_t)(n_items > 0 ? n_items : 1));
        s->answer_len = mallocCheck(sizeof(int) * (size_t)(n_items > 0 ? n_items : 1));
        RngStream rng = rng_stream(BUDGET_SEED, (uint32_t)ts->slots[t].task_id, 0, RNG_BUDGET);
        for (int i = 0; i < n_items; i++) {
            Question q;
            char why[512];
            if (question_draw(&one, &rng, &q, why, sizeof why)) {
                budget_sample_free(out, t + 1);
                return set_error(err, errlen, "budget check: %s: %s", ts->slots[t].spec->name, why);
            }
            /* bytes: the prompt without its BOS, as the table has always shown it */
            s->prompt_len[i] = tok ? prompt_codec_count(&codec, q.prompt) : (int)strlen(q.prompt);
            const cJSON* answer = cJSON_GetObjectItem(q.entry, "answer");
            if (cJSON_IsString(answer)) {
                char* demo = answer_demonstration(answer->valuestring);
                if (tok) {
                    int* ids = NULL;
                    prompt_codec_encode_text(&codec, demo, &ids, &s->answer_len[i]);
                    free(ids);
                } else {
                    s->answer_len[i] = (int)strlen(demo);
                }
                free(demo);
            } else {
                s->answer_len[i] = -1;
            }
            question_free(&q);
        }
    }
    return 0;
}

int budget_sample(const TaskSet* ts, int n_items, BudgetSample* out, char* err, size_t errlen) {
    return budget_sample_in(ts, NULL, n_items, out, err, errlen);
}

void budget_sample_free(BudgetSample* s, int n) {
    for (int t = 0; t < n; t++) {
        free(s[t].prompt_len);
        free(s[t].answer_len);
        s[t].prompt_len = s[t].answer_len = NULL;
    }
}

/* What generation keeps of a prompt in the unit of tok: a byte prompt spends one token on
 * BOS; a chat prompt's count is everything the model reads. */
static int room_of(const Tokenizer* tok, int n_ctx, int max_new_tokens) {
    if (!tok) return (int)prompt_room(n_ctx, max_new_tokens);
    return n_ctx - max_new_tokens > 0 ? n_ctx - max_new_tokens : 0;
}

TaskBudget budget_measure(const BudgetSample* s, int n_ctx, int max_new_tokens) {
    TaskBudget b = {.name = s->slot->spec->name, .n_items = s->n_items, .unit = budget_unit(s->tok)};
    b.prompt_room = room_of(s->tok, n_ctx, max_new_tokens);
    double answer_sum = 0, prompt_sum = 0;
    for (int i = 0; i < s->n_items; i++) {
        int p = s->prompt_len[i], a = s->answer_len[i];
        prompt_sum += p;
        if (p > b.prompt_max) b.prompt_max = p;
        b.n_cut += p > b.prompt_room;
        if (a < 0) continue;
        b.n_measurable++;
        answer_sum += a;
        if (a > b.answer_max) b.answer_max = a;
        b.n_unanswerable += a > max_new_tokens;
    }
    b.prompt_mean = b.n_items ? prompt_sum / b.n_items : 0.0;
    b.answer_mean = b.n_measurable ? answer_sum / b.n_measurable : 0.0;
    return b;
}

double budget_unanswerable_share(const TaskBudget* b) {
    return b->n_measurable ? (double)b->n_unanswerable / b->n_measurable : 0.0;
}

double budget_cut_share(const TaskBudget* b) { return b->n_items ? (double)b->n_cut / b->n_items : 0.0; }

/* A node's measuring setting: its unit (0 = bytes, u > 0 = the tokenizer of the swarm's u-th
 * distinct llama model.hf_dir), its n_ctx and its gen.max_new_tokens. */
typedef struct {
    int unit;
    long n_ctx, max_new;
} Setting;

static int setting_equal(Setting a, Setting b) {
    return a.unit == b.unit && a.n_ctx == b.n_ctx && a.max_new == b.max_new;
}

/* "0-3,5,7": the nodes whose setting equals want; "several" when too long. */
static void node_list(const Setting* set, int n_nodes, Setting want, char* buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < n_nodes; k++) {
        if (!setting_equal(set[k], want)) continue;
        int end = k;
        while (end + 1 < n_nodes && setting_equal(set[end + 1], want)) end++;
        int w = end > k ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", k, end)
                        : snprintf(buf + used, len - used, "%s%d", used ? "," : "", k);
        if (w < 0 || (size_t)w >= len - used) {
            snprintf(buf, len, "%s", "several");
            return;
        }
        used += (size_t)w;
        k = end;
    }
}

/* "node 3" or "nodes 0-3". */
static const char* plural(const char* nodes) { return strpbrk(nodes, ",-") || !strcmp(nodes, "several") ? "s" : ""; }

/* A unit the swarm measures in: bytes (hf_dir NULL) or one llama hf_dir's tokenizer, with its
 * samples taken when a node first needs them. */
typedef struct {
    const char* hf_dir; /* owned by the Config */
    Tokenizer* tok;
    BudgetSample* samples; /* ts.n; NULL until sampled */
} Unit;

static void units_free(Unit* units, int n_units, int n_tasks) {
    for (int u = 0; u < n_units; u++) {
        if (units[u].samples) budget_sample_free(units[u].samples, n_tasks);
        free(units[u].samples);
        if (units[u].tok) tokenizer_free(units[u].tok);
    }
    free(units);
}

/* Node k's unit: 0 for a byte-level node; a llama node's hf_dir, its tokenizer loaded when
 * the dir is new. Returns the unit, or -1 with err when the tokenizer cannot be read. */
static int unit_of(const NodeSettings* ns, int k, Unit* units, int* n_units, char* err, size_t errlen) {
    PolicySpec spec = node_policy_spec(ns);
    char why[512];
    if (!policy_reads_hf_dir(&spec)) return 0;
    if (policy_hf_dir_named(&spec, why, sizeof why)) return set_error(err, errlen, "budget check: node %d: %s", k, why);
    for (int u = 1; u < *n_units; u++)
        if (!strcmp(units[u].hf_dir, ns->hf_dir)) return u;
    Tokenizer* tok = policy_tokenizer_load(&spec, why, sizeof why);
    if (!tok)
        return set_error(err, errlen,
                         "budget check: node %d: model.hf_dir %s: %s (the node's budget is measured in its tokens)", k,
                         ns->hf_dir, why);
    units[*n_units] = (Unit){.hf_dir = ns->hf_dir, .tok = tok};
    return (*n_units)++;
}

/* What a header and an error add after the node list: "" for bytes, the tokenizer for tokens. */
static void unit_where(const Unit* u, char* buf, size_t len) {
    if (u->tok) snprintf(buf, len, " (llama, tokens of %s/tokenizer.json)", u->hf_dir);
    else buf[0] = '\0';
}

int budget_check_settings(const RunSettings* rs, FILE* table, const char* prefix, char* err, size_t errlen) {
    const SwarmSettings* sw = &rs->sw;
    const char* preset = task_preset_name(sw->tasks_preset);
    double limit = sw->max_unanswerable;
    TaskSet ts;
    if (taskset_build(&ts, sw->tasks_names, sw->tasks_preset, err, errlen)) return -1;
    int n_nodes = rs->n_nodes;
    Setting* set = mallocCheck(sizeof(Setting) * (size_t)n_nodes);
    Unit* units = callocCheck((size_t)n_nodes + 1, sizeof *units); /* bytes, then at most one per node */
    int n_units = 1;
    for (int k = 0; k < n_nodes; k++) {
        const NodeSettings* ns = &rs->node[k];
        int u = unit_of(ns, k, units, &n_units, err, errlen);
        if (u < 0) {
            units_free(units, n_units, ts.n);
            free(set);
            taskset_free(&ts);
            return -1;
        }
        set[k] = (Setting){.unit = u, .n_ctx = ns->model.n_ctx, .max_new = ns->gen.max_new_tokens};
    }
    /* Every (task, setting) over the limit; the error names the worst and lists the rest. */
    typedef struct {
        int task, answer_max, unit;
        double share;
        long n_ctx, max_new;
        char nodes[128];
    } Over;
    Over* over = mallocCheck(sizeof(Over) * (size_t)ts.n * (size_t)n_nodes);
    int n_over = 0, rc = 0;
    for (int k = 0; k < n_nodes && rc == 0; k++) {
        Setting here = set[k];
        long n_ctx = here.n_ctx, max_new = here.max_new;
        int seen = 0; /* measured already for an earlier node (few distinct settings: the scan stops early) */
        for (int j = 0; j < k && !seen; j++) seen = setting_equal(set[j], here);
        if (seen) continue;
        Unit* unit = &units[here.unit];
        if (!unit->samples) {
            unit->samples = callocCheck((size_t)ts.n, sizeof *unit->samples);
            if (budget_sample_in(&ts, unit->tok, BUDGET_ITEMS, unit->samples, err, errlen)) {
                free(unit->samples);
                unit->samples = NULL;
                rc = -1;
                break;
            }
        }
        char nodes[128], where[1200];
        node_list(set, n_nodes, here, nodes, sizeof nodes);
        unit_where(unit, where, sizeof where);
        if (table) {
            int room = room_of(unit->tok, (int)n_ctx, (int)max_new);
            fprintf(table,
                    "%sbudget check, preset %s, %d items per task, node%s %s%s: model.n_ctx %ld, "
                    "gen.max_new_tokens %ld (prompts keep their last %d %s)\n",
                    prefix, preset, BUDGET_ITEMS, plural(nodes), nodes, where, n_ctx, max_new, room,
                    budget_unit(unit->tok));
            fprintf(table, "%s  %-24s %13s %16s %11s %16s\n", prefix, "task", "unanswerable", "answer max/mean",
                    "prompt cut", "prompt max/mean");
        }
        for (int t = 0; t < ts.n; t++) {
            TaskBudget b = budget_measure(&unit->samples[t], (int)n_ctx, (int)max_new);
            double share = budget_unanswerable_share(&b);
            if (table) {
                char ans[32], una[16], cut[16], pr[32];
                if (b.n_measurable) {
                    snprintf(una, sizeof una, "%.1f%%", 100.0 * share);
                    snprintf(ans, sizeof ans, "%d / %.1f", b.answer_max, b.answer_mean);
                } else { /* no reference answer (stored None): not measurable */
                    snprintf(una, sizeof una, "-");
                    snprintf(ans, sizeof ans, "-");
                }
                snprintf(cut, sizeof cut, "%.1f%%", 100.0 * budget_cut_share(&b));
                snprintf(pr, sizeof pr, "%d / %.1f", b.prompt_max, b.prompt_mean);
                fprintf(table, "%s  %-24s %13s %16s %11s %16s\n", prefix, b.name, una, ans, cut, pr);
            }
            if (b.n_measurable && share > limit) {
                Over* o = &over[n_over++];
                *o = (Over){.task = t, .answer_max = b.answer_max, .unit = here.unit, .share = share, .n_ctx = n_ctx,
                            .max_new = max_new};
                snprintf(o->nodes, sizeof o->nodes, "%s", nodes);
            }
        }
    }
    if (table) fflush(table);
    free(set);
    if (rc == 0 && n_over > 0) {
        const Over* w = &over[0];
        for (int i = 1; i < n_over; i++)
            if (over[i].share > w->share) w = &over[i];
        const char* name = ts.slots[w->task].spec->name;
        const char* unit = budget_unit(units[w->unit].tok);
        char where[1200];
        unit_where(&units[w->unit], where, sizeof where);
        char also[256] = "", drop[256];
        size_t used = 0, dused = (size_t)snprintf(drop, sizeof drop, "%s", name);
        /* max_new_tokens that answers every sampled item of every task over the limit, in the
         * worst's unit */
        int longest = 0;
        for (int i = 0; i < n_over; i++)
            if (over[i].unit == w->unit && over[i].answer_max > longest) longest = over[i].answer_max;
        for (int t = 0; t < ts.n; t++) { /* the other tasks over the limit, each once */
            if (t == w->task) continue;
            double most = -1;
            for (int i = 0; i < n_over; i++)
                if (over[i].task == t && over[i].share > most) most = over[i].share;
            if (most < 0) continue;
            if (used < sizeof also) {
                int n = snprintf(also + used, sizeof also - used, "%s%s %.1f%%", used ? ", " : "; also over it: ",
                                 ts.slots[t].spec->name, 100.0 * most);
                if (n > 0) used += (size_t)n;
            }
            if (dused < sizeof drop) {
                int n = snprintf(drop + dused, sizeof drop - dused, ", %s", ts.slots[t].spec->name);
                if (n > 0) dused += (size_t)n;
            }
        }
        rc = set_error(err, errlen,
                       "budget: %s at preset %s cannot be answered in %.1f%% of its items (the reference answer with "
                       "<answer></answer> is longer than gen.max_new_tokens = %ld %s; node%s %s%s, model.n_ctx %ld), "
                       "over tasks.max_unanswerable = %g%s; raise gen.max_new_tokens to %d %s (the longest sampled "
                       "answer), drop %s from tasks.names, or raise tasks.max_unanswerable",
                       name, preset, 100.0 * w->share, w->max_new, unit, plural(w->nodes), w->nodes, where, w->n_ctx,
                       limit, also, longest, unit, drop);
    }
    free(over);
    units_free(units, n_units, ts.n);
    taskset_free(&ts);
    return rc;
}
