/* The synchronous all-gather exchange (see exchange.h), over MPI or, when built with NCCL
 * and every rank has its own GPU, over NCCL (swarm/net/nccl_allgather.h, implemented by
 * src/swarm/net/nccl_allgather.cu). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/clock.h"
#include "swarm/net/exchange.h"
#include "swarm/net/polite_wait.h"
#ifdef SAPO_HAVE_NCCL
#include "swarm/net/nccl_allgather.h"
#endif

/* The other ranks' messages as views into storage, which holds every rank's bytes in rank
 * order (lens[r] bytes each); the inbox takes storage over. */
static void inbox_from_gathered(Inbox* inbox, int rank, int size, const uint64_t* lens, uint8_t* storage) {
    inbox->storage = storage;
    inbox->senders = mallocCheck(sizeof(int) * size);
    inbox->bufs = mallocCheck(sizeof(uint8_t*) * size);
    inbox->lens = mallocCheck(sizeof(size_t) * size);
    uint64_t at = 0;
    for (int r = 0; r < size; r++) {
        if (r != rank) {
            inbox->senders[inbox->n] = r;
            inbox->bufs[inbox->n] = storage + at;
            inbox->lens[inbox->n] = (size_t)lens[r];
            inbox->n++;
        }
        at += lens[r];
    }
}

void exchange_allgather(MPI_Comm comm, const uint8_t* mine, size_t len, Inbox* inbox) {
    int rank, size;
    mpiCheck(MPI_Comm_rank(comm, &rank));
    mpiCheck(MPI_Comm_size(comm, &size));
    memset(inbox, 0, sizeof *inbox);
    uint64_t my_len = len;
    uint64_t* lens = mallocCheck(sizeof(uint64_t) * size);
    double t0 = clock_now();
    /* the wait for the slowest rank: nonblocking, so that a waiting rank sleeps (polite_wait.h) */
    MPI_Request req;
    mpiCheck(MPI_Iallgather(&my_len, 1, MPI_UINT64_T, lens, 1, MPI_UINT64_T, comm, &req));
    polite_wait(&req);
    inbox->t_wait = clock_now() - t0;
    int* counts = mallocCheck(sizeof(int) * size);
    int* displs = mallocCheck(sizeof(int) * size);
    uint64_t total = 0;
    for (int r = 0; r < size; r++) {
        if (lens[r] > INT_MAX || total + lens[r] > INT_MAX) sapo_die("exchange of more than 2 GiB in one round");
        counts[r] = (int)lens[r];
        displs[r] = (int)total;
        total += lens[r];
    }
    uint8_t* storage = mallocCheck(total ? total : 1);
    mpiCheck(MPI_Allgatherv(mine, (int)len, MPI_BYTE, storage, counts, displs, MPI_BYTE, comm));
    inbox_from_gathered(inbox, rank, size, lens, storage);
    free(lens);
    free(counts);
    free(displs);
}

#ifdef SAPO_HAVE_NCCL
void exchange_allgather_nccl(struct NcclExchange* x, MPI_Comm comm, const uint8_t* mine, size_t len, Inbox* inbox) {
    int rank, size;
    mpiCheck(MPI_Comm_rank(comm, &rank));
    mpiCheck(MPI_Comm_size(comm, &size));
    memset(inbox, 0, sizeof *inbox);
    uint64_t* lens = mallocCheck(sizeof(uint64_t) * size);
    uint8_t* storage = NULL;
    inbox->t_wait = nccl_allgather_bytes(x, mine, len, lens, &storage);
    inbox_from_gathered(inbox, rank, size, lens, storage);
    free(lens);
}
#endif

void inbox_free(Inbox* inbox) {
    if (inbox->owns_buffers)
        for (int i = 0; i < inbox->n; i++) free(inbox->bufs[i]);
    free(inbox->senders);
    free(inbox->bufs);
    free(inbox->lens);
    free(inbox->storage);
    free(inbox->age_from);
    memset(inbox, 0, sizeof *inbox);
}
