/* What one stage of a command (sapo run, demo, pretrain, bench round) tells the command:
 * go on to the next stage, or exit now with a process status. A command runs its stages in
 * order while each says go on; the helpers beside the stages keep returning 0 or -1. */
#ifndef SAPO_CORE_STAGE_H
#define SAPO_CORE_STAGE_H

typedef enum { STAGE_GO_ON, STAGE_EXIT } StageNext;

typedef struct {
    StageNext next;
    int exit_code; /* the process exit status when next == STAGE_EXIT */
} StageResult;

static inline StageResult stage_go_on(void) { return (StageResult){STAGE_GO_ON, 0}; }
static inline StageResult stage_exit(int exit_code) { return (StageResult){STAGE_EXIT, exit_code}; }
static inline int stage_goes_on(StageResult r) { return r.next == STAGE_GO_ON; }

#endif
