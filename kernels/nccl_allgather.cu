/* The synchronous all-gather of the swarm's messages over NCCL (see src/swarm/nccl_allgather.h).
 * Variable lengths with one fixed-size collective: all-gather the lengths (uint64), then
 * every rank contributes max(len) bytes (its own bytes, then padding) and the padding is
 * dropped when copying back to the host. The messages live on the host, so each exchange
 * copies them up and down; NCCL pays off where ranks sit on different GPUs or machines. */
#define OMPI_SKIP_MPICXX 1 /* the C API of MPI only, also when compiled as C++ */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_compat.h"
#include "swarm/nccl_allgather.h"

#define ncclCheck(call)                                                                                      \
    do {                                                                                                     \
        ncclResult_t r_ = (call);                                                                            \
        if (r_ != ncclSuccess) {                                                                             \
            fprintf(stderr, "%s:%d: NCCL error in %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)

struct NcclExchange {
    ncclComm_t comm;
    cudaStream_t stream;
    int rank, size, device;
    uint64_t* d_len;  /* this rank's length */
    uint64_t* d_lens; /* every rank's */
    uint8_t* d_send;
    uint8_t* d_recv;
    size_t cap; /* bytes per rank that d_send and d_recv hold */
};

static int device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
    }
    return n;
}

extern "C" NcclExchange* nccl_exchange_create(MPI_Comm comm, char* why, size_t whylen) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm local;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    int local_rank, local_size;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    const char* env = getenv("SAPO_NCCL");
    int want = !(env && !strcmp(env, "0"));
    int ndev = device_count();
    /* [0] every rank wants NCCL, [1] every rank has a GPU, [2] no machine has more ranks than GPUs */
    int mine[3] = {want, ndev > 0, local_size <= ndev}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, comm);
    if (!all[0] || !all[1] || !all[2]) {
        snprintf(why, whylen, "%s",
                 !all[0]   ? "SAPO_NCCL=0 is set"
                 : !all[1] ? "not every rank has a GPU"
                           : "a machine has more ranks than GPUs (NCCL needs one GPU per rank)");
        return NULL;
    }
    NcclExchange* x = (NcclExchange*)calloc(1, sizeof *x);
    if (!x) {
        fprintf(stderr, "%s:%d: out of host memory\n", __FILE__, __LINE__);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    x->rank = rank;
    x->size = size;
    x->device = local_rank % ndev;
    cuda_set_local_rank(local_rank, local_size); /* the model's GPU is then this one too */
    cudaCheck(cudaSetDevice(x->device));
    cudaCheck(cudaStreamCreate(&x->stream));
    ncclUniqueId id;
    int id_ok = 1;
    if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) id_ok = 0;
    MPI_Bcast(&id_ok, 1, MPI_INT, 0, comm);
    if (!id_ok) {
        snprintf(why, whylen, "ncclGetUniqueId failed on rank 0");
        cudaCheck(cudaStreamDestroy(x->stream));
        free(x);
        return NULL;
    }
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    ncclResult_t r = ncclCommInitRank(&x->comm, size, id, rank);
    int ok = r == ncclSuccess, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        snprintf(why, whylen, "ncclCommInitRank failed%s%s", ok ? " on another rank" : ": ",
                 ok ? "" : ncclGetErrorString(r));
        if (ok) ncclCommDestroy(x->comm);
        cudaCheck(cudaStreamDestroy(x->stream));
        free(x);
        return NULL;
    }
    cudaCheck(cudaMalloc((void**)&x->d_len, sizeof(uint64_t)));
    cudaCheck(cudaMalloc((void**)&x->d_lens, sizeof(uint64_t) * size));
    snprintf(why, whylen, "NCCL %d.%d.%d, %d ranks", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, size);
    return x;
}

static void ensure_capacity(NcclExchange* x, size_t per_rank) {
    if (per_rank <= x->cap) return;
    size_t cap = x->cap ? x->cap : 4096;
    while (cap < per_rank) cap *= 2;
    cudaCheck(cudaStreamSynchronize(x->stream));
    if (x->d_send) cudaCheck(cudaFree(x->d_send));
    if (x->d_recv) cudaCheck(cudaFree(x->d_recv));
    cudaCheck(cudaMalloc((void**)&x->d_send, cap));
    cudaCheck(cudaMalloc((void**)&x->d_recv, cap * x->size));
    x->cap = cap;
}

extern "C" double nccl_allgather_bytes(NcclExchange* x, const uint8_t* mine, size_t len, uint64_t* lens,
                                       uint8_t** storage) {
    uint64_t my_len = len;
    double t0 = MPI_Wtime();
    cudaCheck(cudaMemcpyAsync(x->d_len, &my_len, sizeof my_len, cudaMemcpyHostToDevice, x->stream));
    ncclCheck(ncclAllGather(x->d_len, x->d_lens, 1, ncclUint64, x->comm, x->stream));
    cudaCheck(cudaMemcpyAsync(lens, x->d_lens, sizeof(uint64_t) * x->size, cudaMemcpyDeviceToHost, x->stream));
    cudaCheck(cudaStreamSynchronize(x->stream));
    double t_wait = MPI_Wtime() - t0;
    uint64_t max = 0, total = 0;
    for (int r = 0; r < x->size; r++) {
        if (lens[r] > max) max = lens[r];
        total += lens[r];
    }
    *storage = (uint8_t*)malloc(total ? total : 1);
    if (!*storage) {
        fprintf(stderr, "%s:%d: out of host memory (%llu bytes)\n", __FILE__, __LINE__, (unsigned long long)total);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (max == 0) return t_wait; /* every rank agrees: nothing to send */
    ensure_capacity(x, max);
    if (len) cudaCheck(cudaMemcpyAsync(x->d_send, mine, len, cudaMemcpyHostToDevice, x->stream));
    ncclCheck(ncclAllGather(x->d_send, x->d_recv, max, ncclUint8, x->comm, x->stream));
    uint64_t at = 0;
    for (int r = 0; r < x->size; r++) {
        if (lens[r])
            cudaCheck(cudaMemcpyAsync(*storage + at, x->d_recv + (size_t)r * max, lens[r], cudaMemcpyDeviceToHost,
                                      x->stream));
        at += lens[r];
    }
    cudaCheck(cudaStreamSynchronize(x->stream));
    return t_wait;
}

extern "C" void nccl_exchange_free(NcclExchange* x) {
    if (!x) return;
    cudaCheck(cudaStreamSynchronize(x->stream));
    ncclCommDestroy(x->comm);
    cudaCheck(cudaFree(x->d_len));
    cudaCheck(cudaFree(x->d_lens));
    if (x->d_send) cudaCheck(cudaFree(x->d_send));
    if (x->d_recv) cudaCheck(cudaFree(x->d_recv));
    cudaCheck(cudaStreamDestroy(x->stream));
    free(x);
}
