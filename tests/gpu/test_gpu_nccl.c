/* The NCCL all-gather gives the very Inbox the MPI all-gather gives: same senders, same
 * lengths, same bytes, over several exchanges whose sizes grow (the device buffers are
 * regrown), shrink, and include an empty message. Runs on however many ranks it is started
 * with (ctest: 1; scripts/device/run-on-gpu.sh also starts it on one rank per GPU).
 * Skipped (77) without NCCL in the build, or when the exchange declines (no GPU on some
 * rank, more ranks than GPUs on a machine): it prints why. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swarm/exchange.h"
#ifdef SAPO_HAVE_NCCL
#include "nccl_allgather.h"
#endif
#include "../test_assert.h"

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
    char why[256];
    struct NcclExchange* x = nccl_exchange_create(MPI_COMM_WORLD, why, sizeof why);
    if (!x) {
        if (rank == 0) printf("skipped: NCCL exchange declined: %s\n", why);
        MPI_Finalize();
        return 77;
    }
    if (rank == 0) printf("%s\n", why);
    const size_t sizes[] = {1, 100, 70000, 5, 1 << 20, 0};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = (rank == 1 % size && k == 3) ? 0 : sizes[k] + (size_t)rank * 13; /* an empty one too */
        uint8_t* mine = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) mine[i] = (uint8_t)(i * 31 + rank * 7 + k);
        Inbox a, b;
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
        if (rank == 0) printf("exchange %zu: %zu bytes from rank 0, %d messages received, same as MPI\n", k, len, b.n);
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
