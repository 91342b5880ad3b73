/* Small helpers shared by the subcommands' argument parsing: the run configuration (and its
 * settings) from positional arguments, and the -h/--help test sapo run makes before MPI_Init.
 * The option tables themselves are core/cli_options.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/config.h"
#include "swarm/settings_load.h"

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

/* The positional arguments argv[first..argc) as the settings step's path and overrides, the
 * configuration loaded through it (settings_load.h; its settings into *set unless set is
 * NULL). Prints a one-line error and returns NULL on bad input. */
static Config* load_positional(const char* command, int argc, char** argv, int first,
                               const char* const* flags_with_value, SettingsRequest* req, RunSettings* set) {
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
    req->path = path;
    req->n_overrides = n_over;
    req->overrides = overrides;
    char err[1024];
    Config* cfg = settings_load(req, set, err, sizeof err);
    if (!cfg) fprintf(stderr, "sapo %s: config error: %s\n", command, err);
    free(overrides);
    return cfg;
}

Config* cli_load_config(const char* command, int argc, char** argv, int first, const char* const* flags_with_value) {
    SettingsRequest req = {0};
    return load_positional(command, argc, argv, first, flags_with_value, &req, NULL);
}

Config* cli_args_config(const char* command, const CliArgs* a) {
    return cli_load_config(command, a->n_pos, a->pos, 0, NULL);
}

Config* cli_args_settings(const char* command, const CliArgs* a, int n_nodes, int check, RunSettings* set) {
    SettingsRequest req = {.n_nodes = n_nodes, .check = check};
    return load_positional(command, a->n_pos, a->pos, 0, NULL, &req, set);
}
