/* sapo: entry point. Dispatches `sapo COMMAND ...` to the command table below. */
#include <stdio.h>
#include <string.h>

#include "cli/blas_select.h"
#include "cli/commands.h"

static const SapoCommand COMMANDS[] = {
    {"run", "the swarm: `mpirun -np N sapo run CONFIG.ini` (one node per rank)", cmd_run},
    {"pretrain", "supervised warm-up on task demonstrations: the checkpoint model.init loads", cmd_pretrain},
    {"demo", "train a policy model on a toy task and sample from it (single process)", cmd_demo},
    {"bench", "benchmarks: `sapo bench model` (C vs PyTorch vs sgemm peak)", cmd_bench},
    {"info", "build facts and every config key with its default and bounds", cmd_info},
    {"tasks", "ReasoningGYM tasks: list, gen, score, baseline", cmd_tasks},
    {"verify", "recompute a shared rollout's log-probs from a checkpoint; bit-for-bit check", cmd_verify},
    {"export", "write a llama-family checkpoint as a Hugging Face directory (config.json, safetensors)", cmd_export},
    {"lm", "Hugging Face language models: `sapo lm tokenize` (tokenizer.json)", cmd_lm},
};
static const int N_COMMANDS = (int)(sizeof COMMANDS / sizeof COMMANDS[0]);

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo COMMAND [ARGS...]\n"
            "A swarm of small byte-level GPT nodes post-trained with SAPO over MPI.\n\n"
            "commands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\n`sapo COMMAND --help` tells more about each.\n");
}

int main(int argc, char** argv) {
    blas_select_kernel(argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < N_COMMANDS; i++) {
        if (!strcmp(argv[1], COMMANDS[i].name)) return COMMANDS[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "sapo: unknown command '%s' (expected one of:", argv[1]);
    for (int i = 0; i < N_COMMANDS; i++) fprintf(stderr, " %s", COMMANDS[i].name);
    fprintf(stderr, ")\n");
    return 2;
}
