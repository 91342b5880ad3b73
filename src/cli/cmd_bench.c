/* `sapo bench WHAT`: dispatches to the benchmarks under src/bench. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_harness.h"
#include "cli/commands.h"

/* The swarm benchmark launches mpirun several times and reads the logs: Python does that
 * (scripts/bench/bench_swarm.py); this passes it the path of this sapo binary. */
static int bench_swarm_main(int argc, char** argv) {
    const char* self = bench_self_path();
    const char* py = bench_python();
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/" BENCH_SCRIPTS_DIR "/bench_swarm.py", SAPO_SOURCE_DIR);
    char** args = calloc((size_t)argc + 5, sizeof(char*));
    int k = 0;
    args[k++] = (char*)py;
    args[k++] = script;
    args[k++] = "--sapo";
    args[k++] = (char*)self;
    for (int i = 1; i < argc; i++) args[k++] = argv[i];
    execvp(py, args);
    perror("sapo bench swarm: cannot start python");
    return 1;
}

int cmd_bench(int argc, char** argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        /* no benchmark named: the usage is the error (stderr, exit 2) */
        fprintf(argc < 2 ? stderr : stdout,
                "usage: sapo bench model [options]   (see `sapo bench model --help`)\n"
                "       sapo bench round [--config quick|paper|FILE.ini] [--rounds N] [--init CKPT] [--no-torch]\n"
                "                        one node-round (generate + score + train), ours vs PyTorch eager (see --help)\n"
                "       sapo bench swarm [--ranks N] [--rounds R]   (runs mpirun itself; see --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (argv[1][0] == '-') { /* each benchmark parses its own options (src/bench) */
        fprintf(stderr, "sapo bench: unknown option '%s' (see `sapo bench --help`)\n", argv[1]);
        return 2;
    }
    if (!strcmp(argv[1], "model")) return bench_model_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "round")) return bench_round_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "swarm")) return bench_swarm_main(argc - 1, argv + 1);
    fprintf(stderr, "sapo bench: unknown benchmark '%s' (expected: model, round, swarm)\n", argv[1]);
    return 2;
}
