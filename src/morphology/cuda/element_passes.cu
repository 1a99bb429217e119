// The passes of the general path (element_plan.hpp) on the GPU: runs read at shifts and
// combined in shared-memory tiles straight from the input and its border rule (runs_pass),
// windows along periodic lines and diagonals (sheared columns, sheared_pass; windows of two or
// three positions read directly), and, for the plans runs_pass cannot take, padding an image
// by its border rule and shifted min/max accumulation. Coalesced because neighbouring threads
// take neighbouring columns. `acc` and `src` of the accumulation are scratch images: rows
// 128-byte aligned and padded.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/border_index.hpp"
#include "core/cuda/check.cuh"
#include "granula/core/device.hpp"
#include "morphology/cuda/line_pass.cuh"
#include "morphology/cuda/pair_levels.hpp"
#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/vhgw.cuh"

namespace granula::cuda::detail {
namespace {

using granula::detail::check_launch;

constexpr int threads_x = 128;

template <class T, bool Max>
__device__ __forceinline__ T pick(T a, T b) {
    return Max ? scalar<T>::vmax(a, b) : scalar<T>::vmin(a, b);
}

// Four bytes (two uint16, one float) per thread as one 32-bit word, min/max on the packed
// lanes (__vminu4 ...): the accumulation and the runs kernel.
template <class T>
constexpr int lanes = 4 / sizeof(T);

template <class T, bool Max>
__device__ __forceinline__ std::uint32_t pick_word(std::uint32_t a, std::uint32_t b) {
    if constexpr (sizeof(T) == 1)
        return Max ? __vmaxu4(a, b) : __vminu4(a, b);
    else if constexpr (sizeof(T) == 2)
        return Max ? __vmaxu2(a, b) : __vminu2(a, b);
    else
        return __float_as_uint(pick<float, Max>(__uint_as_float(a), __uint_as_float(b)));
}

unsigned grid_rows(i64 rows) { return static_cast<unsigned>(std::clamp<i64>(rows, 1, 65535)); }

template <class T>
__global__ void pad_kernel(const T* in, i64 in_stride, i64 width, i64 height, T* out, i64 out_stride, i64 out_width,
                           i64 out_height, i64 left, i64 top, border_mode mode, T pad) {
    const i64 x = static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x;
    if (x >= out_width) return;
    const i64 sx = granula::detail::border_index(x - left, width, mode);
    for (i64 y = blockIdx.y; y < out_height; y += gridDim.y) {
        const i64 sy = granula::detail::border_index(y - top, height, mode);
        out[y * out_stride + x] = sx < 0 || sy < 0 ? pad : in[sy * in_stride + sx];
    }
}

// ---- windows along periodic lines (sheared columns) -----------------------------------------------
//
// The periodic line of step (dx, dy), dy >= 1, through the rows y = residue (mod dy): position i
// of virtual column c is the pixel (c + i dx, residue + i dy). Along each virtual column this is
// the vertical pass's two-level van Herk/Gil-Werman (vhgw.cuh); one thread owns P = 4 /
// sizeof(T) adjacent virtual columns, whose pixels at position i are P adjacent pixels of one
// row, starting (c_begin + i dx) mod P past a word boundary for every thread of the block.
// One-pixel words (float32, unaligned views) read through row tables (sheared_vhgw_kernel);
// packed words through shared memory (sheared_staged_kernel). Pixels off the image read `pad`;
// results off it are dropped.
template <class T>
struct sargs {
    const T* in = nullptr;
    i64 in_stride = 0;
    T* out = nullptr;
    i64 out_stride = 0;
    i64 width = 0, height = 0;
    // The result of pixel (x, y) goes to out(x - out_x0, y - out_y0) where that lies inside the
    // out_w x out_h output (a crop of the input's frame: the padded domain of a run group).
    i64 out_x0 = 0, out_y0 = 0, out_w = 0, out_h = 0;
    i64 dx = 0, dy = 1;
    i64 c_begin = 0;  // virtual column of word 0 (a multiple of P)
    i64 n_words = 0;  // words of virtual columns
    i64 before = 0;
    int m = 1, r = 0;
    i64 ca_min = 0, ca_max = 0, n_coarse = 0;
    const T* W = nullptr;  // W(ca) of residue z at row z * n_coarse + ca - ca_min (m >= 2)
    i64 W_stride = 0;
    T* cm = nullptr;  // chunk minima of residue z, row z * n_coarse + k = chunk ca_min + 1 + k
    i64 cm_stride = 0;
    T pad{};
};

constexpr int sheared_threads = 128;

// P pixels starting at x of `row` (null: a row off the image), off-row pixels `pad`.
template <class V>
__device__ __forceinline__ typename V::mem sheared_load(const typename V::elem* row, i64 x, i64 width,
                                                        typename V::elem pad) {
    using mem = typename V::mem;
    constexpr int P = V::P;
    if (row == nullptr) return V::splat_mem(pad);
    if constexpr (P == 1) {
        return x >= 0 && x < width ? load_ro(row + x) : pad;
    } else {
        if (x >= 0 && x + P <= width) {
            const int o = static_cast<int>(x & (P - 1));
            const mem* words = reinterpret_cast<const mem*>(row + (x - o));
            const mem lo = load_ro(words);
            if (o == 0) return lo;
            // The next word starts at x - o + P <= x + P - 1 < width: inside the row.
            return __funnelshift_r(lo, load_ro(words + 1), static_cast<unsigned>(8 * sizeof(typename V::elem) * o));
        }
        mem v = 0;
#pragma unroll
        for (int i = 0; i < P; ++i) {
            const i64 xi = x + i;
            v = V::put(v, i, xi >= 0 && xi < width ? load_ro(row + xi) : pad);
        }
        return v;
    }
}

// Pixels [first, last) of word v, whose pixel 0 belongs at x, where they lie inside the row.
template <class V>
__device__ __forceinline__ void store_pixels(typename V::elem* row, i64 x, i64 width, typename V::mem v, int first,
                                             int last) {
    using mem = typename V::mem;
    constexpr int P = V::P;
    if (first == 0 && last == P && x >= 0 && x + P <= width && (x & (P - 1)) == 0) {
        reinterpret_cast<mem*>(row)[x / P] = v;
        return;
    }
    for (int i = first; i < last; ++i) {
        const i64 xi = x + i;
        if (xi >= 0 && xi < width) row[xi] = V::get(v, i);
    }
}

// Row tables for positions first .. first + count - 1 of residue line `residue`: the row (null
// off the image) and the position's shift i dx.
template <class Ptr, class T>
__device__ __forceinline__ void fill_sheared_rows(Ptr* rows, i64* shifts, int count, i64 first, i64 residue, Ptr base,
                                                  i64 stride, const sargs<T>& a) {
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 p = first + t, y = residue + p * a.dy;
        rows[t] = p >= 0 && y < a.height ? base + y * stride : nullptr;
        shifts[t] = p * a.dx;
    }
}

// Output row tables for positions first .. first + count - 1: the output row (null off the
// output) and the position's shift i dx in output columns.
template <class T>
__device__ __forceinline__ void fill_output_rows(T** rows, i64* shifts, int count, i64 first, i64 residue,
                                                 const sargs<T>& a) {
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 p = first + t, y = residue + p * a.dy - a.out_y0;
        rows[t] = p >= 0 && y >= 0 && y < a.out_h ? a.out + y * a.out_stride : nullptr;
        shifts[t] = p * a.dx - a.out_x0;
    }
}

// The store path of one output position (one-pixel words): pixel w goes to `row` + w for w in
// [lo, hi], where it lies inside the output; row is null for a row off the output.
struct fast_row {
    std::uintptr_t row;
    int lo, hi;
};

template <class T>
__device__ __forceinline__ void fill_fast_rows(fast_row* fast, int count, i64 first, i64 residue, const sargs<T>& a) {
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 p = first + t, y = residue + p * a.dy - a.out_y0;
        fast_row f{0, 1 << 30, -(1 << 30)};
        if (p >= 0 && y >= 0 && y < a.out_h) {
            const i64 x0 = a.c_begin + p * a.dx - a.out_x0;
            f.row = reinterpret_cast<std::uintptr_t>(a.out + y * a.out_stride + x0);
            f.lo = static_cast<int>(min(max(-x0, i64{-1}), i64{1} << 30));
            f.hi = static_cast<int>(min(max(a.out_w - 1 - x0, i64{-2}), i64{1} << 30));
        }
        fast[t] = f;
    }
}

