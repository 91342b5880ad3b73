/* The `sapo` subcommands. Each lives in its own file under src/cli and is listed once in
 * the command table of src/main.c. Each returns the process exit status. */
#ifndef SAPO_CLI_COMMANDS_H
#define SAPO_CLI_COMMANDS_H

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

/* True when argv holds -h or --help. */
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

/* Finds "--flag VALUE" in argv; returns VALUE or NULL. */
const char* cli_flag_value(int argc, char** argv, const char* flag);

#endif
