// One angle's linear filter along its scan lines as the morphology's vertical van Herk/Gil-Werman
// passes (morphology/cuda/vhgw.cuh), with each row read and written at its scan-line shift.
//
// On the oriented image (lines/scan_lines.hpp) line c has its pixel of row r at column
// c + shift(r): the lines are the columns of a sheared image S(r, c). A thread owns P adjacent
// lines (one 4-byte word of uint8 or uint16) and walks down them as the vertical pass walks down
// its columns: two-level vHGW with chunks of C rows, the a-chunk in registers, a coarse pass for
// windows longer than 2C. Every row is one shift for the whole block, so a warp's loads of a row
// are still one contiguous segment (two aligned words and a funnel shift per thread). S is a
// parallelogram: each run of K chunks takes only the lines that meet the image in the rows it
// reads. Words whose P lines stay on the image in all of those rows that lie in it (most words)
// run in one kernel with no bounds tests at all (rows above and below the image read a pad row
// and write to a trash row); the edge words run in a second, small kernel whose lanes read the
// border's pad (first stage) or `outside` (second stage) off the image, launched after the
// inside kernel so that it fills the slots of the inside kernel's last wave (programmatic
// dependent launch). That is the two-stage operator along each line exactly (the same samples
// as vhgw_rows in lines_cuda.cu).
//
// Stage 1 writes S's rows into a scratch image (lanes aligned to words); stage 2 reads it and
// writes each row back at its shift. A lone erosion or dilation is one pass, image to image.
//
// Flat lines run on a transposed copy of the image (the oriented image). Their last pass writes
// the image itself, transposed (ToTransposed): oriented row o, column x is the image's row x,
// column o. The inside and edge kernels gather a run's outputs in shared memory and write them
// out as row segments of the image, so that no transpose of the result follows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda/check.cuh"
#include "granula/core/border.hpp"
#include "lines/scan_lines.hpp"
#include "morphology/cuda/line_pass.cuh"
#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/vhgw.cuh"
#include "morphology/cuda/words.cuh"