// One-pixel words (float32, and views that are not word aligned): the fast path's load table
// holds, for each position, the address of the block's first pixel. True when every position's
// pixels lie on the image: then the loads need no tests, and with the stores deferred
// (vhgw_run) a chunk's loads issue together, at 6 blocks per SM (80 registers). Measured on one
// H200, 8192^2 float32 line:63:45 (this pass alone): 0.35 -> 0.27 ms with the table, 0.23 with
// the deferred stores. (Packed words: sheared_staged_kernel below.)
template <class T>
__device__ __forceinline__ bool fill_fast_sources(const T** sources, int count, i64 first, i64 residue, i64 block_c0,
                                                  i64 block_c1, const sargs<T>& a) {
    bool inside = true;
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 p = first + t, y = residue + p * a.dy, x0 = block_c0 + p * a.dx;
        const bool in = p >= 0 && y < a.height && x0 >= 0 && block_c1 + p * a.dx <= a.width;
        sources[t] = in ? a.in + y * a.in_stride + x0 : nullptr;
        inside = inside && in;
    }
    return inside;
}

// A run of K chunks of a residue line: chunks ca0 .. ca0 + nchunks - 1, whose a- and b-streams
// start at positions a_first and b_first.
struct sheared_run {
    i64 ca0 = 0, a_first = 0, b_first = 0;
    int nchunks = 0;
};

// body(run) for each run of K chunks of the block's residue line (blockIdx.z), strided over
// blockIdx.y, skipping those whose outputs all miss the image in the block's virtual columns
// [block_c0, block_c1).
template <int C, int K, class T, class F>
__device__ __forceinline__ void for_each_sheared_run(const sargs<T>& a, i64 block_c0, i64 block_c1, F&& body) {
    const i64 residue = blockIdx.z;
    const i64 n_pos = (a.height - residue + a.dy - 1) / a.dy;
    const i64 runs = (a.ca_max - a.ca_min + K) / K;
    for (i64 index = blockIdx.y; index < runs; index += gridDim.y) {
        sheared_run run;
        run.ca0 = a.ca_min + index * K;
        run.nchunks = static_cast<int>(min(static_cast<i64>(K), a.ca_max - run.ca0 + 1));
        run.a_first = run.ca0 * C;
        run.b_first = (run.ca0 + a.m) * C;
        // The run's outputs, positions p0 .. p1: skip it when none lands on the image.
        const i64 p0 = max(run.a_first + a.before, i64{0});
        const i64 p1 = min(run.a_first + a.before + run.nchunks * C - 1, n_pos - 1);
        if (p0 > p1) continue;
        const i64 s0 = min(p0 * a.dx, p1 * a.dx), s1 = max(p0 * a.dx, p1 * a.dx);
        if (block_c1 - 1 + s1 < 0 || block_c0 + s0 >= a.width) continue;
        body(run);
    }
}

template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(sheared_threads, 6) sheared_vhgw_kernel(const sargs<typename V::elem> a) {
    using T = typename V::elem;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    using mem = typename V::mem;
    static_assert(V::P == 1, "one-pixel words; packed words take sheared_staged_kernel");
    __shared__ const T* rows_a[K * C];
    __shared__ i64 shift_a[K * C];
    __shared__ const T* rows_b[K * C + C];
    __shared__ i64 shift_b[K * C + C];
    __shared__ T* rows_out[K * C];
    __shared__ i64 shift_out[K * C];
    __shared__ fast_row fast_out[K * C];
    __shared__ const T* fast_a_rows[K * C];
    __shared__ const T* fast_b_rows[K * C + C];
    const i64 w = static_cast<i64>(blockIdx.x) * sheared_threads + threadIdx.x;
    const int wi = static_cast<int>(w);
    const i64 residue = blockIdx.z;
    const i64 c = a.c_begin + w;  // this thread's virtual column
    const i64 block_c0 = a.c_begin + static_cast<i64>(blockIdx.x) * sheared_threads;
    const i64 block_c1 = block_c0 + sheared_threads;  // exclusive
    for_each_sheared_run<C, K>(a, block_c0, block_c1, [&](const sheared_run& run) {
        const i64 ca0 = run.ca0, a_first = run.a_first, b_first = run.b_first;
        const int nchunks = run.nchunks;
        __syncthreads();  // the previous run's tables are no longer read
        bool inside = fill_fast_sources<T>(fast_a_rows, K * C, a_first, residue, block_c0, block_c1, a);
        inside = fill_fast_sources<T>(fast_b_rows, K * C + a.r, b_first, residue, block_c0, block_c1, a) && inside;
        const bool fast = __syncthreads_and(inside) != 0;
        fill_output_rows<T>(rows_out, shift_out, K * C, a_first + a.before, residue, a);
        fill_fast_rows<T>(fast_out, K * C, a_first + a.before, residue, a);
        if (!fast) {
            fill_sheared_rows<const T*>(rows_a, shift_a, K * C, a_first, residue, a.in, a.in_stride, a);
            fill_sheared_rows<const T*>(rows_b, shift_b, K * C + a.r, b_first, residue, a.in, a.in_stride, a);
        }
        __syncthreads();
        auto fast_a = [&](int p) { return V::unpack(load_ro(fast_a_rows[p] + threadIdx.x)); };
        auto fast_b = [&](int q) { return V::unpack(load_ro(fast_b_rows[q] + threadIdx.x)); };
        auto load_a = [&](int p) {
            return V::unpack(sheared_load<V>(rows_a[p], c + shift_a[p], a.width, a.pad));
        };
        auto load_b = [&](int q) {
            return V::unpack(sheared_load<V>(rows_b[q], c + shift_b[q], a.width, a.pad));
        };
        auto wload = [&](int k) {
            if (w >= a.n_words) return Op::identity();  // past the coarse rows' width
            return V::unpack(load_ro(reinterpret_cast<const mem*>(a.W + (residue * a.n_coarse + ca0 + k - a.ca_min) *
                                                                              a.W_stride) +
                                     w));
        };
        auto store = [&](int k, int j, word v) {
            const int idx = k * C + j;
            const fast_row f = fast_out[idx];
            if (f.row == 0) return;  // the same for the whole block
            const mem m = V::pack(v);
            if (wi >= f.lo && wi <= f.hi)
                reinterpret_cast<mem*>(f.row)[wi] = m;
            else
                store_pixels<V>(rows_out[idx], c + shift_out[idx], a.out_w, m, 0, 1);
        };
        if (fast)
            vhgw_run<Op, C, K, true>(nchunks, a.m, a.r, fast_a, fast_b, wload, store);
        else
            vhgw_run<Op, C, K, true>(nchunks, a.m, a.r, load_a, load_b, wload, store);
    });
}

// ---- packed words (uint8, uint16): the sheared band staged in shared memory ----
//
// At position p a block's 128 words are the row segment [block_c0 + p dx, + 128 P) of image row
// residue + p dy: contiguous, starting o = (block_c0 + p dx) mod P pixels past a word boundary,
// the same o for the whole block. The block copies `staged_rows` positions at a time into a
// slab of shared memory in virtual columns (each word funnel-shifted out of the two aligned
// words around it), runs the engine on the slab with no address arithmetic, tests or branches
// per position, writes the results over the a-rows, and stores them row by row as aligned
// words, each made of two neighbouring results. Blocks step by 127 words and store 127 (thread
// 0's result only completes thread 1's word), so every output word has one writer and none is
// written in parts; the virtual columns start one word early (sheared_words) so that the
// first block's thread 0 holds only columns off the image. Per-position loads and
// lane-realigned stores straight from global memory left the uint8 diagonal latency-bound on
// branches and instruction fetch (Nsight Compute, 8192^2 line:63:45: 0.41 ms, 207 instructions
// per word, 14848 SASS instructions, 34% of stalls on instruction fetch); staged, 127
// instructions per word, and 16384^2 uint8 (1, 1) L = 63 went from 1.28 to 0.52 ms (0.46 with
// split words) on one H200. Storing partial end words pixel by pixel from 128-word blocks
// instead took 0.70 ms (the row stores were 43% of the instructions).
constexpr int staged_words = sheared_threads - 1;  // words a block stores per row
constexpr int staged_rows = tuning_policy::max_chunk;

