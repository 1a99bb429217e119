// Horizontal min/max pass. uint8 windows under 256 pixels with pixels off the row at p.pad (border
// ignore or constant) go by doubling in registers (row_doubling.cuh); the rest by van
// Herk/Gil-Werman along rows (see vhgw.cuh), by one of two kernels.
// Where a row group and its border extension fit in shared memory (rows up to about 56000
// columns for short windows), the whole-row kernel further down: one read and one write of the
// image whatever L. Otherwise the tiled kernel described here, whose halo of L - 1 columns per
// tile and coarse pass for L > 2 * max_chunk (one more read of the image) made L >= 255 cost
// twice L <= 63 (H200, 16384^2 uint8: 0.88-1.03 ms against 0.44-0.47).
//
// A block stages a tile of 32 row groups (a group is P = 4 / sizeof(T) rows, packed into one
// 4-byte word per column) by a span of columns in shared memory: warps read rows with coalesced
// 4-byte loads, transpose P x P blocks in registers (__byte_perm) and store one word per column
// and group. Each thread then runs the per-line engine on one row group across its columns, so
// the packed SIMD min/max processes P rows at once, exactly as the vertical pass processes P
// columns. Results go back through shared memory and leave as coalesced row stores.
//
// Shared-memory layout: word (col, g) at col * 33 + g. The engine (lanes = the 32 groups, one
// column) reads 32 banks (col + g) mod 32; the loader and writer give a warp 32 / P consecutive
// column words of P groups, so P * w + i + g is again 32 distinct banks. The engine's offsets
// are then compile-time immediates: earlier XOR-swizzled addressing and a task loop with
// integer division cost about 200 instructions per output word (SASS, Nsight Compute).
//
// Columns a block needs: its T window starts [A0, A0 + T) (the a-stream) and the window ends
// [(cb0 + m) C, ... + T + r) (the b-stream). When the two overlap (m C <= T) one span of T + L - 1
// columns is loaded; otherwise two spans of T and T + r.
#pragma once

#include <algorithm>

#include "core/border_index.hpp"
#include "granula/core/device.hpp"
#include "core/cuda/check.cuh"
#include "morphology/cuda/line_pass.cuh"
#include "morphology/cuda/row_doubling.cuh"
#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/vhgw.cuh"

