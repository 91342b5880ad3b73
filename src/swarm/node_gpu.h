/* Which GPU a CUDA node runs on: its rank among the ranks of its machine, modulo the GPUs,
 * given to the backends through their table (ModelBackend.place). */
#ifndef SAPO_SWARM_NODE_GPU_H
#define SAPO_SWARM_NODE_GPU_H

#include <mpi.h>

/* Collective over comm (every rank calls it); does nothing in a build whose backends have
 * nothing to place (no CUDA). */
void node_gpu_choose(MPI_Comm comm, int rank);

#endif
