/* The layout of a packed batch as the CUDA kernels read it, built on the host: the segment
 * table (CudaSeg) with who reads each prompt, and the counting sort of rows by key that the
 * embedding gradients sum in order. Header-only C, shared by the backend (send_layout) and the
 * per-layer tests (tests/gpu/test_gpu_layers.c), so that both hand the kernels the same thing. */
#ifndef SAPO_KERNELS_CUDA_SEGMENTS_H
#define SAPO_KERNELS_CUDA_SEGMENTS_H

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "model/model.h"
#ifdef __cplusplus
}
#endif

/* A packed batch's segment (Segment in gpt.h) as the attention kernels read it; the host
 * builds the table per forward. A segment's queries read plen prefix keys (tokens pstart..)
 * then their own causal keys; its softmax weights sit at att (per layer) as NH blocks of
 * (len, plen + len), the CPU's layout. children[child0 .. child0 + n_children) are the
 * segments whose prefix it is, in increasing order: who reads its keys besides itself. */
typedef struct CudaSeg {
    long long att;
    int start, len;
    int pstart, plen;
    int child0, n_children;
} CudaSeg;

/* The table of segs[0 .. NS): out (NS), children (NS: segments grouped by their prefix, each
 * group in increasing order), pos and seg_of (one per token: prefix length + index, the
 * segment). Returns the attention weights of one layer (NH heads). */
static inline long long cuda_segment_table(CudaSeg* out, int* children, int* pos, int* seg_of, const Segment* segs,
                                           int NS, int NH) {
    long long att = 0;
    for (int k = 0; k < NS; k++) {
        const Segment* g = &segs[k];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        CudaSeg* o = &out[k];
        o->att = att;
        o->start = g->start;
        o->len = g->len;
        o->pstart = p ? p->start : 0;
        o->plen = p ? p->len : 0;
        o->child0 = o->n_children = 0;
        att += (long long)NH * g->len * (o->plen + g->len);
        for (int t = 0; t < g->len; t++) {
            pos[g->start + t] = o->plen + t;
            seg_of[g->start + t] = k;
        }
    }
    /* children grouped by prefix, each group in increasing segment order (a counting sort) */
    for (int k = 0; k < NS; k++)
        if (segs[k].prefix >= 0) out[segs[k].prefix].n_children++;
    for (int k = 0, at = 0; k < NS; k++) {
        out[k].child0 = at;
        at += out[k].n_children;
        out[k].n_children = 0;
    }
    for (int k = 0; k < NS; k++) {
        CudaSeg* p = segs[k].prefix >= 0 ? &out[segs[k].prefix] : NULL;
        if (p) children[p->child0 + p->n_children++] = k;
    }
    return att;
}

/* Counting sort: start (n_entries + 1) and rows (N) list the rows n with key[n] == e in
 * increasing n, for the embedding gradients' fixed-order sums; cursor has n_entries ints. */
static inline void cuda_rows_by_key(int* start, int* rows, int* cursor, const int* key, int N, int n_entries) {
    memset(start, 0, (size_t)(n_entries + 1) * sizeof(int));
    for (int n = 0; n < N; n++) start[key[n] + 1]++;
    for (int e = 0; e < n_entries; e++) start[e + 1] += start[e];
    memcpy(cursor, start, (size_t)n_entries * sizeof(int));
    for (int n = 0; n < N; n++) rows[cursor[key[n]]++] = n;
}

#endif