using slab_rows = std::uint32_t (*)[sheared_threads];  // a slab's rows of 4-byte words

// Positions first .. first + count - 1 into slab rows 0 .. count - 1: this thread's word of
// each, pixels off the image `pad`.
template <class V>
__device__ __forceinline__ void stage_rows(slab_rows slab, int count, i64 first, i64 residue,
                                           i64 block_c0, const sargs<typename V::elem>& a) {
    using T = typename V::elem;
    constexpr int P = V::P;
    const i64 last = first + count - 1;
    const i64 s0 = block_c0 + first * a.dx, s1 = block_c0 + last * a.dx;
    if (first >= 0 && residue + last * a.dy < a.height && min(s0, s1) >= 0 &&
        max(s0, s1) + sheared_threads * P <= a.width) {
        // Every row's segment lies on the image: one or two aligned words per row (o != 0 also
        // reads the next word, which starts inside the row), no tests.
        const char* base = reinterpret_cast<const char*>(a.in + (residue + first * a.dy) * a.in_stride + s0 +
                                                         threadIdx.x * P);
        const i64 step = (a.dy * a.in_stride + a.dx) * static_cast<i64>(sizeof(T));
        const char* px = base;
#pragma unroll 8
        for (int i = 0; i < count; ++i, px += step) {
            const unsigned o = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(px) & 3);
            const auto* words = reinterpret_cast<const std::uint32_t*>(px - o);
            const std::uint32_t lo = load_ro(words), hi = o != 0 ? load_ro(words + 1) : lo;
            slab[i][threadIdx.x] = __funnelshift_r(lo, hi, 8 * o);
        }
        return;
    }
    for (int i = 0; i < count; ++i) {
        const i64 p = first + i, y = residue + p * a.dy;
        const T* row = p >= 0 && y < a.height ? a.in + y * a.in_stride : nullptr;
        slab[i][threadIdx.x] = V::bits(sheared_load<V>(row, block_c0 + threadIdx.x * P + p * a.dx, a.width, a.pad));
    }
}

// Results of output positions first .. first + count - 1 from slab rows 0 .. count - 1 to the
// output, where they land on it: thread t >= 1 writes the aligned word holding pixel P t of the
// block's segment, pixels P - o .. P - 1 of result t - 1 and 0 .. P - o - 1 of result t.
template <class V>
__device__ __forceinline__ void store_rows(slab_rows slab, int count, i64 first, i64 residue,
                                           i64 block_c0, const sargs<typename V::elem>& a) {
    using T = typename V::elem;
    constexpr int P = V::P;
    const int t = static_cast<int>(threadIdx.x);
    const i64 last = first + count - 1;
    const i64 y0 = residue + first * a.dy - a.out_y0, y1 = residue + last * a.dy - a.out_y0;
    const i64 s0 = block_c0 + first * a.dx - a.out_x0, s1 = block_c0 + last * a.dx - a.out_x0;
    if (first >= 0 && y0 >= 0 && y1 < a.out_h && min(s0, s1) >= 0 && max(s0, s1) + sheared_threads * P <= a.out_w) {
        // Every stored word lies on the output: no tests (thread 0 idles).
        if (t == 0) return;
        char* base = reinterpret_cast<char*>(a.out + y0 * a.out_stride + s0 + t * P);
        const i64 step = (a.dy * a.out_stride + a.dx) * static_cast<i64>(sizeof(T));
        char* px = base;
#pragma unroll 8
        for (int i = 0; i < count; ++i, px += step) {
            const unsigned o = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(px) & 3);
            // o = 0: the clamped shift (32) gives result t whole.
            *reinterpret_cast<std::uint32_t*>(px - o) = __funnelshift_rc(slab[i][t - 1], slab[i][t], 32 - 8 * o);
        }
        return;
    }
    if (t == 0) return;
    for (int i = 0; i < count; ++i) {
        const i64 p = first + i, y = residue + p * a.dy - a.out_y0;
        if (p < 0 || y < 0 || y >= a.out_h) continue;
        const i64 S = block_c0 + p * a.dx - a.out_x0;  // output column of the block's first pixel
        const int o = static_cast<int>(S - floor_div(S, P) * P);
        const i64 x = S - o + t * P;
        const std::uint32_t word =
            __funnelshift_rc(slab[i][t - 1], slab[i][t], static_cast<unsigned>(8 * sizeof(T) * (P - o)));
        T* row = a.out + y * a.out_stride;
        if (x >= 0 && x + P <= a.out_w)
            *reinterpret_cast<std::uint32_t*>(row + x) = word;
        else
            store_pixels<V>(row, x, a.out_w, V::from_bits(word), 0, P);
    }
}

// Grid: x = blocks of staged_words words, y = runs of K chunks, z = residues. Each run stages
// staged_rows positions (G chunks) of both streams at a time.
template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(sheared_threads, 6) sheared_staged_kernel(const sargs<typename V::elem> a) {
    using Op = word_op<V, Max>;
    using word = typename V::word;
    constexpr int P = V::P;
    constexpr int G = staged_rows / C, R = G * C;
    static_assert(K % G == 0, "runs of whole stages");
    __shared__ std::uint32_t slab_a[R][sheared_threads];
    __shared__ std::uint32_t slab_b[R][sheared_threads];
    const int t = static_cast<int>(threadIdx.x);
    const i64 w = static_cast<i64>(blockIdx.x) * staged_words + t;
    const i64 residue = blockIdx.z;
    const i64 block_c0 = a.c_begin + static_cast<i64>(blockIdx.x) * staged_words * P;
    const i64 block_c1 = block_c0 + sheared_threads * P;  // exclusive
    auto load = [](std::uint32_t bits) { return V::unpack(V::from_bits(bits)); };
    for_each_sheared_run<C, K>(a, block_c0, block_c1, [&](const sheared_run& sr) {
        const i64 ca0 = sr.ca0, a_first = sr.a_first, b_first = sr.b_first;
        const int nchunks = sr.nchunks;
        word run = Op::identity();
        if (a.r > 0) {  // the b-stream's first r positions
            __syncthreads();
            stage_rows<V>(slab_b, a.r, b_first, residue, block_c0, a);
            __syncthreads();
            for (int q = 0; q < a.r; ++q) run = Op::apply(run, load(slab_b[q][t]));
        }
#pragma unroll 1
        for (int k0 = 0; k0 < nchunks; k0 += G) {
            const int chunks = min(G, nchunks - k0);
            __syncthreads();  // the slabs' last readers are done
            stage_rows<V>(slab_a, chunks * C, a_first + k0 * C, residue, block_c0, a);
            stage_rows<V>(slab_b, chunks * C, b_first + a.r + k0 * C, residue, block_c0, a);
            __syncthreads();
#pragma unroll 1
            for (int g = 0; g < chunks; ++g) {
                auto wload = [&] {
                    if (a.m < 2 || w >= a.n_words) return Op::identity();  // m = 1, or past the coarse rows' width
                    const i64 row = residue * a.n_coarse + ca0 + k0 + g - a.ca_min;
                    return V::unpack(load_ro(reinterpret_cast<const typename V::mem*>(a.W + row * a.W_stride) + w));
                };
                // Each thread overwrites only its own column of slab_a, after reading all of it.
                vhgw_chunk<Op, C>(
                    a.r, run, [&](int j) { return load(slab_a[g * C + j][t]); },
                    [&](int j) { return load(slab_b[g * C + j][t]); }, wload,
                    [&](int j, word v) { slab_a[g * C + j][t] = V::bits(V::pack(v)); });
            }
            __syncthreads();
            store_rows<V>(slab_a, chunks * C, a_first + k0 * C + a.before, residue, block_c0, a);
        }
    });
}

