// Vertical min/max pass: van Herk/Gil-Werman along columns (see vhgw.cuh).
//
// One thread owns one 4-byte word of a row (4 uint8, 2 uint16 or 1 float32 adjacent columns)
// and walks down the column: consecutive threads read consecutive words, so every step of a
// warp is one coalesced 128-byte row segment, and the packed SIMD min/max (__vminu4, ...) works
// on 4 columns at once. Views that are not 4-byte aligned use one column per thread.
#pragma once

#include <algorithm>

#include "core/border_index.hpp"
#include "core/cuda/check.cuh"
#include "morphology/cuda/line_pass.cuh"
#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/vhgw.cuh"

namespace granula::cuda::detail {
namespace {

using granula::detail::check_cuda;
using granula::detail::check_launch;

template <class T>
struct vargs {
    const T* in = nullptr;
    i64 in_stride = 0;  // elements
    T* out = nullptr;
    i64 out_stride = 0;
    const T* W = nullptr;  // W(ca) at row ca - ca_min (m >= 2)
    i64 W_stride = 0;
    T* cm = nullptr;  // chunk minima, row k = chunk ca_min + 1 + k
    i64 cm_stride = 0;
    i64 width = 0;    // columns
    i64 n = 0;        // rows: the line length
    i64 n_words = 0;  // words per row
    i64 before = 0;
    int m = 1, r = 0;
    i64 ca_min = 0, ca_max = 0, n_coarse = 0;
    border_mode mode = border_mode::ignore;
    T pad{};
};

constexpr int block_threads = tuning_policy::vertical_block_threads;

// Row tables: the element offset of the source row of each padded row a block reads, or -1
// where the border supplies `pad`. Built once per block, so the unrolled engine loop does no
// border arithmetic (and stays small enough to compile quickly).

template <class T>
__device__ __forceinline__ void fill_row_table(i64* table, int count, i64 first, const vargs<T>& a) {
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 row = granula::detail::border_index(first + t, a.n, a.mode);
        table[t] = row < 0 ? -1 : row * a.in_stride;
    }
}

template <class V>
__device__ __forceinline__ typename V::word table_word(const vargs<typename V::elem>& a, i64 offset, i64 w,
                                                       typename V::word pad) {
    return offset < 0 ? pad : load_word<V>(a.in + offset, w, a.width);
}

template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(block_threads) vertical_vhgw_kernel(const vargs<typename V::elem> a) {
    using Op = word_op<V, Max>;
    using word = typename V::word;
    __shared__ i64 table_a[K * C], table_b[K * C + C];
    const word pad = V::splat(a.pad);
    const i64 ca0 = a.ca_min + static_cast<i64>(blockIdx.x) * K;
    const int nchunks = static_cast<int>(min(static_cast<i64>(K), a.ca_max - ca0 + 1));
    const i64 a_first = ca0 * C, b_first = (ca0 + a.m) * C;
    fill_row_table(table_a, K * C, a_first, a);
    fill_row_table(table_b, K * C + a.r, b_first, a);
    __syncthreads();
    const i64 word_blocks = (a.n_words + block_threads - 1) / block_threads;
    for (i64 wb = blockIdx.y; wb < word_blocks; wb += gridDim.y) {
        const i64 w = wb * block_threads + threadIdx.x;
        if (w >= a.n_words) continue;
        auto load_a = [&](int p) { return table_word<V>(a, table_a[p], w, pad); };
        auto load_b = [&](int q) { return table_word<V>(a, table_b[q], w, pad); };
        auto wload = [&](int k) { return load_word<V>(a.W + (ca0 + k - a.ca_min) * a.W_stride, w, a.width); };
        auto store = [&](int k, int j, word v) {
            const i64 x = a_first + k * C + j + a.before;
            if (x >= 0 && x < a.n) store_word<V>(a.out + x * a.out_stride, w, a.width, v);
        };
        vhgw_run<Op, C, K>(nchunks, a.m, a.r, load_a, load_b, wload, store);
    }
}

// Chunk minima for the coarse level: cm row k = min over rows (ca_min + 1 + k) * C + [0, C).
template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(block_threads) vertical_chunk_kernel(const vargs<typename V::elem> a) {
    using Op = word_op<V, Max>;
    using word = typename V::word;
    __shared__ i64 table[K * C];
    const word pad = V::splat(a.pad);
    const i64 first_chunk = static_cast<i64>(blockIdx.x) * K;  // coarse index
    const i64 first = (a.ca_min + 1 + first_chunk) * C;
    fill_row_table(table, K * C, first, a);
    __syncthreads();
    const i64 word_blocks = (a.n_words + block_threads - 1) / block_threads;
    for (i64 wb = blockIdx.y; wb < word_blocks; wb += gridDim.y) {
        const i64 w = wb * block_threads + threadIdx.x;
        if (w >= a.n_words) continue;
#pragma unroll 1
        for (int k = 0; k < K; ++k) {
            const i64 idx = first_chunk + k;
            if (idx >= a.n_coarse) break;
            word acc = Op::identity();
#pragma unroll
            for (int j = 0; j < C; ++j) acc = Op::apply(acc, table_word<V>(a, table[k * C + j], w, pad));
            store_word<V>(a.cm + idx * a.cm_stride, w, a.width, acc);
        }
    }
}

dim3 grid_for(i64 runs, i64 n_words) {
    const i64 word_blocks = (n_words + block_threads - 1) / block_threads;
    return dim3(static_cast<unsigned>(runs), static_cast<unsigned>(std::min<i64>(word_blocks, 65535)));
}

template <class V, bool Max, int C>
void run_vertical(vargs<typename V::elem> a, const line_geometry& g, cudaStream_t stream) {
    using T = typename V::elem;
    constexpr int K = std::max(1, tuning_policy::vertical_rows_per_thread / C);
    scratch_image<T> cm, W;
    if (g.m >= 2) {
        cm = scratch_image<T>(a.width, g.n_coarse(), stream);
        a.cm = cm.view().data();
        a.cm_stride = cm.view().stride();
        vertical_chunk_kernel<V, Max, C, K>
            <<<grid_for((g.n_coarse() + K - 1) / K, a.n_words), block_threads, 0, stream>>>(a);
        check_launch("vertical_chunk_kernel");
        if (g.m - 1 >= 2) {  // W = windowed min of m - 1 chunk minima: a vertical pass on the coarse image
            W = scratch_image<T>(a.width, g.n_coarse(), stream);
            pass_params<T> coarse;
            coarse.before = 0;
            coarse.after = g.m - 2;
            coarse.maximum = Max;
            coarse.mode = border_mode::ignore;
            coarse.pad = identity_value<T, Max>();
            vertical_pass<T>(cm.view(), W.view(), coarse, stream);
            a.W = W.view().data();
            a.W_stride = W.view().stride();
        } else {
            a.W = a.cm;
            a.W_stride = a.cm_stride;
        }
    }
    vertical_vhgw_kernel<V, Max, C, K><<<grid_for((g.n_chunks() + K - 1) / K, a.n_words), block_threads, 0, stream>>>(a);
    check_launch("vertical_vhgw_kernel");
}

template <class V, bool Max>
void dispatch_chunk(const vargs<typename V::elem>& a, const line_geometry& g, cudaStream_t stream) {
    static_assert(tuning_policy::max_chunk == 32, "dispatch_chunk lists chunk lengths up to 32");
    switch (g.C) {
    case 1: run_vertical<V, Max, 1>(a, g, stream); break;
    case 2: run_vertical<V, Max, 2>(a, g, stream); break;
    case 4: run_vertical<V, Max, 4>(a, g, stream); break;
    case 8: run_vertical<V, Max, 8>(a, g, stream); break;
    case 16: run_vertical<V, Max, 16>(a, g, stream); break;
    default: run_vertical<V, Max, 32>(a, g, stream); break;
    }
}

template <class T>
bool word_aligned(const void* data, i64 stride) {
    return reinterpret_cast<std::uintptr_t>(data) % 4 == 0 && (stride * static_cast<i64>(sizeof(T))) % 4 == 0;
}

template <class V>
void vertical_words(device_view<const typename V::elem> in, device_view<typename V::elem> out,
                    const pass_params<typename V::elem>& p, const line_geometry& g, cudaStream_t stream) {
    vargs<typename V::elem> a;
    a.in = in.data();
    a.in_stride = in.stride();
    a.out = out.data();
    a.out_stride = out.stride();
    a.width = in.width();
    a.n = in.height();
    a.n_words = (in.width() + V::P - 1) / V::P;
    a.before = g.before;
    a.m = g.m;
    a.r = g.r;
    a.ca_min = g.ca_min;
    a.ca_max = g.ca_max;
    a.n_coarse = g.n_coarse();
    a.mode = p.mode;
    a.pad = p.pad;
    if (p.maximum)
        dispatch_chunk<V, true>(a, g, stream);
    else
        dispatch_chunk<V, false>(a, g, stream);
}

}  // namespace

template <class T>
void vertical_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, cudaStream_t stream) {
    const i64 n = in.height();
    const i64 before = granula::detail::clip_arm(p.before, n), after = granula::detail::clip_arm(p.after, n);
    if (before + after == 0) {
        check_cuda(cudaMemcpy2DAsync(out.data(), out.stride() * sizeof(T), in.data(), in.stride() * sizeof(T),
                                     in.width() * sizeof(T), in.height(), cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpy2DAsync");
        return;
    }
    const line_geometry g = make_geometry(n, before, after, tuning_policy::max_chunk);
    if constexpr (sizeof(T) < 4) {
        if (!word_aligned<T>(in.data(), in.stride()) || !word_aligned<T>(out.data(), out.stride())) {
            vertical_words<scalar<T>>(in, out, p, g, stream);
            return;
        }
    }
    vertical_words<packed<T>>(in, out, p, g, stream);
}

}  // namespace granula::cuda::detail
