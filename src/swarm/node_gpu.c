/* A node's placement on its machine (see node_gpu.h): its rank among the machine's ranks,
 * handed to every backend of the build that places (ModelBackend.place), and whether the
 * machine's ranks sit on distinct GPUs (NCCL). */
#include "swarm/node_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/model.h"
#ifdef SAPO_HAVE_NCCL
#include "swarm/net/nccl_allgather.h"
#include "swarm/net/nccl_init.h"
#endif

/* The ranks of comm on this machine: their communicator (to free), this rank's place. */
static MPI_Comm machine_comm(MPI_Comm comm, int* local_rank, int* local_size) {
    int rank;
    MPI_Comm local;
    mpiCheck(MPI_Comm_rank(comm, &rank));
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
    mpiCheck(MPI_Comm_rank(local, local_rank));
    mpiCheck(MPI_Comm_size(local, local_size));
    return local;
}

void node_gpu_choose(MPI_Comm comm, int rank) {
    (void)rank;
    /* Whether any backend places is a property of the build, the same on every rank, so the
     * collective split below runs on all of them or on none, whatever backend each uses. */
    int places = 0;
    for (const ModelBackend* const* b = MODEL_BACKENDS; *b; b++) places |= (*b)->place != NULL;
    if (!places) return;
    int local_rank, local_size;
    MPI_Comm local = machine_comm(comm, &local_rank, &local_size);
    mpiCheck(MPI_Comm_free(&local));
    for (const ModelBackend* const* b = MODEL_BACKENDS; *b; b++)
        if ((*b)->place) (*b)->place(local_rank, local_size);
}

int node_gpu_distinct(int local_size, const int* n_visible, const char (*ids)[NODE_GPU_ID_LEN], char* why,
                      size_t whylen) {
    for (int r = 0; r < local_size; r++)
        if (n_visible[r] < 1 || !ids[r][0]) {
            snprintf(why, whylen, "local rank %d of %d has no GPU", r, local_size);
            return 0;
        }
    for (int r = 0; r < local_size; r++)
        for (int s = 0; s < r; s++)
            if (!strncmp(ids[r], ids[s], NODE_GPU_ID_LEN)) {
                snprintf(why, whylen, "local ranks %d and %d share GPU %.*s (NCCL needs one GPU per rank)", s, r,
                         NODE_GPU_ID_LEN, ids[r]);
                return 0;
            }
    return 1;
}

int node_gpu_nccl_eligible(MPI_Comm comm, const char* my_id, int my_n_visible, char* why, size_t whylen) {
    int local_rank, local_size;
    MPI_Comm local = machine_comm(comm, &local_rank, &local_size);
    int ok = node_gpu_nccl_agree(comm, local, my_id, my_n_visible, why, whylen);
    mpiCheck(MPI_Comm_free(&local));
    return ok;
}

int node_gpu_nccl_agree(MPI_Comm comm, MPI_Comm local, const char* my_id, int my_n_visible, char* why,
                        size_t whylen) {
    int local_size;
    mpiCheck(MPI_Comm_size(local, &local_size));
    char mine[NODE_GPU_ID_LEN] = {0};
    snprintf(mine, sizeof mine, "%s", my_id ? my_id : "");
    char(*ids)[NODE_GPU_ID_LEN] = mallocCheck((size_t)local_size * NODE_GPU_ID_LEN);
    int* n_visible = mallocCheck(sizeof(int) * (size_t)local_size);
    mpiCheck(MPI_Allgather(mine, NODE_GPU_ID_LEN, MPI_CHAR, ids, NODE_GPU_ID_LEN, MPI_CHAR, local));
    mpiCheck(MPI_Allgather(&my_n_visible, 1, MPI_INT, n_visible, 1, MPI_INT, local));
    int ok = node_gpu_distinct(local_size, n_visible, (const char(*)[NODE_GPU_ID_LEN])ids, why, whylen), all_ok;
    free(ids);
    free(n_visible);
    mpiCheck(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm));
    if (ok && !all_ok) snprintf(why, whylen, "another machine's ranks have no GPU each of their own");
    return all_ok;
}

#ifdef SAPO_HAVE_NCCL
/* The GPU this rank computes on: the device entry of the build's first backend that has one
 * (ModelBackend.device: CUDA's, the GPU its place chose), -1 for none. */
static int node_gpu_device(void) {
    for (const ModelBackend* const* b = MODEL_BACKENDS; *b; b++)
        if ((*b)->device) return (*b)->device();
    return -1;
}

struct NcclExchange* node_gpu_nccl_open(MPI_Comm comm, char* why, size_t whylen) {
    const char* env = getenv("SAPO_NCCL");
    int want = !(env && !strcmp(env, "0")), all_want;
    mpiCheck(MPI_Allreduce(&want, &all_want, 1, MPI_INT, MPI_MIN, comm));
    if (!all_want) {
        snprintf(why, whylen, "SAPO_NCCL=0 is set");
        return NULL;
    }
    double timeout = nccl_init_timeout(getenv("SAPO_NCCL_TIMEOUT"));
    if (timeout < 0) sapo_die("SAPO_NCCL_TIMEOUT=%s: not a number of seconds above 0", getenv("SAPO_NCCL_TIMEOUT"));
    char id[NODE_GPU_ID_LEN];
    int n_visible = 0;
    int device = node_gpu_device(); /* handed down: NCCL runs on the model's GPU */
    nccl_device_id(device, id, sizeof id, &n_visible);
    if (!node_gpu_nccl_eligible(comm, id, n_visible, why, whylen)) return NULL;
    return nccl_exchange_create(comm, device, timeout, why, whylen);
}
#endif
