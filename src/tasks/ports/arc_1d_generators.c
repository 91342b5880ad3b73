/* arc_1d sub-generators (see arc_1d_generators.h). Every random draw happens in the same
 * order and with the same bounds as in the package. Python list semantics are kept where
 * they could matter: a negative index counts from the end, an index past the end or an
 * empty randint range is an error (the package would raise). */
#include "tasks/ports/arc_1d_generators.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"

enum {
    K_MOVE_N_PIX, K_MOVE_N_PIX_WRAPPED, K_GRAVITY, K_GRAVITY_COUNTING, K_GRAVITY_ANTIGRAVITY,
    K_BLOCK_TOUCH_DOT, K_BLOCK_TOUCH_DOT_N_PIX, K_BLOCK_SCALE_TO_DOT, K_TWO_POINTS_AND_FILL,
    K_REFLECT_BLOCK_WITH_BORDER_PIXEL, K_REFLECT_BLOCK_RANDOM, K_REFLECT_BLOCK_AROUND_DOT,
    K_BLOCK_AND_NOISE_REMOVE, K_BLOCK_AND_NOISE_REMOVE_INSIDE, K_COPY_BLOCK_TO_DOTS,
    K_COPY_BLOCK_TO_DOTS_COLORS, K_PAINT_BIGGEST_BLOCK, K_SORT_BLOCKS_BY_SIZE, K_SORT_COMPLETE_SEQUENCE,
    K_RECOLOR_BLOCKS_BY_SIZE, K_GRAVITY_ONE_STEP, K_MOVE_BLOCK_BY_OWN_SIZE, K_CHANGE_TO_FIVE,
    K_RECOLOR_BLOCKS_FROM_PALETTE, K_DUPLICATE_BLOCK_FROM_SEEDS, K_FILL_FROM_PIXEL, K_MARK_SIZE_TWO_BLOCKS,
    K_FILL_UNTIL_COLLISION, K_REPEAT_PATTERN_FULL, K_GRAVITY_WEIGHTED_COLORS, K_COLOR_LEFT_HALF_BLOCKS,
};

