/* What the emulated network decides for a run, from the run's own resolved config.ini and
 * its number of nodes: netem's per-(sender, receiver, round) answers, printed as one JSON
 * object so that tests/mpi/test_netem_columns.py can derive the exact per-round counters a
 * node must log (msgs_sent, msgs_dropped, msgs_received, msgs_late, ages, bytes) from the
 * library's own pure functions instead of re-implementing netem in Python.
 *
 *   tool_netem_expect RUN_DIR/config.ini N_NODES
 *
 * {"nodes": N, "rounds": R, "wall": 0|1, "offline": [[0|1 per round] per node],
 *  "messages": [[s, d, r, targeted, lost, sends, delivery_round, delay, arrival_round], ...]}
 *  (s != d) */
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "swarm/net/netem.h"
#include "swarm/node_settings.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONFIG.ini N_NODES\n", argv[0]);
        return 2;
    }
    char err[512];
    Config* cfg = config_new();
    if (config_load_all(cfg, argv[1], 0, NULL, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1) {
        fprintf(stderr, "N_NODES must be >= 1\n");
        return 2;
    }
    RunSettings rs = run_settings_read(cfg, n);
    Netem* ne = run_settings_netem(&rs);
    printf("{\"nodes\": %d, \"rounds\": %d, \"wall\": %d, \"offline\": [", n, ne->rounds, ne->net.wall_clock);
    for (int k = 0; k < n; k++) {
        printf("%s[", k ? ", " : "");
        for (int r = 0; r < ne->rounds; r++) printf("%s%d", r ? ", " : "", netem_offline(ne, k, r));
        printf("]");
    }
    printf("],\n \"messages\": [");
    int first = 1;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            for (int r = 0; r < ne->rounds; r++) {
                if (s == d) continue;
                printf("%s\n  [%d, %d, %d, %d, %d, %d, %d, %.17g, %d]", first ? "" : ",", s, d, r,
                       netem_targets(ne, s, d, r), netem_dropped(ne, s, d, r), netem_sends(ne, s, d, r),
                       netem_delivery_round(ne, s, d, r), netem_delay(ne, s, d, r), netem_arrival_round(ne, s, d, r));
                first = 0;
            }
    printf("]}\n");
    netem_free(ne);
    run_settings_free(&rs);
    config_free(cfg);
    return 0;
}
