/* The fixed held-out evaluation set (src/swarm/evalset.h): built from run.eval_seed alone,
 * so the same (eval_seed, tasks, preset) gives the same questions on every node and run;
 * balanced over the asked tasks in task-id order whatever the order of tasks.names; a task's
 * k-th question does not depend on the other tasks asked; scoring gives pass@1 overall and
 * per task, the question-weighted mean of the per-task values being the overall value; and
 * evalset_contains finds exactly the training draws whose task and text a held-out question
 * has (against a plain comparison with every question of the set). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "swarm/evalset.h"
#include "swarm/taskset.h"
#include "tasks/infra/registry.h"
#include "../test_assert.h"

/* Same questions (task, seed, text, prompt) in the same order. */
static int same_questions(const EvalSet* a, const EvalSet* b) {
    if (a->n != b->n || a->digest != b->digest) return 0;
    for (int i = 0; i < a->n; i++) {
        if (a->qs[i].slot->task_id != b->qs[i].slot->task_id || a->qs[i].seed != b->qs[i].seed) return 0;
        if (strcmp(question_text(&a->qs[i]), question_text(&b->qs[i])) || strcmp(a->prompts[i], b->prompts[i])) return 0;
    }
    return 1;
}

/* The task sets stay alive until the end: a set's questions point at their slots. */
static TaskSet task_sets[16];
static int n_task_sets = 0;

static EvalSet build(const char* names, TaskPreset preset, uint64_t seed, int n) {
    TaskSet* ts = &task_sets[n_task_sets++];
    EvalSet es;
    char err[512];
    EXPECT(taskset_build(ts, names, preset, err, sizeof err) == 0, "taskset %s: %s", names, err);
    EXPECT(evalset_build(&es, ts, seed, n, err, sizeof err) == 0, "evalset %s: %s", names, err);
    return es;
}

/* Training draws from a small question space (base_conversion at tiny) against the set: the
 * look-up agrees with a comparison of every question, and some draws do hit the set. */
static void test_contains(void) {
    EvalSet es = build("base_conversion,calendar_arithmetic", TASK_PRESET_TINY, 1, 64);
    const TaskSet* ts = &task_sets[n_task_sets - 1];
    RngStream rng = rng_stream(7, 0, 0, RNG_QUESTIONS);
    char err[512];
    int hits = 0, draws = 400;
    for (int d = 0; d < draws; d++) {
        Question q;
        EXPECT(question_draw(ts, &rng, &q, err, sizeof err) == 0, "draw: %s", err);
        int want = 0;
        for (int i = 0; i < es.n && !want; i++)
            want = es.qs[i].slot->task_id == q.slot->task_id && strcmp(question_text(&es.qs[i]), question_text(&q)) == 0;
        EXPECT(evalset_contains(&es, &q) == want, "draw %d (%s): contains %d, want %d", d, q.slot->spec->name,
               evalset_contains(&es, &q), want);
        hits += want;
        question_free(&q);
    }
    for (int i = 0; i < es.n; i++) EXPECT(evalset_contains(&es, &es.qs[i]), "question %d of the set not found", i);
    printf("evalset_contains: %d of %d tiny draws are held-out questions\n", hits, draws);
    EXPECT(hits > 0, "no draw hit the set: the test cannot tell");
    EvalSet empty = build("base_conversion", TASK_PRESET_TINY, 1, 0);
    EXPECT(evalset_contains(&empty, &es.qs[0]) == 0, "an empty set contains a question");
    evalset_free(&empty);
    evalset_free(&es);
}

