/* The GPU placement decisions of swarm/node_gpu.h and swarm/net/nccl_init.h as pure functions, so
 * they are checked without a GPU or NCCL:
 *  - NCCL eligibility from the physical GPUs the machine's ranks use (their PCI bus ids), not
 *    from device counts: with CUDA_VISIBLE_DEVICES set per rank each rank sees one device
 *    (ordinal 0) and yet every rank has its own GPU; two ranks on one GPU are refused;
 *  - the non-blocking NCCL start's poll: ready, failed, or out of time at the deadline (so a
 *    hung rank cannot hold the others), and the one-line reason of the fallback;
 *  - SAPO_NCCL_TIMEOUT's parsing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "swarm/net/nccl_init.h"
#include "swarm/node_gpu.h"

#include "../test_assert.h"

static const char A[] = "0000:1B:00.0", B[] = "0000:43:00.0", C[] = "0000:52:00.0", D[] = "0000:61:00.0";

static void set_ids(char (*ids)[NODE_GPU_ID_LEN], int n, const char* const* v) {
    for (int i = 0; i < n; i++) snprintf(ids[i], NODE_GPU_ID_LEN, "%s", v[i]);
}

static void distinct_cases(void) {
    char ids[8][NODE_GPU_ID_LEN], why[200];
    /* CUDA_VISIBLE_DEVICES per rank: 4 ranks, each sees one device, each a different GPU */
    {
        const char* v[] = {A, B, C, D};
        int nvis[] = {1, 1, 1, 1};
        set_ids(ids, 4, v);
        why[0] = 0;
        EXPECT(node_gpu_distinct(4, nvis, (const char(*)[NODE_GPU_ID_LEN])ids, why, sizeof why) == 1,
               "4 ranks, one GPU visible to each, all different: refused (%s)", why);
    }
    /* every rank sees all 4 GPUs and uses GPU local_rank mod 4 */
    {
        const char* v[] = {A, B, C, D};
        int nvis[] = {4, 4, 4, 4};
        set_ids(ids, 4, v);
        EXPECT(node_gpu_distinct(4, nvis, (const char(*)[NODE_GPU_ID_LEN])ids, why, sizeof why) == 1,
               "4 ranks on 4 visible GPUs: refused (%s)", why);
    }
    /* CUDA_VISIBLE_DEVICES=0 on both ranks: one GPU, two ranks */
    {
        const char* v[] = {A, A};
        int nvis[] = {1, 1};
        set_ids(ids, 2, v);
        why[0] = 0;
        EXPECT(node_gpu_distinct(2, nvis, (const char(*)[NODE_GPU_ID_LEN])ids, why, sizeof why) == 0,
               "2 ranks on one GPU: accepted");
        EXPECT_MSG(why, "local ranks 0 and 1 share GPU 0000:1B:00.0");
    }
    /* 3 ranks round-robin on 2 GPUs: ranks 0 and 2 share */
    {
        const char* v[] = {A, B, A};
        int nvis[] = {2, 2, 2};
        set_ids(ids, 3, v);
        why[0] = 0;
        EXPECT(node_gpu_distinct(3, nvis, (const char(*)[NODE_GPU_ID_LEN])ids, why, sizeof why) == 0,
               "3 ranks on 2 GPUs: accepted");
        EXPECT_MSG(why, "local ranks 0 and 2 share");
    }
    /* a rank with no GPU */
    {
        const char* v[] = {A, ""};
        int nvis[] = {1, 0};
        set_ids(ids, 2, v);
        why[0] = 0;
        EXPECT(node_gpu_distinct(2, nvis, (const char(*)[NODE_GPU_ID_LEN])ids, why, sizeof why) == 0,
               "a rank without a GPU: accepted");
        EXPECT_MSG(why, "local rank 1 of 2 has no GPU");
    }
    /* one rank, one GPU */
    {
        const char* v[] = {A};
        int nvis[] = {1};
        set_ids(ids, 1, v);
        EXPECT(node_gpu_distinct(1, nvis, (const char(*)[NODE_GPU_ID_LEN])ids, why, sizeof why) == 1,
               "1 rank on 1 GPU: refused (%s)", why);
    }
}

