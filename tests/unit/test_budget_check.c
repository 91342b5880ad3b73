/* The budget check (src/swarm/budget_check.c): exact shares and boundaries on hand-made
 * lengths; a stored answer of None is not measurable; sampling real tasks is deterministic
 * and matches what the node's prompts and demonstrations measure; the config-level check
 * fails over tasks.max_unanswerable with one line naming task, share, threshold, key and
 * fix, checks every distinct (n_ctx, max_new_tokens) of [node.K], prints its table, and is
 * fast for the nine tasks. A llama node ([node.K] model.family = llama, the real SmolLM2
 * tokenizer of BUILD/models/smollm2-135m-instruct, made by scripts/get-model.sh when absent;
 * exit 77 when it cannot be made) is measured in its tokens: its row equals lengths computed
 * here through the tokenizer directly, a max_new_tokens that fits in tokens but not in bytes
 * passes for it and fails for a byte node, and a missing or broken tokenizer.json is one line. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/rng.h"
#include "model/text/chat_prompt.h"
#include "model/prompt_codec.h"
#include "model/tokenizer.h"
#include "swarm/budget_check.h"
#include "swarm/node_settings.h"
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

/* budget_check_settings on the settings of cfg's nodes 0 .. n_nodes-1. */
static int budget_check_cfg(const Config* cfg, int n_nodes, FILE* table, const char* prefix, char* err, size_t errlen) {
    RunSettings rs = run_settings_read(cfg, n_nodes);
    run_settings_read_model_shapes(&rs);
    int rc = budget_check_settings(&rs, table, prefix, err, errlen);
    run_settings_free(&rs);
    return rc;
}

/* Runs budget_check_cfg; the table goes to *table (caller frees). */
static int check_config(const Config* cfg, int n_nodes, char** table, char* err, size_t errlen) {
    size_t len = 0;
    FILE* f = open_memstream(table, &len);
    int rc = budget_check_cfg(cfg, n_nodes, f, "> ", err, errlen);
    fclose(f);
    return rc;
}

static int count_lines_with(const char* text, const char* fragment) {
    int n = 0;
    for (const char* p = text; (p = strstr(p, fragment)); p += strlen(fragment)) n++;
    return n;
}

/* ---- llama nodes ---- */

/* The SmolLM2 directory under SAPO_BUILD_DIR, made by scripts/get-model.sh when it lacks its
 * tokenizer.json. NULL, or why it cannot be had. */
static const char* smollm2_dir(char* dir, size_t len) {
    static char why[4800];
    const char *build = getenv("SAPO_BUILD_DIR"), *source = getenv("SAPO_SOURCE_DIR");
    if (!build || !*build) return "SAPO_BUILD_DIR is not set (ctest sets it)";
    snprintf(dir, len, "%s/models/smollm2-135m-instruct", build);
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    struct stat st;
    if (stat(path, &st) == 0) return NULL;
    if (!source || !*source) return "SAPO_SOURCE_DIR is not set (ctest sets it), so scripts/get-model.sh is not found";
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "bash '%s/scripts/get-model.sh' smollm2-135m-instruct >&2", source);
    printf("%s has no tokenizer.json: running %s\n", dir, cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (stat(path, &st) == 0) return NULL;
    snprintf(why, sizeof why, "scripts/get-model.sh smollm2-135m-instruct (exit %d) left no %s", rc, path);
    return why;
}

/* Lengths of task t's budget items computed here, not through prompt_codec: the same draws
 * (BUDGET_SEED, RNG_BUDGET), the ChatML text and the demonstration encoded by tok directly. */
typedef struct {
    int prompt[BUDGET_ITEMS], answer[BUDGET_ITEMS];
    int prompt_min, prompt_max, answer_max, n_measurable;
    double prompt_mean, answer_mean;
} Lengths;

