/* Command-line option tables: the one getopt_long parser of every `sapo` command (src/cli)
 * and benchmark (src/bench), and its integer parser. It lives in core so that every layer's
 * entry point can use it; "cli" here means the command line, not the cli layer. */
#ifndef SAPO_CORE_CLI_OPTIONS_H
#define SAPO_CORE_CLI_OPTIONS_H

#include <stdio.h>

/* Each command declares its options once, in a table ended by {NULL}: the long name
 * (without "--"), the value's name in the help (NULL for a switch) and its help text
 * (further lines after '\n'; NULL for an internal option, parsed but not listed).
 * cli_parse reads argv with getopt_long from that table; cli_print_options prints the
 * table's help lines. -h and --help are always known. */
typedef struct {
    const char* name;
    const char* value;
    const char* help;
} CliOption;

enum { CLI_MAX_OPTIONS = 16 };

/* One option as given on the command line: its table index and value ("" for a switch). */
typedef struct {
    int opt;
    const char* value;
} CliGiven;

typedef struct {
    const char* opt[CLI_MAX_OPTIONS]; /* by table index: the first value given, "" for a switch, NULL when absent */
    int n_pos;                        /* the positional arguments, in order (CONFIG.ini, key=value, TASK...) */
    char** pos;
    int n_given; /* every option given, in order, repeats included (--config A --config B) */
    CliGiven* given;
    const char* command; /* cli_parse's command and table, for cli_opt_int */
    const CliOption* opts;
} CliArgs;

/* 0 when parsed; 1 for -h/--help (print the help, exit 0); -1 after printing one line
 * "sapo COMMAND: unknown option '--x' (see `sapo COMMAND --help`)", "... option '--x'
 * needs a value ..." or "... option '--x' takes no value ..." (exit 2). Free a with cli_args_free whatever it returns. */
int cli_parse(const char* command, const CliOption* opts, int argc, char** argv, CliArgs* a);
void cli_args_free(CliArgs* a);
/* One line per listed option, "  --name VALUE  help", the help column aligned within the table. */
void cli_print_options(FILE* out, const CliOption* opts);
/* Prints "sapo COMMAND: unexpected argument 'ARG' (WHAT)" and returns -1. */
int cli_unexpected(const char* command, const char* arg, const char* what);

/* The one integer parser of the command line: the whole of `text` as a base-10 integer in
 * [lo, hi] (strtoll, nothing after the digits, no overflow). On any other text (NULL
 * included) prints "sapo COMMAND: FLAG 'TEXT': expected an integer in [LO, HI]" and
 * returns -1. */
int cli_parse_int(const char* command, const char* flag, const char* text, long long lo, long long hi,
                  long long* out);
/* Option k of a's table, when given, through cli_parse_int into *out; *out is left alone when
 * the option is absent. 0, or -1 after the message. cli_opt_int: [lo, hi] within int's range. */
int cli_opt_ll(const CliArgs* a, int k, long long lo, long long hi, long long* out);
int cli_opt_int(const CliArgs* a, int k, long long lo, long long hi, int* out);

#endif