/* A fake NCCL start: in progress for `busy` polls, then `end` (1 ready, -1 failed); a clock
 * that advances 0.25 s per pause. */
typedef struct {
    int busy, end, polls, pauses;
    double t;
} Fake;
static int fake_poll(void* ctx) {
    Fake* f = ctx;
    f->polls++;
    return f->polls <= f->busy ? 0 : f->end;
}
static void fake_pause(void* ctx) {
    Fake* f = ctx;
    f->pauses++;
    f->t += 0.25;
}
static double fake_now(void* ctx) { return ((Fake*)ctx)->t; }

static void poll_cases(void) {
    Fake f = {.busy = 0, .end = 1};
    EXPECT(nccl_init_poll(fake_poll, fake_pause, fake_now, &f, 30) == NCCL_INIT_READY && f.polls == 1,
           "ready at once: polls %d", f.polls);
    f = (Fake){.busy = 5, .end = 1};
    EXPECT(nccl_init_poll(fake_poll, fake_pause, fake_now, &f, 30) == NCCL_INIT_READY && f.polls == 6,
           "ready after 5 polls: polls %d", f.polls);
    f = (Fake){.busy = 3, .end = -1};
    EXPECT(nccl_init_poll(fake_poll, fake_pause, fake_now, &f, 30) == NCCL_INIT_FAILED && f.polls == 4,
           "fails after 3 polls: polls %d", f.polls);
    /* never ready (a rank stuck in the start): out of time at the deadline, 2 s = 8 pauses */
    f = (Fake){.busy = 1 << 30, .end = 1};
    EXPECT(nccl_init_poll(fake_poll, fake_pause, fake_now, &f, 2.0) == NCCL_INIT_TIMED_OUT,
           "a start that never ends did not time out");
    EXPECT(f.pauses == 8 && fabs(f.t - 2.0) < 1e-9, "timed out after %d pauses at t = %g (expected 8, 2 s)", f.pauses,
           f.t);
    /* the worst outcome over the ranks is the minimum (MPI_MINLOC) */
    EXPECT(NCCL_INIT_FAILED < NCCL_INIT_TIMED_OUT && NCCL_INIT_TIMED_OUT < NCCL_INIT_READY, "codes not ordered");

    char why[200];
    nccl_init_why(why, sizeof why, NCCL_INIT_TIMED_OUT, 3, 30, "");
    EXPECT(!strcmp(why, "NCCL did not start within 30 s on rank 3 (SAPO_NCCL_TIMEOUT)"), "timeout reason: %s", why);
    nccl_init_why(why, sizeof why, NCCL_INIT_FAILED, 1, 30, "unhandled system error");
    EXPECT(!strcmp(why, "NCCL failed to start on rank 1: unhandled system error"), "failure reason: %s", why);
    nccl_init_why(why, sizeof why, NCCL_INIT_FAILED, 0, 30, "");
    EXPECT(!strcmp(why, "NCCL failed to start on rank 0"), "failure reason without a message: %s", why);

    EXPECT(nccl_init_timeout(NULL) == 30.0 && nccl_init_timeout("") == 30.0, "SAPO_NCCL_TIMEOUT default not 30 s");
    EXPECT(nccl_init_timeout("5") == 5.0 && nccl_init_timeout("0.5") == 0.5, "SAPO_NCCL_TIMEOUT=5 / 0.5 misread");
    EXPECT(nccl_init_timeout("0") < 0 && nccl_init_timeout("-3") < 0 && nccl_init_timeout("10s") < 0 &&
               nccl_init_timeout("nan") < 0,
           "a bad SAPO_NCCL_TIMEOUT accepted");
}

int main(void) {
    distinct_cases();
    poll_cases();
    return test_finish("test_node_gpu");
}