#define MV(n, s, w) K_MOVE_N_PIX, n, s, w
#define MW(n, s, w) K_MOVE_N_PIX_WRAPPED, n, s, w
const Arc1dTask ARC_1D_TASKS[] = {
    {"move_1pix_solid_right", MV(1, 1, ARC_WRAP_NONE)},
    {"move_2pix_solid_right", MV(2, 1, ARC_WRAP_NONE)},
    {"move_3pix_solid_right", MV(3, 1, ARC_WRAP_NONE)},
    {"move_4pix_solid_right", MV(4, 1, ARC_WRAP_NONE)},
    {"move_1pix_colorful_right", MV(1, 0, ARC_WRAP_NONE)},
    {"move_2pix_colorful_right", MV(2, 0, ARC_WRAP_NONE)},
    {"move_3pix_colorful_right", MV(3, 0, ARC_WRAP_NONE)},
    {"move_4pix_colorful_right", MV(4, 0, ARC_WRAP_NONE)},
    {"move_1pix_solid_left", MV(1, 1, ARC_WRAP_MIRROR)},
    {"move_2pix_solid_left", MV(2, 1, ARC_WRAP_MIRROR)},
    {"move_3pix_solid_left", MV(3, 1, ARC_WRAP_MIRROR)},
    {"move_4pix_solid_left", MV(4, 1, ARC_WRAP_MIRROR)},
    {"move_1pix_colorful_left", MV(1, 0, ARC_WRAP_MIRROR)},
    {"move_2pix_colorful_left", MV(2, 0, ARC_WRAP_MIRROR)},
    {"move_3pix_colorful_left", MV(3, 0, ARC_WRAP_MIRROR)},
    {"move_4pix_colorful_left", MV(4, 0, ARC_WRAP_MIRROR)},
    {"move_1pix_solid_wrapped_right", MW(1, 1, ARC_WRAP_NONE)},
    {"move_2pix_solid_wrapped_right", MW(2, 1, ARC_WRAP_NONE)},
    {"move_3pix_solid_wrapped_right", MW(3, 1, ARC_WRAP_NONE)},
    {"move_4pix_solid_wrapped_right", MW(4, 1, ARC_WRAP_NONE)},
    {"move_1pix_colorful_wrapped_right", MW(1, 0, ARC_WRAP_NONE)},
    {"move_2pix_colorful_wrapped_right", MW(2, 0, ARC_WRAP_NONE)},
    {"move_3pix_colorful_wrapped_right", MW(3, 0, ARC_WRAP_NONE)},
    {"move_4pix_colorful_wrapped_right", MW(4, 0, ARC_WRAP_NONE)},
    {"move_1pix_solid_wrapped_left", MW(1, 1, ARC_WRAP_MIRROR)},
    {"move_2pix_solid_wrapped_left", MW(2, 1, ARC_WRAP_MIRROR)},
    {"move_3pix_solid_wrapped_left", MW(3, 1, ARC_WRAP_MIRROR)},
    {"move_4pix_solid_wrapped_left", MW(4, 1, ARC_WRAP_MIRROR)},
    {"move_1pix_colorful_wrapped_left", MW(1, 0, ARC_WRAP_MIRROR)},
    {"move_2pix_colorful_wrapped_left", MW(2, 0, ARC_WRAP_MIRROR)},
    {"move_3pix_colorful_wrapped_left", MW(3, 0, ARC_WRAP_MIRROR)},
    {"move_4pix_colorful_wrapped_left", MW(4, 0, ARC_WRAP_MIRROR)},
    {"gravity_right", K_GRAVITY, 0, 0, ARC_WRAP_NONE},
    {"gravity_counting_right", K_GRAVITY_COUNTING, 0, 0, ARC_WRAP_NONE},
    {"gravity_antigravity_right", K_GRAVITY_ANTIGRAVITY, 0, 0, ARC_WRAP_NONE},
    {"gravity_one_step_right", K_GRAVITY_ONE_STEP, 0, 0, ARC_WRAP_NONE},
    {"gravity_weighted_colors_right", K_GRAVITY_WEIGHTED_COLORS, 0, 0, ARC_WRAP_NONE},
    {"gravity_left", K_GRAVITY, 0, 0, ARC_WRAP_MIRROR},
    {"gravity_counting_left", K_GRAVITY_COUNTING, 0, 0, ARC_WRAP_MIRROR},
    {"gravity_antigravity_left", K_GRAVITY_ANTIGRAVITY, 0, 0, ARC_WRAP_MIRROR},
    {"gravity_one_step_left", K_GRAVITY_ONE_STEP, 0, 0, ARC_WRAP_MIRROR},
    {"gravity_weighted_colors_left", K_GRAVITY_WEIGHTED_COLORS, 0, 0, ARC_WRAP_MIRROR},
    {"block_touch_dot", K_BLOCK_TOUCH_DOT, 0, 0, ARC_WRAP_NONE},
    {"block_touch_dot_1pix", K_BLOCK_TOUCH_DOT_N_PIX, 1, 0, ARC_WRAP_NONE},
    {"block_touch_dot_2pix", K_BLOCK_TOUCH_DOT_N_PIX, 2, 0, ARC_WRAP_NONE},
    {"block_touch_dot_3pix", K_BLOCK_TOUCH_DOT_N_PIX, 3, 0, ARC_WRAP_NONE},
    {"block_touch_dot_4pix", K_BLOCK_TOUCH_DOT_N_PIX, 4, 0, ARC_WRAP_NONE},
    {"block_scale_to_dot", K_BLOCK_SCALE_TO_DOT, 0, 0, ARC_WRAP_NONE},
    {"block_and_noise_remove", K_BLOCK_AND_NOISE_REMOVE, 0, 0, ARC_WRAP_NONE},
    {"block_and_noise_remove_inside", K_BLOCK_AND_NOISE_REMOVE_INSIDE, 0, 0, ARC_WRAP_NONE},
    {"move_block_by_own_size", K_MOVE_BLOCK_BY_OWN_SIZE, 0, 0, ARC_WRAP_NONE},
    {"two_points_and_fill", K_TWO_POINTS_AND_FILL, 0, 0, ARC_WRAP_NONE},
    {"two_points_and_fill_inv", K_TWO_POINTS_AND_FILL, 0, 0, ARC_WRAP_INVERSE},
    {"copy_block_to_dots", K_COPY_BLOCK_TO_DOTS, 0, 0, ARC_WRAP_NONE},
    {"copy_block_to_dots_colors", K_COPY_BLOCK_TO_DOTS_COLORS, 0, 0, ARC_WRAP_NONE},
    {"repeat_pattern_full", K_REPEAT_PATTERN_FULL, 0, 0, ARC_WRAP_NONE},
    {"reflect_block_with_border_pixel", K_REFLECT_BLOCK_WITH_BORDER_PIXEL, 0, 0, ARC_WRAP_NONE},
    {"reflect_block_random", K_REFLECT_BLOCK_RANDOM, 0, 0, ARC_WRAP_NONE},
    {"reflect_block_around_dot", K_REFLECT_BLOCK_AROUND_DOT, 0, 0, ARC_WRAP_NONE},
    {"paint_biggest_block", K_PAINT_BIGGEST_BLOCK, 0, 0, ARC_WRAP_NONE},
    {"recolor_blocks_by_size", K_RECOLOR_BLOCKS_BY_SIZE, 0, 0, ARC_WRAP_NONE},
    {"change_to_five", K_CHANGE_TO_FIVE, 0, 0, ARC_WRAP_NONE},
    {"recolor_blocks_from_palette", K_RECOLOR_BLOCKS_FROM_PALETTE, 0, 0, ARC_WRAP_NONE},
    {"color_left_half_blocks", K_COLOR_LEFT_HALF_BLOCKS, 0, 0, ARC_WRAP_NONE},
    {"sort_blocks_by_size", K_SORT_BLOCKS_BY_SIZE, 0, 0, ARC_WRAP_NONE},
    {"sort_complete_sequence", K_SORT_COMPLETE_SEQUENCE, 0, 0, ARC_WRAP_NONE},
    {"duplicate_block_from_seeds", K_DUPLICATE_BLOCK_FROM_SEEDS, 0, 0, ARC_WRAP_NONE},
    {"fill_from_pixel", K_FILL_FROM_PIXEL, 0, 0, ARC_WRAP_NONE},
    {"fill_until_collision", K_FILL_UNTIL_COLLISION, 0, 0, ARC_WRAP_NONE},
    {"mark_size_two_blocks", K_MARK_SIZE_TWO_BLOCKS, 0, 0, ARC_WRAP_NONE},
};
const int ARC_1D_TASK_COUNT = (int)(sizeof ARC_1D_TASKS / sizeof ARC_1D_TASKS[0]);