namespace granula::cuda::detail {
namespace {

using granula::detail::check_cuda;
using granula::detail::check_launch;

constexpr int warps = tuning_policy::horizontal_warps;
constexpr int positions = tuning_policy::horizontal_positions_per_thread;
constexpr int tile = tuning_policy::horizontal_tile;  // window starts per block

template <class T>
struct hargs {
    const T* in = nullptr;
    i64 in_stride = 0;
    T* out = nullptr;
    i64 out_stride = 0;
    const T* W = nullptr;  // coarse: W(ca) of row y at W[(ca - ca_min) * W_stride + y]
    i64 W_stride = 0;
    T* cm = nullptr;  // chunk minima, same layout, row k = chunk ca_min + 1 + k
    i64 cm_stride = 0;
    i64 n = 0;  // width: the line length
    i64 height = 0;
    i64 before = 0;
    int m = 1, r = 0;
    i64 ca_min = 0, ca_max = 0, n_coarse = 0;
    border_mode mode = border_mode::ignore;
    T pad{};
    bool in_aligned = false, out_aligned = false;
};

constexpr int pitch = 33;  // shared words per column
__device__ __forceinline__ int sidx(int col, int g) { return col * pitch + g; }

// The task loops of the loader and writer: a task is one column word (P columns) of one group
// of P rows. A warp takes 32 / P consecutive words of P consecutive groups at a time.
template <int P>
struct task_lanes {
    static constexpr int words = 32 / P;  // consecutive column words per warp step
    int ws, gs;                           // this lane's word and group within the step
    __device__ task_lanes() : ws(threadIdx.x % 32 % words), gs(threadIdx.x % 32 / words) {}
};

// Loads columns [c_lo, c_hi) of the 32 * P rows from row0 into shared-memory columns s_off + ...
// Each thread issues the global loads of `batch` tasks before transposing and storing any, to
// keep enough bytes in flight.
template <class T>
__device__ void load_span(const hargs<T>& a, i64 row0, i64 c_lo, i64 c_hi, int s_off, std::uint32_t* sm) {
    using V = typename split_word<T>::type;
    constexpr int P = V::P;
    constexpr int batch = tuning_policy::horizontal_loads_in_flight / P;
    const task_lanes<P> lane;
    const i64 w_lo = floor_div(c_lo, P), w_hi = floor_div(c_hi - 1, P) + 1;
    const int steps = static_cast<int>((w_hi - w_lo + lane.words - 1) / lane.words);
    const int warp = threadIdx.x / 32;
    for (int gstep = warp; gstep < 32 / P; gstep += warps) {
        const int g = gstep * P + lane.gs;
        const T* rows[P];
        bool valid[P];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const i64 y = row0 + g * P + k;
            valid[k] = y < a.height;
            rows[k] = a.in + (valid[k] ? y : 0) * a.in_stride;
        }
        for (int s0 = 0; s0 < steps; s0 += batch) {
            std::uint32_t rw[batch][P];
#pragma unroll
            for (int b = 0; b < batch; ++b) {
                const i64 c0 = (w_lo + static_cast<i64>(s0 + b) * lane.words + lane.ws) * P;
                const bool fast = a.in_aligned && c0 >= 0 && c0 + P <= a.n;
#pragma unroll
                for (int k = 0; k < P; ++k) {
                    std::uint32_t bits = 0;
                    if (s0 + b < steps && valid[k] && c0 < c_hi) {
                        if (fast) {
                            bits = load_ro(reinterpret_cast<const std::uint32_t*>(rows[k] + c0));
                        } else {
                            typename V::mem x{};
#pragma unroll
                            for (int i = 0; i < P; ++i) {
                                const i64 c = c0 + i;
                                if (c < c_lo || c >= c_hi) continue;
                                const i64 idx = granula::detail::border_index(c, a.n, a.mode);
                                x = V::put(x, i, idx < 0 ? a.pad : load_ro(rows[k] + idx));
                            }
                            bits = V::bits(x);
                        }
                    }
                    rw[b][k] = bits;
                }
            }
#pragma unroll
            for (int b = 0; b < batch; ++b) {
                if (s0 + b >= steps) break;
                const i64 c0 = (w_lo + static_cast<i64>(s0 + b) * lane.words + lane.ws) * P;
                std::uint32_t cw[P];
                transpose_words<P>(rw[b], cw);
#pragma unroll
                for (int i = 0; i < P; ++i) {
                    const i64 c = c0 + i;
                    if (c >= c_lo && c < c_hi) sm[sidx(static_cast<int>(c - c_lo) + s_off, g)] = cw[i];
                }
            }
        }
    }
}

// Stores output columns [x_lo, x_hi) (inside the image) from shared-memory columns x - shift.
template <class T>
__device__ void store_span(const hargs<T>& a, i64 row0, i64 x_lo, i64 x_hi, i64 shift, const std::uint32_t* sm) {
    using V = typename split_word<T>::type;
    constexpr int P = V::P;
    if (x_lo >= x_hi) return;
    const task_lanes<P> lane;
    const i64 w_lo = floor_div(x_lo, P), w_hi = floor_div(x_hi - 1, P) + 1;
    const int steps = static_cast<int>((w_hi - w_lo + lane.words - 1) / lane.words);
    const int warp = threadIdx.x / 32;
    for (int gstep = warp; gstep < 32 / P; gstep += warps) {
        const int g = gstep * P + lane.gs;
        for (int step = 0; step < steps; ++step) {
            const i64 c0 = (w_lo + static_cast<i64>(step) * lane.words + lane.ws) * P;
            if (c0 >= x_hi) continue;
            std::uint32_t cw[P];
#pragma unroll
            for (int i = 0; i < P; ++i) {
                const i64 c = c0 + i;
                cw[i] = (c >= x_lo && c < x_hi) ? sm[sidx(static_cast<int>(c - shift), g)] : 0u;
            }
            std::uint32_t rw[P];
            transpose_words<P>(cw, rw);
            const bool fast = a.out_aligned && c0 >= x_lo && c0 + P <= x_hi;
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const i64 y = row0 + g * P + k;
                if (y >= a.height) continue;
                T* row = a.out + y * a.out_stride;
                if (fast) {
                    *reinterpret_cast<std::uint32_t*>(row + c0) = rw[k];
                } else {
                    const typename V::mem x = V::from_bits(rw[k]);
#pragma unroll
                    for (int i = 0; i < P; ++i) {
                        const i64 c = c0 + i;
                        if (c >= x_lo && c < x_hi) row[c] = V::get(x, i);
                    }
                }
            }
        }
    }
}

// Shared-memory columns of the main kernel: the input span(s), then (when the two streams share
// one span) a separate output span; otherwise results overwrite the thread's own a-columns.
struct span_layout {
    bool merged;   // one input span [A0, A0 + T + L - 1)
    int b_col0;    // shared column of the b-stream's first position, relative to a warp's a-columns
    int out_col0;  // shared column of the result for window start A0
    int columns;   // shared columns in all
};

__host__ __device__ inline span_layout make_layout(int m, int r, int C) {
    span_layout s;
    s.merged = static_cast<i64>(m) * C <= tile;
    if (s.merged) {
        s.b_col0 = m * C;
        s.out_col0 = tile + m * C + r;  // after the input span of T + L - 1 columns
        s.columns = s.out_col0 + tile;
    } else {
        s.b_col0 = tile;
        s.out_col0 = 0;
        s.columns = 2 * tile + r;
    }
    return s;
}

