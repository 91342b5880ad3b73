/* Small helpers shared by the subcommands' argument parsing. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/config.h"

int cli_wants_help(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    }
    return 0;
}

static int takes_value(const char* arg, const char* const* flags_with_value) {
    for (int i = 0; flags_with_value && flags_with_value[i]; i++)
        if (!strcmp(arg, flags_with_value[i])) return 1;
    return 0;
}

Config* cli_load_config(const char* command, int argc, char** argv, int first, const char* const* flags_with_value) {
    const char* path = NULL;
    char** overrides = mallocCheck(sizeof(char*) * (argc + 1));
    int n_over = 0;
    for (int i = first; i < argc; i++) {
        const char* a = argv[i];
        if (!strncmp(a, "--", 2)) {
            if (takes_value(a, flags_with_value)) i++;
            continue;
        }
        if (strchr(a, '=')) {
            overrides[n_over++] = argv[i];
        } else if (!path) {
            path = a;
        } else {
            fprintf(stderr, "sapo %s: unexpected argument '%s' (one CONFIG.ini, then section.key=value overrides)\n",
                    command, a);
            free(overrides);
            return NULL;
        }
    }
    Config* cfg = config_new();
    char err[1024];
    if (config_load_all(cfg, path, n_over, overrides, err, sizeof err)) {
        fprintf(stderr, "sapo %s: config error: %s\n", command, err);
        config_free(cfg);
        cfg = NULL;
    }
    free(overrides);
    return cfg;
}

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

/* ---- option tables ---------------------------------------------------------------------- */

int cli_parse(const char* command, const CliOption* opts, int argc, char** argv, CliArgs* a) {
    memset(a, 0, sizeof *a);
    a->pos = mallocCheck(sizeof(char*) * (size_t)(argc + 1));
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
            if (!a->opt[c - 1000]) a->opt[c - 1000] = optarg ? optarg : "";
        } else if (c == ':') {
            fprintf(stderr, "sapo %s: option '%s' needs a value (see `sapo %s --help`)\n", command, argv[optind - 1],
                    command);
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
    a->pos = NULL;
    a->n_pos = 0;
}

void cli_print_options(FILE* out, const CliOption* opts) {
    int width = 0;
    char left[128];
    for (int i = 0; opts[i].name; i++) {
        int w = snprintf(left, sizeof left, "--%s%s%s", opts[i].name, opts[i].value ? " " : "",
                         opts[i].value ? opts[i].value : "");
        if (w > width) width = w;
    }
    for (int i = 0; opts[i].name; i++) {
        snprintf(left, sizeof left, "--%s%s%s", opts[i].name, opts[i].value ? " " : "",
                 opts[i].value ? opts[i].value : "");
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

Config* cli_args_config(const char* command, const CliArgs* a) {
    return cli_load_config(command, a->n_pos, a->pos, 0, NULL);
}
