/* Run directories: where a command writes its results, created up front and printed, so a
 * researcher can always find a run again. */
#ifndef SAPO_IO_RUN_DIR_H
#define SAPO_IO_RUN_DIR_H

#include <stddef.h>

/* The directory to use: `requested` when not empty, else results/runs/NAME-YYYYmmdd-HHMMSS
 * (NAME = name, or kind when name is empty). Creates it and its parents. Returns a heap
 * path, or NULL with a reason in err. */
char* run_dir_create(const char* requested, const char* kind, const char* name, char* err, size_t errlen);
/* mkdir -p; 0 or -1 with err. */
int make_dirs(const char* path, char* err, size_t errlen);

/* RUN_DIR/NODES: the swarm size a run was started with ("4\n"), written (atomically) when
 * the directory is created, before any node file, and checked by every resume. */
int run_dir_write_nodes(const char* dir, int n_nodes, char* err, size_t errlen);
/* The recorded swarm size; in a directory written before NODES existed, the number of
 * consecutive node_NNNN.h5 files from node_0000.h5; 0 when neither says; -1 when NODES is
 * malformed. */
int run_dir_read_nodes(const char* dir);

/* RUN_DIR/NUMERICS: the numerics version of the sapo that started the run
 * (model/numerics.h), written with NODES; a resume by a sapo of another version is refused,
 * since the continued run would no longer replay. */
int run_dir_write_numerics(const char* dir, int version, char* err, size_t errlen);
/* The recorded version; 1 in a directory written before NUMERICS existed (every such sapo
 * computed numerics 1); -1 when NUMERICS is malformed. */
int run_dir_read_numerics(const char* dir);

#endif
