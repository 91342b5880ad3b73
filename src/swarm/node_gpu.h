/* Which GPU a node runs on, and whether the machine's ranks may use NCCL. The one place that
 * works out a rank's place on its machine (its rank among the machine's ranks, from
 * MPI_Comm_split_type SHARED): the backends get it through their table (ModelBackend.place;
 * CUDA: GPU local_rank modulo the devices this process sees, so ranks share GPUs round-robin),
 * and the NCCL transport's eligibility is decided here from the physical GPUs the ranks ended
 * up on (PCI bus ids), not from device counts: with CUDA_VISIBLE_DEVICES set per rank every
 * rank sees one device, numbered 0, yet each is a different GPU. */
#ifndef SAPO_SWARM_NODE_GPU_H
#define SAPO_SWARM_NODE_GPU_H

#include <mpi.h>
#include <stddef.h>

/* Collective over comm (every rank calls it); does nothing in a build whose backends have
 * nothing to place (no CUDA). */
void node_gpu_choose(MPI_Comm comm, int rank);

/* A GPU's physical id: its PCI bus id ("0000:1b:00.0"), NUL-terminated; "" for no GPU. */
#define NODE_GPU_ID_LEN 32

/* Whether NCCL can run on one machine's local_size ranks, local rank r using the GPU
 * ids[r] among the n_visible[r] devices it sees: every rank has a GPU and no two ranks share
 * one (NCCL refuses two ranks on one GPU: "Duplicate GPU detected"). How many devices a rank
 * sees does not matter. Returns 1, or 0 with the reason in why. Pure. */
int node_gpu_distinct(int local_size, const int* n_visible, const char (*ids)[NODE_GPU_ID_LEN], char* why,
                      size_t whylen);

/* Collective over comm: each rank gives the id of its GPU ("" for none) and how many devices
 * it sees; the ids are gathered over each machine's ranks (MPI_COMM_TYPE_SHARED), checked with
 * node_gpu_distinct, and the ranks agree (MPI_Allreduce): 1 on every rank, or 0 on every rank
 * with a reason (the same on every rank of the machine that found it). */
int node_gpu_nccl_eligible(MPI_Comm comm, const char* my_id, int my_n_visible, char* why, size_t whylen);
/* The same with the machines given: machine holds this rank's machine-mates (a split of
 * comm; tests/mpi/tool_node_gpu_agree.c splits one host into several "machines"). */
int node_gpu_nccl_agree(MPI_Comm comm, MPI_Comm machine, const char* my_id, int my_n_visible, char* why,
                        size_t whylen);

#ifdef SAPO_HAVE_NCCL
struct NcclExchange;
/* Collective over comm: the NCCL all-gather exchange when SAPO_NCCL is not 0, every rank has
 * a GPU of its own (node_gpu_nccl_eligible) and NCCL starts within SAPO_NCCL_TIMEOUT seconds
 * (default 30) on every rank; NULL on every rank otherwise, with the reason in why (rank 0
 * also prints it when NCCL was tried and failed: the swarm then uses the MPI all-gather).
 * The GPU is the one this rank's backend computes on (ModelBackend.device), handed down to
 * swarm/net/nccl_allgather.h. */
struct NcclExchange* node_gpu_nccl_open(MPI_Comm comm, char* why, size_t whylen);
#endif

#endif
