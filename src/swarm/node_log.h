/* A node's HDF5 round log: one column per RoundRecord metric plus reward_by_task and
 * eval_pass1_by_task, with the resolved config, the node's identity and its evaluation set's
 * fingerprint as root attributes (see io/h5log.h). */
#ifndef SAPO_SWARM_NODE_LOG_H
#define SAPO_SWARM_NODE_LOG_H

#include <stddef.h>

#include "io/h5log.h"
#include "swarm/evalset.h"
#include "swarm/node_settings.h"
#include "swarm/round_record.h"

/* config_ini: the resolved config as config_write prints it (root attribute config); ns: the
 * node's settings (its shape, I and J as attributes); the host the rank runs on (gethostname)
 * is root attribute host, beside the CPU and BLAS (core/host_info.h). eval (may be NULL): the node's
 * evaluation set, recorded as root attributes eval_questions (its size) and eval_set_digest
 * (16 hex digits, evalset.h's digest): equal digests, equal questions. */
H5Log* node_log_create(const char* path, const char* config_ini, const NodeSettings* ns, int rank, int n_nodes,
                       const EvalSet* eval, char* err, size_t errlen);
/* Reopens a node's log to continue a resumed run, keeping rounds <= keep_through_round; its
 * host attribute becomes the host the resumed rank runs on. */
H5Log* node_log_reopen(const char* path, int64_t keep_through_round, char* err, size_t errlen);
int node_log_append(H5Log* log, const RoundRecord* rec, char* err, size_t errlen);

#endif
