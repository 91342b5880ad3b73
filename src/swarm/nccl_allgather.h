/* C interface of the NCCL all-gather transport: declared here by the swarm, implemented by
 * kernels/nccl_allgather.cu (the sapo_nccl library, built when NCCL is found: SAPO_HAVE_NCCL).
 * It does the job of src/swarm/exchange_allgather.c (every rank gets every rank's byte
 * string: the sizes first, then the bytes) over NCCL instead of MPI.
 * NCCL needs one GPU per rank: several ranks on one GPU is not supported by NCCL itself
 * ("Duplicate GPU detected"), so create declines then and the swarm stays on MPI. */
#ifndef SAPO_SWARM_NCCL_ALLGATHER_H
#define SAPO_SWARM_NCCL_ALLGATHER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NcclExchange NcclExchange;

/* Collective over comm. Returns the exchange on every rank, or NULL on every rank (the ranks
 * agree through MPI_Allreduce) with the reason in why: some rank has no GPU, a machine has
 * more ranks than GPUs, SAPO_NCCL=0 is set, or NCCL failed to start. */
NcclExchange* nccl_exchange_create(MPI_Comm comm, char* why, size_t whylen);

/* Collective: lens[r] (comm size entries) gets rank r's length, *storage a malloc'd block
 * with every rank's bytes in rank order (rank r's at the sum of lens[0..r)). Returns the
 * seconds spent in the sizes exchange, where a rank waits for the slowest. */
double nccl_allgather_bytes(NcclExchange* x, const uint8_t* mine, size_t len, uint64_t* lens, uint8_t** storage);

void nccl_exchange_free(NcclExchange* x);

#ifdef __cplusplus
}
#endif

#endif