// Chunk minima for the coarse level (m >= 2), in virtual columns: row residue * n_coarse + k =
// min over the positions of chunk ca_min + 1 + k.
template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(sheared_threads) sheared_chunk_kernel(const sargs<typename V::elem> a) {
    using T = typename V::elem;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    using mem = typename V::mem;
    constexpr int P = V::P;
    constexpr int tables = P == 1 ? K * C : 1;  // packed words stage slabs instead
    __shared__ const T* rows[tables];
    __shared__ i64 shifts[tables];
    __shared__ const T* fast_rows[tables];
    __shared__ std::uint32_t slab[P == 1 ? 1 : C][sheared_threads];
    const i64 w = static_cast<i64>(blockIdx.x) * sheared_threads + threadIdx.x;
    const i64 residue = blockIdx.z;
    const i64 c = a.c_begin + w * P;
    const i64 block_c0 = a.c_begin + static_cast<i64>(blockIdx.x) * sheared_threads * P;
    const i64 block_c1 = block_c0 + sheared_threads * P;
    const i64 runs = (a.n_coarse + K - 1) / K;
    for (i64 run = blockIdx.y; run < runs; run += gridDim.y) {
        const i64 first_chunk = run * K, first = (a.ca_min + 1 + first_chunk) * C;
        if constexpr (P > 1) {
#pragma unroll 1
            for (int k = 0; k < K && first_chunk + k < a.n_coarse; ++k) {
                __syncthreads();
                stage_rows<V>(slab, C, first + k * C, residue, block_c0, a);
                __syncthreads();
                word acc = Op::identity();
#pragma unroll
                for (int j = 0; j < C; ++j) acc = Op::apply(acc, V::unpack(V::from_bits(slab[j][threadIdx.x])));
                if (w < a.n_words)
                    reinterpret_cast<mem*>(a.cm + (residue * a.n_coarse + first_chunk + k) * a.cm_stride)[w] = V::pack(acc);
            }
        } else {
            __syncthreads();
            const bool fast =
                __syncthreads_and(fill_fast_sources<T>(fast_rows, K * C, first, residue, block_c0, block_c1, a)) != 0;
            if (!fast) {
                fill_sheared_rows<const T*>(rows, shifts, K * C, first, residue, a.in, a.in_stride, a);
                __syncthreads();
            }
            if (w >= a.n_words) continue;
#pragma unroll 1
            for (int k = 0; k < K; ++k) {
                const i64 idx = first_chunk + k;
                if (idx >= a.n_coarse) break;
                word acc = Op::identity();
                if (fast) {
#pragma unroll
                    for (int j = 0; j < C; ++j)
                        acc = Op::apply(acc, V::unpack(load_ro(fast_rows[k * C + j] + threadIdx.x)));
                } else {
#pragma unroll
                    for (int j = 0; j < C; ++j)
                        acc = Op::apply(acc, V::unpack(sheared_load<V>(rows[k * C + j], c + shifts[k * C + j], a.width,
                                                                       a.pad)));
                }
                reinterpret_cast<mem*>(a.cm + (residue * a.n_coarse + idx) * a.cm_stride)[w] = V::pack(acc);
            }
        }
    }
}

template <class V, bool Max, int C>
void run_sheared(sargs<typename V::elem> a, const line_geometry& g, cudaStream_t stream) {
    using T = typename V::elem;
    constexpr int K = std::max(1, tuning_policy::sheared_rows_per_thread / C);
    constexpr int P = V::P;
    const unsigned word_blocks = static_cast<unsigned>((a.n_words + sheared_threads - 1) / sheared_threads);
    const unsigned dy = static_cast<unsigned>(a.dy);
    scratch_image<T> cm, W;
    if (g.m >= 2) {
        const i64 cols = a.n_words * P;
        cm = scratch_image<T>(cols, a.dy * g.n_coarse(), stream);
        a.cm = cm.view().data();
        a.cm_stride = cm.view().stride();
        const dim3 grid(word_blocks, grid_rows((g.n_coarse() + K - 1) / K), dy);
        sheared_chunk_kernel<V, Max, C, K><<<grid, sheared_threads, 0, stream>>>(a);
        check_launch("sheared_chunk_kernel");
        if (g.m - 1 >= 2) {
            W = scratch_image<T>(cols, a.dy * g.n_coarse(), stream);
            pass_params<T> coarse;
            coarse.before = 0;
            coarse.after = g.m - 2;
            coarse.maximum = Max;
            coarse.mode = border_mode::ignore;
            coarse.pad = identity_value<T, Max>();
            for (i64 z = 0; z < a.dy; ++z)
                vertical_pass<T>(device_view<const T>(cm.view().subview(0, z * g.n_coarse(), cols, g.n_coarse())),
                                 W.view().subview(0, z * g.n_coarse(), cols, g.n_coarse()), coarse, stream);
            a.W = W.view().data();
            a.W_stride = W.view().stride();
        } else {
            a.W = cm.view().data();
            a.W_stride = cm.view().stride();
        }
    }
    if constexpr (P > 1) {
        constexpr int KS = std::max(staged_rows, tuning_policy::sheared_staged_rows) / C;
        const unsigned blocks = static_cast<unsigned>((a.n_words + staged_words - 1) / staged_words);
        const dim3 grid(blocks, grid_rows((g.n_chunks() + KS - 1) / KS), dy);
        sheared_staged_kernel<V, Max, C, KS><<<grid, sheared_threads, 0, stream>>>(a);
        check_launch("sheared_staged_kernel");
    } else {
        const dim3 grid(word_blocks, grid_rows((g.n_chunks() + K - 1) / K), dy);
        sheared_vhgw_kernel<V, Max, C, K><<<grid, sheared_threads, 0, stream>>>(a);
        check_launch("sheared_vhgw_kernel");
    }
}

template <class V>
void sheared_words(device_view<const typename V::elem> in, device_view<typename V::elem> out, i64 out_x0, i64 out_y0,
                   const pass_params<typename V::elem>& p, int dx, int dy, const line_geometry& g, cudaStream_t stream) {
    constexpr int P = V::P;
    const i64 width = in.width(), drift = (g.n - 1) * (dx < 0 ? -dx : dx);
    // Packed words start one word early: the staged kernel's first block stores from its second.
    const i64 c_begin = (floor_div(dx > 0 ? -drift : 0, P) - (P > 1 ? 1 : 0)) * P;
    const i64 c_end = dx < 0 ? width + drift : width;
    sargs<typename V::elem> a;
    a.in = in.data();
    a.in_stride = in.stride();
    a.out = out.data();
    a.out_stride = out.stride();
    a.width = width;
    a.height = in.height();
    a.out_x0 = out_x0;
    a.out_y0 = out_y0;
    a.out_w = out.width();
    a.out_h = out.height();
    a.dx = dx;
    a.dy = dy;
    a.c_begin = c_begin;
    a.n_words = (c_end - c_begin + P - 1) / P;
    a.before = g.before;
    a.m = g.m;
    a.r = g.r;
    a.ca_min = g.ca_min;
    a.ca_max = g.ca_max;
    a.n_coarse = g.n_coarse();
    a.pad = p.pad;
    with_chunk_length(g.C, [&](auto C) {
        if (p.maximum)
            run_sheared<V, true, decltype(C)::value>(a, g, stream);
        else
            run_sheared<V, false, decltype(C)::value>(a, g, stream);
    });
}

// ---- runs read at shifts, in shared-memory tiles ---------------------------------------------------
//
// out(x, y) = min (max) over the terms t of the run of t.length pixels from (x, y) + t.start
// along x (or y), of the input extended by its border rule, with the output pixel (x, y) at
// input (x + org_x, y + org_y); min (max) with prior(x, y) where given. A block stages its
// output tile (128 threads x P pixels wide, 64 rows, or 32 where that does not fit) and the
// terms' reach in shared memory, then builds the doubling levels level_k(p) = min of 2^k pixels from p in place, one level at
// a time, and takes each term of length l from level k = floor(log2 l) at its start and at
// start + l - 2^k. Pair levels (pair_levels.hpp) may follow the doubling levels: level
// j + 1 = min of level j at p and at p + step, which reads two of its lookups at once (a line
// at an angle: its period's runs along a staircase). A thread owns P = 4 / sizeof(T) adjacent
// pixels of 16 rows: every lookup is one 32-bit word (two, funnel-shifted, when the term's
// start is not word aligned; the shift is the same for the whole block), min/max on packed
// lanes (uint8 as two u16x2 halves).
// The kernel is bound by instruction issue (Nsight Compute, line:63:30 at 16384^2: issue slots
// 64% busy, DRAM 39%), so it avoids per-row address multiplies, per-word bounds tests and
// branches on uniform shifts (stop 53: line:255:30 692 -> 593 M warp instructions, disk:31
// 3318 -> 3018 M; 3-12% faster end to end, docs/benchmarks.md). 128-row tiles (ThreadsY = 8,
// one block an SM) were within 2% either way, float32 line:255:30 7% slower: not kept.
// Tile height, chosen per launch: 64 rows (ThreadsY = 4, __launch_bounds__(512, 2), 64 registers;
// uint8 spills 64 bytes) where that tile fits runs_max_shared, else 32 (ThreadsY = 2). One H200,
// 16384^2 uint8 erosion, with the pair levels: 64-row tiles took line:255:30 from 1.886 to 1.597
// ms, line:1001:60 from 3.271 to 2.589 and disk:31 from 5.247 to 4.591 (the reach's extra rows
// staged and built once per 64 rows); at 64 rows alone fewer elements would fit (the others take
// the padded general path): largest uint8 disk 72 -> 59, float32 lines at L 63..1001 every 0.5
// deg 2123 -> 2026 of 2160.
constexpr int runs_threads_x = 128, runs_rows = 16;
constexpr int max_run_terms = 96, max_doubling_levels = 12;
constexpr int max_run_levels = max_doubling_levels + static_cast<int>(pair_levels_max_levels);
// Entries of one or two lookups: a term's at most below the pair levels, one per lookup of theirs.
constexpr int max_run_entries = max_run_terms + static_cast<int>(pair_levels_max_anchors);
constexpr int runs_max_shared = 112 * 1024;

