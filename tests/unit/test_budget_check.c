/* The budget check (src/swarm/budget_check.c): exact shares and boundaries on hand-made
 * lengths; a stored answer of None is not measurable; sampling real tasks is deterministic
 * and matches what the node's prompts and demonstrations measure; the config-level check
 * fails over tasks.max_unanswerable with one line naming task, share, threshold, key and
 * fix, checks every distinct (n_ctx, max_new_tokens) of [node.K], prints its table, and is
 * fast for the nine tasks. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "swarm/budget_check.h"
#include "swarm/taskset.h"
#include "../test_assert.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static Config* config_with(const char* const* overrides, int n) {
    Config* cfg = config_new();
    char err[512];
    for (int i = 0; i < n; i++)
        if (config_set_override(cfg, overrides[i], err, sizeof err)) {
            printf("override %s: %s\n", overrides[i], err);
            exit(1);
        }
    return cfg;
}

/* Runs budget_check_config; the table goes to *table (caller frees). */
static int check_config(const Config* cfg, int n_nodes, char** table, char* err, size_t errlen) {
    size_t len = 0;
    FILE* f = open_memstream(table, &len);
    int rc = budget_check_config(cfg, n_nodes, f, "> ", err, errlen);
    fclose(f);
    return rc;
}

static int count_lines_with(const char* text, const char* fragment) {
    int n = 0;
    for (const char* p = text; (p = strstr(p, fragment)); p += strlen(fragment)) n++;
    return n;
}

