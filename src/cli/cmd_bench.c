/* `sapo bench WHAT`: dispatches to the benchmarks under src/bench. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

int bench_model_main(int argc, char** argv);

int cmd_bench(int argc, char** argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        printf("usage: sapo bench model [options]   (see `sapo bench model --help`)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "model")) return bench_model_main(argc - 1, argv + 1);
    fprintf(stderr, "sapo bench: unknown benchmark '%s' (expected: model)\n", argv[1]);
    return 2;
}
