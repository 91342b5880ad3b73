/* The benchmarks behind `sapo bench WHAT` (src/cli/cmd_bench.c dispatches): each takes
 * argv[0] = WHAT and returns the process exit status. */
#ifndef SAPO_BENCH_BENCH_H
#define SAPO_BENCH_BENCH_H

/* Where the benchmarks' Python side lives, under the source tree (SAPO_SOURCE_DIR). */
#define BENCH_SCRIPTS_DIR "scripts/bench"

int bench_model_main(int argc, char** argv); /* `sapo bench model` (bench_model.c) */
/* `sapo bench model --family llama` (bench_llama.c; bench_model_main routes there) */
int bench_llama_main(int argc, char** argv);
int bench_round_main(int argc, char** argv); /* `sapo bench round` (bench_round.c) */

#endif
