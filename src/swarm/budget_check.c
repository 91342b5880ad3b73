/* Budget check of a task set (see budget_check.h): sample items once per task, then measure
 * the answer and prompt lengths against each distinct (n_ctx, max_new_tokens) of the swarm. */
#include "swarm/budget_check.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/rng.h"
#include "swarm/node_settings.h"
#include "tasks/registry.h"

/* The check's own stream seed: the items do not depend on swarm.seed. */
#define BUDGET_SEED 0x5a9b0d6e7ULL

int budget_sample(const TaskSet* ts, int n_items, BudgetSample* out, char* err, size_t errlen) {
    memset(out, 0, sizeof *out * (size_t)ts->n);
    for (int t = 0; t < ts->n; t++) {
        TaskSet one = {.n = 1};
        one.slots[0] = ts->slots[t];
        BudgetSample* s = &out[t];
        s->slot = &ts->slots[t];
        s->n_items = n_items;
        s->prompt_bytes = mallocCheck(sizeof(int) * (size_t)(n_items > 0 ? n_items : 1));
        s->answer_bytes = mallocCheck(sizeof(int) * (size_t)(n_items > 0 ? n_items : 1));
        RngStream rng = rng_stream(BUDGET_SEED, (uint32_t)ts->slots[t].task_id, 0, RNG_BUDGET);
        for (int i = 0; i < n_items; i++) {
            Question q;
            char why[512];
            if (question_draw(&one, &rng, &q, why, sizeof why)) {
                budget_sample_free(out, t + 1);
                return set_error(err, errlen, "budget check: %s: %s", ts->slots[t].spec->name, why);
            }
            s->prompt_bytes[i] = (int)strlen(q.prompt);
            const cJSON* answer = cJSON_GetObjectItem(q.entry, "answer");
            if (cJSON_IsString(answer)) {
                char* demo = answer_demonstration(answer->valuestring);
                s->answer_bytes[i] = (int)strlen(demo);
                free(demo);
            } else {
                s->answer_bytes[i] = -1;
            }
            question_free(&q);
        }
    }
    return 0;
}

void budget_sample_free(BudgetSample* s, int n) {
    for (int t = 0; t < n; t++) {
        free(s[t].prompt_bytes);
        free(s[t].answer_bytes);
        s[t].prompt_bytes = s[t].answer_bytes = NULL;
    }
}

TaskBudget budget_measure(const BudgetSample* s, int n_ctx, int max_new_tokens) {
    TaskBudget b = {.name = s->slot->spec->name, .n_items = s->n_items};
    b.prompt_room = (int)prompt_room(n_ctx, max_new_tokens);
    double answer_sum = 0, prompt_sum = 0;
    for (int i = 0; i < s->n_items; i++) {
        int p = s->prompt_bytes[i], a = s->answer_bytes[i];
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

/* "0-3,5,7": the nodes whose settings equal (n_ctx, max_new); "several" when too long. */
static void node_list(const long* ctx, const long* mnt, int n_nodes, long n_ctx, long max_new, char* buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < n_nodes; k++) {
        if (ctx[k] != n_ctx || mnt[k] != max_new) continue;
        int end = k;
        while (end + 1 < n_nodes && ctx[end + 1] == n_ctx && mnt[end + 1] == max_new) end++;
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

int budget_check_config(const Config* cfg, int n_nodes, FILE* table, const char* prefix, char* err, size_t errlen) {
    SwarmSettings sw = swarm_settings_read(cfg);
    const char* preset = task_preset_name(sw.tasks_preset);
    double limit = sw.max_unanswerable;
    TaskSet ts;
    if (taskset_build(&ts, sw.tasks_names, sw.tasks_preset, err, errlen)) return -1;
    BudgetSample* samples = callocCheck((size_t)ts.n, sizeof *samples);
    if (budget_sample(&ts, BUDGET_ITEMS, samples, err, errlen)) {
        free(samples);
        taskset_free(&ts);
        return -1;
    }
    if (n_nodes < 1) n_nodes = 1;
    /* Every (task, setting) over the limit; the error names the worst and lists the rest. */
    typedef struct {
        int task, answer_max;
        double share;
        long n_ctx, max_new;
        char nodes[128];
    } Over;
    Over* over = mallocCheck(sizeof(Over) * (size_t)ts.n * (size_t)n_nodes);
    int n_over = 0;
    long* ctx = mallocCheck(sizeof(long) * (size_t)n_nodes);
    long* mnt = mallocCheck(sizeof(long) * (size_t)n_nodes);
    for (int k = 0; k < n_nodes; k++) {
        NodeSettings ns = node_settings_read(cfg, k);
        ctx[k] = ns.model.n_ctx;
        mnt[k] = ns.gen.max_new_tokens;
    }
    for (int k = 0; k < n_nodes; k++) {
        long n_ctx = ctx[k], max_new = mnt[k];
        int seen = 0; /* measured already for an earlier node (few distinct pairs: the scan stops early) */
        for (int j = 0; j < k && !seen; j++) seen = ctx[j] == n_ctx && mnt[j] == max_new;
        if (seen) continue;
        char nodes[128];
        node_list(ctx, mnt, n_nodes, n_ctx, max_new, nodes, sizeof nodes);
        if (table) {
            fprintf(table,
                    "%sbudget check, preset %s, %d items per task, node%s %s: model.n_ctx %ld, gen.max_new_tokens %ld "
                    "(prompts keep their last %d bytes)\n",
                    prefix, preset, BUDGET_ITEMS, plural(nodes), nodes,
                    n_ctx, max_new, (int)prompt_room((int)n_ctx, (int)max_new));
            fprintf(table, "%s  %-24s %13s %16s %11s %16s\n", prefix, "task", "unanswerable", "answer max/mean",
                    "prompt cut", "prompt max/mean");
        }
        for (int t = 0; t < ts.n; t++) {
            TaskBudget b = budget_measure(&samples[t], (int)n_ctx, (int)max_new);
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
                *o = (Over){.task = t, .answer_max = b.answer_max, .share = share, .n_ctx = n_ctx, .max_new = max_new};
                snprintf(o->nodes, sizeof o->nodes, "%s", nodes);
            }
        }
    }
    if (table) fflush(table);
    free(ctx);
    free(mnt);
    int rc = 0;
    if (n_over > 0) {
        const Over* w = &over[0];
        for (int i = 1; i < n_over; i++)
            if (over[i].share > w->share) w = &over[i];
        const char* name = ts.slots[w->task].spec->name;
        char also[256] = "", drop[256];
        size_t used = 0, dused = (size_t)snprintf(drop, sizeof drop, "%s", name);
        int longest = 0; /* max_new_tokens that answers every sampled item of every task over the limit */
        for (int i = 0; i < n_over; i++)
            if (over[i].answer_max > longest) longest = over[i].answer_max;
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
                       "<answer></answer> is longer than gen.max_new_tokens = %ld bytes; node%s %s, model.n_ctx %ld), "
                       "over tasks.max_unanswerable = %g%s; raise gen.max_new_tokens to %d bytes (the longest sampled "
                       "answer), drop %s from tasks.names, or raise tasks.max_unanswerable",
                       name, preset, 100.0 * w->share, w->max_new, plural(w->nodes), w->nodes, w->n_ctx, limit, also,
                       longest, drop);
    }
    free(over);
    budget_sample_free(samples, ts.n);
    free(samples);
    taskset_free(&ts);
    return rc;
}
