/* The 70 sub-generators of reasoning_gym's arc_1d task (a C port of the package's
 * arc_1d_tasks.py, itself machine-translated from optozorax/arc_1d): each draws one
 * input/output pair of a 1-D grid puzzle from the Python-exact RNG, in the package's
 * order of draws, so items match the package exactly. */
#ifndef SAPO_TASKS_ARC_1D_GENERATORS_H
#define SAPO_TASKS_ARC_1D_GENERATORS_H

#include <stddef.h>

#include "tasks/pyemu/pyrandom.h"

typedef enum { ARC_WRAP_NONE, ARC_WRAP_MIRROR, ARC_WRAP_INVERSE } ArcWrap;

typedef struct {
    const char* name; /* key in the package's ARC_1D_TASKS, in its order */
    int kind;         /* which base generator */
    int move_pix;     /* parameter of the move / touch generators */
    int solid;        /* parameter of the move generators */
    ArcWrap wrap;     /* mirrored (left variants) or inverted (input and output swapped) */
} Arc1dTask;

extern const Arc1dTask ARC_1D_TASKS[];
extern const int ARC_1D_TASK_COUNT; /* 70 */

/* One call of the task's function: 1 with input/output (size cells each) filled, 0 where
 * the package returns None (the caller draws again), -1 with err set where the package
 * would raise or never return. */
int arc_1d_generate(const Arc1dTask* task, PyRandom* rng, int size, int* input, int* output, char* err,
                    size_t errlen);

#endif
