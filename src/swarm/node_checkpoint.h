/* Node checkpoints for resumable runs: after `rounds_done` rounds every node writes its
 * model with the optimizer state (model/checkpoint.c) and a state file (the caller's
 * running totals and, with the p2p transport, the messages still in flight), under
 * RUN_DIR/ckpt/. Random streams need no saving: each is keyed by its round. The pool is
 * empty between rounds. So a virtual-clock run resumed from a checkpoint repeats the
 * uninterrupted run bit for bit. */
#ifndef SAPO_SWARM_NODE_CHECKPOINT_H
#define SAPO_SWARM_NODE_CHECKPOINT_H

#include <stddef.h>

#include "swarm/node.h"

int node_checkpoint_save(SwarmNode* n, const char* run_dir, int rounds_done, const double* totals, int n_totals,
                         char* err, size_t errlen);
int node_checkpoint_load(SwarmNode* n, const char* run_dir, int rounds_done, double* totals, int n_totals, char* err,
                         size_t errlen);
/* Checks, without building the node, that node `rank`'s checkpoint after rounds_done rounds
 * is there and whole: its model file (checkpoint_verify against `shape`, payload and checksum
 * included) and its state file's header and totals. 0, or -1 with a line naming the file. */
int node_checkpoint_verify(const char* run_dir, int rank, int rounds_done, const ModelShape* shape, int n_totals,
                           char* err, size_t errlen);
/* Removes this node's checkpoints older than keep_from (rounds done). */
void node_checkpoint_prune(const char* run_dir, int rank, int keep_from);

/* RUN_DIR/ckpt/LATEST: the newest round every node has checkpointed (rank 0 writes it
 * after a barrier). Returns rounds done, 0 when there is none, -1 on a malformed file. */
int checkpoint_latest_read(const char* run_dir);
int checkpoint_latest_write(const char* run_dir, int rounds_done, char* err, size_t errlen);

#endif