namespace granula::cuda::detail {
namespace scan_passes {

using granula::detail::check_cuda;
using granula::detail::check_launch;

// Launch shape, measured on one H100 (bench_gpu_lines, 8000^2 uint8 openings at 30 and 60
// degrees, λ = 41 and 101, alternated twice in one call; docs/benchmarks.md): with the vertical
// pass's shape (64 rows per thread, results stored as they come) 0.35 / 0.53 ms at 60 degrees;
// results stored 16 at a time (vhgw_run's DeferStores: the b-stream's loads issue together
// instead of waiting behind each store's alignment branch) 0.31 / 0.48; and 32 rows per thread
// 0.24 / 0.41 (twice the blocks: 2016 blocks of 64 rows made 2.2 waves, Nsight Compute showed
// 28% achieved occupancy and 72% of the stalls on loads). vhgw_kernel took 0.39 / 0.66. Capping
// the registers at 64 (8 blocks per SM; the 32-row chunks then spill) changed nothing. The
// vertical pass took 32 rows per thread too after this (tuning.hpp).
// On one H200 (2026-12-01, Nsight Compute, 60 degrees, λ = 41): one kernel with both engines
// took 103 / 112 us a stage (68 / 64 registers, 30-35% achieved occupancy, a third of the
// stalls on instruction fetch); the inside kernel alone takes 60 / 59 us (56 registers, 48%)
// and the edge kernel 19 / 22 (251 blocks). Not kept: a chunk's unaligned loads branch-free
// (both words always read) and a warp's rows realigned by shuffles, 3-7% slower. The inside
// kernel beside the edge kernel rather than after it: 60 degrees 0.186 -> 0.167 ms, 30 degrees
// 0.277 -> 0.260 (bench_gpu_lines, two rounds each, 2026-12-01). The edge kernel then went
// first, and its blocks (up to 136 registers at λ = 101) held the SMs' registers from the inside
// kernel's first wave; launched as the inside kernel's dependent instead, it runs in its last
// wave (one H100, 8000^2 uint8, three rounds, stop 66): 30 and 150 degrees 0.208-0.210 ->
// 0.198-0.199 ms at λ = 41, 0.260-0.265 -> 0.244-0.245 at λ = 101, the steep angles within 2%.
// Chunks of up to 64 rows (tuning_policy::scan_line_max_chunk) give a thread 64 rows for windows
// of 65 to 128 rows, which then need no coarse level. Also not kept, each slower on the H200
// (docs/benchmarks.md, stop 39): stage 2's stores as whole aligned words; the opening in one
// kernel, stage 1's chunks through a ring in shared memory (runs long enough to amortise the
// ring's warm-up leave too few threads); and a warp a run, so that a run's b-stream finds the
// next run's rows in the L1.
// Nor (stop 59, one H100): the opening in one kernel a tile at a time, 128 lines by R rows read
// once into shared memory and both stages' extrema by segments of λ rows there: half the DRAM
// bytes, twice the instructions; 8-10% faster at λ = 15, as fast at 41, slower at 3, 63, 101.
constexpr int threads = tuning_policy::vertical_block_threads;
// The shift of a row off the oriented image: far enough that every lane reads as off the image.
constexpr int off_image = -(1 << 30);
// 4-byte words in a 32-byte sector of the L2 cache.
constexpr int sector_words = 8;

template <class T>
struct args {
    const T* in = nullptr;  // the oriented image (stage 1) or the scratch (stage 2)
    i64 in_stride = 0;
    T* out = nullptr;  // the scratch (stage 1 of 2) or the oriented image
    i64 out_stride = 0;
    T* trash = nullptr;  // a scratch row: where the outputs of rows off the image go
    const T* pad_row = nullptr;  // a scratch row of `pad`: what rows off the image read
    // W(ca): the min of W_count rows from row ca - ca_min (m >= 2), lanes as the scratch.
    const T* W = nullptr;
    i64 W_stride = 0;
    int W_count = 1;
    T* cm = nullptr;  // chunk minima, row k = chunk ca_min + 1 + k, lanes as the scratch
    i64 cm_stride = 0;
    i64 rows = 0, columns = 0;  // of the oriented image
    bool out_words_aligned = false;  // ToTransposed: every image row starts on a 4-byte boundary
    i64 slope_fixed = 0;        // shift(r) = scan_line_shift(r, slope_fixed)
    i64 first_line = 0;         // lane of scratch element 0
    i64 n_words = 0;            // words of P lanes in a scratch row
    line_geometry g;            // of the pass along the rows
    i64 n_coarse = 0;           // g.n_coarse()
    T pad{};  // what the pass reads off the image
};

// A row as a pass sees it: lane c's element is base[c]; its pixel is at image column c + shift
// (off_image for rows outside the oriented image, whose base is then the pad row to read or the
// trash row to write, so that the inside kernel needs no tests for them).
template <class T>
struct row_ref {
    const T* base;
    int shift;
};

// A block's rows as two arrays, so that the inside engine, which never reads a row's shift,
// loads 8 bytes a row rather than a 16-byte row_ref.
template <class T, int N>
struct row_table {
    const T* base[N];
    int shift[N];
    __device__ __forceinline__ void set(int t, row_ref<T> r) {
        base[t] = r.base;
        shift[t] = r.shift;
    }
    __device__ __forceinline__ row_ref<T> operator[](int t) const { return {base[t], shift[t]}; }
};

// In: the image (lane c of row r at in(r, c + shift(r))) or the scratch (at column c - first_line).
template <class T, bool FromScratch>
__device__ __forceinline__ row_ref<T> source_row(const args<T>& a, i64 row) {
    if (row < 0 || row >= a.rows) return {a.pad_row - a.first_line, off_image};
    const int s = granula::detail::scan_line_shift(row, a.slope_fixed);
    const T* r = a.in + row * a.in_stride;
    return {FromScratch ? r - a.first_line : r + s, s};
}
template <class T, bool ToScratch>
__device__ __forceinline__ row_ref<T> output_row(const args<T>& a, i64 row) {
    if (row < 0 || row >= a.rows) return {a.trash - a.first_line, off_image};
    const int s = granula::detail::scan_line_shift(row, a.slope_fixed);
    T* r = a.out + row * a.out_stride;
    return {ToScratch ? r - a.first_line : r + s, s};
}

// P elements to p on, at any alignment: one word, two halves, or byte, half, byte.
template <class V>
__device__ __forceinline__ void store_unaligned(typename V::elem* p, typename V::mem v) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    if ((address & 3) == 0) {
        *reinterpret_cast<typename V::mem*>(p) = v;
    } else if ((address & 1) == 0) {
        reinterpret_cast<std::uint16_t*>(p)[0] = static_cast<std::uint16_t>(v);
        reinterpret_cast<std::uint16_t*>(p)[1] = static_cast<std::uint16_t>(v >> 16);
    } else {  // uint8 only: p + 1 is 2-byte aligned
        p[0] = static_cast<typename V::elem>(v);
        *reinterpret_cast<std::uint16_t*>(p + 1) = static_cast<std::uint16_t>(v >> 8);
        p[3] = static_cast<typename V::elem>(v >> 24);
    }
}

// The word of lanes [c, c + P) of a row. Inside: all of them on the image (no tests). Edges:
// lane by lane, predicated rather than branching, so that a chunk's loads still issue together
// (with a branch per row the edge kernel waited on each row's load in turn: 35-37 us a stage at
// 8000^2 and 60 degrees, predicated 19-22, against the inside kernel's 60).
template <class V, bool FromScratch, bool Inside>
__device__ __forceinline__ typename V::word load_lanes(const row_ref<typename V::elem>& row, i64 c, i64 columns,
                                                       typename V::mem pad) {
    using mem = typename V::mem;
    constexpr int P = V::P;
    const auto* p = row.base + c;
    if constexpr (Inside)
        return V::unpack(FromScratch ? load_ro(reinterpret_cast<const mem*>(p)) : load_unaligned<V>(p));
    const i64 x = c + row.shift;
    mem m = 0;
#pragma unroll
    for (int j = 0; j < P; ++j)
        m = V::put(m, j, x + j >= 0 && x + j < columns ? load_ro(p + j) : V::get(pad, j));
    return V::unpack(m);
}

template <class V, bool ToScratch, bool Inside>
__device__ __forceinline__ void store_lanes(const row_ref<typename V::elem>& row, i64 c, i64 columns,
                                            typename V::word w) {
    using T = typename V::elem;
    constexpr int P = V::P;
    T* p = const_cast<T*>(row.base) + c;
    const typename V::mem m = V::pack(w);
    if (ToScratch) {  // whole words, aligned; rows off the image go to the trash row
        *reinterpret_cast<typename V::mem*>(p) = m;
        return;
    }
    if constexpr (Inside) {
        store_unaligned<V>(p, m);
        return;
    }
    const i64 x = c + row.shift;
#pragma unroll
    for (int j = 0; j < P; ++j)
        if (x + j >= 0 && x + j < columns) p[j] = V::get(m, j);
}

// The words of a scratch row whose lanes meet the image in rows [r0, r1] (clipped to the
// image), [first, end), and among them the inside ones, [inside_first, inside_end): all P lanes
// on the image in every one of those rows (shift is monotone, so the first and last rows bound
// them). The others, at both ends, are the edges.
struct run_words {
    i64 first = 0, end = 0, inside_first = 0, inside_end = 0;
    GRANULA_HOST_DEVICE i64 edges() const { return (inside_first - first) + (end - inside_end); }
    GRANULA_HOST_DEVICE i64 edge(i64 i) const {
        return i < inside_first - first ? first + i : inside_end + (i - (inside_first - first));
    }
};

GRANULA_HOST_DEVICE inline i64 clamp_to(i64 v, i64 lo, i64 hi) { return v < lo ? lo : (v > hi ? hi : v); }

template <class T, int P>
GRANULA_HOST_DEVICE run_words words_of_run(const args<T>& a, i64 r0, i64 r1) {
    r0 = r0 > 0 ? r0 : 0;
    r1 = r1 < a.rows - 1 ? r1 : a.rows - 1;
    run_words u;
    if (r0 > r1) return u;
    const i64 s0 = granula::detail::scan_line_shift(r0, a.slope_fixed);
    const i64 s1 = granula::detail::scan_line_shift(r1, a.slope_fixed);
    const i64 lo = s0 < s1 ? s0 : s1, hi = s0 < s1 ? s1 : s0;
    // Lane c meets the image in some row when c in [-hi, columns - lo), in every row when c in
    // [-lo, columns - P - hi] (for all of c .. c + P - 1).
    u.first = clamp_to(floor_div(-hi - a.first_line, P), 0, a.n_words);
    u.end = clamp_to(floor_div(a.columns - lo - a.first_line + P - 1, P), u.first, a.n_words);
    u.inside_first = clamp_to(-floor_div(lo + a.first_line, P), u.first, u.end);
    u.inside_end = clamp_to(floor_div(a.columns - P - hi - a.first_line, P) + 1, u.inside_first, u.end);
    return u;
}

// A run of K chunks from chunk ca0 (nchunks of them inside the pass) reads rows [a_first, b_last].
struct run_rows {
    i64 ca0 = 0, a_first = 0, b_first = 0, b_last = 0;
    int nchunks = 0;
};
template <int C, int K>
GRANULA_HOST_DEVICE run_rows rows_of_run(const line_geometry& g, i64 run) {
    run_rows u;
    u.ca0 = g.ca_min + run * K;
    const i64 left = g.ca_max - u.ca0 + 1;
    u.nchunks = static_cast<int>(left < K ? left : K);
    u.a_first = g.origin + u.ca0 * C;
    u.b_first = g.origin + (u.ca0 + g.m) * C;
    u.b_last = u.b_first + g.r + u.nchunks * C - 1;
    return u;
}

// Programmatic dependent launch (sm_90): the inside kernel, launched first, lets the edge kernel
// start once every inside block has started (the inside kernel's last wave, which leaves SMs
// free); one thread of the edge kernel's last block then waits for the inside kernel, so that
// the edge kernel completes after it and the stream's later work sees both.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The ToTransposed inside kernel's outputs of one run: R oriented rows from o0 (a multiple of R:
// make_geometry's outputs_aligned) of the block's n_lanes lanes from c_lo, held in shared memory
// as the engine stores them, tile[t * pitch + lane] (one aligned word a store). Image row x takes
// column o0 + t from lane x - shift(o0 + t) - c_lo, so a thread writes E image rows of E columns
// (one image word each, E = 4 / sizeof(T)): it reads E words of E lanes, one from each tile row at
// that row's shift, and transposes them. Blocks whose lanes are not all this block's (the
// parallelogram's slanted ends) or that leave the image go element by element.
template <class T, int R>
struct transposed_tile {
    using mem = std::uint32_t;
    static constexpr int E = 4 / sizeof(T);
    static constexpr int pitch = threads * packed<T>::P + E;  // one word more: a row's banks move by one
    static constexpr int words = R / E;                       // image words of a tile row
    static_assert(threads % words == 0);
    T values[R * pitch];
    int shift[R];  // shift(o0 + t) less the least of them