/* One generator call: the RNG, the grid size, the two grids being built, scratch space
 * (integers, at least 2*size + 16) and the first Python error met, if any. */
typedef struct {
    PyRandom* rng;
    int size;
    int* q;
    int* a;
    int* tmp;
    int* tmp2;
    const char* error;
} Gen;

static int ri(Gen* g, long lo, long hi) {
    if (lo > hi) {
        if (!g->error) g->error = "randint with an empty range (the package raises ValueError)";
        return (int)lo;
    }
    return (int)pyrandom_randint(g->rng, lo, hi);
}

static double rr(Gen* g) { return pyrandom_random(g->rng); }

static size_t pick(Gen* g, size_t n) { return pyrandom_choice_index(g->rng, n); }

/* arr[idx] = v with Python list indexing. */
static void put(Gen* g, int* arr, long idx, int v) {
    if (idx < 0) idx += g->size;
    if (idx < 0 || idx >= g->size) {
        if (!g->error) g->error = "list index out of range (the package raises IndexError)";
        return;
    }
    arr[idx] = v;
}

static void fill(Gen* g, int* arr, long pos, long len, int v) {
    for (long i = 0; i < len; i++) put(g, arr, pos + i, v);
}

static void zero(Gen* g, int* arr) { memset(arr, 0, (size_t)g->size * sizeof *arr); }

static void copy_q_to_a(Gen* g) { memcpy(g->a, g->q, (size_t)g->size * sizeof *g->q); }

/* ---- move ------------------------------------------------------------------------------- */

static int gen_move_n_pix(Gen* g, int move_pix, int solid) {
    int size = g->size;
    if (size <= move_pix + 1) return 0;
    int bs = ri(g, 1, size - move_pix - 1);
    int bp = ri(g, 0, size - bs - move_pix);
    int* block = g->tmp;
    if (solid) {
        int color = ri(g, 1, 9);
        for (int i = 0; i < bs; i++) block[i] = color;
    } else {
        for (int i = 0; i < bs; i++) block[i] = ri(g, 1, 9);
    }
    zero(g, g->q);
    zero(g, g->a);
    for (int i = 0; i < bs; i++) {
        put(g, g->q, bp + i, block[i]);
        put(g, g->a, bp + move_pix + i, block[i]);
    }
    return 1;
}

static int gen_move_n_pix_wrapped(Gen* g, int move_pix, int solid) {
    int size = g->size;
    int bs = ri(g, 1, size);
    int bp = ri(g, 0, size - 1);
    int* block = g->tmp;
    if (solid) {
        int color = ri(g, 1, 9);
        for (int i = 0; i < bs; i++) block[i] = color;
    } else {
        for (int i = 0; i < bs; i++) block[i] = ri(g, 1, 9);
    }
    zero(g, g->q);
    zero(g, g->a);
    for (int i = 0; i < bs; i++) {
        g->q[(bp + i) % size] = block[i];
        g->a[(bp + move_pix + i) % size] = block[i];
    }
    return 1;
}

static int gen_move_block_by_own_size(Gen* g) {
    int size = g->size;
    int bs = ri(g, 1, size / 2);
    int pos = ri(g, 0, size - bs * 2);
    int color = ri(g, 1, 9);
    zero(g, g->q);
    zero(g, g->a);
    fill(g, g->q, pos, bs, color);
    fill(g, g->a, pos + bs, bs, color);
    return 1;
}

/* ---- gravity ---------------------------------------------------------------------------- */

/* [randint(lo, hi) if random() < 0.5 else 0 for each cell] */
static void random_cells(Gen* g, int lo, int hi) {
    for (int i = 0; i < g->size; i++) g->q[i] = rr(g) < 0.5 ? ri(g, lo, hi) : 0;
}

static int gen_gravity(Gen* g) {
    random_cells(g, 1, 9);
    int k = 0;
    for (int i = 0; i < g->size; i++) {
        if (g->q[i]) g->a[k++] = g->q[i];
    }
    while (k < g->size) g->a[k++] = 0;
    return 1;
}

static int gen_gravity_counting(Gen* g) {
    random_cells(g, 1, 9);
    int count = 0;
    for (int i = 0; i < g->size; i++) count += g->q[i] != 0;
    for (int i = 0; i < g->size; i++) g->a[i] = i < count;
    return 1;
}

static int gen_gravity_antigravity(Gen* g) {
    random_cells(g, 1, 2);
    int c1 = 0, c2 = 0;
    for (int i = 0; i < g->size; i++) {
        c1 += g->q[i] == 1;
        c2 += g->q[i] == 2;
    }
    for (int i = 0; i < g->size; i++) g->a[i] = i < c2 ? 2 : (i >= g->size - c1 ? 1 : 0);
    return 1;
}

static int gen_gravity_one_step(Gen* g) {
    random_cells(g, 1, 9);
    copy_q_to_a(g);
    /* In place, left to right: a pixel that just moved leaves a gap its right neighbour
     * falls into, exactly as the package's loop does. */
    for (int i = 1; i < g->size; i++) {
        if (g->a[i] != 0 && g->a[i - 1] == 0) {
            g->a[i - 1] = g->a[i];
            g->a[i] = 0;
        }
    }
    return 1;
}

static int gen_gravity_weighted_colors(Gen* g) {
    random_cells(g, 1, 2);
    int c1 = 0, c2 = 0;
    for (int i = 0; i < g->size; i++) {
        c1 += g->q[i] == 1;
        c2 += g->q[i] == 2;
    }
    for (int i = 0; i < g->size; i++) g->a[i] = i < c2 ? 2 : (i < c2 + c1 ? 1 : 0);
    return 1;
}