template <class T, bool Max, int C>
__global__ void __launch_bounds__(warps * 32, 4) horizontal_vhgw_kernel(const hargs<T> a) {
    using V = typename split_word<T>::type;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    using mem = typename V::mem;
    constexpr int P = V::P;
    constexpr int K = positions / C;
    extern __shared__ std::uint32_t sm[];
    const mem* smw = reinterpret_cast<const mem*>(sm);
    mem* smo = reinterpret_cast<mem*>(sm);
    const int g = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const i64 cb0 = a.ca_min + static_cast<i64>(blockIdx.x) * (warps * K);
    const i64 A0 = cb0 * C;
    const span_layout lay = make_layout(a.m, a.r, C);
    const i64 ca0 = cb0 + warp * K;
    const int nchunks = static_cast<int>(max(i64{0}, min(static_cast<i64>(K), a.ca_max - ca0 + 1)));
    const int a_col = warp * K * C, b_col = a_col + lay.b_col0, o_col = a_col + lay.out_col0;
    const i64 bands = (a.height + 32 * P - 1) / (32 * P);
    for (i64 band = blockIdx.y; band < bands; band += gridDim.y) {
        const i64 row0 = band * 32 * P;
        if (lay.merged) {
            load_span(a, row0, A0, A0 + lay.out_col0, 0, sm);
        } else {
            load_span(a, row0, A0, A0 + tile, 0, sm);
            const i64 B0 = (cb0 + a.m) * C;
            load_span(a, row0, B0, B0 + tile + a.r, tile, sm);
        }
        __syncthreads();
        const mem* wrow = reinterpret_cast<const mem*>(a.W + row0) + g;
        const mem* a_base = smw + sidx(a_col, g);
        const mem* b_base = smw + sidx(b_col, g);
        mem* o_base = smo + sidx(o_col, g);
        auto load_a = [&](int p) { return V::unpack(a_base[p * pitch]); };
        auto load_b = [&](int q) { return V::unpack(b_base[q * pitch]); };
        auto wload = [&](int k) { return V::unpack(load_ro(wrow + (ca0 + k - a.ca_min) * (a.W_stride / P))); };
        auto store = [&](int k, int j, word v) { o_base[(k * C + j) * pitch] = V::pack(v); };
        vhgw_run<Op, C, K>(nchunks, a.m, a.r, load_a, load_b, wload, store);
        __syncthreads();
        // Output x = window start + before; its result sits at column x - before - A0 + out_col0.
        store_span(a, row0, max(A0 + a.before, i64{0}), min(A0 + a.before + tile, a.n),
                   A0 + a.before - lay.out_col0, sm);
        __syncthreads();
    }
}

// Chunk minima along rows for the coarse level, written transposed: cm row k holds, for every
// image row, the min of columns (ca_min + 1 + k) * C + [0, C).
template <class T, bool Max, int C>
__global__ void __launch_bounds__(warps * 32) horizontal_chunk_kernel(const hargs<T> a) {
    using V = typename split_word<T>::type;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    using mem = typename V::mem;
    constexpr int P = V::P;
    constexpr int K = positions / C;
    extern __shared__ std::uint32_t sm[];
    const mem* smw = reinterpret_cast<const mem*>(sm);
    const int g = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const i64 k0 = static_cast<i64>(blockIdx.x) * (warps * K);
    const i64 c_first = (a.ca_min + 1 + k0) * C;
    const i64 bands = (a.height + 32 * P - 1) / (32 * P);
    for (i64 band = blockIdx.y; band < bands; band += gridDim.y) {
        const i64 row0 = band * 32 * P;
        load_span(a, row0, c_first, c_first + tile, 0, sm);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const i64 idx = k0 + warp * K + k;
            if (idx < a.n_coarse) {
                word acc = Op::identity();
#pragma unroll
                for (int j = 0; j < C; ++j) acc = Op::apply(acc, V::unpack(smw[sidx((warp * K + k) * C + j, g)]));
                reinterpret_cast<mem*>(a.cm + idx * a.cm_stride + row0)[g] = V::pack(acc);
            }
        }
        __syncthreads();
    }
}

template <class T, bool Max, int C>
void run_horizontal(hargs<T> a, const line_geometry& geo, cudaStream_t stream) {
    constexpr int P = split_word<T>::type::P;
    constexpr int K = positions / C;
    const i64 bands = (a.height + 32 * P - 1) / (32 * P);
    const unsigned grid_y = static_cast<unsigned>(std::min<i64>(bands, 65535));
    // Coarse images hold one column per image row, padded to whole bands of 32 * P rows.
    const i64 coarse_width = bands * 32 * P;
    scratch_image<T> cm, W;
    if (geo.m >= 2) {
        cm = scratch_image<T>(coarse_width, geo.n_coarse(), stream);
        a.cm = cm.view().data();
        a.cm_stride = cm.view().stride();
        const dim3 grid(static_cast<unsigned>((geo.n_coarse() + warps * K - 1) / (warps * K)), grid_y);
        horizontal_chunk_kernel<T, Max, C><<<grid, warps * 32, tile * pitch * 4, stream>>>(a);
        check_launch("horizontal_chunk_kernel");
        const device_view<const T> window = chunk_window<T, Max>(cm.view(), geo.m, W, stream).rows;
        a.W = window.data();
        a.W_stride = window.stride();
    }
    const span_layout lay = make_layout(geo.m, geo.r, C);
    const std::size_t smem = static_cast<std::size_t>(lay.columns) * pitch * 4;
    auto kernel = horizontal_vhgw_kernel<T, Max, C>;
    if (smem > 48 * 1024)
        check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                   "cudaFuncSetAttribute");
    const dim3 grid(static_cast<unsigned>((geo.n_chunks() + warps * K - 1) / (warps * K)), grid_y);
    kernel<<<grid, warps * 32, smem, stream>>>(a);
    check_launch("horizontal_vhgw_kernel");
}

