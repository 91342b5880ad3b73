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
int cmd_tasks(int argc, char** argv);

/* True when argv holds -h or --help. */
int cli_wants_help(int argc, char** argv);

#endif