static int gen_change_to_five(Gen* g) {
    random_cells(g, 1, 9);
    for (int i = 0; i < g->size; i++) g->a[i] = g->q[i] ? 5 : 0;
    return 1;
}

/* ---- a block and a dot ------------------------------------------------------------------ */

/* Shared start of the three block-and-dot generators: block colour, block size, dot
 * position and the side the block goes on. Returns 0 when it fits on neither side. */
static int block_and_dot(Gen* g, int color_lo, int* block_color, int* bs, int* dot, int* left) {
    int size = g->size;
    *block_color = ri(g, color_lo, 9);
    *bs = ri(g, 1, size - 1);
    *dot = ri(g, 0, size - 1);
    int can_left = *dot >= *bs, can_right = *dot + *bs < size;
    if (!can_left && !can_right) return 0;
    if (can_left && can_right) *left = pick(g, 2) == 0; /* choice(("left", "right")) */
    else *left = can_left;
    return 1;
}

static int gen_block_touch_dot(Gen* g) {
    int color, bs, dot, left;
    if (!block_and_dot(g, 2, &color, &bs, &dot, &left)) return 0;
    int qp, ap;
    if (left) {
        qp = ri(g, 0, dot - bs);
        ap = dot - bs;
    } else {
        qp = ri(g, dot + 1, g->size - bs);
        ap = dot + 1;
    }
    zero(g, g->q);
    put(g, g->q, dot, 1);
    fill(g, g->q, qp, bs, color);
    zero(g, g->a);
    put(g, g->a, dot, 1);
    fill(g, g->a, ap, bs, color);
    return 1;
}

static int gen_block_touch_dot_n_pix(Gen* g, int move_pix) {
    int color, bs, dot, left;
    if (!block_and_dot(g, 3, &color, &bs, &dot, &left)) return 0;
    int qp, ap;
    if (left) {
        qp = ri(g, 0, dot - bs);
        int distance = (dot - bs) - qp;
        ap = qp + (distance < move_pix ? distance : move_pix);
    } else {
        qp = ri(g, dot + 1, g->size - bs);
        int distance = qp - (dot + 1);
        ap = qp - (distance < move_pix ? distance : move_pix);
    }
    zero(g, g->q);
    put(g, g->q, dot, 2);
    fill(g, g->q, qp, bs, color);
    zero(g, g->a);
    put(g, g->a, dot, 2);
    fill(g, g->a, ap, bs, color);
    return 1;
}

static int gen_block_scale_to_dot(Gen* g) {
    int color, bs, dot, left;
    if (!block_and_dot(g, 3, &color, &bs, &dot, &left)) return 0;
    int qp, ap, new_size;
    if (left) {
        qp = ri(g, 0, dot - bs);
        new_size = dot - qp + 1;
        ap = qp;
    } else {
        qp = ri(g, dot + 1, g->size - bs);
        new_size = (qp + bs) - dot;
        ap = dot;
    }
    zero(g, g->q);
    put(g, g->q, dot, 2);
    fill(g, g->q, qp, bs, color);
    zero(g, g->a);
    put(g, g->a, dot, 2);
    fill(g, g->a, ap, new_size, color); /* covers the dot */
    return 1;
}

static int gen_reflect_block_around_dot(Gen* g) {
    int size = g->size;
    int dot = ri(g, 0, size - 1);
    int bs = ri(g, 1, size - 1);
    int bp = ri(g, 0, size - bs);
    int be = bp + bs - 1;
    if (!(be < dot || bp > dot)) return 0;
    int color = ri(g, 3, 9);
    if (2 * dot - be < 0 || 2 * dot - bp >= size) return 0;
    zero(g, g->q);
    fill(g, g->q, bp, bs, color);
    put(g, g->q, dot, 2);
    zero(g, g->a);
    put(g, g->a, dot, 2);
    for (int i = 0; i < bs; i++) put(g, g->a, 2 * dot - (bp + i), color);
    return 1;
}

/* ---- two points, reflections ---------------------------------------------------------- */

static int gen_two_points_and_fill(Gen* g) {
    int color = ri(g, 1, 9);
    int p1 = ri(g, 0, g->size - 1);
    int p2 = ri(g, 0, g->size - 1);
    if (p1 == p2) return 0;
    if (p1 > p2) {
        int t = p1;
        p1 = p2;
        p2 = t;
    }
    zero(g, g->q);
    put(g, g->q, p1, color);
    put(g, g->q, p2, color);
    copy_q_to_a(g);
    for (int i = p1; i <= p2; i++) put(g, g->a, i, color);
    return 1;
}

/* The colours 1..8 other than c (the package's range(1, 9) leaves 9 out). */
static int other_colors(int c, int* out) {
    int n = 0;
    for (int k = 1; k < 9; k++) {
        if (k != c) out[n++] = k;
    }
    return n;
}

static void write_block_and_reverse(Gen* g, int pos, const int* block, int bs) {
    zero(g, g->q);
    zero(g, g->a);
    for (int i = 0; i < bs; i++) {
        put(g, g->q, pos + i, block[i]);
        put(g, g->a, pos + i, block[bs - 1 - i]);
    }
}