    __device__ __forceinline__ void store(int lane, int t, mem m) {
        *reinterpret_cast<mem*>(values + t * pitch + lane) = m;
    }
    // E lanes from `lane` on of row t, lane >= 0 (two aligned words and a funnel shift).
    __device__ __forceinline__ mem lanes_at(int t, int lane) const {
        const mem* p = reinterpret_cast<const mem*>(values + t * pitch) + lane / E;
        const unsigned bits = 8 * sizeof(T) * static_cast<unsigned>(lane % E);
        return bits ? __funnelshift_r(p[0], p[1], bits) : p[0];
    }

    // By every thread of the block, once the engine's stores are in: image rows from x0 = c_lo +
    // the least shift, n_lanes + spread of them.
    __device__ void write_out(const args<T>& a, i64 o0, i64 x0, int n_lanes, int spread) const {
        const int w = threadIdx.x % words;  // the same image word of every row this thread writes
        int sh[E];
#pragma unroll
        for (int e = 0; e < E; ++e) sh[e] = shift[w * E + e];
        const bool rows_inside = o0 + R <= a.rows;
        const int blocks = (n_lanes + spread + E - 1) / E;
        for (int b = threadIdx.x / words; b < blocks; b += threads / words) {
            const int xr = b * E;  // tile's image rows xr .. xr + E - 1
            T* dst = a.out + (x0 + xr) * a.out_stride + o0 + w * E;
            if (rows_inside && a.out_words_aligned && xr >= spread && xr + E <= n_lanes) {
                mem in[E], out[E];
#pragma unroll
                for (int e = 0; e < E; ++e) in[e] = lanes_at(w * E + e, xr - sh[e]);
                transpose_words<E>(in, out);
#pragma unroll
                for (int j = 0; j < E; ++j) *reinterpret_cast<mem*>(dst + j * a.out_stride) = out[j];
                continue;
            }
#pragma unroll
            for (int j = 0; j < E; ++j) {
                const i64 x = x0 + xr + j;
                if (x < 0 || x >= a.columns) continue;
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    const int lane = xr + j - sh[e];
                    if (lane >= 0 && lane < n_lanes && o0 + w * E + e < a.rows)
                        dst[j * a.out_stride + e] = values[(w * E + e) * pitch + lane];
                }
            }
        }
    }
};

