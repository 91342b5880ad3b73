/* The `sapo` subcommands. Each lives in its own file under src/cli and is listed once in
 * the command table of src/main.c. Each returns the process exit status. */
#ifndef SAPO_CLI_COMMANDS_H
#define SAPO_CLI_COMMANDS_H

#include <stdio.h>

#include "core/cli_options.h" /* the option tables: CliOption, cli_parse, cli_parse_int */
#include "swarm/node_settings.h" /* RunSettings */

typedef struct {
    const char* name;
    const char* summary;
    int (*run)(int argc, char** argv); /* argv[0] is the subcommand name */
} SapoCommand;

int cmd_info(int argc, char** argv);
int cmd_lm(int argc, char** argv);          /* `sapo lm`: dispatches to the cmd_lm_* below */
int cmd_lm_tokenize(int argc, char** argv); /* `sapo lm tokenize` */
int cmd_lm_logprobs(int argc, char** argv); /* `sapo lm logprobs` */
int cmd_lm_generate(int argc, char** argv); /* `sapo lm generate` */
int cmd_bench(int argc, char** argv);
int cmd_demo(int argc, char** argv);
int cmd_pretrain(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_tasks(int argc, char** argv);
int cmd_verify(int argc, char** argv);
int cmd_export(int argc, char** argv);

/* The run configuration from the positional arguments of a (an optional CONFIG.ini, then
 * section.key=value overrides), as cli_load_config reads them. */
struct Config* cli_args_config(const char* command, const CliArgs* a);

/* The same, through the settings step (swarm/settings_load.h): with the settings of n_nodes
 * nodes (0: every [node.K] the config sets) in *set, checked for a swarm when check is 1. */
struct Config* cli_args_settings(const char* command, const CliArgs* a, int n_nodes, int check,
                                 RunSettings* set);

/* True when argv holds -h or --help (sapo run asks before MPI_Init). */
int cli_wants_help(int argc, char** argv);

struct Config;
/* Builds the run configuration from the positional arguments argv[first..argc): an
 * optional CONFIG.ini, then section.key=value overrides; arguments starting with "--" are
 * left to the caller (skipped here together with their value when listed in
 * flags_with_value, a NULL-terminated list). Prints a one-line error and returns NULL on
 * bad input. */
struct Config* cli_load_config(const char* command, int argc, char** argv, int first, const char* const* flags_with_value);

#endif
