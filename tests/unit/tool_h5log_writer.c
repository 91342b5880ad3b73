/* Writer for the h5log crash test: appends one row per round to an h5log every few
 * milliseconds and prints "flushed R" once round R is durable, until killed (or until
 * `rounds` rows). Values are a pure function of the round (see h5log_expected.py), so a
 * reader can check every row it sees.
 *   tool_h5log_writer PATH ROUNDS INTERVAL_MS [KEEP_THROUGH_ROUND]
 * With KEEP_THROUGH_ROUND the log is reopened with h5log_open_append (a resumed run) and
 * continues from the round after the last one kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "io/h5log.h"

enum { VEC = 5 };

static const char* const LABELS[VEC] = {"a", "bb", "ccc", "task_d", "e"};
static const H5LogColumn COLUMNS[] = {
    {"loss", H5LOG_F64, 0, "0.5 * round + 0.25", NULL},
    {"eval", H5LOG_F64, 0, "round / 7 every third round, NaN otherwise", NULL},
    {"tokens", H5LOG_I64, 0, "round * 1000003 + 7", NULL},
    {"task_acc", H5LOG_F64_VEC, VEC, "round + j / 8", LABELS},
};
enum { NCOL = sizeof COLUMNS / sizeof COLUMNS[0] };

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s PATH ROUNDS INTERVAL_MS [KEEP_THROUGH_ROUND]\n", argv[0]);
        return 2;
    }
    const char* path = argv[1];
    long rounds = atol(argv[2]);
    long interval_ms = atol(argv[3]);
    char err[512];
    int64_t round = 0;
    H5Log* log;
    if (argc == 5) {
        int64_t last = -1;
        log = h5log_open_append(path, COLUMNS, NCOL, atoll(argv[4]), &last, err, sizeof err);
        round = last + 1;
    } else {
        log = h5log_create(path, COLUMNS, NCOL, err, sizeof err);
        if (log && (h5log_set_attr_string(log, "config", "[run]\nname = crash test\n", err, sizeof err) ||
                    h5log_set_attr_int(log, "node", 3, err, sizeof err))) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    if (!log) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("start %lld\n", (long long)round);
    fflush(stdout);
    for (long k = 0; k < rounds; k++, round++) {
        double v[VEC];
        for (int j = 0; j < VEC; j++) v[j] = (double)round + j / 8.0;
        H5LogValue row[NCOL];
        row[0].f = 0.5 * (double)round + 0.25;
        row[1].f = round % 3 == 0 ? (double)round / 7.0 : NAN;
        row[2].i = round * 1000003 + 7;
        row[3].v = v;
        if (h5log_append(log, round, row, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        printf("flushed %lld\n", (long long)round);
        fflush(stdout);
        if (interval_ms > 0) {
            struct timespec ts = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    h5log_close(log);
    return 0;
}