static int gen_reflect_block_with_border_pixel(Gen* g) {
    int bs = ri(g, 2, g->size);
    int c1 = ri(g, 1, 9);
    int others[8];
    int n = other_colors(c1, others);
    int c2 = others[pick(g, (size_t)n)];
    int left = rr(g) < 0.5;
    int pos = ri(g, 0, g->size - bs);
    int* block = g->tmp;
    for (int i = 0; i < bs; i++) block[i] = c1;
    block[left ? 0 : bs - 1] = c2;
    write_block_and_reverse(g, pos, block, bs);
    return 1;
}

static int gen_reflect_block_random(Gen* g) {
    int bs = ri(g, 2, g->size);
    int left = rr(g) < 0.5;
    int pos = ri(g, 0, g->size - bs);
    int border = ri(g, 1, 9);
    int others[8];
    int n = other_colors(border, others);
    int* block = g->tmp;
    for (int i = 0; i < bs; i++) block[i] = others[pick(g, (size_t)n)];
    block[left ? 0 : bs - 1] = border;
    write_block_and_reverse(g, pos, block, bs);
    return 1;
}

/* ---- noise ------------------------------------------------------------------------------ */

static int gen_block_and_noise_remove(Gen* g) {
    int size = g->size;
    int bs = ri(g, 2, size);
    int bp = ri(g, 0, size - bs);
    int color = ri(g, 1, 9);
    zero(g, g->q);
    fill(g, g->q, bp, bs, color);
    int* forbidden = g->tmp;
    int* allowed = g->tmp2;
    memset(forbidden, 0, (size_t)size * sizeof *forbidden);
    for (int i = bp; i < bp + bs; i++) forbidden[i] = 1;
    if (bp > 0) forbidden[bp - 1] = 1;
    if (bp + bs < size) forbidden[bp + bs] = 1;
    int noise_count = ri(g, 1, 3);
    int noise[3], n_noise = 0;
    for (int k = 0; k < noise_count; k++) {
        int n_allowed = 0;
        for (int i = 0; i < size; i++) {
            if (!forbidden[i]) allowed[n_allowed++] = i;
        }
        if (!n_allowed) break;
        int np = allowed[pick(g, (size_t)n_allowed)];
        noise[n_noise++] = np;
        g->q[np] = color;
        forbidden[np] = 1;
        if (np > 0) forbidden[np - 1] = 1;
        if (np + 1 < size) forbidden[np + 1] = 1;
    }
    if (n_noise < noise_count) return 0;
    copy_q_to_a(g);
    for (int k = 0; k < n_noise; k++) g->a[noise[k]] = 0;
    return 1;
}

static int gen_block_and_noise_remove_inside(Gen* g) {
    int size = g->size;
    if (size <= 6) return 0;
    int bs = ri(g, 6, size);
    int bp = ri(g, 0, size - bs);
    int color = ri(g, 1, 9);
    zero(g, g->q);
    fill(g, g->q, bp, bs, color);
    int max_noise = bs / 2 - 1 > 1 ? bs / 2 - 1 : 1;
    int noise_count = ri(g, 1, max_noise);
    int* positions = g->tmp;
    for (int i = 0; i < bs; i++) positions[i] = i;
    pyrandom_shuffle(g->rng, positions, (size_t)bs, sizeof *positions);
    for (int k = 0; k < noise_count; k++) {
        int noise_color = ri(g, 1, 9);
        while (noise_color == color) noise_color = ri(g, 1, 9);
        put(g, g->q, bp + positions[k], noise_color);
    }
    copy_q_to_a(g);
    for (int k = 0; k < noise_count; k++) put(g, g->a, bp + positions[k], color);
    return 1;
}

/* ---- copying blocks to dots, patterns --------------------------------------------------- */

static int gen_copy_block_to_dots(Gen* g, int colored) {
    int size = g->size;
    int bs = rr(g) < 0.5 ? 3 : 5;
    if (bs >= size) return 0;
    int block_color = ri(g, 1, 9);
    int* dots = g->tmp;
    int* dot_colors = g->tmp2;
    int n = 0;
    int pos = bs + bs / 2 + 1;
    while (pos <= size - bs) {
        if (rr(g) < 0.5) {
            dot_colors[n] = colored ? ri(g, 1, 9) : block_color;
            dots[n++] = pos;
            pos += bs;
        }
        pos += 1;
    }
    if (!n) return 0;
    zero(g, g->q);
    fill(g, g->q, 0, bs, block_color);
    for (int i = 0; i < n; i++) put(g, g->q, dots[i], dot_colors[i]);
    zero(g, g->a);
    fill(g, g->a, 0, bs, block_color);
    for (int i = 0; i < n; i++) fill(g, g->a, dots[i] - bs / 2, bs, dot_colors[i]);
    return 1;
}

static int gen_repeat_pattern_full(Gen* g) {
    int size = g->size;
    int ps = ri(g, 2, 5);
    int pattern[5];
    for (int i = 0; i < ps; i++) pattern[i] = ri(g, 1, 9);
    if (ps * 2 >= size) return 0;
    zero(g, g->q);
    for (int i = 0; i < ps; i++) {
        g->q[i] = pattern[i];
        g->q[i + ps] = pattern[i];
    }
    zero(g, g->a);
    int pos = 0;
    while (pos + ps <= size) {
        for (int i = 0; i < ps; i++) g->a[pos + i] = pattern[i];
        pos += ps;
    }
    for (int i = pos; i < size; i++) g->a[i] = pattern[i - pos];
    return 1;
}

/* ---- blocks by size -------------------------------------------------------------------- */