template <class T, bool Max>
void dispatch_chunk(const hargs<T>& a, const line_geometry& g, cudaStream_t stream) {
    static_assert(tuning_policy::max_chunk == 32 && positions % 32 == 0, "chunk lengths up to 32 divide a thread's span");
    with_chunk_length(g.C, [&](auto C) { run_horizontal<T, Max, decltype(C)::value>(a, g, stream); });
}

// ---- Whole-row kernel ---------------------------------------------------------------------------
//
// When a row group (P rows packed into one 4-byte word per column, as above) fits in shared
// memory with its border extension, a block owns whole rows: it reads them once (16-byte loads),
// runs van Herk/Gil-Werman with segments of the full window length L over the extended row, and
// writes them once (16-byte stores). No halo and no coarse pass, whatever L.
//
// In the extended row t = x + before (t in [0, NE), NE = n + L - 1), the window of output x is
// [x, x + L - 1]. With segments [kL, kL + L): out(x) = min(S(x), F(x + L - 1)), S the suffix min
// within x's segment and F the prefix min within the segment of x + L - 1. A thread takes a run
// of row_run consecutive outputs x0 .. x0 + row_run - 1 and scans both in registers: S over the
// words at x0 + j, F over those at x0 + L - 1 + j. One block-wide scan of (segment-boundary
// flag, aggregate) pairs, S and F together, gives each run its two carries. Tiles of
// blockDim * row_run outputs are independent: the carries into a tile (S from the tile's end to
// its segment's end, F from the segment start to the tile's first F position) cover fewer than L
// words and are reduced directly. So S never leaves registers (shared memory holds only the
// extended row, half of what storing S took), and a row group costs three barriers (after the
// load, and two in the block scan per tile). The extended row is followed by row_run identity
// words, so no run tests its bounds word by word.
//
// Measured (H200, bench_gpu_morphology, erosion, L = 3 .. 1001), 16384^2 uint8 and 8192^2
// float32: 0.31-0.32 and 0.20-0.22 ms, flat in L (2.4-2.5x and 1.6-1.7x a copy). The kernel
// this replaces stored S in shared memory (139 KB for 16384 uint8 columns: one 1024-thread block
// per SM), chained tile carries and reduced the initial carries in one thread: eight barriers per
// row group, 0.40-0.41 and 0.28-0.29 ms; Nsight Compute had it latency-bound between the phases of the single block
// (issue slots 50% busy, DRAM 27%). Also tried there without gain: a cp.async copy of the next
// row group into a third shared-memory area, 17- or 19-word runs that are conflict-free without
// padding, and the output staged through shared memory.
constexpr int row_run = tuning_policy::horizontal_row_run;

// Shared-memory index of word i: one word of padding per 32, so that runs of row_run words read
// by consecutive threads fall in (at most two-way conflicting) distinct banks.
__host__ __device__ constexpr int rpad(int i) { return i + (i >> 5); }

// Word t0 + j of a padded array for j < row_run, t0 not necessarily aligned: the padding word
// falls at most once inside the run, after j = 32 - t0 % 32.
template <class M>
struct run_ptr {
    M* p;
    int jump;
    __device__ run_ptr(M* base, int t0) : p(base + rpad(t0)), jump(32 - (t0 & 31)) {}
    __device__ M& operator[](int j) const { return p[j + (j >= jump ? 1 : 0)]; }
};

template <class T>
struct rargs {
    const T* in = nullptr;
    i64 in_stride = 0;
    T* out = nullptr;
    i64 out_stride = 0;
    i64 height = 0;
    int n = 0, before = 0, L = 0, NE = 0;
    border_mode mode = border_mode::ignore;
    T pad{};
    bool in_aligned = false, out_aligned = false;  // rows start on 16-byte boundaries
};