// The ToTransposed edge kernel's outputs of one round of its lanes (a thread each), R oriented
// rows from o0, written out along image rows, a warp's stores one row's R columns, rather than
// straight from the engine, where a warp's store was a byte in each of 32 image rows.
template <class T, int R>
struct transposed_edge_tile {
    static constexpr int pitch = threads + 4;
    T values[R * pitch];
    int shift[R];  // as transposed_tile's

    __device__ __forceinline__ void store(int k, int t, T v) { values[t * pitch + k] = v; }

    // By every thread of the block: the lanes [l0, l0 + n) (scratch lanes) held at columns
    // [k0, k0 + n); their image rows from first_line + l0 + the least shift, n + spread of them.
    __device__ void write_out(const args<T>& a, i64 o0, i64 l0, int k0, int n, int spread, int least_shift) const {
        const i64 x0 = a.first_line + l0 + least_shift;
        for (int i = threadIdx.x; i < (n + spread) * R; i += threads) {
            const int xr = i / R, t = i % R;
            const int lane = xr - shift[t];
            const i64 x = x0 + xr;
            if (lane >= 0 && lane < n && x >= 0 && x < a.columns && o0 + t < a.rows)
                a.out[x * a.out_stride + o0 + t] = values[t * pitch + k0 + lane];
        }
    }
};