static int gen_paint_biggest_block(Gen* g) {
    int size = g->size;
    int initial = ri(g, 2, 9);
    zero(g, g->q);
    int* bpos = g->tmp;
    int* bsz = g->tmp2;
    int n = 0, pos = 0;
    while (pos < size) {
        if (rr(g) < 0.4 && size - pos >= 2) {
            int s = ri(g, 2, size - pos < 6 ? size - pos : 6);
            bpos[n] = pos;
            bsz[n++] = s;
            fill(g, g->q, pos, s, initial);
            pos += s + 1;
        } else {
            pos += 1;
        }
    }
    if (n < 2) return 0;
    int best = 0; /* max() keeps the first of equal sizes */
    for (int i = 1; i < n; i++) {
        if (bsz[i] > bsz[best]) best = i;
    }
    int count = 0;
    for (int i = 0; i < n; i++) count += bsz[i] == bsz[best];
    if (count > 1) return 0;
    copy_q_to_a(g);
    fill(g, g->a, bpos[best], bsz[best], 1);
    return 1;
}

static int gen_sort_blocks_by_size(Gen* g) {
    int size = g->size;
    int color = ri(g, 1, 9);
    int* bpos = g->tmp;
    int* bsz = g->tmp2;
    int n = 0, pos = 0;
    while (pos < size) {
        if (rr(g) < 0.4 && size - pos >= 2) {
            int s = ri(g, 1, size - pos < 6 ? size - pos : 6);
            bpos[n] = pos;
            bsz[n++] = s;
            pos += s + ri(g, 1, 4);
        } else {
            pos += 1;
        }
    }
    if (n < 2) return 0;
    zero(g, g->q);
    for (int i = 0; i < n; i++) fill(g, g->q, bpos[i], bsz[i], color);
    /* list.sort(key=size) is stable; only the sizes are used afterwards. */
    for (int i = 1; i < n; i++) {
        int s = bsz[i], j = i;
        while (j > 0 && bsz[j - 1] > s) {
            bsz[j] = bsz[j - 1];
            j--;
        }
        bsz[j] = s;
    }
    int total = n - 1;
    for (int i = 0; i < n; i++) total += bsz[i];
    if (total > size) return 0;
    zero(g, g->a);
    int cur = 0;
    for (int i = 0; i < n; i++) {
        fill(g, g->a, cur, bsz[i], color);
        cur += bsz[i] + 1;
    }
    return 1;
}

static int gen_sort_complete_sequence(Gen* g) {
    int size = g->size;
    int max_size = 1, total = 0;
    while (total + max_size + 1 <= size) {
        total += max_size + 1;
        max_size += 1;
    }
    max_size -= 1;
    if (max_size < 2) return 0;
    int color = ri(g, 1, 9);
    int* blocks = g->tmp;
    for (int i = 0; i < max_size; i++) blocks[i] = i + 1;
    pyrandom_shuffle(g->rng, blocks, (size_t)max_size, sizeof *blocks);
    zero(g, g->q);
    int pos = 0;
    for (int i = 0; i < max_size; i++) {
        fill(g, g->q, pos, blocks[i], color);
        pos += blocks[i] + 1;
    }
    zero(g, g->a);
    pos = 0;
    for (int s = 1; s <= max_size; s++) {
        fill(g, g->a, pos, s, color);
        pos += s + 1;
    }
    return 1;
}

static int gen_recolor_blocks_by_size(Gen* g) {
    int size = g->size;
    int s1 = ri(g, 2, 8);
    int s2 = ri(g, 2, 8);
    while (s2 == s1) s2 = ri(g, 2, 8);
    if (s1 + s2 + 1 > size) return 0;
    int p1 = ri(g, 0, size - (s1 + s2 + 1));
    int p2 = ri(g, p1 + s1 + 1, size - s2);
    zero(g, g->q);
    fill(g, g->q, p1, s1, 3);
    fill(g, g->q, p2, s2, 3);
    copy_q_to_a(g);
    fill(g, g->a, p1, s1, s1 > s2 ? 1 : 2);
    fill(g, g->a, p2, s2, s1 > s2 ? 2 : 1);
    return 1;
}

static int gen_recolor_blocks_from_palette(Gen* g) {
    int size = g->size;
    int bs = ri(g, 2, 4);
    int* blocks = g->tmp;
    int n = 0, pos = 0;
    while (pos + bs <= size) {
        if (rr(g) < 0.4) {
            blocks[n++] = pos;
            pos += bs + 1;
        } else {
            pos += 1;
        }
    }
    while (n && blocks[n - 1] + bs + n + 1 >= size) n--;
    if (!n) return 0;
    /* The package draws a new colour for each block until it is unused: with more than
     * nine blocks (grids longer than about 40) it never returns. */
    if (n > 9) {
        g->error = "recolor_blocks_from_palette needs more than 9 distinct colours (the package loops forever)";
        return 0;
    }
    for (int i = 0; i < n; i++) blocks[i] += n + 1;
    int colors[9];
    for (int i = 0; i < n; i++) {
        for (;;) {
            int c = ri(g, 1, 9), used = 0;
            for (int k = 0; k < i; k++) used |= colors[k] == c;
            if (!used) {
                colors[i] = c;
                break;
            }
        }
    }
    zero(g, g->q);
    for (int i = 0; i < n; i++) put(g, g->q, i, colors[i]);
    for (int i = 0; i < n; i++) fill(g, g->q, blocks[i], bs, 5);
    copy_q_to_a(g);
    for (int i = 0; i < n; i++) fill(g, g->a, blocks[i], bs, colors[i]);
    return 1;
}