template <class T>
constexpr int runs_tile_w = runs_threads_x * (4 / static_cast<int>(sizeof(T)));

struct run_table {
    int levels = 0;                    // levels 0 .. levels - 1 are built
    int step[max_run_levels]{};        // level k >= 1: min of level k - 1 at p and p + step (bytes)
    int level_end[max_run_levels]{};   // entries [level_end[k - 1], level_end[k]) read level k
    int offset[max_run_entries]{};     // shared-memory byte offset of an entry's first lookup
    int second[max_run_entries]{};     // of its second lookup (-1: none)
};

template <class T>
struct runs_args {
    const T* in = nullptr;
    i64 in_stride = 0, in_w = 0, in_h = 0;
    border_mode mode = border_mode::ignore;
    T pad{};
    T* out = nullptr;
    i64 out_stride = 0, out_w = 0, out_h = 0;
    i64 org_x = 0, org_y = 0;
    const T* prior = nullptr;
    i64 prior_stride = 0;
    int rx0 = 0, ry0 = 0;  // the reach's corner, relative to an output pixel
    int sw = 0, sh = 0;    // the staged tile, sw a multiple of P
};

template <class T, bool Max, int ThreadsY>
__global__ void __launch_bounds__(runs_threads_x * ThreadsY, ThreadsY == 2 ? 3 : 2)
    runs_kernel(const runs_args<T> a, const run_table t) {
    constexpr int runs_threads_y = ThreadsY, runs_block = runs_threads_x * ThreadsY, runs_tile_h = ThreadsY * runs_rows;
    using V = typename split_word<T>::type;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    constexpr int P = 4 / static_cast<int>(sizeof(T));
    constexpr int TW = runs_tile_w<T>;
    extern __shared__ __align__(16) unsigned char runs_shared[];
    T* S = reinterpret_cast<T*>(runs_shared);
    const std::uint32_t* S32 = reinterpret_cast<const std::uint32_t*>(runs_shared);
    std::uint32_t* W32 = reinterpret_cast<std::uint32_t*>(runs_shared);
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
    const int lin = ty * runs_threads_x + tx;
    const int SW = a.sw, SH = a.sh;
    const int row_words = SW * static_cast<int>(sizeof(T)) / 4, total_words = row_words * SH;
    const i64 tiles_y = (a.out_h + runs_tile_h - 1) / runs_tile_h;
    const i64 tx0 = static_cast<i64>(blockIdx.x) * TW;
    const int base_word = ty * row_words + tx;  // the word of this thread's first pixel
    for (i64 tile = blockIdx.y; tile < tiles_y; tile += gridDim.y) {
        const i64 ty0 = tile * runs_tile_h;
        const i64 X0 = tx0 + a.rx0 + a.org_x, Y0 = ty0 + a.ry0 + a.org_y;
        __syncthreads();  // the previous tile is no longer read
        if (X0 >= 0 && X0 + SW <= a.in_w && Y0 >= 0 && Y0 + SH <= a.in_h) {
            // Inside the image: no border rule; 4-byte loads (the two aligned words around each
            // unaligned one, funnel-shifted; the second shares an aligned word with the row's
            // last pixel at most) straight into shared-memory words; the row pointer steps by
            // ThreadsY rows (no 64-bit multiply a row).
            const i64 row_bytes = a.in_stride * static_cast<i64>(sizeof(T));
            const unsigned char* bytes = reinterpret_cast<const unsigned char*>(a.in + (Y0 + ty) * a.in_stride + X0);
            std::uint32_t* dst = W32 + ty * row_words;
#pragma unroll 4
            for (int r = ty; r < SH; r += runs_threads_y) {
                const unsigned mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(bytes) & 3);
                const std::uint32_t* words = reinterpret_cast<const std::uint32_t*>(bytes - mis);
                for (int d = tx; d < row_words; d += runs_threads_x) {
                    const std::uint32_t lo = __ldg(words + d);
                    dst[d] = mis == 0 ? lo : __funnelshift_r(lo, __ldg(words + d + 1), 8 * mis);
                }
                bytes += runs_threads_y * row_bytes;
                dst += runs_threads_y * row_words;
            }
        } else {
            for (int r = ty; r < SH; r += runs_threads_y) {
                const i64 sy = granula::detail::border_index(Y0 + r, a.in_h, a.mode);
                const T* row = sy >= 0 ? a.in + sy * a.in_stride : nullptr;
                for (int c = tx; c < SW; c += runs_threads_x) {
                    const i64 sx = granula::detail::border_index(X0 + c, a.in_w, a.mode);
                    S[r * SW + c] = row != nullptr && sx >= 0 ? load_ro(row + sx) : a.pad;
                }
            }
        }
        __syncthreads();
        word acc[runs_rows];
#pragma unroll
        for (int i = 0; i < runs_rows; ++i) acc[i] = Op::identity();
        for (int k = 0; k < t.levels; ++k) {
            if (k > 0) {
                // level k from level k - 1, in place in increasing order (steps point forward): a
                // batch reads only entries no earlier batch wrote, and writes after every thread
                // has read it. Whole batches without bounds tests, then the last one with them.
                const int hb = t.step[k];
                const int q = hb >> 2, limit = total_words - q;
                const unsigned shift = static_cast<unsigned>(hb & 3) * 8;
                const auto build = [&](auto shifted) {
                    // uint8 64-row tiles: 4 words a batch, as 8 spill (their accumulators are split u16x2 pairs).
                    constexpr int B = sizeof(T) == 1 && ThreadsY == 4 ? 4 : 8, batch = B * runs_block;
                    const auto level_word = [&](int i) {
                        return pick_word<T, Max>(S32[i], decltype(shifted)::value
                                                             ? __funnelshift_r(S32[i + q], S32[i + q + 1], shift)
                                                             : S32[i + q]);
                    };
                    int base = 0;
                    for (; base + batch <= limit; base += batch) {
                        std::uint32_t v[B];
#pragma unroll
                        for (int b = 0; b < B; ++b) v[b] = level_word(base + b * runs_block + lin);
                        __syncthreads();
#pragma unroll
                        for (int b = 0; b < B; ++b) W32[base + b * runs_block + lin] = v[b];
                    }
                    if (base < limit) {
                        std::uint32_t v[B];
#pragma unroll
                        for (int b = 0; b < B; ++b) {
                            const int i = base + b * runs_block + lin;
                            if (i < limit) v[b] = level_word(i);
                        }
                        __syncthreads();
#pragma unroll
                        for (int b = 0; b < B; ++b) {
                            const int i = base + b * runs_block + lin;
                            if (i < limit) W32[i] = v[b];
                        }
                    }
                };
                if (shift == 0)
                    build(std::false_type{});
                else
                    build(std::true_type{});
                __syncthreads();
            }
            const int j_end = t.level_end[k];
            // Each lookup's rows by a pointer stepping ThreadsY rows. (ptxas still rebuilds the
            // step from a uniform register every row, at 64 registers: an IMAD pair a row.)
            const int row_step = runs_threads_y * row_words;
            const auto look = [&](int offset) {
                const std::uint32_t* w = S32 + base_word + (offset >> 2);
                const unsigned s = static_cast<unsigned>(offset & 3) * 8;
#pragma unroll
                for (int i = 0; i < runs_rows; ++i, w += row_step)
                    acc[i] = Op::apply(acc[i], V::unpack(V::from_bits(s == 0 ? w[0] : __funnelshift_r(w[0], w[1], s))));
            };
            for (int j = k == 0 ? 0 : t.level_end[k - 1]; j < j_end; ++j) {
                look(t.offset[j]);
                if (t.second[j] >= 0) look(t.second[j]);
            }
        }
        const i64 x0 = tx0 + static_cast<i64>(tx) * P;
        if (x0 < a.out_w) {
#pragma unroll
            for (int i = 0; i < runs_rows; ++i) {
                const i64 y = ty0 + ty + i * runs_threads_y;
                if (y >= a.out_h) break;
                const typename V::mem m = V::pack(acc[i]);
                T* o = a.out + y * a.out_stride + x0;
                const T* pr = a.prior != nullptr ? a.prior + y * a.prior_stride + x0 : nullptr;
                if constexpr (P > 1) {
                    if (x0 + P <= a.out_w && (reinterpret_cast<std::uintptr_t>(o) & 3) == 0 &&
                        (pr == nullptr || (reinterpret_cast<std::uintptr_t>(pr) & 3) == 0)) {
                        std::uint32_t v = V::bits(m);
                        if (pr != nullptr) v = pick_word<T, Max>(v, *reinterpret_cast<const std::uint32_t*>(pr));
                        *reinterpret_cast<std::uint32_t*>(o) = v;
                        continue;
                    }
                }
#pragma unroll
                for (int p = 0; p < P; ++p)
                    if (x0 + p < a.out_w) {
                        T v = V::get(m, p);
                        if (pr != nullptr) v = pick<T, Max>(v, pr[p]);
                        o[p] = v;
                    }
            }
        }
    }
}