// Two kernels per pass, each over all runs of K chunks (grid y): Edges = false takes a run's
// inside words (grid x: blocks of them), whose loads and stores need no tests; Edges = true the
// lanes of its edge words (grid x: enough blocks for the most of any run, a few). Apart, the inside
// kernel keeps the vertical pass's registers and half the code of one kernel with both engines.
// ToTransposed (with ToScratch false): the output is the image itself, transposed.
template <class V, bool Max, int C, int K, bool FromScratch, bool ToScratch, bool ToTransposed, bool Edges>
__global__ void __launch_bounds__(threads) pass_kernel(const args<typename V::elem> a) {
    using T = typename V::elem;
    constexpr int P = V::P;
    constexpr int R = K * C;  // output rows of a run
    constexpr bool Gather = ToTransposed && !Edges, EdgeGather = ToTransposed && Edges;
    __shared__ row_table<T, R> rows_a;
    __shared__ row_table<T, R + C> rows_b;
    __shared__ row_table<T, ToTransposed ? 1 : R> rows_out;
    __shared__ std::conditional_t<Gather, transposed_tile<T, R>, char> tile;
    __shared__ std::conditional_t<EdgeGather, transposed_edge_tile<T, R>, char> edge_tile;
    if constexpr (!Edges) allow_dependent_launch();
    const i64 runs = (a.g.ca_max - a.g.ca_min + K) / K;
    for (i64 step = blockIdx.y; step < runs; step += gridDim.y) {
        // From the scratch, the last runs first: their rows are the ones the first pass wrote
        // last, some of them still in the L2 cache. 8000^2 uint8 openings 1-2.5% faster at 30,
        // 45, 60 and 150 degrees, λ = 41 and 101 (one H100, three rounds; 60 degrees, λ = 101:
        // 0.191-0.192 -> 0.187 ms; docs/benchmarks.md, stop 74).
        const i64 run = FromScratch ? runs - 1 - step : step;
        const run_rows u = rows_of_run<C, K>(a.g, run);
        const i64 o0 = u.a_first + a.g.before;  // the run's first output row
        // Gather: the shifts of the output rows, relative to the least (shift is monotone).
        const int shift_first = granula::detail::scan_line_shift(o0, a.slope_fixed);
        const int shift_last = granula::detail::scan_line_shift(o0 + R - 1, a.slope_fixed);
        const int least_shift = shift_first < shift_last ? shift_first : shift_last;
        [[maybe_unused]] const int spread = shift_first < shift_last ? shift_last - shift_first
                                                                     : shift_first - shift_last;
        __syncthreads();  // the previous run's tables and tile are no longer read
        for (int t = threadIdx.x; t < R; t += threads) {
            rows_a.set(t, source_row<T, FromScratch>(a, u.a_first + t));
            const int shift = granula::detail::scan_line_shift(o0 + t, a.slope_fixed) - least_shift;
            if constexpr (Gather)
                tile.shift[t] = shift;
            else if constexpr (EdgeGather)
                edge_tile.shift[t] = shift;
            else
                rows_out.set(t, output_row<T, ToScratch>(a, o0 + t));
        }
        for (int t = threadIdx.x; t < R + a.g.r; t += threads)
            rows_b.set(t, source_row<T, FromScratch>(a, u.b_first + t));
        __syncthreads();
        const run_words words = words_of_run<T, P>(a, u.a_first, u.b_last);
        // This block's inside words of the run, [max(w_lo, inside_first), w_hi). Without Gather the
        // blocks start at a multiple of sector_words, so that a warp's scratch row segment is four
        // whole 32-byte sectors rather than parts of five: 8000^2 uint8 openings at 45-135 degrees,
        // λ = 41, 0.145-0.147 -> 0.142-0.145 ms (one H200, two rounds, 2026-12-02).
        const i64 w_lo = (Gather ? words.inside_first : floor_div(words.inside_first, sector_words) * sector_words) +
                         static_cast<i64>(blockIdx.x) * threads;
        const i64 w_hi = w_lo + threads < words.inside_end ? w_lo + threads : words.inside_end;
        // The engine on one W (P lanes of a word, or one lane) from scratch lane `lane` on.
        const auto engine = [&](i64 lane, auto word_type, auto inside_constant) {
            using W = typename decltype(word_type)::type;
            constexpr bool In = decltype(inside_constant)::value;
            const i64 c = a.first_line + lane;
            const typename W::mem pad = W::splat_mem(a.pad);
            vhgw_run<word_op<W, Max>, C, K, true>(
                u.nchunks, a.g.m, a.g.r,
                [&](int p) { return load_lanes<W, FromScratch, In>(rows_a[p], c, a.columns, pad); },
                [&](int q) { return load_lanes<W, FromScratch, In>(rows_b[q], c, a.columns, pad); },
                [&](int k) {
                    return window_word<W, Max>(a.W, a.W_stride, a.W_count, u.ca0 + k - a.g.ca_min, lane / W::P);
                },
                [&](int k, int j, typename W::word v) {
                    if constexpr (Gather) {
                        tile.store(static_cast<int>(lane - w_lo * P), k * C + j, W::pack(v));
                    } else if constexpr (EdgeGather) {
                        edge_tile.store(threadIdx.x, k * C + j, W::pack(v));
                    } else {
                        // The lane from `lane` rather than the loads' `c`: ptxas then gives the
                        // uint8 scratch-to-image kernels 64 registers rather than 48, and 8000^2
                        // openings at 45 and 60 degrees run 5-6% faster (λ = 41, one H100: 0.156
                        // -> 0.146-0.148 ms; docs/benchmarks.md, stop 73).
                        store_lanes<W, ToScratch, In>(rows_out[k * C + j], a.first_line + lane, a.columns, v);
                    }
                });
        };
        if constexpr (Edges) {
            // A thread per lane of the edge words, with one predicated load a row rather than P:
            // the kernel's time is about one thread's chain of instructions and loads (8000^2
            // uint8, 60 degrees, λ = 41, one H200, when it ran beside the inside kernel from its
            // start: 16-20 us alone with a thread per word, 8-10 per lane; the opening 0.148 ->
            // 0.133 ms).
            const i64 total = words.edges() * P;
            if constexpr (EdgeGather) {
                const i64 left = (words.inside_first - words.first) * P;  // lanes of the left edge words
                for (i64 base = static_cast<i64>(blockIdx.x) * threads; base < total;
                     base += static_cast<i64>(gridDim.x) * threads) {  // the same rounds for the whole block
                    const i64 i = base + threadIdx.x;
                    if (i < total)
                        engine(words.edge(i / P) * P + i % P, std::type_identity<scalar<T>>{}, std::false_type{});
                    __syncthreads();
                    const i64 end = base + threads < total ? base + threads : total;
                    if (base < left)  // lanes of left edge words, then of right ones
                        edge_tile.write_out(a, o0, words.first * P + base, 0,
                                            static_cast<int>((end < left ? end : left) - base), spread, least_shift);
                    if (end > left) {
                        const i64 from = base > left ? base : left;
                        edge_tile.write_out(a, o0, words.inside_end * P + (from - left), static_cast<int>(from - base),
                                            static_cast<int>(end - from), spread, least_shift);
                    }
                    __syncthreads();
                }
            } else {
                for (i64 i = static_cast<i64>(blockIdx.x) * threads + threadIdx.x; i < total;
                     i += static_cast<i64>(gridDim.x) * threads)
                    engine(words.edge(i / P) * P + i % P, std::type_identity<scalar<T>>{}, std::false_type{});
            }
        } else {
            const i64 w = w_lo + threadIdx.x;
            if (w >= words.inside_first && w < w_hi) engine(w * P, std::type_identity<V>{}, std::true_type{});
            if constexpr (Gather) {
                if (w_lo < w_hi) {  // the same for the whole block
                    __syncthreads();
                    tile.write_out(a, o0, a.first_line + w_lo * P + least_shift, static_cast<int>((w_hi - w_lo) * P),
                                   spread);
                }
            }
        }
    }
    if (Edges && blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && threadIdx.x == 0)
        wait_for_prerequisite_grid();
}

