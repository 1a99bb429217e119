// The per-thread engine of the CUDA line passes: van Herk/Gil-Werman in two levels.
//
// Along one line (a row or a column), output x is the min (or max) of the padded signal v over
// the window [a, b] = [x - before, x + after], L = b - a + 1. The line is cut into chunks of C
// positions, chunk c = [cC, cC + C) (c may be negative: the left padding). With
//   m = (L - 1) / C  (>= 1, since C <= L - 1),   r = (L - 1) % C,
// a window starting at position j of chunk ca ends in chunk ca + m (j < C - r) or ca + m + 1
// (j >= C - r), so it is
//   suffix of chunk ca from j  |  full chunks ca+1 .. ca+m-1  |  (all of chunk ca+m, if j >= C-r)
//   | prefix of the last chunk up to b.
// The suffix comes from a backward scan of chunk ca held in registers (the "a-stream"); the
// prefix from a running min over the positions b, read in order (the "b-stream"), which also
// yields the min of chunk ca+m at the moment it crosses into ca+m+1. The full chunks in
// between, W(ca) = min of chunk minima ca+1 .. ca+m-1, come from a coarse pass (one read of the
// image plus a much smaller windowed min over chunk minima) when m >= 2; for m = 1 there are
// none. Each output costs about 3 min operations and 2 loads, whatever L.
#pragma once

#include <algorithm>

#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/words.cuh"

