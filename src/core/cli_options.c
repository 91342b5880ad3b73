/* The option-table parser of every command and benchmark (getopt_long) and the command
 * line's integer parser; see cli_options.h. */
#include "core/cli_options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

int cli_parse_int(const char* command, const char* flag, const char* text, long long lo, long long hi,
                  long long* out) {
    char* end = NULL;
    errno = 0;
    long long v = text && *text ? strtoll(text, &end, 10) : 0;
    if (!text || !*text || errno || *end || v < lo || v > hi) {
        if (text) fprintf(stderr, "sapo %s: %s '%s': expected an integer in [%lld, %lld]\n", command, flag, text, lo, hi);
        else fprintf(stderr, "sapo %s: %s needs a value: an integer in [%lld, %lld]\n", command, flag, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_opt_ll(const CliArgs* a, int k, long long lo, long long hi, long long* out) {
    if (!a->opt[k]) return 0;
    char flag[128];
    snprintf(flag, sizeof flag, "--%s", a->opts[k].name);
    return cli_parse_int(a->command, flag, a->opt[k], lo, hi, out);
}

int cli_opt_int(const CliArgs* a, int k, long long lo, long long hi, int* out) {
    long long v = *out;
    if (cli_opt_ll(a, k, lo, hi, &v)) return -1;
    *out = (int)v;
    return 0;
}

int cli_parse(const char* command, const CliOption* opts, int argc, char** argv, CliArgs* a) {
    memset(a, 0, sizeof *a);
    a->command = command;
    a->opts = opts;
    a->pos = mallocCheck(sizeof(char*) * (size_t)(argc + 1));
    a->given = mallocCheck(sizeof(CliGiven) * (size_t)(argc + 1));
    int n = 0;
    while (opts[n].name) n++;
    if (n > CLI_MAX_OPTIONS) sapo_die("sapo %s: %d options, at most %d", command, n, CLI_MAX_OPTIONS);
    struct option longs[CLI_MAX_OPTIONS + 2];
    for (int i = 0; i < n; i++)
        longs[i] = (struct option){opts[i].name, opts[i].value ? required_argument : no_argument, NULL, 1000 + i};
    longs[n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n + 1] = (struct option){NULL, 0, NULL, 0};
    /* "-": positional arguments come back in order as 1; ":": a missing value as ':'. */
    optind = 0; /* a full re-initialisation of GNU getopt */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "-:h", longs, NULL)) != -1) {
        if (c == 1) {
            a->pos[a->n_pos++] = optarg;
        } else if (c == 'h') {
            return 1;
        } else if (c >= 1000 && c < 1000 + n) {
            const char* value = optarg ? optarg : "";
            if (!a->opt[c - 1000]) a->opt[c - 1000] = value;
            a->given[a->n_given++] = (CliGiven){c - 1000, value};
        } else if (c == ':') {
            fprintf(stderr, "sapo %s: option '%s' needs a value (see `sapo %s --help`)\n", command, argv[optind - 1],
                    command);
            return -1;
        } else if (optopt >= 1000 || (optopt == 'h' && !strncmp(argv[optind - 1], "--", 2))) { /* --switch=VALUE */
            fprintf(stderr, "sapo %s: option '--%s' takes no value (see `sapo %s --help`)\n", command,
                    optopt == 'h' ? "help" : opts[optopt - 1000].name, command);
            return -1;
        } else {
            char shortopt[3] = {'-', (char)optopt, 0};
            fprintf(stderr, "sapo %s: unknown option '%s' (see `sapo %s --help`)\n", command,
                    optopt ? shortopt : argv[optind - 1], command);
            return -1;
        }
    }
    for (; optind < argc; optind++) a->pos[a->n_pos++] = argv[optind]; /* after "--" */
    return 0;
}

void cli_args_free(CliArgs* a) {
    free(a->pos);
    free(a->given);
    a->pos = NULL;
    a->given = NULL;
    a->n_pos = a->n_given = 0;
}

/* "--name VALUE" of one option into left; its length. */
static int option_left(char* left, size_t size, const CliOption* o) {
    return snprintf(left, size, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
}

void cli_print_options(FILE* out, const CliOption* opts) {
    int width = 0;
    char left[128];
    for (int i = 0; opts[i].name; i++) {
        int w = option_left(left, sizeof left, &opts[i]);
        if (opts[i].help && w > width) width = w;
    }
    for (int i = 0; opts[i].name; i++) {
        if (!opts[i].help) continue; /* internal */
        option_left(left, sizeof left, &opts[i]);
        fprintf(out, "  %-*s  ", width, left);
        for (const char* h = opts[i].help; *h; h++) {
            fputc(*h, out);
            if (*h == '\n') fprintf(out, "  %-*s  ", width, "");
        }
        fputc('\n', out);
    }
}

int cli_unexpected(const char* command, const char* arg, const char* what) {
    fprintf(stderr, "sapo %s: unexpected argument '%s' (%s)\n", command, arg, what);
    return -1;
}