// Chunk minima for the coarse level: cm row k = min over rows (ca_min + 1 + k) * C + [0, C) of
// each scratch word's lanes (pad off the image).
template <class V, bool Max, int C, bool FromScratch>
__global__ void __launch_bounds__(threads) chunk_kernel(const args<typename V::elem> a) {
    using T = typename V::elem;
    using Op = word_op<V, Max>;
    // The minima accumulate as split words (uint8: two u16x2 halves, whose min is native on
    // sm_90 where __vminu4 takes about 7 instructions).
    using S = typename split_word<T>::type;
    using SOp = word_op<S, Max>;
    constexpr int P = V::P;
    const typename V::mem pad = V::splat_mem(a.pad);
    const i64 w = static_cast<i64>(blockIdx.x) * threads + threadIdx.x;
    if (w >= a.n_words) return;
    const i64 c = a.first_line + w * P;
    for (i64 k = blockIdx.y; k < a.n_coarse; k += gridDim.y) {
        const i64 first = a.g.origin + (a.g.ca_min + 1 + k) * C;
        typename V::mem result;
        const run_words u = words_of_run<T, P>(a, first, first + C - 1);
        if (w < u.first || w >= u.end) {
            // Every lane off the image in every row: the pad. A third of the words at 60 degrees,
            // which took the lane-by-lane loop below: the kernel was issue-bound at 186-192 us
            // (16384^2 uint8, L = 255, one H200, Nsight Compute: 80% issue active, DRAM 30%).
            result = pad;
        } else if (w >= u.inside_first && w < u.inside_end && first >= 0 && first + C <= a.rows) {
            // Most chunks: every lane on the image in every row, so no tests, and the rows'
            // addresses and shifts step from one row to the next (source_row's, exactly).
            // 8000^2 uint8, 60 degrees, λ = 101, one H200 (Nsight Compute, a stage): lane by
            // lane 82 us; inside words without tests 60-67 (issue-bound: 0.77 warps issued per
            // scheduler cycle, DRAM 21%); these steps and split words 54-57, the opening 0.310
            // -> 0.293 ms. Not kept: 8 rows' loads issued before their minima, 57-62 us.
            using granula::detail::scan_slope_bits;
            const T* row = a.in + first * a.in_stride + (FromScratch ? w * P : c);
            i64 shift_numerator = first * a.slope_fixed + (i64{1} << (scan_slope_bits - 1));
            typename S::word acc = SOp::identity();
#pragma unroll 8
            for (int j = 0; j < C; ++j) {
                const typename V::mem m =
                    FromScratch ? load_ro(reinterpret_cast<const typename V::mem*>(row))
                                : load_unaligned<V>(row + static_cast<int>(shift_numerator >> scan_slope_bits));
                acc = SOp::apply(acc, S::unpack(m));
                row += a.in_stride;
                shift_numerator += a.slope_fixed;
            }
            result = S::pack(acc);
        } else {
            typename V::word acc = Op::identity();
            for (int j = 0; j < C; ++j)
                acc = Op::apply(acc, load_lanes<V, FromScratch, false>(source_row<T, FromScratch>(a, first + j), c,
                                                                        a.columns, pad));
            result = V::pack(acc);
        }
        *reinterpret_cast<typename V::mem*>(a.cm + k * a.cm_stride + w * P) = result;
    }
}

