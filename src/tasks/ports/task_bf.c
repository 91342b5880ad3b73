/* reasoning_gym "bf": a C-like program (a word to print, or an accumulate loop) compiled to
 * Brainf*ck; the question shows the BF code, the answer is what it prints. Scored with the
 * package's default scorer. */
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/ports/bf_compile.h"
#include "tasks/ports/bf_interpreter.h"
#include "tasks/ports/bf_words.h"
#include "tasks/pyemu/pyrandom.h"

static const char* const BF_PROMPTS[2] = {
    "This is a BF (Brainf*ck) computer program. What is the output?\n\n%s\n\nRespond only with the exact "
    "output of the program.",
    "Consider the following BF (Brainf*ck) code. What would it output?\n\n%s\n\nProvide only the exact "
    "output of the code.",
};

static const char BF_TEMPLATE_PRINT[] = "\nint main() {\n    print(\"%s\");\n}\n";
static const char BF_TEMPLATE_SUM[] =
    "\nint main() {\n    int acc = 0;\n    int target = %lld;\n    int x = %lld;\n    int y = %lld;\n"
    "    while (acc < target) {\n        acc = acc + x;\n        acc = acc + y;\n    }\n"
    "    printint(acc);\n}\n";
static const char BF_TEMPLATE_CONDITIONAL[] =
    "\nint main() {\n    int acc = 0;\n    int target = %lld;\n    int x = %lld;\n    int y = %lld;\n"
    "    while (acc < target) {\n        acc = acc + x;\n        if (acc > %lld) {\n"
    "            acc = acc + y;\n        }\n    }\n    printint(acc);\n}\n";

/* Far more than any terminating program of the three templates takes (29 million at most
 * in tests/unit/test_bf_templates.c). */
#define BF_MAX_STEPS 200000000ull

static int bf_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err,
                       size_t errlen) {
    static const char* const keys[] = {"difficulty", NULL};
    int64_t difficulty;
    memset(out, 0, sizeof *out);
    if (taskcfg_check_keys(config, "bf", keys, err, errlen)) return -1;
    if (taskcfg_int(config, "bf", "difficulty", 1, &difficulty, err, errlen)) return -1;
    if (difficulty < 1 || difficulty > 3) {
        return set_error(err, errlen, "bf config key 'difficulty': %lld, expected 1, 2 or 3", (long long)difficulty);
    }

    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    TextBuf bfit = {0}, program = {0};
    if (difficulty == 1) {
        size_t w = pyrandom_choice_index(&rng, (size_t)BF_WORD_COUNT);
        char word[6];
        memcpy(word, BF_WORDS + 5 * w, 5);
        word[5] = 0;
        textbuf_printf(&bfit, BF_TEMPLATE_PRINT, word);
        bf_compile_print_word(&program, word, 5);
    } else if (difficulty == 2) {
        int64_t x = pyrandom_randint(&rng, 1, 4);
        int64_t y = pyrandom_randint(&rng, 1, 5);
        int64_t k = pyrandom_randint(&rng, 1, 9);
        int64_t target = x * y * k + pyrandom_randint(&rng, 1, 9);
        textbuf_printf(&bfit, BF_TEMPLATE_SUM, (long long)target, (long long)x, (long long)y);
        bf_compile_sum_loop(&program, target, x, y);
    } else {
        int64_t x = pyrandom_randint(&rng, 1, 7);
        int64_t y = pyrandom_randint(&rng, 1, 9);
        int64_t k = pyrandom_randint(&rng, 1, 9);
        int64_t m = pyrandom_randint(&rng, 1, 9);
        int64_t target = x * y * k + m + 50;
        int64_t conditional = target - pyrandom_randint(&rng, 1, 40);
        textbuf_printf(&bfit, BF_TEMPLATE_CONDITIONAL, (long long)target, (long long)x, (long long)y,
                        (long long)conditional);
        bf_compile_conditional_loop(&program, target, x, y, conditional);
        if (!bf_loop_result(target, x, y, conditional, 1, NULL)) {
            set_error(err, errlen,
                      "bf item %lld: the program never halts (acc cycles below target %lld mod 256 on 8-bit "
                      "cells); reasoning_gym hangs on this item too",
                      (long long)index, (long long)target);
            textbuf_free(&bfit);
            textbuf_free(&program);
            return -1;
        }
    }

    TextBuf result = {0};
    if (bf_interpret(program.data, BF_MAX_STEPS, &result, NULL, err, errlen)) {
        textbuf_free(&bfit);
        textbuf_free(&program);
        textbuf_free(&result);
        return -1;
    }

    TextBuf question = {0};
    textbuf_printf(&question, BF_PROMPTS[pyrandom_choice_index(&rng, 2)], program.data);

    cJSON* meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "source_dataset", "bf");
    cJSON_AddNumberToObject(meta, "source_index", (double)index);
    cJSON_AddStringToObject(meta, "bfit_code", bfit.data);
    cJSON_AddStringToObject(meta, "bf_program", program.data);
    cJSON* diff = cJSON_AddObjectToObject(meta, "difficulty");
    cJSON_AddNumberToObject(diff, "difficulty", (double)difficulty);

    out->question = textbuf_take(&question);
    out->answer = textbuf_take(&result);
    out->metadata = meta;
    textbuf_free(&bfit);
    textbuf_free(&program);
    return 0;
}

/* Difficulty 1 (print a five-letter word) is the easiest the package offers, so every
 * preset uses it; rl-swarm uses it too. */
const TaskSpec task_bf = {
    .name = "bf",
    .generate = bf_generate,
    .score = task_default_score_answer,
    .preset_paper = "{\"difficulty\": 1}",
    .preset_small = "{\"difficulty\": 1}",
    .preset_tiny = "{\"difficulty\": 1}",
};