// Loads columns [c0, c0 + row_run) of rows row0 .. row0 + P - 1 as column words.
template <class T>
__device__ __forceinline__ void load_unit(const rargs<T>& a, i64 row0, int c0, typename split_word<T>::type::mem* cw) {
    using V = typename split_word<T>::type;
    constexpr int P = V::P, per_row = row_run / P;  // 4-byte words of one row in the unit
    if (a.in_aligned && c0 + row_run <= a.n && row0 + P <= a.height) {
        std::uint32_t rw[P][per_row];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const uint4* src = reinterpret_cast<const uint4*>(a.in + (row0 + k) * a.in_stride + c0);
#pragma unroll
            for (int q = 0; q < per_row / 4; ++q) {
                const uint4 v = load_ro(src + q);
                rw[k][4 * q] = v.x;
                rw[k][4 * q + 1] = v.y;
                rw[k][4 * q + 2] = v.z;
                rw[k][4 * q + 3] = v.w;
            }
        }
#pragma unroll
        for (int w = 0; w < per_row; ++w) {
            std::uint32_t in[P], out[P];
#pragma unroll
            for (int k = 0; k < P; ++k) in[k] = rw[k][w];
            transpose_words<P>(in, out);
#pragma unroll
            for (int i = 0; i < P; ++i) cw[w * P + i] = V::from_bits(out[i]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < row_run; ++j) {
            typename V::mem x{};
            for (int k = 0; k < P; ++k)
                if (row0 + k < a.height && c0 + j < a.n) x = V::put(x, k, load_ro(a.in + (row0 + k) * a.in_stride + c0 + j));
            cw[j] = x;
        }
    }
}

// Stores column words for columns [x0, x0 + row_run) (those inside the image) of the row group.
// Called by every lane of a warp. Where a row's part of a run is several 16-byte vectors, lane
// pairs swap halves first so that each store instruction writes whole 32-byte sectors: with
// each lane writing its own 64 bytes, float32 rows went out as half sectors and the kernel was
// bound by L2 write requests (84% L2, 14% DRAM throughput, Nsight Compute).
template <class T>
__device__ __forceinline__ void store_unit(const rargs<T>& a, i64 row0, int x0, const typename split_word<T>::type::mem* cw) {
    using V = typename split_word<T>::type;
    constexpr int P = V::P, per_row = row_run / P, Q = per_row / 4;  // Q vectors per row
    std::uint32_t rw[P][per_row];
#pragma unroll
    for (int w = 0; w < per_row; ++w) {
        std::uint32_t in[P], out[P];
#pragma unroll
        for (int i = 0; i < P; ++i) in[i] = V::bits(cw[w * P + i]);
        transpose_words<P>(in, out);
#pragma unroll
        for (int k = 0; k < P; ++k) rw[k][w] = out[k];
    }
    // Pass s of a pair writes its vectors 2s (even lane) and 2s + 1 (odd lane) of the pair's 2Q.
    // For s < Q/2 these are the even lane's, for s >= Q/2 the odd lane's: each lane gives the
    // other the vectors it will not store (even: its odd ones, odd: its even ones), received into
    // the slots just given away, so both then store slot 2s (s < Q/2) or 2(s - Q/2) + 1.
    const bool odd = Q > 1 && (threadIdx.x & 1);
    if constexpr (Q > 1) {
#pragma unroll
        for (int k = 0; k < P; ++k)
#pragma unroll
            for (int m = 0; m < Q / 2; ++m)
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    std::uint32_t &lo = rw[k][8 * m + i], &hi = rw[k][8 * m + 4 + i];
                    const std::uint32_t got = __shfl_xor_sync(0xffffffffu, odd ? lo : hi, 1);
                    lo = odd ? got : lo;
                    hi = odd ? hi : got;
                }
    }
    const int base = odd ? x0 - row_run : x0;  // the pair's (or lane's) first column
    if (a.out_aligned && base + (Q > 1 ? 2 : 1) * row_run <= a.n && row0 + P <= a.height) {
#pragma unroll
        for (int k = 0; k < P; ++k) {
            uint4* dst = reinterpret_cast<uint4*>(a.out + (row0 + k) * a.out_stride + base);
#pragma unroll
            for (int s = 0; s < Q; ++s) {
                const int slot = Q == 1 ? 0 : s < Q / 2 ? 2 * s : 2 * (s - Q / 2) + 1;
                dst[Q == 1 ? 0 : 2 * s + odd] =
                    make_uint4(rw[k][4 * slot], rw[k][4 * slot + 1], rw[k][4 * slot + 2], rw[k][4 * slot + 3]);
            }
        }
    } else {
        // Element by element from the words before the swap (cw).
        for (int k = 0; k < P; ++k) {
            if (row0 + k >= a.height) break;
            T* row = a.out + (row0 + k) * a.out_stride;
#pragma unroll
            for (int j = 0; j < row_run; ++j)
                if (x0 + j < a.n) row[x0 + j] = V::get(cw[j], k);
        }
    }
}

// The block-wide part of the two segmented scans of a tile: S over threads in decreasing order,
// F in increasing order; pairs combine as (earlier, later) -> later.flag ? later.v : op(earlier.v,
// later.v). (s, sf) and (f, ff) are each thread's run aggregate and boundary flag; on return they
// hold the carry into the run (everything before it in scan order back to the nearest
// boundary, starting from the tile carries). The tile carries are the min over the partial
// values each warp left in red[0] (S) and red[1] (F).
template <class V>
struct scan_scratch {
    typename V::mem v[2][32], c[2][32], red[2][32];
    int f[2][32];
};