// out = min (max) of out and src, pixel by pixel.
template <class T, bool Max>
__global__ void combine_kernel(T* out, i64 out_stride, const T* src, i64 src_stride, i64 width, i64 height) {
    const i64 x = static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x;
    if (x >= width) return;
    for (i64 y = blockIdx.y; y < height; y += gridDim.y)
        out[y * out_stride + x] = pick<T, Max>(out[y * out_stride + x], src[y * src_stride + x]);
}

struct run_launch {
    std::vector<run_term> terms;
    bool vertical = false;
    int rx0 = 0, rx1 = 0, ry0 = 0, ry1 = 0;
    i64 bytes_per_pixel = 1;
    int threads_y = 4;  // the kernel's ThreadsY: 4 (64-row tiles) where that fits, else 2
    i64 P() const { return 4 / bytes_per_pixel; }
    i64 tile_h() const { return threads_y * runs_rows; }
    i64 sw() const { return (runs_threads_x * P() + rx1 - rx0 + P() - 1) / P() * P(); }
    i64 sh() const { return tile_h() + ry1 - ry0; }
    i64 shared_bytes() const { return sw() * sh() * bytes_per_pixel + 16; }  // + the last word's neighbour
};

int level_of(i64 length) {
    int k = 0;
    while ((i64{2} << k) <= length) ++k;
    return k;
}

// The terms cut into launches: one direction each, at most max_run_terms each; empty when some
// launch would not fit in shared memory. Single pixels go with either direction: with the
// horizontal runs, or with the vertical ones when there are no horizontal runs (a steep line's
// period), so that such an element stages one tile, not two.
std::vector<run_launch> plan_run_launches(const std::vector<run_term>& terms, i64 bytes_per_pixel) {
    const bool singles_vertical =
        std::none_of(terms.begin(), terms.end(), [](const run_term& t) { return t.length > 1 && !t.vertical; });
    std::vector<run_launch> launches;
    for (const bool vertical : {false, true}) {
        std::vector<run_term> mine;
        for (const auto& t : terms)
            if (t.length > 1 ? t.vertical == vertical : vertical == singles_vertical) mine.push_back(t);
        std::stable_sort(mine.begin(), mine.end(),
                         [](const run_term& a, const run_term& b) { return level_of(a.length) < level_of(b.length); });
        for (std::size_t first = 0; first < mine.size(); first += max_run_terms) {
            run_launch l;
            l.vertical = vertical;
            l.bytes_per_pixel = bytes_per_pixel;
            l.terms.assign(mine.begin() + static_cast<std::ptrdiff_t>(first),
                           mine.begin() + static_cast<std::ptrdiff_t>(std::min(mine.size(), first + max_run_terms)));
            i64 x0 = l.terms[0].x, x1 = x0, y0 = l.terms[0].y, y1 = y0;
            for (const auto& t : l.terms) {
                const i64 ex = t.x + (vertical ? 0 : t.length - 1), ey = t.y + (vertical ? t.length - 1 : 0);
                x0 = std::min(x0, t.x), x1 = std::max(x1, ex), y0 = std::min(y0, t.y), y1 = std::max(y1, ey);
                if (level_of(t.length) >= max_doubling_levels) return {};
            }
            if (x1 - x0 > 4096 || y1 - y0 > 4096) return {};
            l.rx0 = static_cast<int>(x0), l.rx1 = static_cast<int>(x1), l.ry0 = static_cast<int>(y0),
            l.ry1 = static_cast<int>(y1);
            if (l.shared_bytes() > runs_max_shared) l.threads_y = 2;
            if (l.shared_bytes() > runs_max_shared) return {};
            launches.push_back(std::move(l));
        }
    }
    return launches;
}

// The launch's lookups by level. Doubling levels 1 .. s, then pair levels (pair_levels.hpp)
// over the anchors of level s: a run of length l >= 2^s read at its start, every 2^s pixels
// and at start + l - 2^s (at s = top, its start and start + l - 2^top). s is the lowest level
// whose anchors fit the pair levels' search (a line at an angle: 0, each pixel of its period's
// runs an anchor; a disk: top, its runs' lookups then taken one each). A run shorter than 2^s is
// read at its own level k = floor(log2 l), at its start and at start + l - 2^k. Offsets in bytes
// of the staged tile.
run_table make_run_table(const run_launch& l) {
    const i64 sw = l.sw(), bpp = l.bytes_per_pixel;
    int top = 0;
    for (const auto& rt : l.terms) top = std::max(top, level_of(rt.length));
    const auto anchor_count = [&](int s) {
        std::size_t n = 0;
        for (const auto& rt : l.terms)
            if (level_of(rt.length) >= s) n += static_cast<std::size_t>((rt.length + (i64{1} << s) - 1) >> s);
        return n;
    };
    int s = 0;
    while (s < top && anchor_count(s) > pair_levels_max_anchors) ++s;
    std::vector<std::vector<tile_point>> lookups(static_cast<std::size_t>(s));
    std::vector<tile_point> anchors;
    for (const auto& rt : l.terms) {
        const int k = std::min(level_of(rt.length), s);
        const i64 piece = i64{1} << k;
        auto& to = k == s ? anchors : lookups[static_cast<std::size_t>(k)];
        for (i64 off = 0;; off = std::min(off + piece, rt.length - piece)) {
            to.push_back({static_cast<int>(rt.x - l.rx0 + (l.vertical ? 0 : off)),
                          static_cast<int>(rt.y - l.ry0 + (l.vertical ? off : 0))});
            if (off == rt.length - piece) break;
        }
    }
    // A level's build is weighed as half a lookup per staged pixel of the output tile, plus half
    // for its barriers. Against a whole one plus one (stop 58, one H100, 16384^2 uint8 erosion,
    // two rounds alternated in one process, ms): line:63:10 1.202 -> 1.166, line:63:60 1.030 ->
    // 1.000, line:101:30 1.317 -> 1.270, line:255:30 1.333 -> 1.293, disk:3 0.874 -> 0.842,
    // diamond:3 0.790 -> 0.765, line:25:10 0.761 -> 0.755; line:63:30, line:1001:60, disk:10,
    // disk:31 and octagon:20:10 within 1%. A quarter was no better, and slower on line:1001:60
    // (1.703) and diamond:3 (0.782); two and four lookups up to 16% and 44% slower.
    const i64 tile = runs_threads_x * l.P() * l.tile_h();
    const pair_levels pairs = plan_pair_levels(anchors, static_cast<int>(((sw * l.sh() + tile - 1) / tile + 1) / 2));
    run_table t;
    for (int k = 1; k <= s; ++k) t.step[k] = static_cast<int>((i64{1} << (k - 1)) * (l.vertical ? sw : 1) * bpp);
    for (std::size_t j = 0; j < pairs.steps.size(); ++j)
        t.step[static_cast<std::size_t>(s) + 1 + j] = static_cast<int>((pairs.steps[j].y * sw + pairs.steps[j].x) * bpp);
    lookups.insert(lookups.end(), pairs.lookups.begin(), pairs.lookups.end());
    t.levels = static_cast<int>(lookups.size());
    int n = 0;
    for (std::size_t k = 0; k < lookups.size(); ++k) {
        const auto& at = lookups[k];
        for (std::size_t i = 0; i < at.size(); i += 2) {  // two lookups per entry
            if (n == max_run_entries) throw std::logic_error("granula bug: run lookups past the table");
            const auto offset = [&](tile_point p) { return static_cast<int>((p.y * sw + p.x) * bpp); };
            t.offset[n] = offset(at[i]);
            t.second[n] = i + 1 < at.size() ? offset(at[i + 1]) : -1;
            ++n;
        }
        t.level_end[k] = n;
    }
    return t;
}

