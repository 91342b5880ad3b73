/* The fixed held-out evaluation set (see evalset.h). */
#include "swarm/evalset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "core/rng.h"
#include "tasks/infra/answer.h"

static uint64_t fnv1a_str(uint64_t h, const char* s) {
    return fnv1a_update(h, s ? s : "", (s ? strlen(s) : 0) + 1); /* the NUL separates fields */
}

static uint64_t question_key(const Question* q) {
    int32_t id = q->slot->task_id;
    return fnv1a_str(fnv1a_update(FNV1A_OFFSET, &id, sizeof id), question_text(q));
}

static int key_order(const void* a, const void* b) {
    uint64_t x = ((const EvalKey*)a)->key, y = ((const EvalKey*)b)->key;
    return x < y ? -1 : x > y;
}

int evalset_build(EvalSet* es, const TaskSet* ts, uint64_t eval_seed, int n, char* err, size_t errlen) {
    memset(es, 0, sizeof *es);
    es->digest = FNV1A_OFFSET;
    if (n <= 0) return 0;
    if (ts->n < 1) return set_error(err, errlen, "evaluation set: no task to ask");
    /* the asked tasks in task-id order, so "a,b" and "b,a" give the same set */
    const TaskSlot* order[sizeof ts->slots / sizeof ts->slots[0]];
    int n_tasks = 0;
    for (int id = 0; id < TASK_N_IDS; id++) {
        const TaskSlot* s = taskset_find(ts, id);
        if (s) order[n_tasks++] = s;
    }
    es->qs = callocCheck((size_t)n, sizeof *es->qs);
    es->prompts = callocCheck((size_t)n, sizeof *es->prompts);
    es->n = n;
    for (int i = 0; i < n; i++) {
        Question* q = &es->qs[i];
        q->slot = order[i % n_tasks];
        int k = i / n_tasks; /* this task's k-th question */
        q->index = 0;
        RngStream rng = rng_stream(eval_seed, (uint32_t)q->slot->task_id, (uint32_t)k, RNG_EVAL_SET);
        /* a few items raise in the package (decimal_arithmetic dividing by an exact zero);
         * the port refuses the same ones and the set takes the stream's next seed */
        for (int tries = 0; tries < 100 && !q->entry; tries++) {
            q->seed = (int64_t)(rng_u64(&rng) >> 16);
            q->entry = task_generate_entry(q->slot->spec, q->slot->config, q->seed, q->index, err, errlen);
        }
        if (!q->entry) {
            char why[256];
            snprintf(why, sizeof why, "%s", err);
            evalset_free(es);
            return set_error(err, errlen, "evaluation set: question %d (%s): %s", i, order[i % n_tasks]->spec->name, why);
        }
        const char* text = question_text(q);
        q->prompt = question_prompt(text);
        es->prompts[i] = q->prompt;
        es->n_by_task[q->slot->task_id]++;
        int32_t id = q->slot->task_id;
        es->digest = fnv1a_update(es->digest, &id, sizeof id);
        es->digest = fnv1a_update(es->digest, &q->seed, sizeof q->seed);
        es->digest = fnv1a_str(es->digest, text);
        es->digest = fnv1a_str(es->digest, question_answer(q));
    }
    es->keys = mallocCheck((size_t)n * sizeof *es->keys);
    for (int i = 0; i < n; i++) es->keys[i] = (EvalKey){.key = question_key(&es->qs[i]), .index = i};
    qsort(es->keys, (size_t)n, sizeof *es->keys, key_order);
    return 0;
}

int evalset_contains(const EvalSet* es, const Question* q) {
    if (es->n == 0) return 0;
    uint64_t key = question_key(q);
    int lo = 0, hi = es->n; /* the first key >= key */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (es->keys[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    /* equal keys: the texts decide (a 64-bit hash could collide) */
    for (int i = lo; i < es->n && es->keys[i].key == key; i++) {
        const Question* e = &es->qs[es->keys[i].index];
        if (e->slot->task_id == q->slot->task_id && strcmp(question_text(e), question_text(q)) == 0) return 1;
    }
    return 0;
}

void evalset_free(EvalSet* es) {
    for (int i = 0; i < es->n; i++) question_free(&es->qs[i]);
    free(es->qs);
    free(es->prompts);
    free(es->keys);
    memset(es, 0, sizeof *es);
}

double evalset_score(const EvalSet* es, char* const* texts, double by_task[TASK_N_IDS]) {
    double sum = 0.0, task_sum[TASK_N_IDS] = {0};
    for (int i = 0; i < es->n; i++) {
        const Question* q = &es->qs[i];
        double r = task_reward(q->slot->spec, texts[i], q->entry);
        sum += r;
        task_sum[q->slot->task_id] += r;
    }
    for (int t = 0; t < TASK_N_IDS; t++) by_task[t] = es->n_by_task[t] ? task_sum[t] / es->n_by_task[t] : NAN;
    return es->n ? sum / es->n : NAN;
}