static int gen_color_left_half_blocks(Gen* g) {
    int size = g->size;
    zero(g, g->q);
    int* bpos = g->tmp;
    int* bsz = g->tmp2;
    int n = 0, pos = 0;
    while (pos < size) {
        if (rr(g) < 0.4) {
            int s = ri(g, 2, size / 2);
            if (pos + s > size) break;
            bpos[n] = pos;
            bsz[n++] = s;
            fill(g, g->q, pos, s, 2);
            pos += s + 1;
        } else {
            pos += 1;
        }
    }
    if (n < 2) return 0;
    copy_q_to_a(g);
    for (int i = 0; i < n; i++) fill(g, g->a, bpos[i], bsz[i] / 2, 8);
    return 1;
}

/* ---- seeds and fills ------------------------------------------------------------------- */

static int gen_duplicate_block_from_seeds(Gen* g) {
    int size = g->size;
    int bs = ri(g, 2, 4);
    if (bs + 1 >= size) return 0;
    if (size <= 3 + bs) return 0;
    int bp = ri(g, 2, size - bs - 2);
    int left = 0, right = 0;
    while (!left && !right) {
        left = rr(g) < 0.5;
        right = rr(g) < 0.5;
    }
    zero(g, g->q);
    fill(g, g->q, bp, bs, 1);
    int left_color = 0, right_color = 0;
    if (left) {
        left_color = ri(g, 1, 9);
        put(g, g->q, bp - 2, left_color);
    }
    if (right) {
        right_color = ri(g, 1, 9);
        put(g, g->q, bp + bs + 1, right_color);
    }
    copy_q_to_a(g);
    if (left) { /* blocks ending at the seed, repeated leftwards with one-cell gaps */
        int end = bp - 2;
        while (end >= 0) {
            int start = end - bs + 1;
            for (int p = start > 0 ? start : 0; p <= end; p++) put(g, g->a, p, left_color);
            if (start < 1) break;
            end = start - 2;
        }
    }
    if (right) { /* blocks starting at the seed, repeated rightwards */
        int start = bp + bs + 1;
        while (start < size) {
            int len = bs < size - start ? bs : size - start;
            for (int off = 0; off < len; off++) put(g, g->a, start + off, right_color);
            if (start + bs + 1 >= size) break;
            start = start + bs + 1;
        }
    }
    return 1;
}

static int gen_fill_from_pixel(Gen* g) {
    int size = g->size;
    if (size < 8) return 0;
    int bs = ri(g, 3, size - 5);
    int bp = ri(g, 2, size - bs - 2);
    zero(g, g->q);
    int block_color = ri(g, 1, 9);
    fill(g, g->q, bp, bs, block_color);
    int seed_color = ri(g, 1, 8);
    if (seed_color >= block_color) seed_color += 1;
    int left = rr(g) < 0.5;
    put(g, g->q, left ? bp - 1 : bp + bs, seed_color);
    copy_q_to_a(g);
    if (left) {
        for (int i = 0; i < bp; i++) g->a[i] = seed_color;
    } else {
        for (int i = bp + bs; i < size; i++) g->a[i] = seed_color;
    }
    return 1;
}

static int gen_mark_size_two_blocks(Gen* g) {
    int size = g->size;
    if (size < 8) return 0;
    int* blocks = g->tmp; /* at most size/1 entries: each iteration advances pos */
    int n = 0;
    blocks[n++] = 2;
    int pos = 4;
    while (pos < size) {
        if (rr(g) < 0.4) {
            int s = ri(g, 1, 3);
            if (pos + s <= size) blocks[n++] = s;
            pos += s + 2;
        } else {
            blocks[n++] = 0;
            pos += 1;
        }
    }
    pyrandom_shuffle(g->rng, blocks, (size_t)n, sizeof *blocks);
    int* bpos = g->tmp2;
    int nb = 0;
    pos = 0;
    for (int i = 0; i < n; i++) {
        if (blocks[i] == 0) {
            pos += 1;
        } else {
            bpos[2 * nb] = pos;
            bpos[2 * nb + 1] = blocks[i];
            nb++;
            pos += blocks[i] + 2;
        }
    }
    zero(g, g->q);
    for (int i = 0; i < nb; i++) {
        int color = ri(g, 1, 8);
        if (color >= 3) color += 1;
        fill(g, g->q, bpos[2 * i], bpos[2 * i + 1], color);
    }
    copy_q_to_a(g);
    for (int i = 0; i < nb; i++) {
        int p = bpos[2 * i], s = bpos[2 * i + 1];
        if (s == 2) {
            if (p > 0) put(g, g->a, p - 1, 3);
            if (p + s < size) put(g, g->a, p + s, 3);
        }
    }
    return 1;
}