constexpr int max_shifts_per_launch = 32;
struct shift_list {
    i64 x[max_shifts_per_launch];
    i64 y[max_shifts_per_launch];
    int count;
};

template <class T>
__device__ __forceinline__ std::uint32_t splat_word(T v) {
    std::uint32_t w = 0;
    for (int p = 0; p < lanes<T>; ++p) {
        std::uint32_t bits = 0;
        memcpy(&bits, &v, sizeof(T));
        w |= bits << (8 * sizeof(T) * p);
    }
    return w;
}

// `acc` rows are 128-byte aligned (scratch images), so its words load whole; a shifted `src`
// word is funnel-shifted out of the two aligned words around it.
template <class T, bool Max>
__global__ void accumulate_kernel(T* acc, i64 acc_stride, const T* src, i64 src_stride, i64 width, i64 height,
                                  shift_list shifts, bool initialise) {
    constexpr int P = lanes<T>;
    const i64 x0 = (static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x) * P;
    if (x0 >= width) return;
    const bool whole = x0 + P <= width;
    for (i64 y = blockIdx.y; y < height; y += gridDim.y) {
        T* row = acc + y * acc_stride + x0;
        std::uint32_t a = splat_word<T>(identity_value<T, Max>());
        if (!initialise) {
            if (whole)
                a = *reinterpret_cast<const std::uint32_t*>(row);
            else
                for (int p = 0; x0 + p < width; ++p) memcpy(reinterpret_cast<T*>(&a) + p, row + p, sizeof(T));
        }
        for (int s = 0; s < shifts.count; ++s) {
            const i64 ys = y + shifts.y[s], xs = x0 + shifts.x[s];
            if (ys < 0 || ys >= height) continue;
            const T* source = src + ys * src_stride;
            std::uint32_t b;
            if (whole && xs >= 0 && xs + P <= width) {
                // The aligned words around [xs, xs + P): the second starts inside the row when
                // it is needed, and ends inside the row's padding.
                const i64 w0 = xs / P, offset = xs - w0 * P;
                const auto* words = reinterpret_cast<const std::uint32_t*>(source);
                const std::uint32_t lo = __ldg(words + w0);
                b = offset == 0 ? lo
                                : __funnelshift_r(lo, __ldg(words + w0 + 1), static_cast<unsigned>(8 * sizeof(T) * offset));
            } else {
                b = splat_word<T>(identity_value<T, Max>());
                for (int p = 0; p < P; ++p)
                    if (x0 + p < width && xs + p >= 0 && xs + p < width)
                        memcpy(reinterpret_cast<T*>(&b) + p, source + xs + p, sizeof(T));
            }
            a = pick_word<T, Max>(a, b);
        }
        if (whole)
            *reinterpret_cast<std::uint32_t*>(row) = a;
        else
            for (int p = 0; x0 + p < width; ++p) memcpy(row + p, reinterpret_cast<const T*>(&a) + p, sizeof(T));
    }
}

// Short periodic lines, at most sheared_direct_max positions (a line's period repeated two or
// three times, a short diagonal): each output word reads its positions directly, two aligned
// words and a funnel shift each. The van Herk/Gil-Werman kernels' staging and chunks cost more
// than the loads they save there: 16384^2 uint8, line:63:30's periodic line of 2 positions (slope
// 15/26) took 503 us in sheared_staged_kernel (one H200, Nsight Compute), a third of the erosion. Erosions
// at 16384^2, one H200: line:63:30 (2 positions) 1.479 -> 1.266 ms, line:101:30 (3) 1.616 ->
// 1.487, line:3:45 0.414 -> 0.371; with 4 positions no gain (line:127:30 1.621 -> 1.586,
// line:255:75 1.97 -> 2.00, line:4:135 0.42 -> 0.48), so those keep the staged kernel.
// out(x, y) = min (max) over k in [-before, after] of in(x + crop_x + k dx, y + crop_y + k dy), pad
// off `in` (out is the crop of in's frame at (crop_x, crop_y)).
constexpr int sheared_direct_max = 3;

// N = before + after + 1 positions, unrolled so that a row's N loads issue together (a loop over
// them waited on each in turn: 16384^2 uint8, line:3:45 0.54 ms against the staged kernel's 0.41).
// Position i reads column column[i] of row y + row_offset[i]: a word whose N columns are on `in`
// takes the rows whose N rows are too without bounds tests, at a fixed offset from the row.
template <class T, bool Max, int N>
__global__ void sheared_direct_kernel(const T* in, i64 in_stride, i64 in_w, i64 in_h, T* out, i64 out_stride,
                                      i64 out_w, i64 out_h, i64 crop_x, i64 crop_y, int dx, int dy, int before,
                                      T pad) {
    using V = typename split_word<T>::type;
    using Op = word_op<V, Max>;
    using mem = typename V::mem;
    constexpr int P = V::P;
    const i64 x = (static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x) * P;
    if (x >= out_w) return;
    i64 column[N], row_offset[N], offset[N];
    bool columns_inside = true;
    i64 y_first = 0, y_end = out_h;  // the output rows whose N input rows are all on `in`
#pragma unroll
    for (int i = 0; i < N; ++i) {
        column[i] = x + crop_x + static_cast<i64>(i - before) * dx;
        row_offset[i] = crop_y + static_cast<i64>(i - before) * dy;
        offset[i] = row_offset[i] * in_stride + column[i];
        columns_inside = columns_inside && column[i] >= 0 && column[i] + P <= in_w;
        y_first = max(y_first, -row_offset[i]);
        y_end = min(y_end, in_h - row_offset[i]);
    }
    for (i64 y = blockIdx.y; y < out_h; y += gridDim.y) {
        mem v[N];
        if (columns_inside && y >= y_first && y < y_end) {
            const i64 row = y * in_stride;
#pragma unroll
            for (int i = 0; i < N; ++i) v[i] = load_unaligned<V>(in + (row + offset[i]));
        } else {
#pragma unroll
            for (int i = 0; i < N; ++i) {
                const i64 sy = y + row_offset[i], sx = column[i];
                const T* row = in + sy * in_stride + sx;
                const bool row_in = sy >= 0 && sy < in_h;
                v[i] = V::from_bits(0);
#pragma unroll
                for (int q = 0; q < P; ++q)
                    v[i] = V::put(v[i], q, row_in && sx + q >= 0 && sx + q < in_w ? load_ro(row + q) : pad);
            }
        }
        typename V::word acc = V::unpack(v[0]);
#pragma unroll
        for (int i = 1; i < N; ++i) acc = Op::apply(acc, V::unpack(v[i]));
        const mem m = V::pack(acc);
        T* o = out + y * out_stride + x;
        if (x + P <= out_w && (reinterpret_cast<std::uintptr_t>(o) & 3) == 0) {
            *reinterpret_cast<mem*>(o) = m;
        } else {
#pragma unroll
            for (int q = 0; q < P; ++q)
                if (x + q < out_w) o[q] = V::get(m, q);
        }
    }
}