static void lengths_direct(const TaskSet* ts, int t, const Tokenizer* tok, Lengths* L) {
    memset(L, 0, sizeof *L);
    L->prompt_min = 1 << 30;
    TaskSet one = {.n = 1};
    one.slots[0] = ts->slots[t];
    RngStream rng = rng_stream(BUDGET_SEED, (uint32_t)ts->slots[t].task_id, 0, RNG_BUDGET);
    double psum = 0, asum = 0;
    for (int i = 0; i < BUDGET_ITEMS; i++) {
        Question q;
        char why[512], err[256];
        if (question_draw(&one, &rng, &q, why, sizeof why)) {
            printf("draw: %s\n", why);
            exit(1);
        }
        char* chat = chatml_prompt(PROMPT_CODEC_SYSTEM, q.prompt);
        int *ids = NULL, n = 0;
        if (tokenizer_encode(tok, chat, strlen(chat), &ids, &n, err, sizeof err)) {
            printf("encode: %s\n", err);
            exit(1);
        }
        free(ids);
        free(chat);
        L->prompt[i] = n;
        psum += n;
        if (n > L->prompt_max) L->prompt_max = n;
        if (n < L->prompt_min) L->prompt_min = n;
        const char* answer = question_answer(&q);
        L->answer[i] = -1;
        if (answer) {
            size_t dl = strlen(answer) + 32;
            char* demo = malloc(dl);
            snprintf(demo, dl, "<answer>%s</answer>", answer);
            if (tokenizer_encode(tok, demo, strlen(demo), &ids, &n, err, sizeof err)) {
                printf("encode: %s\n", err);
                exit(1);
            }
            free(ids);
            free(demo);
            L->answer[i] = n;
            L->n_measurable++;
            asum += n;
            if (n > L->answer_max) L->answer_max = n;
        }
        question_free(&q);
    }
    L->prompt_mean = psum / BUDGET_ITEMS;
    L->answer_mean = L->n_measurable ? asum / L->n_measurable : 0.0;
}

/* The table row budget_check_settings prints for these lengths at (room, max_new), prefix "> ";
 * returns how many prompts it cuts. */
static int lengths_row(const Lengths* L, const char* name, int room, int max_new, char* row, size_t len) {
    int una = 0, cut = 0;
    for (int i = 0; i < BUDGET_ITEMS; i++) {
        una += L->answer[i] > max_new;
        cut += L->prompt[i] > room;
    }
    char u[16], a[32], c[16], p[32];
    snprintf(u, sizeof u, "%.1f%%", 100.0 * una / L->n_measurable);
    snprintf(a, sizeof a, "%d / %.1f", L->answer_max, L->answer_mean);
    snprintf(c, sizeof c, "%.1f%%", 100.0 * cut / BUDGET_ITEMS);
    snprintf(p, sizeof p, "%d / %.1f", L->prompt_max, L->prompt_mean);
    snprintf(row, len, ">   %-24s %13s %16s %11s %16s\n", name, u, a, c, p);
    return cut;
}

static void set_all(Config* cfg, const char* const* o, int n) {
    char err[1024];
    for (int i = 0; i < n; i++) EXPECT(config_set_override(cfg, o[i], err, sizeof err) == 0, "%s: %s", o[i], err);
}