// Both passes' pad rows: `rows` gets min_pad, the row after it max_pad.
template <class T>
__global__ void fill_pad_rows_kernel(T* rows, i64 stride, i64 count, T min_pad, T max_pad) {
    const i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) {
        rows[i] = min_pad;
        rows[stride + i] = max_pad;
    }
}

// One pass: out = the min (max) over [r - before, r + after] along every scan line.
template <class V, bool Max, int C, bool FromScratch, bool ToScratch, bool ToTransposed>
void run_pass(args<typename V::elem> a, const line_geometry& g, cudaStream_t stream) {
    using T = typename V::elem;
    constexpr int K = std::max(1, tuning_policy::vertical_rows_per_thread / C);
    scratch_image<T> cm, W;
    if (g.m >= 2) {
        cm = scratch_image<T>(a.n_words * V::P, g.n_coarse(), stream);
        a.cm = cm.view().data();
        a.cm_stride = cm.view().stride();
        const dim3 grid(static_cast<unsigned>((a.n_words + threads - 1) / threads),
                        static_cast<unsigned>(std::min<i64>(g.n_coarse(), 65535)));
        chunk_kernel<V, Max, C, FromScratch><<<grid, threads, 0, stream>>>(a);
        check_launch("chunk_kernel (scan-line passes)");
        const window_rows<T> window = chunk_window<T, Max>(cm.view(), g.m, W, stream, 2);
        a.W = window.rows.data();
        a.W_stride = window.rows.stride();
        a.W_count = window.count;
    }
    // A run's lanes: the image's columns plus the shift across the rows it reads (at most one
    // column per row: the oriented image's lines are steep).
    const i64 rows_read = static_cast<i64>(K + g.m + 1) * C;
    const i64 words = (a.columns + rows_read) / V::P + 2 + sector_words;
    const i64 runs = (g.n_chunks() + K - 1) / K;
    i64 most_edges = 0;
    for (i64 run = 0; run < runs; ++run) {
        const auto u = rows_of_run<C, K>(g, run);
        most_edges = std::max(most_edges, words_of_run<T, V::P>(a, u.a_first, u.b_last).edges());
    }
    const auto y = static_cast<unsigned>(std::min<i64>(runs, 65535));
    const dim3 inside_grid(static_cast<unsigned>((words + threads - 1) / threads), y);
    const auto inside_kernel = pass_kernel<V, Max, C, K, FromScratch, ToScratch, ToTransposed, false>;
    inside_kernel<<<inside_grid, threads, 0, stream>>>(a);
    check_launch("pass_kernel (scan-line passes, inside)");
    if (most_edges == 0) return;
    // The edge kernel second, as the inside kernel's dependent (allow_dependent_launch).
    const auto edge_kernel = pass_kernel<V, Max, C, K, FromScratch, ToScratch, ToTransposed, true>;
    // Only where the kernel was compiled for sm_90 or later: code from older PTX, run on a newer
    // GPU, has no wait in it, and the two kernels' overlap would then go unchecked.
    static const bool overlap_allowed = [&] {
        cudaFuncAttributes f{};
        return cudaFuncGetAttributes(&f, edge_kernel) == cudaSuccess && f.ptxVersion >= 90;
    }();
    cudaLaunchAttribute overlap{};
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = overlap_allowed ? 1 : 0;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>((most_edges * V::P + threads - 1) / threads), y);
    config.blockDim = dim3(threads);
    config.stream = stream;
    config.attrs = &overlap;
    config.numAttrs = 1;
    check_cuda(cudaLaunchKernelEx(&config, edge_kernel, a), "cudaLaunchKernelEx (scan-line passes, edges)");
}

}  // namespace scan_passes