static int gen_fill_until_collision(Gen* g) {
    int size = g->size;
    if (size < 4) return 0;
    int left = rr(g) < 0.5;
    zero(g, g->q);
    put(g, g->q, left ? 0 : size - 1, 5);
    int num = ri(g, 2, 4);
    int positions[4];
    for (int k = 0; k < num; k++) {
        for (;;) {
            int p = left ? ri(g, 1, size - 1) : ri(g, 0, size - 2);
            int seen = 0;
            for (int j = 0; j < k; j++) seen |= positions[j] == p;
            if (!seen) {
                positions[k] = p;
                break;
            }
        }
    }
    for (int k = 0; k < num; k++) {
        int c = ri(g, 1, 8);
        if (c >= 5) c += 1;
        put(g, g->q, positions[k], c);
    }
    for (int i = 1; i < num; i++) {
        int v = positions[i], j = i;
        while (j > 0 && positions[j - 1] > v) {
            positions[j] = positions[j - 1];
            j--;
        }
        positions[j] = v;
    }
    copy_q_to_a(g);
    if (left) {
        int prev = 0;
        for (int k = 0; k < num; k++) {
            int color = g->q[positions[k]];
            for (int i = prev + 1; i < positions[k]; i++) g->a[i] = color;
            prev = positions[k];
        }
    } else {
        int prev = size - 1;
        for (int k = num - 1; k >= 0; k--) {
            int color = g->q[positions[k]];
            for (int i = positions[k] + 1; i < prev; i++) g->a[i] = color;
            prev = positions[k];
        }
    }
    return 1;
}

/* ---- dispatch --------------------------------------------------------------------------- */

static int run_kind(Gen* g, const Arc1dTask* t) {
    switch (t->kind) {
    case K_MOVE_N_PIX: return gen_move_n_pix(g, t->move_pix, t->solid);
    case K_MOVE_N_PIX_WRAPPED: return gen_move_n_pix_wrapped(g, t->move_pix, t->solid);
    case K_GRAVITY: return gen_gravity(g);
    case K_GRAVITY_COUNTING: return gen_gravity_counting(g);
    case K_GRAVITY_ANTIGRAVITY: return gen_gravity_antigravity(g);
    case K_BLOCK_TOUCH_DOT: return gen_block_touch_dot(g);
    case K_BLOCK_TOUCH_DOT_N_PIX: return gen_block_touch_dot_n_pix(g, t->move_pix);
    case K_BLOCK_SCALE_TO_DOT: return gen_block_scale_to_dot(g);
    case K_TWO_POINTS_AND_FILL: return gen_two_points_and_fill(g);
    case K_REFLECT_BLOCK_WITH_BORDER_PIXEL: return gen_reflect_block_with_border_pixel(g);
    case K_REFLECT_BLOCK_RANDOM: return gen_reflect_block_random(g);
    case K_REFLECT_BLOCK_AROUND_DOT: return gen_reflect_block_around_dot(g);
    case K_BLOCK_AND_NOISE_REMOVE: return gen_block_and_noise_remove(g);
    case K_BLOCK_AND_NOISE_REMOVE_INSIDE: return gen_block_and_noise_remove_inside(g);
    case K_COPY_BLOCK_TO_DOTS: return gen_copy_block_to_dots(g, 0);
    case K_COPY_BLOCK_TO_DOTS_COLORS: return gen_copy_block_to_dots(g, 1);
    case K_PAINT_BIGGEST_BLOCK: return gen_paint_biggest_block(g);
    case K_SORT_BLOCKS_BY_SIZE: return gen_sort_blocks_by_size(g);
    case K_SORT_COMPLETE_SEQUENCE: return gen_sort_complete_sequence(g);
    case K_RECOLOR_BLOCKS_BY_SIZE: return gen_recolor_blocks_by_size(g);
    case K_GRAVITY_ONE_STEP: return gen_gravity_one_step(g);
    case K_MOVE_BLOCK_BY_OWN_SIZE: return gen_move_block_by_own_size(g);
    case K_CHANGE_TO_FIVE: return gen_change_to_five(g);
    case K_RECOLOR_BLOCKS_FROM_PALETTE: return gen_recolor_blocks_from_palette(g);
    case K_DUPLICATE_BLOCK_FROM_SEEDS: return gen_duplicate_block_from_seeds(g);
    case K_FILL_FROM_PIXEL: return gen_fill_from_pixel(g);
    case K_MARK_SIZE_TWO_BLOCKS: return gen_mark_size_two_blocks(g);
    case K_FILL_UNTIL_COLLISION: return gen_fill_until_collision(g);
    case K_REPEAT_PATTERN_FULL: return gen_repeat_pattern_full(g);
    case K_GRAVITY_WEIGHTED_COLORS: return gen_gravity_weighted_colors(g);
    case K_COLOR_LEFT_HALF_BLOCKS: return gen_color_left_half_blocks(g);
    default: g->error = "unknown arc_1d generator"; return 0;
    }
}

int arc_1d_generate(const Arc1dTask* task, PyRandom* rng, int size, int* input, int* output, char* err,
                    size_t errlen) {
    /* 2*size + 16 covers every scratch use: blocks, positions, (pos, size) pairs. */
    int* scratch = mallocCheck((size_t)(4 * size + 32) * sizeof *scratch);
    Gen g = {rng, size, input, output, scratch, scratch + 2 * size + 16, NULL};
    int rc = run_kind(&g, task);
    free(scratch);
    if (g.error) return set_error(err, errlen, "arc_1d %s (size %d): %s", task->name, size, g.error);
    if (rc != 1) return 0;
    if (task->wrap == ARC_WRAP_MIRROR) {
        for (int i = 0, j = size - 1; i < j; i++, j--) {
            int t = input[i];
            input[i] = input[j];
            input[j] = t;
            t = output[i];
            output[i] = output[j];
            output[j] = t;
        }
    } else if (task->wrap == ARC_WRAP_INVERSE) {
        for (int i = 0; i < size; i++) {
            int t = input[i];
            input[i] = output[i];
            output[i] = t;
        }
    }
    return 1;
}