namespace granula::cuda::detail {

// One a-chunk ca: load_a(j) is its position j, load_b(j) the b-stream's position r + j past the
// chunk's first (the b-stream's first r positions were folded into `run` before chunk 0),
// wload() = W(ca) (the identity when m = 1), store(j, word) the result for the window starting
// at j. With DeferStores results wait in the suffix registers and are stored 16 at a time, so a store
// path with branches no longer splits every step of the loop and 16 b-stream loads can issue
// together (the sheared pass's one-pixel words; holding all 32 of a chunk spilled registers).
// Last: no chunk of this line follows, so `run` need not restart at chunk ca + m + 1 for the
// next one: run over chunk ca + m and on is exactly the rest of every window, and W(ca) joins
// the suffixes, which leaves 3 min operations per position rather than 4.
template <class Op, int C, bool DeferStores = false, bool Last = false, class LoadA, class LoadB, class WLoad,
          class Store>
__device__ __forceinline__ void vhgw_chunk(int r, typename Op::acc& run, LoadA&& load_a, LoadB&& load_b, WLoad&& wload,
                                           Store&& store) {
    using word = typename Op::word;
    using acc = typename Op::acc;
    const acc id = Op::to_acc(Op::identity());
    const acc m1 = Op::to_acc(wload());
    word s[C];
#pragma unroll
    for (int j = 0; j < C; ++j) s[j] = load_a(j);
    {
        acc suffix = Last ? Op::combine(Op::to_acc(s[C - 1]), m1) : Op::to_acc(s[C - 1]);
        if constexpr (Last) s[C - 1] = Op::from_acc(suffix);
#pragma unroll
        for (int j = C - 2; j >= 0; --j) {
            suffix = Op::combine(suffix, Op::to_acc(s[j]));
            s[j] = Op::from_acc(suffix);
        }
    }
    acc full = m1;
    if (r == 0) run = id;  // the b-stream starts chunk ca + m afresh
#pragma unroll
    for (int j = 0; j < C; ++j) {
        if (!Last && j == C - r) {  // b crosses into chunk ca + m + 1: run is the min of chunk ca + m
            full = Op::combine(m1, run);
            run = id;
        }
        run = Op::combine(run, Op::to_acc(load_b(j)));
        const acc window = Op::combine(Op::to_acc(s[j]), run);
        const word v = Op::from_acc(Last ? window : Op::combine(window, full));
        if constexpr (DeferStores) {
            constexpr int D = C < 16 ? C : 16;
            s[j] = v;
            if ((j + 1) % D == 0)
#pragma unroll
                for (int i = j + 1 - D; i <= j; ++i) store(i, s[i]);
        } else {
            store(j, v);
        }
    }
}

// Runs `nchunks` (<= K) consecutive a-chunks ca0, ca0 + 1, ... of one line. Positions are
// passed as small offsets so that callers index registers, tables or shared memory directly:
//   load_a(p):   the word at position ca0 * C + p            (p < K * C)
//   load_b(q):   the word at position (ca0 + m) * C + q      (q < K * C + r)
//   wload(k):    W(ca0 + k), the min of chunks ca0+k+1 .. ca0+k+m-1 (only called when m >= 2)
//   store(k, j, word): the result for the window starting at position (ca0 + k) * C + j
template <class Op, int C, int K, bool DeferStores = false, class LoadA, class LoadB, class WLoad, class Store>
__device__ __forceinline__ void vhgw_run(int nchunks, int m, int r, LoadA&& load_a, LoadB&& load_b, WLoad&& wload,
                                         Store&& store) {
    using word = typename Op::word;
    typename Op::acc run = Op::to_acc(Op::identity());
    for (int t = 0; t < r; ++t) run = Op::combine(run, Op::to_acc(load_b(t)));
    // Only the chunk body is unrolled: unrolling the K chunks too made the kernels large enough
    // to stall on instruction fetch (Nsight Compute, H200). One chunk a line (K = 1) is the
    // last; with more, the last would need a second copy of the body.
#pragma unroll 1
    for (int k = 0; k < K; ++k) {
        if (k < nchunks)
            vhgw_chunk<Op, C, DeferStores, K == 1>(
                r, run, [&](int j) { return load_a(k * C + j); }, [&](int j) { return load_b(r + k * C + j); },
                [&] { return m >= 2 ? wload(k) : Op::identity(); }, [&](int j, word v) { store(k, j, v); });
    }
}

// The chunk length for a window of L >= 2 positions: the largest power of two <= L - 1, capped.
// Chunks longer than tuning_policy::max_chunk (the passes that opt in: more registers, fewer
// blocks per SM) only where they spare the coarse level, L - 1 < 2 * max_chunk; longer windows
// take the coarse level either way, and faster with the short chunks (one H200, 16384^2 uint8:
// the scan-line pass's kernel at 60 degrees took 355 us at L = 255 with chunks of 64, where
// chunks of 32 take 274 at L = 63; vline:255 erosion 0.327 -> 0.284 ms with this rule).
inline int chunk_length(i64 L, int max_chunk) {
    if (L - 1 >= 2 * static_cast<i64>(max_chunk)) max_chunk = std::min(max_chunk, tuning_policy::max_chunk);
    int c = 1;
    while (c * 2 <= L - 1 && c * 2 <= max_chunk) c *= 2;
    return c;
}

// The geometry of one pass along lines of n positions.
struct line_geometry {
    i64 n = 0;        // positions per line
    i64 before = 0;   // clipped arms
    i64 after = 0;
    i64 L = 0;        // before + after + 1
    int C = 1;        // chunk length
    int m = 1;        // (L - 1) / C
    int r = 0;        // (L - 1) % C
    i64 origin = 0;   // chunk c holds the window starts [origin + cC, origin + cC + C)
    i64 ca_min = 0;   // chunk of the first window start, -before
    i64 ca_max = 0;   // chunk of the last window start, n - 1 - before
    i64 n_chunks() const { return ca_max - ca_min + 1; }
    // Coarse arrays (m >= 2): chunk minima of chunks ca_min + 1 .. ca_max + m - 1, and W.
    i64 n_coarse() const { return ca_max + m - 1 - ca_min; }
};

// outputs_aligned: chunks start where outputs at multiples of C do (origin = -before mod C), so
// that a run of whole chunks from ca_min writes rows from a multiple of its length.
inline line_geometry make_geometry(i64 n, i64 before, i64 after, int max_chunk, bool outputs_aligned = false) {
    line_geometry g;
    g.n = n;
    g.before = before;
    g.after = after;
    g.L = before + after + 1;
    if (g.L >= 2) {
        g.C = chunk_length(g.L, max_chunk);
        g.m = static_cast<int>((g.L - 1) / g.C);
        g.r = static_cast<int>((g.L - 1) % g.C);
    }
    if (outputs_aligned) g.origin = (g.C - before % g.C) % g.C;
    g.ca_min = floor_div(-before - g.origin, g.C);
    g.ca_max = floor_div(n - 1 - before - g.origin, g.C);
    return g;
}

}  // namespace granula::cuda::detail