template <class V, class Op>
__device__ __forceinline__ void block_carries(typename V::word& s, int sf, typename V::word& f, int ff,
                                              scan_scratch<V>& sc) {
    using word = typename V::word;
    const unsigned all = 0xffffffffu;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const word id = Op::identity();
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const word os = V::unpack(__shfl_down_sync(all, V::pack(s), d));
        const int osf = __shfl_down_sync(all, sf, d);
        const word of = V::unpack(__shfl_up_sync(all, V::pack(f), d));
        const int off = __shfl_up_sync(all, ff, d);
        if (lane + d < 32) {
            if (!sf) s = Op::apply(os, s);
            sf |= osf;
        }
        if (lane >= d) {
            if (!ff) f = Op::apply(of, f);
            ff |= off;
        }
    }
    word es = V::unpack(__shfl_down_sync(all, V::pack(s), 1));
    int esf = __shfl_down_sync(all, sf, 1);
    word ef = V::unpack(__shfl_up_sync(all, V::pack(f), 1));
    int eff = __shfl_up_sync(all, ff, 1);
    if (lane == 31) {
        es = id;
        esf = 0;
    }
    if (lane == 0) {
        ef = id;
        eff = 0;
        sc.v[0][warp] = V::pack(s);
        sc.f[0][warp] = sf;
    }
    if (lane == 31) {
        sc.v[1][warp] = V::pack(f);
        sc.f[1][warp] = ff;
    }
    __syncthreads();
    if (warp == 0) {
        // Lane l takes the l-th warp in each scan order: nw - 1 - l for S, l for F.
        const int ws = nw - 1 - lane;
        word vs = lane < nw ? V::unpack(sc.v[0][ws]) : id, vf = lane < nw ? V::unpack(sc.v[1][lane]) : id;
        int fs = lane < nw ? sc.f[0][ws] : 0, fl = lane < nw ? sc.f[1][lane] : 0;
        word ts = lane < nw ? V::unpack(sc.red[0][lane]) : id, tf = lane < nw ? V::unpack(sc.red[1][lane]) : id;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            ts = Op::apply(ts, V::unpack(__shfl_xor_sync(all, V::pack(ts), d)));
            tf = Op::apply(tf, V::unpack(__shfl_xor_sync(all, V::pack(tf), d)));
            const word os = V::unpack(__shfl_up_sync(all, V::pack(vs), d));
            const int ofs = __shfl_up_sync(all, fs, d);
            const word of = V::unpack(__shfl_up_sync(all, V::pack(vf), d));
            const int ofl = __shfl_up_sync(all, fl, d);
            if (lane >= d) {
                if (!fs) vs = Op::apply(os, vs);
                fs |= ofs;
                if (!fl) vf = Op::apply(of, vf);
                fl |= ofl;
            }
        }
        word xs = V::unpack(__shfl_up_sync(all, V::pack(vs), 1)), xf = V::unpack(__shfl_up_sync(all, V::pack(vf), 1));
        int xsf = __shfl_up_sync(all, fs, 1), xff = __shfl_up_sync(all, fl, 1);
        if (lane == 0) {
            xs = xf = id;
            xsf = xff = 0;
        }
        if (lane < nw) {
            sc.c[0][ws] = V::pack(xsf ? xs : Op::apply(ts, xs));
            sc.c[1][lane] = V::pack(xff ? xf : Op::apply(tf, xf));
        }
    }
    __syncthreads();
    s = esf ? es : Op::apply(V::unpack(sc.c[0][warp]), es);
    f = eff ? ef : Op::apply(V::unpack(sc.c[1][warp]), ef);
}

// Row group row0 (rows row0 .. row0 + P - 1 as column words) into the extended row `ext`, its
// border words straight from the image (no barrier between the row and its border).
template <class T>
__device__ __forceinline__ void load_row_group(const rargs<T>& a, i64 row0, typename split_word<T>::type::mem* ext) {
    using V = typename split_word<T>::type;
    using mem = typename V::mem;
    constexpr int P = V::P, E = row_run;
    const int n = a.n, before = a.before, tid = threadIdx.x;
    for (int c0 = tid * E; c0 < n; c0 += blockDim.x * E) {
        mem cw[E];
        load_unit(a, row0, c0, cw);
        const run_ptr<mem> dst(ext, before + c0);
        if (c0 + E <= n) {
#pragma unroll
            for (int j = 0; j < E; ++j) dst[j] = cw[j];
        } else {
#pragma unroll
            for (int j = 0; j < E; ++j)
                if (c0 + j < n) dst[j] = cw[j];
        }
    }
    const mem pad = V::splat_mem(a.pad);
    auto border = [&](int t) {
        const i64 idx = granula::detail::border_index(t - before, n, a.mode);
        mem x = pad;
        if (idx >= 0) {
            x = mem{};
            for (int k = 0; k < P; ++k)
                if (row0 + k < a.height) x = V::put(x, k, load_ro(a.in + (row0 + k) * a.in_stride + idx));
        }
        ext[rpad(t)] = x;
    };
    for (int t = tid; t < before; t += blockDim.x) border(t);
    for (int t = before + n + tid; t < a.NE; t += blockDim.x) border(t);
}