// The scan-line filter of one angle on the oriented image `in` into `out` (not overlapping it):
// the oriented image, or with out_transposed the image itself (flat lines: `in` is its transposed
// copy). For uint8 and uint16 under border ignore or constant: an opening or closing (two passes
// through a scratch image) or, first_stage_only, an erosion or dilation (closing: the max stage
// first). The first stage's window spans `before` rows before each row and length - 1 - before
// after it (line_plan::before); the second's the mirror. 4-byte aligned rows are not required.
// length >= 2.
template <class T>
void scan_line_passes(device_view<const T> in, device_view<T> out, bool out_transposed,
                      const granula::detail::scan_lines& lines, int length, int before, bool closing,
                      bool first_stage_only, border mode, cudaStream_t stream) {
    static_assert(std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>);
    using V = packed<T>;
    using namespace scan_passes;
    const i64 rows = in.height();
    const i64 after = length - 1 - before;
    const bool constant = mode.mode == border_mode::constant;
    const T cval = static_cast<T>(mode.cval);
    args<T> a;
    a.rows = rows;
    a.columns = in.width();
    a.slope_fixed = lines.slope_fixed;
    a.first_line = lines.first_line;
    a.out_words_aligned =
        reinterpret_cast<std::uintptr_t>(out.data()) % 4 == 0 && out.stride() * static_cast<i64>(sizeof(T)) % 4 == 0;
    a.n_words = (lines.end_line - lines.first_line + V::P - 1) / V::P;
    // Row 0: the trash row; rows 1 and 2: what the min and the max pass read off the image, filled
    // in one launch: one launch less between the passes (1-2 us of an 8000^2 opening, one H200).
    scratch_image<T> first, edge_rows(a.n_words * V::P, 3, stream);
    a.trash = edge_rows.view().row(0);
    const auto pad_of = [&](bool maximum) {
        return constant ? cval : (maximum ? identity_value<T, true>() : identity_value<T, false>());
    };
    {
        const i64 count = a.n_words * V::P;
        fill_pad_rows_kernel<T><<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(
            edge_rows.view().row(1), edge_rows.view().stride(), count, pad_of(false), pad_of(true));
        check_launch("fill_pad_rows_kernel (scan-line passes)");
    }
    const auto pass = [&](device_view<const T> src, device_view<T> dst, bool maximum, i64 arm_before, i64 arm_after,
                          auto from_scratch, auto to_scratch, auto to_transposed) {
        constexpr bool FromScratch = decltype(from_scratch)::value, ToScratch = decltype(to_scratch)::value;
        constexpr bool ToTransposed = decltype(to_transposed)::value;
        const line_geometry g = make_geometry(rows, granula::detail::clip_arm(arm_before, rows),
                                              granula::detail::clip_arm(arm_after, rows),
                                              tuning_policy::scan_line_max_chunk, true);
        args<T> p = a;
        p.in = src.data();
        p.in_stride = src.stride();
        p.out = dst.data();
        p.out_stride = dst.stride();
        p.g = g;
        p.n_coarse = g.n_coarse();
        p.pad = pad_of(maximum);
        p.pad_row = edge_rows.view().row(maximum ? 2 : 1);
        with_chunk_length<tuning_policy::scan_line_max_chunk>(g.C, [&](auto chunk) {
            constexpr int C = decltype(chunk)::value;
            if (maximum)
                run_pass<V, true, C, FromScratch, ToScratch, ToTransposed>(p, g, stream);
            else
                run_pass<V, false, C, FromScratch, ToScratch, ToTransposed>(p, g, stream);
        });
    };
    // The pass that writes `out`, from `src` (the oriented image or the scratch).
    const auto last_pass = [&](device_view<const T> src, bool maximum, i64 arm_before, i64 arm_after,
                               auto from_scratch) {
        if (out_transposed)
            pass(src, out, maximum, arm_before, arm_after, from_scratch, std::false_type{}, std::true_type{});
        else
            pass(src, out, maximum, arm_before, arm_after, from_scratch, std::false_type{}, std::false_type{});
    };
    if (first_stage_only) {
        last_pass(in, closing, before, after, std::false_type{});
        return;
    }
    first = scratch_image<T>(a.n_words * V::P, rows, stream);
    pass(in, first.view(), closing, before, after, std::false_type{}, std::true_type{}, std::false_type{});
    last_pass(first.view(), !closing, after, before, std::true_type{});
}

}  // namespace granula::cuda::detail
