/* The checks both backends run before generation touches a cache (src/model/block_loop.h):
 * decode_check accepts a valid step and names the first bad row for each way a row can fall
 * outside the model's capacity, and a cache row used twice in one step; prefill_check rejects too many prompts and a prompt that
 * claims a prefix. */
#include "model/block_loop.h"
#include "model/model.h"
#include "../test_assert.h"

enum { N = 3 };

typedef struct {
    int rows[N], prefix[N], prefix_len[N], tokens[N], pos[N];
} Step;

static DecodeStep view(const Step* s, int n) {
    return (DecodeStep){.n = n, .rows = s->rows, .prefix = s->prefix, .prefix_len = s->prefix_len,
                        .tokens = s->tokens, .pos = s->pos};
}

/* Three valid rows: two continue prompt slot 1 (5 positions), one has no prompt. */
static Step valid(void) {
    return (Step){.rows = {0, 1, 3}, .prefix = {1, 1, -1}, .prefix_len = {5, 5, 0}, .tokens = {7, 258, 0},
                  .pos = {5, 12, 3}};
}

/* Expects the step with one field of row `row` changed to fail, naming that row. */
static void expect_bad(const ModelShape* c, const ModelCapacity* cap, Step s, int row, const char* what) {
    char err[256] = "";
    DecodeStep d = view(&s, N);
    int rc = decode_check(c, cap, &d, err, sizeof err);
    EXPECT(rc == -1, "%s: accepted", what);
    char want[32];
    snprintf(want, sizeof want, "decode row %d:", row);
    EXPECT_MSG(err, want);
}

int main(void) {
    ModelShape c = {.n_layer = 1, .n_head = 2, .d_model = 8, .n_ctx = 16, .vocab = GPT_VOCAB};
    ModelCapacity cap = {.max_prefixes = 2, .max_rows = 4, .row_ctx = 8};
    char err[256] = "";

    Step s = valid();
    DecodeStep d = view(&s, N);
    EXPECT(decode_check(&c, &cap, &d, err, sizeof err) == 0, "a valid step was refused: %s", err);

    d = view(&s, 0);
    EXPECT(decode_check(&c, &cap, &d, err, sizeof err) == -1, "a step of 0 rows was accepted");
    EXPECT_MSG(err, "decode of 0 rows: expected 1..4");
    Step five = valid();
    d = view(&five, 5); /* only the count is read before it fails */
    EXPECT(decode_check(&c, &cap, &d, err, sizeof err) == -1, "5 rows > max_rows 4 accepted");

    s = valid(), s.rows[1] = 4, expect_bad(&c, &cap, s, 1, "cache row = max_rows");
    s = valid(), s.rows[0] = -1, expect_bad(&c, &cap, s, 0, "negative cache row");
    s = valid(), s.prefix[1] = 2, expect_bad(&c, &cap, s, 1, "prompt slot = max_prefixes");
    s = valid(), s.prefix[0] = -1, expect_bad(&c, &cap, s, 0, "a prompt length without a slot");
    s = valid(), s.prefix_len[2] = -1, expect_bad(&c, &cap, s, 2, "negative prompt length");
    s = valid(), s.pos[0] = 4, expect_bad(&c, &cap, s, 0, "position before the prompt's end");
    s = valid(), s.pos[2] = 8, expect_bad(&c, &cap, s, 2, "own position = row_ctx");
    s = valid(), s.prefix_len[1] = 10, s.pos[1] = 16, expect_bad(&c, &cap, s, 1, "position = n_ctx");
    s = valid(), s.tokens[2] = GPT_VOCAB, expect_bad(&c, &cap, s, 2, "token = vocab");
    s = valid(), s.tokens[0] = -1, expect_bad(&c, &cap, s, 0, "negative token");

    /* two rows of one step in one cache row: they would race on a GPU */
    s = valid(), s.rows[2] = 0, expect_bad(&c, &cap, s, 2, "cache row 0 twice");
    d = view(&s, N);
    EXPECT(decode_check(&c, &cap, &d, err, sizeof err) == -1, "cache row 0 twice accepted");
    EXPECT_MSG(err, "decode row 2: cache row 0 is also row 0's");
    s = valid(), s.rows[2] = 1, expect_bad(&c, &cap, s, 2, "cache row 1 twice");
    /* distinct rows anywhere below max_rows pass */
    s = valid(), s.rows[0] = 3, s.rows[2] = 0;
    d = view(&s, N);
    EXPECT(decode_check(&c, &cap, &d, err, sizeof err) == 0, "distinct rows 3, 1, 0 refused: %s", err);

    /* a row without a prompt ignores its slot */
    s = valid(), s.prefix[2] = 99;
    d = view(&s, N);
    EXPECT(decode_check(&c, &cap, &d, err, sizeof err) == 0, "row without a prompt: its slot was read: %s", err);

    Segment segs[3] = {{0, 4, -1}, {4, 3, -1}, {7, 2, -1}};
    PackedBatch pb = {.n_tokens = 7, .n_segments = 2, .segs = segs};
    EXPECT(prefill_check(&cap, &pb, err, sizeof err) == 0, "a valid prefill was refused: %s", err);
    pb.n_segments = 3, pb.n_tokens = 9;
    EXPECT(prefill_check(&cap, &pb, err, sizeof err) == -1, "3 prompts > max_prefixes 2 accepted");
    EXPECT_MSG(err, "prefill of 3 prompts exceeds the model's 2 prompt caches");
    pb.n_segments = 2, pb.n_tokens = 7, segs[1].prefix = 0;
    EXPECT(prefill_check(&cap, &pb, err, sizeof err) == -1, "a prompt with a prefix accepted");
    EXPECT_MSG(err, "prefill: segment 1 has a prefix");
    return test_finish("test_decode_check");
}
