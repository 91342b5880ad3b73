/* Which GPU a CUDA node runs on: its rank among the ranks of its machine, modulo the GPUs. */
#ifndef SAPO_SWARM_NODE_GPU_H
#define SAPO_SWARM_NODE_GPU_H

#include <mpi.h>

/* Collective over comm (every rank calls it); does nothing in a build without CUDA. */
void node_gpu_choose(MPI_Comm comm, int rank);

#endif