static void token_checks(const char* dir) {
    char err[4096], over[4200];
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    Tokenizer* tok = tokenizer_load(path, err, sizeof err);
    EXPECT(tok != NULL, "tokenizer_load %s: %s", path, err);
    if (!tok) return;
    TaskSet ts;
    if (taskset_build(&ts, "binary_matrix,propositional_logic", TASK_PRESET_TINY, err, sizeof err)) {
        printf("taskset: %s\n", err);
        exit(1);
    }
    /* the sample, item for item, against lengths computed here */
    Lengths bm, pl;
    lengths_direct(&ts, 0, tok, &bm);
    lengths_direct(&ts, 1, tok, &pl);
    BudgetSample s[2], bytes[2];
    EXPECT(budget_sample_in(&ts, tok, BUDGET_ITEMS, s, err, sizeof err) == 0, "token sample: %s", err);
    EXPECT(budget_sample(&ts, BUDGET_ITEMS, bytes, err, sizeof err) == 0, "byte sample: %s", err);
    EXPECT(!memcmp(s[0].prompt_len, bm.prompt, sizeof bm.prompt), "binary_matrix prompt tokens differ from the direct "
           "count");
    EXPECT(!memcmp(s[0].answer_len, bm.answer, sizeof bm.answer), "binary_matrix answer tokens differ from the direct "
           "count");
    EXPECT(!memcmp(s[1].prompt_len, pl.prompt, sizeof pl.prompt), "propositional_logic prompt tokens differ");
    EXPECT(pl.n_measurable == 0 && s[1].answer_len[0] == -1, "propositional_logic has %d measurable answers, want 0",
           pl.n_measurable);
    int fewer = 0; /* BPE packs several bytes in a token */
    for (int i = 0; i < BUDGET_ITEMS; i++) fewer += s[0].answer_len[i] < bytes[0].answer_len[i];
    EXPECT(fewer == BUDGET_ITEMS, "only %d of %d answers are shorter in tokens than in bytes", fewer, BUDGET_ITEMS);
    int T = bm.answer_max; /* the longest demonstration in tokens: fits T tokens, not T bytes (34) */
    printf("tiny binary_matrix with SmolLM2: answers %d / %.1f tokens (34 bytes max), prompts %d..%d / %.1f tokens\n",
           T, bm.answer_mean, bm.prompt_min, bm.prompt_max, bm.prompt_mean);
    EXPECT(T > 0 && T < 34, "the longest binary_matrix answer is %d tokens: the test wants fewer than its 34 bytes", T);
    EXPECT(bm.prompt_min < bm.prompt_max, "every prompt has %d tokens: the cut check wants them to differ",
           bm.prompt_max);
    TaskBudget b = budget_measure(&s[0], 256, T);
    EXPECT(b.answer_max == T && b.n_unanswerable == 0 && !strcmp(b.unit, "tokens"),
           "token measure at %d: answer max %d unanswerable %d unit %s", T, b.answer_max, b.n_unanswerable, b.unit);
    EXPECT(b.prompt_room == 256 - T, "token prompt room %d, want %d (no BOS)", b.prompt_room, 256 - T);
    b = budget_measure(&s[0], 256, T - 1);
    EXPECT(b.n_unanswerable > 0, "token measure at %d: none unanswerable", T - 1);
    b = budget_measure(&bytes[0], 256, T);
    EXPECT(b.n_unanswerable > 0 && !strcmp(b.unit, "bytes"), "byte measure at %d: none unanswerable (unit %s)", T,
           b.unit);
    /* prompt_codec_count: what prompt_codec_encode keeps all of */
    {
        PromptCodec chat = prompt_codec_chat(tok, PROMPT_CODEC_SYSTEM), byte = prompt_codec_byte();
        int buf[4096];
        int n = prompt_codec_count(&chat, "What is 2+2?\n");
        EXPECT(n > 0 && prompt_codec_encode(&chat, "What is 2+2?\n", buf, 4096) == n &&
                   prompt_codec_encode(&chat, "What is 2+2?\n", buf, n - 3) == n - 3,
               "prompt_codec_count %d disagrees with prompt_codec_encode", n);
        EXPECT(prompt_codec_count(&byte, "abc\n") == 5, "byte prompt_codec_count %d, want 5 (BOS + 4 bytes)",
               prompt_codec_count(&byte, "abc\n"));
    }
    budget_sample_free(s, 2);
    budget_sample_free(bytes, 2);

    /* the config: node 0 byte-level, node 1 llama; a llama n_ctx that cuts some prompts */
    int llama_ctx = T + (bm.prompt_min + bm.prompt_max) / 2, room = llama_ctx - T;
    char row[256], header[8400], o_dir[4200], o_new[64], o_ctx[64];
    snprintf(o_dir, sizeof o_dir, "node.1.model.hf_dir=%s", dir);
    snprintf(o_new, sizeof o_new, "node.1.gen.max_new_tokens=%d", T);
    snprintf(o_ctx, sizeof o_ctx, "node.1.model.n_ctx=%d", llama_ctx);
    const char* o[] = {"tasks.preset=tiny", "tasks.names=binary_matrix,propositional_logic", "model.n_ctx=256",
                       "gen.max_new_tokens=40", "tasks.max_unanswerable=0", "node.1.model.family=llama", o_dir, o_new,
                       o_ctx};
    Config* cfg = config_with(o, 9);
    char* table = NULL;
    /* T tokens answer every item: accepted for the llama node (the byte node has 40 bytes) */
    EXPECT(check_config(cfg, 2, &table, err, sizeof err) == 0, "llama node at %d tokens refused: %s", T, err);
    snprintf(header, sizeof header,
             "> budget check, preset tiny, 200 items per task, node 1 (llama, tokens of %s/tokenizer.json): "
             "model.n_ctx %d, gen.max_new_tokens %d (prompts keep their last %d tokens)\n",
             dir, llama_ctx, T, room);
    const char* at = strstr(table, header);
    EXPECT(at != NULL, "llama header missing, want\n%s in\n%s", header, table);
    EXPECT_MSG(table, "> budget check, preset tiny, 200 items per task, node 0: model.n_ctx 256, gen.max_new_tokens 40 "
                      "(prompts keep their last 215 bytes)\n");
    int cut = lengths_row(&bm, "binary_matrix", room, T, row, sizeof row);
    EXPECT(at && strstr(at, row) != NULL, "llama binary_matrix row, want\n%s in\n%s", row, table);
    EXPECT(cut > 0 && cut < BUDGET_ITEMS, "the llama n_ctx %d cuts %d prompts: the test wants some, not all",
           llama_ctx, cut);
    EXPECT(strstr(row, "  0.0%") != NULL, "the direct row %s has unanswerable items at %d tokens", row, T);
    snprintf(over, sizeof over, ">   %-24s %13s %16s", "propositional_logic", "-", "-");
    EXPECT(at && strstr(at, over) != NULL, "llama propositional_logic row lacks '-':\n%s", table);
    free(table);
    /* the same n_ctx and max_new_tokens for both: two settings, and only the byte node fails */
    char o_new0[64], o_ctx0[64];
    snprintf(o_new0, sizeof o_new0, "gen.max_new_tokens=%d", T);
    snprintf(o_ctx0, sizeof o_ctx0, "model.n_ctx=%d", llama_ctx);
    const char* same[] = {o_new0, o_ctx0};
    set_all(cfg, same, 2);
    EXPECT(check_config(cfg, 2, &table, err, sizeof err) == -1, "byte node at %d bytes passed", T);
    snprintf(over, sizeof over, "gen.max_new_tokens = %d bytes; node 0, model.n_ctx %d)", T, llama_ctx);
    EXPECT_MSG(err, over);
    EXPECT_MSG(err, "raise gen.max_new_tokens to 34 bytes");
    EXPECT(!strstr(err, "node 1") && !strstr(err, "tokens;"), "the error blames the llama node: %s", err);
    EXPECT(!strchr(err, '\n'), "the error is more than one line: %s", err);
    EXPECT(count_lines_with(table, "> budget check") == 2, "want 2 tables (bytes, tokens):\n%s", table);
    free(table);
    /* one token short: the llama node fails, named with its unit and tokenizer */
    char o_short[64];
    snprintf(o_short, sizeof o_short, "node.1.gen.max_new_tokens=%d", T - 1);
    const char* shorter[] = {"gen.max_new_tokens=40", "model.n_ctx=256", o_short};
    set_all(cfg, shorter, 3);
    EXPECT(check_config(cfg, 2, &table, err, sizeof err) == -1, "llama node at %d tokens passed", T - 1);
    snprintf(over, sizeof over,
             "gen.max_new_tokens = %d tokens; node 1 (llama, tokens of %s/tokenizer.json), model.n_ctx %d)", T - 1, dir,
             llama_ctx);
    EXPECT_MSG(err, over);
    snprintf(over, sizeof over, "raise gen.max_new_tokens to %d tokens (the longest sampled answer)", T);
    EXPECT_MSG(err, over);
    EXPECT(!strchr(err, '\n'), "the error is more than one line: %s", err);
    free(table);
    /* two llama nodes with one setting share a table; the byte node 3 has its own */
    char o2[4200], o2new[64], o2ctx[64];
    snprintf(o2, sizeof o2, "node.2.model.hf_dir=%s", dir);
    snprintf(o2new, sizeof o2new, "node.2.gen.max_new_tokens=%d", T - 1);
    snprintf(o2ctx, sizeof o2ctx, "node.2.model.n_ctx=%d", llama_ctx);
    const char* two[] = {"node.2.model.family=llama", o2, o2new, o2ctx, "tasks.max_unanswerable=1"};
    set_all(cfg, two, 5);
    EXPECT(check_config(cfg, 4, &table, err, sizeof err) == 0, "threshold 1 failed: %s", err);
    snprintf(header, sizeof header,
             "> budget check, preset tiny, 200 items per task, nodes 1-2 (llama, tokens of %s/tokenizer.json)", dir);
    EXPECT(count_lines_with(table, header) == 1, "want one table for nodes 1-2:\n%s", table);
    EXPECT(count_lines_with(table, "> budget check") == 2, "want 2 tables (nodes 0,3 and 1-2):\n%s", table);
    EXPECT_MSG(table, "nodes 0,3: model.n_ctx 256, gen.max_new_tokens 40 (prompts keep their last 215 bytes)");
    free(table);
    config_free(cfg);

    /* a llama node whose tokenizer.json is missing, broken, or whose hf_dir is unset: one line */
    char tmp[] = "/tmp/budget_tok.XXXXXX";
    EXPECT(mkdtemp(tmp) != NULL, "mkdtemp");
    snprintf(o_dir, sizeof o_dir, "node.1.model.hf_dir=%s", tmp);
    const char* bad[] = {"tasks.preset=tiny", "tasks.names=binary_matrix", "node.1.model.family=llama", o_dir};
    cfg = config_with(bad, 4);
    EXPECT(budget_check_cfg(cfg, 2, NULL, "", err, sizeof err) == -1, "a dir without tokenizer.json passed");
    snprintf(over, sizeof over, "budget check: node 1: model.hf_dir %s: ", tmp);
    EXPECT_MSG(err, over);
    EXPECT_MSG(err, "tokenizer.json");
    EXPECT(!strchr(err, '\n'), "the error is more than one line: %s", err);
    snprintf(path, sizeof path, "%s/tokenizer.json", tmp);
    FILE* f = fopen(path, "w");
    fputs("{\"model\": ", f);
    fclose(f);
    EXPECT(budget_check_cfg(cfg, 2, NULL, "", err, sizeof err) == -1, "a broken tokenizer.json passed");
    EXPECT_MSG(err, over);
    EXPECT(!strchr(err, '\n'), "the error is more than one line: %s", err);
    printf("broken tokenizer.json: %s\n", err);
    unlink(path);
    rmdir(tmp);
    EXPECT(config_set_override(cfg, "node.1.model.hf_dir=", err, sizeof err) == 0, "override: %s", err);
    EXPECT(budget_check_cfg(cfg, 2, NULL, "", err, sizeof err) == -1, "a llama node without hf_dir passed");
    EXPECT_MSG(err, "budget check: node 1: model.family = llama needs model.hf_dir");
    config_free(cfg);

    /* the nine tasks at the paper preset in tokens: paper/base.ini's 224 answers every item */
    {
        char od[4200];
        snprintf(od, sizeof od, "model.hf_dir=%s", dir);
        const char* p[] = {"tasks.preset=paper", "tasks.names=all", "model.n_ctx=768", "gen.max_new_tokens=224",
                           "tasks.max_unanswerable=0", "model.family=llama", od};
        cfg = config_with(p, 7);
        double t0 = now();
        int rc = budget_check_cfg(cfg, 8, NULL, "", err, sizeof err);
        double dt = now() - t0;
        EXPECT(rc == 0, "paper preset at 224 new tokens: %s", err);
        printf("nine tasks at the paper preset in SmolLM2 tokens, %d items each: %.3f s\n", BUDGET_ITEMS, dt);
        EXPECT(dt < 10.0, "the token check took %.3f s", dt);
        config_free(cfg);
    }
    taskset_free(&ts);
    tokenizer_free(tok);
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
    BudgetSample hand = {.slot = &ts.slots[0], .n_items = 5, .prompt_len = prompts, .answer_len = answers};
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
    BudgetSample unmeasurable = {.slot = &ts.slots[1], .n_items = 3, .prompt_len = prompts, .answer_len = none};
    b = budget_measure(&unmeasurable, 122, 1);
    EXPECT(b.n_measurable == 0 && b.n_unanswerable == 0 && budget_unanswerable_share(&b) == 0.0,
           "None answers: measurable %d unanswerable %d", b.n_measurable, b.n_unanswerable);

    /* ---- real items: deterministic, measured as the node sees them ---- */
    BudgetSample s1[2], s2[2];
    EXPECT(budget_sample(&ts, 200, s1, err, sizeof err) == 0, "sample: %s", err);
    EXPECT(budget_sample(&ts, 200, s2, err, sizeof err) == 0, "sample again: %s", err);
    EXPECT(!memcmp(s1[0].prompt_len, s2[0].prompt_len, sizeof(int) * 200) &&
               !memcmp(s1[0].answer_len, s2[0].answer_len, sizeof(int) * 200),
           "two samples of binary_matrix differ");
    /* tiny binary_matrix: 2x2 or 3x3 matrices, "<answer>" + rows + "</answer>": 7 + 17 = 24
     * or 17 + 17 = 34 bytes; prompt lengths vary with the example text */
    int n34 = 0, other = 0;
    for (int i = 0; i < 200; i++) {
        n34 += s1[0].answer_len[i] == 34;
        other += s1[0].answer_len[i] != 34 && s1[0].answer_len[i] != 24;
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
        EXPECT(budget_check_cfg(cfg, 4, NULL, "", err, sizeof err) == 0, "propositional_logic failed: %s", err);
        config_free(cfg);
    }

    /* ---- the nine tasks at the paper preset: fast, and paper/base.ini's budget holds ---- */
    {
        const char* o[] = {"tasks.preset=paper", "tasks.names=all", "model.n_ctx=768", "gen.max_new_tokens=224",
                           "tasks.max_unanswerable=0"};
        Config* cfg = config_with(o, 5);
        double t0 = now();
        int rc = budget_check_cfg(cfg, 8, NULL, "", err, sizeof err);
        double dt = now() - t0;
        EXPECT(rc == 0, "paper preset at 224 new bytes: %s", err);
        printf("nine tasks at the paper preset, %d items each: %.3f s\n", BUDGET_ITEMS, dt);
        EXPECT(dt < 1.0, "the check took %.3f s", dt);
        config_free(cfg);
    }

    /* ---- llama nodes, in the real SmolLM2 tokenizer's tokens ---- */
    char dir[4096];
    const char* why = smollm2_dir(dir, sizeof dir);
    if (why) {
        printf("no SmolLM2 tokenizer: %s\n", why);
        if (test_failures) return test_finish("test_budget_check");
        printf("test_budget_check: skipped (77): the byte checks passed, the token checks need the tokenizer\n");
        return 77;
    }
    token_checks(dir);
    return test_finish("test_budget_check");
}
