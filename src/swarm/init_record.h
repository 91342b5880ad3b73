/* What a run directory keeps of each node's model.init, so that `sapo run --resume` never
 * depends on the original file: a resumed node rebuilds its reference policy from it
 * (grpo.kl), and the config checks read it, even when the weights come from ckpt/.
 *
 * At the start every node with model.init writes RUN_DIR/init/node_NNNN.fnv1a (the file's
 * FNV-1a 64 digest, its size and its path) and keeps the file as RUN_DIR/init/node_NNNN.ckpt:
 * a hard link (free, same filesystem), else a copy when it is at most INIT_RECORD_COPY_MAX
 * bytes (byte-level checkpoints), else nothing beyond the digest (a large Llama-family one on
 * another filesystem). A resume reads node K's init from model.init=PATH (or
 * node.K.model.init=PATH) given on its command line, else the kept file, else the recorded
 * path, and only when that file has the recorded digest. */
#ifndef SAPO_SWARM_INIT_RECORD_H
#define SAPO_SWARM_INIT_RECORD_H

#include <stddef.h>

#define INIT_RECORD_COPY_MAX (64LL * 1024 * 1024)

/* Fresh run, on node `rank`'s own rank, once the run directory exists; nothing when init
 * is empty. 0, or -1 with a line naming the file in err. */
int init_record_keep(const char* run_dir, int rank, const char* init, char* err, size_t errlen);

/* Resume: the file node `rank` reads its model.init from (heap string): `given` when not
 * NULL, else the kept copy when it is there, else the recorded path. NULL when the run
 * recorded nothing for the node (no model.init, or a run started by an older sapo): the
 * config's path stands. Reads no checkpoint. */
char* init_record_path(const char* run_dir, int rank, const char* given);

/* Resume: 0 when `path` is the file the run recorded for node `rank` (its digest and size),
 * or nothing was recorded; -1 with one line in err naming the file and what was expected. */
int init_record_verify(const char* run_dir, int rank, const char* path, char* err, size_t errlen);

#endif
