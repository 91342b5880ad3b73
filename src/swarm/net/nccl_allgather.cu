/* The synchronous all-gather of the swarm's messages over NCCL (see src/swarm/net/nccl_allgather.h).
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
#include <unistd.h>

#include "cuda_compat.h" /* cudaCheck */
#include "swarm/net/nccl_allgather.h"
#include "swarm/net/nccl_init.h"

/* The communicator is non-blocking (nccl_exchange_create): a call may return ncclInProgress,
 * and the communicator must then be polled (ncclCommGetAsyncError) until it is done. */
static ncclResult_t nccl_wait(ncclComm_t comm, ncclResult_t r) {
    while (r == ncclInProgress) {
        if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) return ncclSystemError;
    }
    return r;
}

#define ncclCheck(comm, call)                                                                                 \
    do {                                                                                                      \
        ncclResult_t r_ = nccl_wait((comm), (call));                                                          \
        if (r_ != ncclSuccess) {                                                                              \
            fprintf(stderr, "%s:%d: NCCL error in %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                     \
        }                                                                                                     \
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

extern "C" int nccl_device_id(int device, char* id, size_t idlen, int* n_visible) {
    id[0] = 0;
    *n_visible = device_count();
    int dev = device; /* the rank's GPU, chosen in one place (ModelBackend.place), from swarm/node_gpu.c */
    if (dev < 0) return -1;
    if (cudaDeviceGetPCIBusId(id, (int)idlen, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        id[0] = 0;
        return -1;
    }
    return dev;
}

/* The poll of nccl_init_poll (swarm/net/nccl_init.h) over a communicator being created. */
typedef struct {
    ncclComm_t comm;
    ncclResult_t last;
} InitPoll;
static int init_poll(void* ctx) {
    InitPoll* p = (InitPoll*)ctx;
    ncclResult_t st = ncclInProgress;
    ncclResult_t r = ncclCommGetAsyncError(p->comm, &st);
    p->last = r != ncclSuccess ? r : st;
    return p->last == ncclSuccess ? 1 : p->last == ncclInProgress ? 0 : -1;
}
static void init_pause(void* ctx) {
    (void)ctx;
    usleep(1000);
}
static double init_now(void* ctx) {
    (void)ctx;
    return MPI_Wtime();
}

extern "C" NcclExchange* nccl_exchange_create(MPI_Comm comm, int device, double timeout_s, char* why,
                                              size_t whylen) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    NcclExchange* x = (NcclExchange*)calloc(1, sizeof *x);
    if (!x) {
        fprintf(stderr, "%s:%d: out of host memory\n", __FILE__, __LINE__);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    x->rank = rank;
    x->size = size;
    x->device = device; /* the model's GPU: node_gpu_nccl_open checked there is one */
    if (x->device < 0) {
        fprintf(stderr, "%s:%d: nccl_exchange_create on a rank without a GPU\n", __FILE__, __LINE__);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    cudaCheck(cudaSetDevice(x->device));
    cudaCheck(cudaStreamCreate(&x->stream));
    ncclUniqueId id;
    int id_ok = 1;
    if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) id_ok = 0;
    MPI_Bcast(&id_ok, 1, MPI_INT, 0, comm);
    if (!id_ok) {
        snprintf(why, whylen, "ncclGetUniqueId failed on rank 0");
        if (rank == 0) fprintf(stderr, "sapo: %s; the swarm falls back to the MPI all-gather\n", why);
        cudaCheck(cudaStreamDestroy(x->stream));
        free(x);
        return NULL;
    }
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    /* Non-blocking with a deadline: a rank whose NCCL fails or hangs cannot hold the others
     * inside ncclCommInitRank; every rank reaches the agreement below within timeout_s. */
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    x->comm = NULL;
    InitPoll p = {NULL, ncclSuccess};
    ncclResult_t r = ncclCommInitRankConfig(&x->comm, size, id, rank, &config);
    int code;
    if (r != ncclSuccess && r != ncclInProgress) {
        p.last = r;
        code = NCCL_INIT_FAILED;
    } else {
        p.comm = x->comm;
        code = nccl_init_poll(init_poll, init_pause, init_now, &p, timeout_s);
    }
    struct {
        int code, rank;
    } mine = {code, rank}, worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, comm);
    if (worst.code != NCCL_INIT_READY) {
        char err[96] = "";
        if (rank == worst.rank && worst.code == NCCL_INIT_FAILED)
            snprintf(err, sizeof err, "%s", ncclGetErrorString(p.last));
        MPI_Bcast(err, (int)sizeof err, MPI_CHAR, worst.rank, comm);
        nccl_init_why(why, whylen, worst.code, worst.rank, timeout_s, err);
        if (rank == 0) fprintf(stderr, "sapo: %s; the swarm falls back to the MPI all-gather\n", why);
        if (x->comm) ncclCommAbort(x->comm); /* also a communicator still starting, or one that did */
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
    ncclCheck(x->comm, ncclAllGather(x->d_len, x->d_lens, 1, ncclUint64, x->comm, x->stream));
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
    ncclCheck(x->comm, ncclAllGather(x->d_send, x->d_recv, max, ncclUint8, x->comm, x->stream));
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
    ncclCheck(x->comm, ncclCommFinalize(x->comm)); /* non-blocking: finish, then destroy */
    ncclCommDestroy(x->comm);
    cudaCheck(cudaFree(x->d_len));
    cudaCheck(cudaFree(x->d_lens));
    if (x->d_send) cudaCheck(cudaFree(x->d_send));
    if (x->d_recv) cudaCheck(cudaFree(x->d_recv));
    cudaCheck(cudaStreamDestroy(x->stream));
    free(x);
}
