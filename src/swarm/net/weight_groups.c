/* NoLoCo's random groups (see weight_groups.h; docs/SYNC.md). */
#include "swarm/net/weight_groups.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/rng.h"

int weight_sync_group(uint64_t seed, int n_nodes, int group, long step, int rank, int* members) {
    int* order = mallocCheck(sizeof(int) * n_nodes);
    for (int k = 0; k < n_nodes; k++) order[k] = k;
    RngStream rng = rng_stream(seed, 0, (uint32_t)step, RNG_SYNC);
    for (int i = n_nodes - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)rng_below(&rng, (uint64_t)i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int g = group < 1 ? 1 : group > n_nodes ? n_nodes : group;
    int at = 0;
    while (order[at] != rank) at++;
    int first = at / g * g, size = first + g <= n_nodes ? g : n_nodes - first;
    for (int i = 0; i < size; i++) members[i] = order[first + i];
    free(order);
    for (int i = 1; i < size; i++) /* ascending: every member averages in the same order */
        for (int j = i; j > 0 && members[j - 1] > members[j]; j--) {
            int t = members[j];
            members[j] = members[j - 1];
            members[j - 1] = t;
        }
    return size;
}
