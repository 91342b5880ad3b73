/* A node's HDF5 round log: one column per RoundRecord metric plus reward_by_task, with the
 * resolved config and the node's identity as root attributes (see io/h5log.h). */
#ifndef SAPO_SWARM_NODE_LOG_H
#define SAPO_SWARM_NODE_LOG_H

#include <stddef.h>

#include "core/config.h"
#include "io/h5log.h"
#include "swarm/round_record.h"

H5Log* node_log_create(const char* path, const Config* cfg, int rank, int n_nodes, char* err, size_t errlen);
/* Reopens a node's log to continue a resumed run, keeping rounds <= keep_through_round. */
H5Log* node_log_reopen(const char* path, int64_t keep_through_round, char* err, size_t errlen);
int node_log_append(H5Log* log, const RoundRecord* rec, char* err, size_t errlen);

#endif