// One min (max) pass over the extended row `ext` (NE = n + L - 1 words, then row_run identity
// words): sink(x0, out) receives the results for x0 .. x0 + row_run - 1, called by every thread
// (x0 may lie past the row). Reads `ext` only before its last barrier.
template <class V, class Op, class Sink>
__device__ __forceinline__ void row_stage(const typename V::mem* ext, int n, int L, scan_scratch<V>& sc, Sink&& sink) {
    using word = typename V::word;
    using mem = typename V::mem;
    constexpr int E = row_run;
    const int NE = n + L - 1, TS = blockDim.x * E, NS = (n + E - 1) / E * E;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const word id = Op::identity();
    for (int X0 = 0; X0 < NS; X0 += TS) {
        // Tile carries: S from min(X0 + TS, NS) to its segment's end, F from the segment
        // start of X0 + L - 1 to it.
        {
            const int hs = min(X0 + TS, NS), es = min(NE, ((hs - 1) / L + 1) * L);
            const int ff = X0 + L - 1, bf = ff / L * L;
            word cs = id, cf = id;
            for (int t = hs + tid; t < es; t += blockDim.x) cs = Op::apply(cs, V::unpack(ext[rpad(t)]));
            for (int t = bf + tid; t < ff; t += blockDim.x) cf = Op::apply(cf, V::unpack(ext[rpad(t)]));
#pragma unroll
            for (int d = 16; d > 0; d >>= 1) {
                cs = Op::apply(cs, V::unpack(__shfl_xor_sync(0xffffffffu, V::pack(cs), d)));
                cf = Op::apply(cf, V::unpack(__shfl_xor_sync(0xffffffffu, V::pack(cf), d)));
            }
            if (lane == 0) {
                sc.red[0][warp] = V::pack(cs);
                sc.red[1][warp] = V::pack(cf);
            }
        }
        const int x0 = X0 + tid * E;
        const bool active = x0 < NS;
        const int rx = active ? x0 % L : 0;
        // S over x0 + j (segment ends where x0 + j + 1 is a multiple of L), kept packed.
        mem s[E];
        unsigned ends = 0;
        word vs;
        {
            word v[E];
#pragma unroll
            for (int j = 0; j < E; ++j) v[j] = active ? V::unpack(ext[rpad(x0) + j]) : id;
            if (active)
                for (int j = L - 1 - rx; j < E; j += L) ends |= 1u << j;
#pragma unroll
            for (int j = E - 2; j >= 0; --j)
                if (!(ends >> j & 1u)) v[j] = Op::apply(v[j], v[j + 1]);
#pragma unroll
            for (int j = 0; j < E; ++j) s[j] = V::pack(v[j]);
            vs = v[0];
        }
        // F over t = x0 + L - 1 + j (segments start where t is a multiple of L).
        mem fw[E];
        unsigned starts = 0;
        word vf;
        {
            word v[E];
            const run_ptr<const mem> src(ext, x0 + L - 1);
#pragma unroll
            for (int j = 0; j < E; ++j) v[j] = active ? V::unpack(src[j]) : id;
            const int rt = rx == 0 ? L - 1 : rx - 1;  // (x0 + L - 1) % L
            if (active)
                for (int j = rt == 0 ? 0 : L - rt; j < E; j += L) starts |= 1u << j;
#pragma unroll
            for (int j = 1; j < E; ++j)
                if (!(starts >> j & 1u)) v[j] = Op::apply(v[j - 1], v[j]);
#pragma unroll
            for (int j = 0; j < E; ++j) fw[j] = V::pack(v[j]);
            vf = v[E - 1];
        }
        block_carries<V, Op>(vs, ends != 0, vf, starts != 0, sc);
        const int last = ends ? 31 - __clz(ends) : -1, first = starts ? __ffs(starts) - 1 : E;
        mem out[E];
#pragma unroll
        for (int j = 0; j < E; ++j) {
            const word sj = j > last ? Op::apply(V::unpack(s[j]), vs) : V::unpack(s[j]);
            const word fj = j < first ? Op::apply(vf, V::unpack(fw[j])) : V::unpack(fw[j]);
            out[j] = V::pack(Op::apply(sj, fj));
        }
        sink(x0, out);
    }
}

template <class T, bool Max>
__global__ void __launch_bounds__(tuning_policy::horizontal_row_threads, 1) horizontal_row_kernel(const rargs<T> a) {
    using V = typename split_word<T>::type;
    using Op = word_op<V, Max>;
    using mem = typename V::mem;
    constexpr int P = V::P;
    extern __shared__ std::uint32_t sm[];
    mem* ext = reinterpret_cast<mem*>(sm);  // extended row, then row_run identity words: t at rpad(t)
    __shared__ scan_scratch<V> sc;
    const i64 groups = (a.height + P - 1) / P;
    if (threadIdx.x < row_run) ext[rpad(a.NE + threadIdx.x)] = V::pack(Op::identity());
    for (i64 grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        const i64 row0 = grp * P;
        load_row_group(a, row0, ext);
        __syncthreads();
        row_stage<V, Op>(ext, a.n, a.L, sc, [&](int x0, const mem* out) { store_unit(a, row0, x0, out); });
    }
}

