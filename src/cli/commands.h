/* The `sapo` subcommands. Each lives in its own file under src/cli and is listed once in
 * the command table of src/main.c. Each returns the process exit status. */
#ifndef SAPO_CLI_COMMANDS_H
#define SAPO_CLI_COMMANDS_H

#include <stdio.h>

typedef struct {
    const char* name;
    const char* summary;
    int (*run)(int argc, char** argv); /* argv[0] is the subcommand name */
} SapoCommand;

int cmd_info(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_demo(int argc, char** argv);
int cmd_pretrain(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_tasks(int argc, char** argv);
int cmd_verify(int argc, char** argv);

/* ---- option tables (getopt_long) ----------------------------------------------------
 * Each command declares its options once, in a table ended by {NULL}: the long name
 * (without "--"), the value's name in the help (NULL for a switch) and its help text
 * (further lines after '\n'). cli_parse reads argv with getopt_long from that table;
 * cli_print_options prints the table's help lines. -h and --help are always known. */
typedef struct {
    const char* name;
    const char* value;
    const char* help;
} CliOption;

enum { CLI_MAX_OPTIONS = 16 };

typedef struct {
    const char* opt[CLI_MAX_OPTIONS]; /* by table index: the first value given, "" for a switch, NULL when absent */
    int n_pos;                        /* the positional arguments, in order (CONFIG.ini, key=value, TASK...) */
    char** pos;
} CliArgs;

/* 0 when parsed; 1 for -h/--help (print the help, exit 0); -1 after printing one line
 * "sapo COMMAND: unknown option '--x' (see `sapo COMMAND --help`)" or "... option '--x'
 * needs a value ..." (exit 2). Free a with cli_args_free whatever it returns. */
int cli_parse(const char* command, const CliOption* opts, int argc, char** argv, CliArgs* a);
void cli_args_free(CliArgs* a);
/* One line per option, "  --name VALUE  help", the help column aligned within the table. */
void cli_print_options(FILE* out, const CliOption* opts);
/* Prints "sapo COMMAND: unexpected argument 'ARG' (WHAT)" and returns -1. */
int cli_unexpected(const char* command, const char* arg, const char* what);

/* The run configuration from the positional arguments of a (an optional CONFIG.ini, then
 * section.key=value overrides), as cli_load_config reads them. */
struct Config* cli_args_config(const char* command, const CliArgs* a);

/* True when argv holds -h or --help (sapo run asks before MPI_Init). */
int cli_wants_help(int argc, char** argv);

struct Config;
/* Builds the run configuration from the positional arguments argv[first..argc): an
 * optional CONFIG.ini, then section.key=value overrides; arguments starting with "--" are
 * left to the caller (skipped here together with their value when listed in
 * flags_with_value, a NULL-terminated list). Prints a one-line error and returns NULL on
 * bad input. */
struct Config* cli_load_config(const char* command, int argc, char** argv, int first, const char* const* flags_with_value);

/* The CLI's one integer parser: the whole of `text` as a base-10 integer in [lo, hi]
 * (strtoll, nothing after the digits, no overflow). On any other text (NULL included)
 * prints "sapo COMMAND: FLAG 'TEXT': expected an integer in [LO, HI]" and returns -1. */
int cli_parse_int(const char* command, const char* flag, const char* text, long long lo, long long hi,
                  long long* out);

#endif
