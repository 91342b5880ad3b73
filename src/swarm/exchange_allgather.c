/* The synchronous all-gather exchange (see exchange.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_timer.h"
#include "core/check.h"
#include "swarm/exchange.h"

void exchange_allgather(MPI_Comm comm, const uint8_t* mine, size_t len, Inbox* inbox) {
    int rank, size;
    mpiCheck(MPI_Comm_rank(comm, &rank));
    mpiCheck(MPI_Comm_size(comm, &size));
    memset(inbox, 0, sizeof *inbox);
    uint64_t my_len = len;
    uint64_t* lens = mallocCheck(sizeof(uint64_t) * size);
    double t0 = bench_now();
    mpiCheck(MPI_Allgather(&my_len, 1, MPI_UINT64_T, lens, 1, MPI_UINT64_T, comm));
    inbox->t_wait = bench_now() - t0;
    int* counts = mallocCheck(sizeof(int) * size);
    int* displs = mallocCheck(sizeof(int) * size);
    uint64_t total = 0;
    for (int r = 0; r < size; r++) {
        if (lens[r] > INT_MAX || total + lens[r] > INT_MAX) sapo_die("exchange of more than 2 GiB in one round");
        counts[r] = (int)lens[r];
        displs[r] = (int)total;
        total += lens[r];
    }
    inbox->storage = mallocCheck(total ? total : 1);
    mpiCheck(MPI_Allgatherv(mine, (int)len, MPI_BYTE, inbox->storage, counts, displs, MPI_BYTE, comm));
    inbox->senders = mallocCheck(sizeof(int) * size);
    inbox->bufs = mallocCheck(sizeof(uint8_t*) * size);
    inbox->lens = mallocCheck(sizeof(size_t) * size);
    for (int r = 0; r < size; r++) {
        if (r == rank) continue;
        inbox->senders[inbox->n] = r;
        inbox->bufs[inbox->n] = inbox->storage + displs[r];
        inbox->lens[inbox->n] = counts[r];
        inbox->n++;
    }
    free(lens);
    free(counts);
    free(displs);
}

void inbox_free(Inbox* inbox) {
    if (inbox->owns_buffers)
        for (int i = 0; i < inbox->n; i++) free(inbox->bufs[i]);
    free(inbox->senders);
    free(inbox->bufs);
    free(inbox->lens);
    free(inbox->storage);
    memset(inbox, 0, sizeof *inbox);
}