template <class T, bool Max>
void launch_sheared_direct(device_view<const T> in, device_view<T> out, i64 crop_x, i64 crop_y, int dx, int dy,
                           int before, int after, T pad, cudaStream_t stream) {
    // About 8 rows a thread (a grid row per output row would be half a million blocks at 16384^2).
    const dim3 grid(static_cast<unsigned>((out.width() + threads_x * lanes<T> - 1) / (threads_x * lanes<T>)),
                    grid_rows((out.height() + 7) / 8));
    const auto launch = [&](auto n) {
        sheared_direct_kernel<T, Max, decltype(n)::value><<<grid, threads_x, 0, stream>>>(
            in.data(), in.stride(), in.width(), in.height(), out.data(), out.stride(), out.width(), out.height(),
            crop_x, crop_y, dx, dy, before, pad);
    };
    static_assert(sheared_direct_max == 3);
    if (before + after + 1 == 2)
        launch(std::integral_constant<int, 2>{});
    else
        launch(std::integral_constant<int, 3>{});
    check_launch("sheared_direct_kernel");
}

}  // namespace

template <class T>
void padded_copy(device_view<const T> in, device_view<T> out, long long left, long long top, border_mode mode, T pad,
                 cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>((out.width() + threads_x - 1) / threads_x), grid_rows(out.height()));
    pad_kernel<T><<<grid, threads_x, 0, stream>>>(in.data(), in.stride(), in.width(), in.height(), out.data(),
                                                  out.stride(), out.width(), out.height(), left, top, mode, pad);
    check_launch("pad_kernel");
}

template <class T>
void sheared_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, int dx, int dy,
                  cudaStream_t stream, long long out_x0, long long out_y0) {
    const i64 height = in.height(), n = (height + dy - 1) / dy;
    const i64 before = std::min<i64>(p.before, 2 * n), after = std::min<i64>(p.after, 2 * n);
    if (before + after == 0) {
        granula::copy<T>(in.subview(out_x0, out_y0, out.width(), out.height()), out, granula::stream(stream));
        return;
    }
    if (before + after + 1 <= sheared_direct_max) {
        if (p.maximum)
            launch_sheared_direct<T, true>(in, out, out_x0, out_y0, dx, dy, static_cast<int>(before),
                                           static_cast<int>(after), p.pad, stream);
        else
            launch_sheared_direct<T, false>(in, out, out_x0, out_y0, dx, dy, static_cast<int>(before),
                                            static_cast<int>(after), p.pad, stream);
        return;
    }
    const line_geometry g = make_geometry(n, before, after, tuning_policy::max_chunk);
    if constexpr (sizeof(T) < 4) {
        if (!word_aligned<T>(in.data(), in.stride()) || !word_aligned<T>(out.data(), out.stride())) {
            sheared_words<scalar<T>>(in, out, out_x0, out_y0, p, dx, dy, g, stream);
            return;
        }
    }
    sheared_words<typename split_word<T>::type>(in, out, out_x0, out_y0, p, dx, dy, g, stream);
}

struct runs_launches {
    struct planned {
        run_launch launch;
        run_table table;
    };
    std::vector<planned> launches;
};

template <class T>
runs_plan plan_runs(const std::vector<run_term>& terms) {
    const auto launches = plan_run_launches(terms, sizeof(T));
    if (launches.empty() && !terms.empty()) return nullptr;
    auto plan = std::make_shared<runs_launches>();
    for (const auto& l : launches) plan->launches.push_back({l, make_run_table(l)});
    return plan;
}

template <class T>
void runs_pass(device_view<const T> in, border_mode mode, T pad, device_view<T> out, long long org_x, long long org_y,
               device_view<const T> prior, const runs_launches& plan, bool maximum, cudaStream_t stream) {
    const T* prior_data = prior.data();
    i64 prior_stride = prior.stride();
    for (const auto& planned : plan.launches) {
        const run_launch& l = planned.launch;
        const run_table& t = planned.table;
        runs_args<T> a;
        a.in = in.data();
        a.in_stride = in.stride();
        a.in_w = in.width();
        a.in_h = in.height();
        a.mode = mode;
        a.pad = pad;
        a.out = out.data();
        a.out_stride = out.stride();
        a.out_w = out.width();
        a.out_h = out.height();
        a.org_x = org_x;
        a.org_y = org_y;
        a.prior = prior_data;
        a.prior_stride = prior_stride;
        a.rx0 = l.rx0;
        a.ry0 = l.ry0;
        a.sw = static_cast<int>(l.sw());
        a.sh = static_cast<int>(l.sh());
        const std::size_t bytes = static_cast<std::size_t>(l.shared_bytes());
        const dim3 block(runs_threads_x, static_cast<unsigned>(l.threads_y));
        const dim3 grid(static_cast<unsigned>((out.width() + runs_tile_w<T> - 1) / runs_tile_w<T>),
                        grid_rows((out.height() + l.tile_h() - 1) / l.tile_h()));
        const auto launch = [&](auto kernel) {
            if (bytes > 48 * 1024)
                granula::detail::check_cuda(
                    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
                    "cudaFuncSetAttribute");
            kernel<<<grid, block, bytes, stream>>>(a, t);
        };
        if (l.threads_y == 4)
            maximum ? launch(runs_kernel<T, true, 4>) : launch(runs_kernel<T, false, 4>);
        else
            maximum ? launch(runs_kernel<T, true, 2>) : launch(runs_kernel<T, false, 2>);
        check_launch("runs_kernel");
        prior_data = out.data();  // later launches fold in what the earlier ones wrote
        prior_stride = out.stride();
    }
}

template <class T>
void combine(device_view<T> out, device_view<const T> src, bool maximum, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>((out.width() + threads_x - 1) / threads_x), grid_rows(out.height()));
    if (maximum)
        combine_kernel<T, true><<<grid, threads_x, 0, stream>>>(out.data(), out.stride(), src.data(), src.stride(),
                                                                out.width(), out.height());
    else
        combine_kernel<T, false><<<grid, threads_x, 0, stream>>>(out.data(), out.stride(), src.data(), src.stride(),
                                                                 out.width(), out.height());
    check_launch("combine_kernel");
}

template <class T>
void accumulate_shifted(device_view<T> acc, device_view<const T> src, const std::vector<granula::detail::pixel_shift>& shifts,
                        bool maximum, bool initialise, cudaStream_t stream) {
    const i64 words = (acc.width() + lanes<T> - 1) / lanes<T>;
    const dim3 grid(static_cast<unsigned>((words + threads_x - 1) / threads_x), grid_rows(acc.height()));
    for (std::size_t first = 0; first < shifts.size(); first += max_shifts_per_launch) {
        shift_list list{};
        list.count = static_cast<int>(std::min<std::size_t>(max_shifts_per_launch, shifts.size() - first));
        for (int s = 0; s < list.count; ++s) list.x[s] = shifts[first + s].x, list.y[s] = shifts[first + s].y;
        if (maximum)
            accumulate_kernel<T, true><<<grid, threads_x, 0, stream>>>(acc.data(), acc.stride(), src.data(), src.stride(),
                                                                       acc.width(), acc.height(), list,
                                                                       initialise && first == 0);
        else
            accumulate_kernel<T, false><<<grid, threads_x, 0, stream>>>(acc.data(), acc.stride(), src.data(),
                                                                        src.stride(), acc.width(), acc.height(), list,
                                                                        initialise && first == 0);
        check_launch("accumulate_kernel");
    }
}

#define GRANULA_INSTANTIATE(type, name)                                                                          \
    template void padded_copy<type>(device_view<const type>, device_view<type>, long long, long long, border_mode, \
                                    type, cudaStream_t);                                                        \
    template void sheared_pass<type>(device_view<const type>, device_view<type>, const pass_params<type>&, int, int, \
                                     cudaStream_t, long long, long long);                                       \
    template void accumulate_shifted<type>(device_view<type>, device_view<const type>,                          \
                                           const std::vector<granula::detail::pixel_shift>&, bool, bool, cudaStream_t); \
    template runs_plan plan_runs<type>(const std::vector<run_term>&);                                          \
    template void runs_pass<type>(device_view<const type>, border_mode, type, device_view<type>, long long,      \
                                  long long, device_view<const type>, const runs_launches&, bool, cudaStream_t); \
    template void combine<type>(device_view<type>, device_view<const type>, bool, cudaStream_t);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::cuda::detail