int main(void) {
    char err[512];
    test_contains();
    /* every node builds its own: same inputs, identical sets (nothing else goes in) */
    EvalSet a = build("all", TASK_PRESET_TINY, 7, 256), b = build("all", TASK_PRESET_TINY, 7, 256);
    EXPECT(a.n == 256 && same_questions(&a, &b), "same (eval_seed, tasks, preset) gave different sets");
    /* balanced: 256 = 28 x 9 + 4, the first four ids in registry order get 29 */
    int total = 0;
    for (int t = 0; t < TASK_N_IDS; t++) {
        EXPECT(a.n_by_task[t] == (t < 256 % TASK_N_IDS ? 29 : 28), "task %d: %d questions", t, a.n_by_task[t]);
        total += a.n_by_task[t];
    }
    EXPECT(total == 256, "counts sum to %d", total);
    for (int i = 0; i < a.n; i++) EXPECT(a.qs[i].slot->task_id == i % TASK_N_IDS, "question %d asks task %d", i, a.qs[i].slot->task_id);
    /* distinct questions: no two share (task, seed) */
    int dup = 0;
    for (int i = 0; i < a.n; i++)
        for (int j = i + 1; j < a.n; j++) dup += a.qs[i].slot->task_id == a.qs[j].slot->task_id && a.qs[i].seed == a.qs[j].seed;
    EXPECT(dup == 0, "%d repeated questions", dup);
    /* another eval_seed: another set */
    EvalSet c = build("all", TASK_PRESET_TINY, 8, 256);
    int differ = 0;
    for (int i = 0; i < c.n; i++) differ += a.qs[i].seed != c.qs[i].seed;
    EXPECT(c.digest != a.digest && differ > 250, "eval_seed 8 repeats eval_seed 7's set (%d of 256 differ)", differ);
    /* the order of tasks.names does not matter (registry order) */
    EvalSet d = build("fraction_simplification,base_conversion", TASK_PRESET_TINY, 7, 33),
            e = build("base_conversion,fraction_simplification", TASK_PRESET_TINY, 7, 33);
    EXPECT(same_questions(&d, &e), "the order of tasks.names changed the set");
    EXPECT(d.n_by_task[task_id("base_conversion")] == 17 && d.n_by_task[task_id("fraction_simplification")] == 16,
           "33 questions over 2 tasks: %d and %d", d.n_by_task[task_id("base_conversion")],
           d.n_by_task[task_id("fraction_simplification")]);
    EXPECT(d.qs[0].slot->task_id == task_id("base_conversion"), "question 0 should ask the lower task id");
    /* a task's k-th question is the same in a set over other tasks: base_conversion is
     * every 9th question of `a` from 0 and every 2nd of `d` from 0 */
    for (int k = 0; k < 17; k++)
        EXPECT(d.qs[2 * k].seed == a.qs[9 * k].seed && !strcmp(question_text(&d.qs[2 * k]), question_text(&a.qs[9 * k])),
               "base_conversion question %d differs between task sets", k);
    /* a preset is part of the question: another preset, other texts (same seeds) */
    EvalSet p = build("all", TASK_PRESET_SMALL, 7, 256);
    EXPECT(p.digest != a.digest, "preset small gave the tiny preset's set");
    /* decimal_arithmetic refuses a few items: the set still fills, deterministically */
    EvalSet r1 = build("decimal_arithmetic", TASK_PRESET_PAPER, 3, 400),
            r2 = build("decimal_arithmetic", TASK_PRESET_PAPER, 3, 400);
    EXPECT(r1.n == 400 && same_questions(&r1, &r2), "decimal_arithmetic set not reproducible");
    /* empty set */
    EvalSet z = build("all", TASK_PRESET_TINY, 7, 0);
    EXPECT(z.n == 0 && z.qs == NULL, "an empty set holds questions");

    /* scoring: perfect answers on the even questions, nothing on the odd ones */
    TaskSet ts;
    EvalSet s;
    EXPECT(taskset_build(&ts, "base_conversion,basic_arithmetic,fraction_simplification", TASK_PRESET_TINY, err,
                         sizeof err) == 0,
           "%s", err);
    EXPECT(evalset_build(&s, &ts, 11, 40, err, sizeof err) == 0, "%s", err);
    char** texts = malloc(sizeof(char*) * s.n);
    for (int i = 0; i < s.n; i++) {
        const cJSON* ans = cJSON_GetObjectItem(s.qs[i].entry, "answer");
        texts[i] = i % 2 == 0 ? answer_demonstration(ans->valuestring) : strdup("no answer");
    }
    double by_task[TASK_N_IDS];
    double pass1 = evalset_score(&s, texts, by_task);
    EXPECT(fabs(pass1 - 0.5) < 1e-12, "pass@1 %g, expected 0.5", pass1);
    double weighted = 0.0;
    int asked = 0;
    for (int t = 0; t < TASK_N_IDS; t++) {
        if (!s.n_by_task[t]) {
            EXPECT(isnan(by_task[t]), "task %d not asked but scored %g", t, by_task[t]);
            continue;
        }
        asked++;
        weighted += by_task[t] * s.n_by_task[t];
        /* 40 questions over 3 tasks: task slot j gets questions j, j+3, ...; even ones are right */
        int right = 0, n = 0;
        for (int i = 0; i < s.n; i++)
            if (s.qs[i].slot->task_id == t) n++, right += i % 2 == 0;
        EXPECT(fabs(by_task[t] - (double)right / n) < 1e-12, "task %d: %g, expected %d/%d", t, by_task[t], right, n);
    }
    EXPECT(asked == 3 && fabs(weighted / s.n - pass1) < 1e-12, "weighted per-task mean %g != pass@1 %g", weighted / s.n, pass1);
    for (int i = 0; i < s.n; i++) free(texts[i]);
    free(texts);
    evalset_free(&s);
    taskset_free(&ts);

    EvalSet* all[] = {&a, &b, &c, &d, &e, &p, &r1, &r2, &z};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) evalset_free(all[i]);
    for (int i = 0; i < n_task_sets; i++) taskset_free(&task_sets[i]);
    return test_finish("evalset");
}