int main(void) {
    /* ---- exact shares on hand-made lengths ---- */
    TaskSet ts;
    char err[2048];
    if (taskset_build(&ts, "binary_matrix,propositional_logic", TASK_PRESET_TINY, err, sizeof err)) {
        printf("taskset: %s\n", err);
        return 1;
    }
    int prompts[5] = {10, 50, 100, 101, 200}, answers[5] = {17, 20, 21, -1, 40};
    BudgetSample hand = {.slot = &ts.slots[0], .n_items = 5, .prompt_bytes = prompts, .answer_bytes = answers};
    /* n_ctx 122, max_new 20: prompts keep 122 - 20 - 1 = 101 bytes, so only the 200-byte one
     * is cut (101 fits exactly); answers of 21 and 40 bytes do not fit (20 does); the None
     * item counts for prompts only. */
    TaskBudget b = budget_measure(&hand, 122, 20);
    EXPECT(b.prompt_room == 101, "prompt room %d, want 101", b.prompt_room);
    EXPECT(b.n_items == 5 && b.n_measurable == 4, "items %d measurable %d, want 5 and 4", b.n_items, b.n_measurable);
    EXPECT(b.n_unanswerable == 2, "unanswerable %d, want 2", b.n_unanswerable);
    EXPECT(budget_unanswerable_share(&b) == 0.5, "unanswerable share %g, want 0.5", budget_unanswerable_share(&b));
    EXPECT(b.n_cut == 1 && budget_cut_share(&b) == 0.2, "cut %d (%g), want 1 (0.2)", b.n_cut, budget_cut_share(&b));
    EXPECT(b.answer_max == 40 && b.answer_mean == 24.5, "answer max %d mean %g, want 40 and 24.5", b.answer_max,
           b.answer_mean);
    EXPECT(b.prompt_max == 200 && fabs(b.prompt_mean - 92.2) < 1e-12, "prompt max %d mean %g, want 200 and 92.2",
           b.prompt_max, b.prompt_mean);
    b = budget_measure(&hand, 122, 40); /* room 81: 100, 101, 200 cut; every answer fits */
    EXPECT(b.n_unanswerable == 0 && b.n_cut == 3, "max_new 40: unanswerable %d cut %d, want 0 and 3", b.n_unanswerable,
           b.n_cut);
    b = budget_measure(&hand, 30, 40); /* n_ctx below max_new: no room, every prompt is cut */
    EXPECT(b.prompt_room == 0 && b.n_cut == 5, "no room: room %d cut %d, want 0 and 5", b.prompt_room, b.n_cut);
    int none[3] = {-1, -1, -1};
    BudgetSample unmeasurable = {.slot = &ts.slots[1], .n_items = 3, .prompt_bytes = prompts, .answer_bytes = none};
    b = budget_measure(&unmeasurable, 122, 1);
    EXPECT(b.n_measurable == 0 && b.n_unanswerable == 0 && budget_unanswerable_share(&b) == 0.0,
           "None answers: measurable %d unanswerable %d", b.n_measurable, b.n_unanswerable);

    /* ---- real items: deterministic, measured as the node sees them ---- */
    BudgetSample s1[2], s2[2];
    EXPECT(budget_sample(&ts, 200, s1, err, sizeof err) == 0, "sample: %s", err);
    EXPECT(budget_sample(&ts, 200, s2, err, sizeof err) == 0, "sample again: %s", err);
    EXPECT(!memcmp(s1[0].prompt_bytes, s2[0].prompt_bytes, sizeof(int) * 200) &&
               !memcmp(s1[0].answer_bytes, s2[0].answer_bytes, sizeof(int) * 200),
           "two samples of binary_matrix differ");
    /* tiny binary_matrix: 2x2 or 3x3 matrices, "<answer>" + rows + "</answer>": 7 + 17 = 24
     * or 17 + 17 = 34 bytes; prompt lengths vary with the example text */
    int n34 = 0, other = 0;
    for (int i = 0; i < 200; i++) {
        n34 += s1[0].answer_bytes[i] == 34;
        other += s1[0].answer_bytes[i] != 34 && s1[0].answer_bytes[i] != 24;
    }
    EXPECT(other == 0, "%d binary_matrix answers are neither 24 nor 34 bytes", other);
    b = budget_measure(&s1[0], 256, 32); /* quick.ini's settings */
    EXPECT(b.n_unanswerable == n34 && b.n_unanswerable == 91, "binary_matrix at 32: %d unanswerable (%d of 34 bytes), "
           "want 91 (the check's fixed stream)", b.n_unanswerable, n34);
    EXPECT(b.answer_max == 34, "binary_matrix answer max %d, want 34", b.answer_max);
    b = budget_measure(&s1[0], 256, 34);
    EXPECT(b.n_unanswerable == 0, "binary_matrix at 34: %d unanswerable, want 0", b.n_unanswerable);
    b = budget_measure(&s1[1], 256, 32);
    EXPECT(b.n_measurable == 0, "propositional_logic: %d measurable, want 0 (answer None)", b.n_measurable);
    /* quick.ini cuts every tiny binary_matrix prompt (the shortest is longer than 223 bytes) */
    b = budget_measure(&s1[0], 256, 32);
    EXPECT(b.n_cut == 200, "binary_matrix prompts cut at n_ctx 256: %d, want 200", b.n_cut);
    budget_sample_free(s1, 2);
    budget_sample_free(s2, 2);
    taskset_free(&ts);

    /* ---- the config-level check ---- */
    {
        const char* o[] = {"tasks.preset=tiny", "tasks.names=binary_matrix,propositional_logic,basic_arithmetic",
                           "model.n_ctx=256", "gen.max_new_tokens=32"};
        Config* cfg = config_with(o, 4);
        char* table = NULL;
        int rc = check_config(cfg, 4, &table, err, sizeof err);
        EXPECT(rc == -1, "binary_matrix at 32 bytes passed the default threshold 0.25");
        EXPECT_MSG(err, "budget: binary_matrix at preset tiny cannot be answered in 45.5% of its items");
        EXPECT_MSG(err, "gen.max_new_tokens = 32 bytes; nodes 0-3, model.n_ctx 256");
        EXPECT_MSG(err, "over tasks.max_unanswerable = 0.25");
        EXPECT_MSG(err, "raise gen.max_new_tokens to 34 bytes");
        EXPECT_MSG(err, "drop binary_matrix from tasks.names");
        EXPECT(!strchr(err, '\n'), "the error is more than one line: %s", err);
        EXPECT(count_lines_with(table, "> budget check, preset tiny, 200 items per task, nodes 0-3: model.n_ctx 256, "
                                       "gen.max_new_tokens 32 (prompts keep their last 223 bytes)\n") == 1,
               "table header missing:\n%s", table);
        EXPECT(strstr(table, "binary_matrix                    45.5%") != NULL, "binary_matrix row:\n%s", table);
        EXPECT(strstr(table, "propositional_logic                  -                -") != NULL,
               "propositional_logic must read '-' in the answer columns:\n%s", table);
        free(table);
        EXPECT(config_set_override(cfg, "tasks.max_unanswerable=0.5", err, sizeof err) == 0, "override: %s", err);
        EXPECT(check_config(cfg, 4, &table, err, sizeof err) == 0, "45.5%% failed threshold 0.5: %s", err);
        free(table);
        EXPECT(config_set_override(cfg, "tasks.max_unanswerable=0.455", err, sizeof err) == 0, "override: %s", err);
        EXPECT(check_config(cfg, 4, &table, err, sizeof err) == 0, "a share equal to the threshold fails: %s", err);
        free(table);
        /* a [node.K] with a short budget is checked on its own: here only node 2 fails */
        const char* fix[] = {"tasks.max_unanswerable=0.25", "gen.max_new_tokens=40", "node.2.gen.max_new_tokens=24",
                             "node.3.model.n_ctx=300"};
        for (int i = 0; i < 4; i++) EXPECT(config_set_override(cfg, fix[i], err, sizeof err) == 0, "%s: %s", fix[i], err);
        EXPECT(check_config(cfg, 4, &table, err, sizeof err) == -1, "node 2's 24 bytes passed");
        EXPECT_MSG(err, "gen.max_new_tokens = 24 bytes; node 2, model.n_ctx 256");
        EXPECT(count_lines_with(table, "> budget check") == 3, "want 3 tables (nodes 0-1, node 2, node 3):\n%s", table);
        EXPECT_MSG(table, "nodes 0-1: model.n_ctx 256, gen.max_new_tokens 40");
        EXPECT_MSG(table, "node 3: model.n_ctx 300, gen.max_new_tokens 40 (prompts keep their last 259 bytes)");
        free(table);
        /* nodes beyond the swarm are not checked */
        EXPECT(check_config(cfg, 2, &table, err, sizeof err) == 0, "2-node swarm failed on node 2's settings: %s", err);
        free(table);
        /* propositional_logic alone (answer None) never fails */
        EXPECT(config_set_override(cfg, "tasks.names=propositional_logic", err, sizeof err) == 0, "override: %s", err);
        EXPECT(config_set_override(cfg, "tasks.max_unanswerable=0", err, sizeof err) == 0, "override: %s", err);
        EXPECT(budget_check_config(cfg, 4, NULL, "", err, sizeof err) == 0, "propositional_logic failed: %s", err);
        config_free(cfg);
    }

    /* ---- the nine tasks at the paper preset: fast, and paper/base.ini's budget holds ---- */
    {
        const char* o[] = {"tasks.preset=paper", "tasks.names=all", "model.n_ctx=768", "gen.max_new_tokens=224",
                           "tasks.max_unanswerable=0"};
        Config* cfg = config_with(o, 5);
        double t0 = now();
        int rc = budget_check_config(cfg, 8, NULL, "", err, sizeof err);
        double dt = now() - t0;
        EXPECT(rc == 0, "paper preset at 224 new bytes: %s", err);
        printf("nine tasks at the paper preset, %d items each: %.3f s\n", BUDGET_ITEMS, dt);
        EXPECT(dt < 1.0, "the check took %.3f s", dt);
        config_free(cfg);
    }
    return test_finish("test_budget_check");
}
