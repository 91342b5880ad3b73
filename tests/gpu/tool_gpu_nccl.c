/* The NCCL all-gather gives the very Inbox the MPI all-gather gives: same senders, same
 * lengths, same bytes, over several exchanges whose sizes grow (the device buffers are
 * regrown), shrink, and include an empty message; and both carry each rank's own bytes (the
 * pattern it wrote), so two transports that are wrong alike do not pass either.
 * Needs >= 2 ranks, one GPU each: tests/gpu/test_gpu_nccl.sh starts it under mpirun on
 * max(2, the GPUs visible) ranks. Skipped (77, one line saying why) on one rank (it would
 * compare nothing), without NCCL in the build, or when the exchange declines (no GPU on
 * some rank, two ranks of a machine on one GPU: NCCL refuses that; or NCCL did not start
 * within SAPO_NCCL_TIMEOUT). The ranks are placed as the swarm places them (node_gpu.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swarm/net/exchange.h"
#ifdef SAPO_HAVE_NCCL
#include "swarm/net/nccl_allgather.h"
#include "swarm/node_gpu.h"
#endif
#include "../test_assert.h"

#ifdef SAPO_HAVE_NCCL
/* Rank r's message of exchange k: its length (rank 1's fourth is empty) and its bytes. */
static size_t message_len(int r, size_t k, size_t base) { return r == 1 && k == 3 ? 0 : base + (size_t)r * 13; }
static uint8_t pattern(int r, size_t k, size_t i) { return (uint8_t)(i * 31 + (size_t)r * 7 + k); }
#endif

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifndef SAPO_HAVE_NCCL
    if (rank == 0) printf("skipped: this build has no NCCL (CUDA off, or nccl.h / libnccl not found)\n");
    MPI_Finalize();
    return 77;
#else
    if (size < 2) {
        printf("skipped: 1 rank, nothing to compare: start it with mpirun -np 2 or more (tests/gpu/test_gpu_nccl.sh)\n");
        MPI_Finalize();
        return 77;
    }
    char why[256];
    node_gpu_choose(MPI_COMM_WORLD, rank); /* as the swarm places its nodes */
    struct NcclExchange* x = node_gpu_nccl_open(MPI_COMM_WORLD, why, sizeof why);
    if (!x) {
        if (rank == 0) printf("skipped: NCCL exchange declined: %s\n", why);
        MPI_Finalize();
        return 77;
    }
    if (rank == 0) printf("%s\n", why);
    const size_t sizes[] = {1, 100, 70000, 5, 1 << 20, 0};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = message_len(rank, k, sizes[k]);
        uint8_t* mine = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) mine[i] = pattern(rank, k, i);
        Inbox a, b;
        int failures_before = test_failures;
        exchange_allgather(MPI_COMM_WORLD, mine, len, &a);
        exchange_allgather_nccl(x, MPI_COMM_WORLD, mine, len, &b);
        EXPECT(a.n == b.n && a.n == size - 1, "exchange %zu: %d vs %d messages (expected %d)", k, a.n, b.n, size - 1);
        for (int i = 0; i < a.n && i < b.n; i++) {
            EXPECT(a.senders[i] == b.senders[i], "exchange %zu message %d: sender %d vs %d", k, i, a.senders[i],
                   b.senders[i]);
            EXPECT(a.lens[i] == b.lens[i], "exchange %zu from %d: %zu vs %zu bytes", k, a.senders[i], a.lens[i],
                   b.lens[i]);
            EXPECT(a.lens[i] == b.lens[i] && !memcmp(a.bufs[i], b.bufs[i], a.lens[i]),
                   "exchange %zu from %d: the bytes differ", k, a.senders[i]);
        }
        /* and what both delivered is what each rank sent: every other rank, in rank order */
        for (int i = 0; i < b.n; i++) {
            int s = i < rank ? i : i + 1;
            size_t want = message_len(s, k, sizes[k]), bad = 0;
            EXPECT(b.senders[i] == s && b.lens[i] == want, "exchange %zu message %d: sender %d, %zu bytes (expected %d, %zu)",
                   k, i, b.senders[i], b.lens[i], s, want);
            for (size_t j = 0; j < b.lens[i] && j < want; j++) bad += b.bufs[i][j] != pattern(s, k, j);
            EXPECT(bad == 0, "exchange %zu from %d: %zu bytes are not the ones it sent", k, s, bad);
        }
        if (rank == 0)
            printf("exchange %zu: %zu bytes from rank 0, %d messages received, %s\n", k, len, b.n,
                   test_failures == failures_before ? "same as MPI and as sent" : "DIFFERENT (see above)");
        inbox_free(&a);
        inbox_free(&b);
        free(mine);
    }
    nccl_exchange_free(x);
    int failures = test_failures, all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    test_failures = all;
    MPI_Finalize();
    return rank == 0 ? test_finish("nccl allgather") : (all ? 1 : 0);
#endif
}
