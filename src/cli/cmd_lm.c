/* `sapo lm`: tools for Hugging Face language models (their tokenizer.json, ...). One
 * subcommand per file (cmd_lm_*.c), listed once in the table below. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const SapoCommand LM_COMMANDS[] = {
    {"tokenize", "text -> token ids (or ids -> text) with a tokenizer.json, as `tokenizers` does", cmd_lm_tokenize},
    {"logprobs", "per-token log-probs of completions under a model (the packed training forward)", cmd_lm_logprobs},
    {"generate", "a completion of a prompt or chat message (KV-cache generation)", cmd_lm_generate},
};
static const int N_LM_COMMANDS = (int)(sizeof LM_COMMANDS / sizeof LM_COMMANDS[0]);

static void lm_usage(FILE* out) {
    fprintf(out, "usage: sapo lm SUBCOMMAND [ARGS...]\n"
                 "Tools for Hugging Face language models.\n\n"
                 "subcommands:\n");
    for (int i = 0; i < N_LM_COMMANDS; i++) fprintf(out, "  %-10s %s\n", LM_COMMANDS[i].name, LM_COMMANDS[i].summary);
    fprintf(out, "\n`sapo lm SUBCOMMAND --help` tells more about each.\n");
}

int cmd_lm(int argc, char** argv) {
    if (argc < 2) {
        lm_usage(stderr);
        return 2;
    }
    const char* sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        lm_usage(stdout);
        return 0;
    }
    for (int i = 0; i < N_LM_COMMANDS; i++)
        if (!strcmp(sub, LM_COMMANDS[i].name)) return LM_COMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "sapo lm: unknown subcommand '%s' (expected one of:", sub);
    for (int i = 0; i < N_LM_COMMANDS; i++) fprintf(stderr, " %s", LM_COMMANDS[i].name);
    fprintf(stderr, ")\n");
    return 2;
}
