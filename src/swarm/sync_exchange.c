/* The outer step's mean over MPI_Allreduce (see sync_exchange.h). */
#include "swarm/sync_exchange.h"

#include <stdlib.h>

#include "core/check.h"

void sync_step_allreduce(WeightSync* ws, MPI_Comm comm, uint64_t seed, int rank, int n_nodes, float* theta,
                         SyncStats* st) {
    size_t count = weight_sync_payload(&ws->set, ws->n);
    if (count > (size_t)0x7fffffff) sapo_die("weight sync: %zu floats exceed one MPI_Allreduce", count);
    weight_sync_contribution(ws, theta);
    MPI_Comm group = comm;
    int k = n_nodes;
    if (ws->set.method == SYNC_NOLOCO) { /* the node's group of this step: the same draw on every node */
        int* members = mallocCheck(sizeof(int) * n_nodes);
        k = weight_sync_group(seed, n_nodes, ws->set.group, ws->steps, rank, members);
        mpiCheck(MPI_Comm_split(comm, members[0], rank, &group));
        free(members);
    }
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, ws->buf, (int)count, MPI_FLOAT, MPI_SUM, group));
    if (group != comm) mpiCheck(MPI_Comm_free(&group));
    for (size_t i = 0; i < count; i++) ws->buf[i] = ws->buf[i] / (float)k;
    weight_sync_apply(ws, ws->buf, theta);
    *st = (SyncStats){.peers = k - 1, .age = 0.0, .bytes_sent = 4.0 * (double)count * (k - 1),
                      .bytes_received = 4.0 * (double)count * (k - 1)};
}
