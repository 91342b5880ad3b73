/* A CUDA node's GPU (see node_gpu.h). */
#include "swarm/node_gpu.h"

#include "core/check.h"
#include "model/gpu.h"

void node_gpu_choose(MPI_Comm comm, int rank) {
#ifdef SAPO_HAVE_CUDA
    MPI_Comm local;
    int local_rank, local_size;
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
    mpiCheck(MPI_Comm_rank(local, &local_rank));
    mpiCheck(MPI_Comm_size(local, &local_size));
    mpiCheck(MPI_Comm_free(&local));
    model_gpu_set_local_rank(local_rank, local_size);
#else
    (void)comm, (void)rank;
#endif
}
