/* Starting NCCL without letting one rank hang the others (src/swarm/net/nccl_allgather.cu): the
 * communicator is created non-blocking (ncclConfig_t.blocking = 0) and polled
 * (ncclCommGetAsyncError) until it is ready, fails, or a deadline passes, so every rank
 * reaches the MPI_Allreduce where the ranks agree to use NCCL or fall back to the MPI
 * all-gather. Header-only and free of NCCL: the poll loop and the one-line reason are pure
 * functions, checked by tests/unit/test_node_gpu.c on any machine. */
#ifndef SAPO_SWARM_NCCL_INIT_H
#define SAPO_SWARM_NCCL_INIT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* How a rank's NCCL start ended, ordered so that the ranks' minimum (MPI_MINLOC) is the
 * worst: a failure, then a timeout, then ready. */
enum { NCCL_INIT_FAILED = 0, NCCL_INIT_TIMED_OUT = 1, NCCL_INIT_READY = 2 };

/* Calls poll(ctx) (1: ready, 0: still in progress, -1: failed) until it is no longer in
 * progress or timeout_s seconds (on now()'s clock) have passed since the call, pausing
 * (pause(ctx)) between polls. Returns NCCL_INIT_READY, NCCL_INIT_FAILED or NCCL_INIT_TIMED_OUT;
 * polls at least once, whatever the timeout. */
static inline int nccl_init_poll(int (*poll)(void* ctx), void (*pause)(void* ctx), double (*now)(void* ctx), void* ctx,
                                 double timeout_s) {
    double start = now(ctx);
    for (;;) {
        int st = poll(ctx);
        if (st > 0) return NCCL_INIT_READY;
        if (st < 0) return NCCL_INIT_FAILED;
        if (now(ctx) - start >= timeout_s) return NCCL_INIT_TIMED_OUT;
        pause(ctx);
    }
}

/* The one line saying why the ranks fall back to MPI, from the worst outcome (code) and the
 * rank it happened on; err: that rank's NCCL message ("" if none). */
static inline void nccl_init_why(char* why, size_t whylen, int code, int rank, double timeout_s, const char* err) {
    if (code == NCCL_INIT_TIMED_OUT)
        snprintf(why, whylen, "NCCL did not start within %g s on rank %d (SAPO_NCCL_TIMEOUT)", timeout_s, rank);
    else
        snprintf(why, whylen, "NCCL failed to start on rank %d%s%s", rank, err && *err ? ": " : "", err ? err : "");
}

/* SAPO_NCCL_TIMEOUT's value: seconds (a positive number); NULL or "": the default, 30 s;
 * anything else: -1. */
static inline double nccl_init_timeout(const char* value) {
    if (!value || !*value) return 30.0;
    char* end;
    double t = strtod(value, &end);
    return *end || !(t > 0) || t > 1e6 ? -1.0 : t;
}

#endif
