// Horizontal min/max pass: van Herk/Gil-Werman along rows (see vhgw.cuh).
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

// The word type of the horizontal pass: uint8 as two u16x2 halves (native min.u16x2),
// measured 4-10% faster here than __vminu4 words; the others as in the vertical pass.
template <class T>
struct hword {
    using type = packed<T>;
};
template <>
struct hword<std::uint8_t> {
    using type = packed_u8_split;
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
    using V = typename hword<T>::type;
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
    using V = typename hword<T>::type;
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
    using V = typename hword<T>::type;
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
    using V = typename hword<T>::type;
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
    constexpr int P = hword<T>::type::P;
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
        const device_view<const T> window = chunk_window<T, Max>(cm.view(), geo.m, W, stream);
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

}  // namespace

template <class T>
void horizontal_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, cudaStream_t stream) {
    const i64 n = in.width();
    const i64 before = granula::detail::clip_arm(p.before, n), after = granula::detail::clip_arm(p.after, n);
    if (before + after == 0) {
        granula::copy<T>(in, out, granula::stream(stream));
        return;
    }
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
