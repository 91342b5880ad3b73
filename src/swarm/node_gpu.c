/* A node's placement on its machine (see node_gpu.h): its rank among the machine's ranks,
 * handed to every backend of the build that places (ModelBackend.place). */
#include "swarm/node_gpu.h"

#include "core/check.h"
#include "model/gpt.h"

void node_gpu_choose(MPI_Comm comm, int rank) {
    /* Whether any backend places is a property of the build, the same on every rank, so the
     * collective split below runs on all of them or on none, whatever backend each uses. */
    int places = 0;
    for (const ModelBackend* const* b = MODEL_BACKENDS; *b; b++) places |= (*b)->place != NULL;
    if (!places) return;
    MPI_Comm local;
    int local_rank, local_size;
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
    mpiCheck(MPI_Comm_rank(local, &local_rank));
    mpiCheck(MPI_Comm_size(local, &local_size));
    mpiCheck(MPI_Comm_free(&local));
    for (const ModelBackend* const* b = MODEL_BACKENDS; *b; b++)
        if ((*b)->place) (*b)->place(local_rank, local_size);
}
