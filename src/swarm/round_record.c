/* Names and help of the logged round metrics (see round_record.h). */
#include "swarm/round_record.h"

#include <math.h>
#include <string.h>

#define METRIC_NAME(id, name, help) name,
#define METRIC_HELP(id, name, help) help,
const char* const ROUND_METRIC_NAMES[RM_COUNT] = {ROUND_METRICS(METRIC_NAME)};
const char* const ROUND_METRIC_HELP[RM_COUNT] = {ROUND_METRICS(METRIC_HELP)};

void round_record_clear(RoundRecord* r, int64_t round) {
    memset(r, 0, sizeof *r);
    r->round = round;
    r->m[RM_EVAL_PASS1] = NAN;
    r->m[RM_EXTERNAL_AGE_MIN] = NAN;
    r->m[RM_EXTERNAL_AGE_MAX] = NAN;
    r->m[RM_EXTERNAL_AGE_MEAN] = NAN;
    r->m[RM_OFFPOLICY_WEIGHT] = NAN;
    r->m[RM_OFFPOLICY_CAPPED] = NAN;
    r->m[RM_OFFPOLICY_DROPPED] = NAN;
    r->m[RM_SYNC_AGE] = NAN;
    for (int t = 0; t < TASK_N_IDS; t++) r->reward_by_task[t] = r->eval_by_task[t] = NAN;
}
