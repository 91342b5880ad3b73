/* pass@1 on the fixed held-out set, for sapo run and sapo pretrain (see evaluation.h). */
#include "swarm/evaluation.h"

#include <math.h>
#include <stdlib.h>

#include "core/check.h"
#include "model/tokenizer.h"
#include "tasks/infra/answer.h"

double evaluation_run(Model* m, const PromptCodec* codec, const GenConfig* gen, const EvalSet* es, RngStream* rng,
                      double by_task[TASK_N_IDS], double tagged_by_task[TASK_N_IDS]) {
    int n = es->n, n_ctx = m->cfg.n_ctx, max_new = gen->max_new_tokens, rows = n > 0 ? n : 1;
    int* prompts = mallocCheck(sizeof(int) * (size_t)rows * n_ctx);
    int* prompt_lens = mallocCheck(sizeof(int) * rows);
    int* tokens = mallocCheck(sizeof(int) * (size_t)rows * max_new);
    int* lens = mallocCheck(sizeof(int) * rows);
    float* logprobs = mallocCheck(sizeof(float) * (size_t)rows * max_new);
    char** texts = mallocCheck(sizeof(char*) * rows);
    for (int i = 0; i < n; i++)
        prompt_lens[i] = prompt_codec_encode(codec, es->prompts[i], prompts + (size_t)i * n_ctx, n_ctx - max_new);
    if (n > 0) model_generate_groups_logprobs(m, prompts, n_ctx, prompt_lens, n, 1, gen, rng, tokens, lens, logprobs);
    for (int i = 0; i < n; i++) texts[i] = prompt_codec_text(codec, tokens + (size_t)i * max_new, lens[i]);
    double pass1 = evalset_score(es, texts, by_task);
    if (tagged_by_task) {
        double tagged[TASK_N_IDS] = {0};
        for (int i = 0; i < n; i++) {
            char* a = answer_extract(texts[i]);
            tagged[es->qs[i].slot->task_id] += a != NULL;
            free(a);
        }
        for (int t = 0; t < TASK_N_IDS; t++) tagged_by_task[t] = es->n_by_task[t] ? tagged[t] / es->n_by_task[t] : NAN;
    }
    for (int i = 0; i < n; i++) free(texts[i]);
    free(texts);
    free(prompts);
    free(prompt_lens);
    free(tokens);
    free(lens);
    free(logprobs);
    return pass1;
}
