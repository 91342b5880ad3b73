/* Small helpers shared by the subcommands' argument parsing: the run configuration from
 * positional arguments, and the -h/--help test sapo run makes before MPI_Init. The option
 * tables themselves are core/cli_options.c. */
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

Config* cli_args_config(const char* command, const CliArgs* a) {
    return cli_load_config(command, a->n_pos, a->pos, 0, NULL);
}
