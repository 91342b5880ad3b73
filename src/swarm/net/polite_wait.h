/* Waiting for a collective without holding a core: on a host with more ranks than cores
 * (the 2-core box runs 8), a rank that spins in MPI's blocking wait for the slowest rank
 * takes CPU time from the ranks still computing. polite_wait tests the request, spins
 * for POLITE_SPIN_S and then sleeps POLITE_NAP_US between tests. */
#ifndef SAPO_SWARM_POLITE_WAIT_H
#define SAPO_SWARM_POLITE_WAIT_H

#include <mpi.h>

#define POLITE_SPIN_S 1e-3
#define POLITE_NAP_US 50

/* Completes *req (MPI_Test until done); errors through mpiCheck. */
void polite_wait(MPI_Request* req);

#endif
