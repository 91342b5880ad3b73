/* The faults a node injects on purpose (see node_fault.h). */
#include "swarm/node_fault.h"

#include <string.h>
#include <time.h>

#include "core/rng.h"

void node_fault_corrupt_group(NodeFault f, RolloutGroup* g) {
    if (f == FAULT_LIE) g->answer = "a lie about the ground truth";
    if (f == FAULT_LIE_LOGPROBS) /* claims every byte was nearly impossible */
        for (int c = 0; c < g->n_completions; c++)
            for (size_t k = 0; g->logprobs[c] && k < strlen(g->completions[c]); k++) g->logprobs[c][k] = -1e30f;
}

void node_fault_corrupt_bytes(NodeFault f, uint64_t seed, int rank, int round, uint8_t* buf, size_t* len) {
    if (f == FAULT_GARBAGE) {
        RngStream rng = rng_stream(seed, (uint32_t)rank, (uint32_t)round, RNG_NETEM);
        for (size_t i = 0; i < *len; i++) buf[i] = (uint8_t)rng_u32(&rng);
    } else if (f == FAULT_TRUNCATE) {
        *len /= 2;
    }
}

void node_fault_straggle(double slowdown, int wall_clock, double work) {
    if (!(wall_clock && slowdown > 1.0)) return;
    struct timespec ts = {0};
    double extra = (slowdown - 1.0) * (work > 0 ? work : 0);
    ts.tv_sec = (time_t)extra;
    ts.tv_nsec = (long)((extra - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}
