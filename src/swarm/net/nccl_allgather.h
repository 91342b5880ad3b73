/* C interface of the NCCL all-gather transport: declared here by the swarm, implemented beside
 * it by src/swarm/net/nccl_allgather.cu (the sapo_nccl library, built when NCCL is found:
 * SAPO_HAVE_NCCL). The GPU is the caller's to give: swarm/node_gpu.c hands down the one this
 * rank's backend computes on (ModelBackend.device).
 * It does the job of src/swarm/net/exchange_allgather.c (every rank gets every rank's byte
 * string: the sizes first, then the bytes) over NCCL instead of MPI.
 * NCCL needs one GPU per rank: several ranks on one GPU is not supported by NCCL itself
 * ("Duplicate GPU detected"), so swarm/node_gpu.c declines then and the swarm stays on MPI. */
#ifndef SAPO_SWARM_NCCL_ALLGATHER_H
#define SAPO_SWARM_NCCL_ALLGATHER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NcclExchange NcclExchange;

/* The PCI bus id of GPU `device` (the one this rank's CUDA backend uses, the one
 * ModelBackend.place chose, handed down by swarm/node_gpu.c; -1: none) into id ("" without
 * one) and how many devices this process sees into *n_visible. Returns device, or -1. */
int nccl_device_id(int device, char* id, size_t idlen, int* n_visible);

/* Collective over comm, on ranks that each have a GPU of their own (swarm/node_gpu.h,
 * node_gpu_nccl_open, checks that first): starts NCCL non-blocking on this rank's GPU, device
 * (as for nccl_device_id), and waits at most timeout_s seconds for it. Returns the exchange
 * on every rank, or NULL on every rank (the ranks agree through MPI_Allreduce; a
 * communicator that did start is aborted) with the reason in why, which rank 0 also prints:
 * NCCL failed or did not start in time, and on which rank. */
NcclExchange* nccl_exchange_create(MPI_Comm comm, int device, double timeout_s, char* why, size_t whylen);

/* Collective: lens[r] (comm size entries) gets rank r's length, *storage a malloc'd block
 * with every rank's bytes in rank order (rank r's at the sum of lens[0..r)). Returns the
 * seconds spent in the sizes exchange, where a rank waits for the slowest. */
double nccl_allgather_bytes(NcclExchange* x, const uint8_t* mine, size_t len, uint64_t* lens, uint8_t** storage);

void nccl_exchange_free(NcclExchange* x);

#ifdef __cplusplus
}
#endif

#endif