// Shared-memory words of an extended row of NE words and the row_run identity words after it.
inline std::size_t row_words(i64 NE) { return static_cast<std::size_t>(rpad(static_cast<int>(NE + row_run)) + 1); }

// The whole-row kernels' arguments for `in`, `out` and one pass's border rule and arms.
template <class T>
rargs<T> row_args(device_view<const T> in, device_view<T> out, border_mode mode, T pad, i64 before, i64 after) {
    rargs<T> a;
    a.in = in.data();
    a.in_stride = in.stride();
    a.out = out.data();
    a.out_stride = out.stride();
    a.height = in.height();
    a.n = static_cast<int>(in.width());
    a.before = static_cast<int>(before);
    a.L = static_cast<int>(before + after + 1);
    a.NE = static_cast<int>(in.width() + before + after);
    a.mode = mode;
    a.pad = pad;
    a.in_aligned = aligned16(in.data(), in.stride() * static_cast<i64>(sizeof(T)));
    a.out_aligned = aligned16(out.data(), out.stride() * static_cast<i64>(sizeof(T)));
    return a;
}

// Launches a whole-row kernel over the rows of `a` with `smem` bytes of dynamic shared memory;
// false (nothing launched) when that does not fit.
template <class T, class Kernel, class... Args>
bool launch_rows(Kernel kernel, std::size_t smem, const rargs<T>& a, cudaStream_t stream, const Args&... args) {
    const int optin = granula::detail::device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    const int sms = granula::detail::multiprocessors();
    if (smem + sizeof(scan_scratch<typename split_word<T>::type>) > static_cast<std::size_t>(optin)) return false;
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
               "cudaFuncSetAttribute");
    // The fewest threads per block (down to 256; no more than one tile of the row needs) that
    // keep the most threads resident: more, smaller blocks overlap each other's phases.
    const int need = (a.n + row_run * 32 - 1) / (row_run * 32) * 32;
    int threads = 0, best = 0;
    for (int t = tuning_policy::horizontal_row_min_threads; t <= tuning_policy::horizontal_row_threads; t *= 2) {
        const int cand = std::min(t, need);
        int blocks = 0;
        check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, cand, smem),
                   "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        if (blocks * cand > best) {
            best = blocks * cand;
            threads = cand;
        }
    }
    if (best == 0) return false;
    constexpr int P = split_word<T>::type::P;
    const i64 groups = (a.height + P - 1) / P;
    const unsigned grid = static_cast<unsigned>(std::min<i64>(groups, i64{sms} * 64));
    kernel<<<grid, threads, smem, stream>>>(a, args...);
    check_launch("whole-row kernel");
    return true;
}

template <class T, bool Max>
bool run_rows(device_view<const T> in, device_view<T> out, const pass_params<T>& p, i64 before, i64 after,
              cudaStream_t stream) {
    static_assert(row_run % (4 * split_word<T>::type::P) == 0, "a run is whole 16-byte vectors of every row");
    if (in.width() + before + after + 1 > (i64{1} << 24)) return false;
    const rargs<T> a = row_args<T>(in, out, p.mode, p.pad, before, after);
    return launch_rows<T>(horizontal_row_kernel<T, Max>, row_words(a.NE) * 4, a, stream);
}

}  // namespace

template <class T>
void horizontal_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, cudaStream_t stream) {
    const i64 n = in.width();
    const i64 before = granula::detail::clip_arm(p.before, n), after = granula::detail::clip_arm(p.after, n);
    if (before + after == 0) {
        granula::copy<T>(in, out, granula::stream(stream));
        return;
    }
    if (granula::detail::pads_with_one_value(p.mode)) {  // pixels off the row are p.pad
        const row_doubling_stage<T> stage[] = {{before, after, p.pad}};
        if (row_doubling(in, out, p.maximum, stage, stream)) return;
    }
    if (p.maximum ? run_rows<T, true>(in, out, p, before, after, stream)
                  : run_rows<T, false>(in, out, p, before, after, stream))
        return;
    const line_geometry g = make_geometry(n, before, after, tuning_policy::max_chunk);
    hargs<T> a;
    a.in = in.data();
    a.in_stride = in.stride();
    a.out = out.data();
    a.out_stride = out.stride();
    a.n = n;
    a.height = in.height();
    a.before = before;
    a.m = g.m;
    a.r = g.r;
    a.ca_min = g.ca_min;
    a.ca_max = g.ca_max;
    a.n_coarse = g.n_coarse();
    a.mode = p.mode;
    a.pad = p.pad;
    a.in_aligned = word_aligned<T>(in.data(), in.stride());
    a.out_aligned = word_aligned<T>(out.data(), out.stride());
    if (p.maximum)
        dispatch_chunk<T, true>(a, g, stream);
    else
        dispatch_chunk<T, false>(a, g, stream);
}

}  // namespace granula::cuda::detail
