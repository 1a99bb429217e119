// Vertical min/max pass: van Herk/Gil-Werman along columns (see vhgw.cuh).
//
// One thread owns one 4-byte word of a row (4 uint8, 2 uint16 or 1 float32 adjacent columns)
// and walks down the column: consecutive threads read consecutive words, so every step of a
// warp is one coalesced 128-byte row segment, and the packed SIMD min/max (__vminu4, ...) works
// on 4 columns at once. Views that are not 4-byte aligned use one column per thread.
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
using granula::detail::multiprocessors;

template <class T>
struct vargs {
    const T* in = nullptr;
    i64 in_stride = 0;  // elements
    T* out = nullptr;
    i64 out_stride = 0;
    const T* W = nullptr;  // W(ca): the min of W_count rows from row ca - ca_min (m >= 2)
    i64 W_stride = 0;
    int W_count = 1;
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
    const T* pad_row = nullptr;  // `width` pixels of value `pad`: the rows outside ignore/constant borders
    T* trash_row = nullptr;      // `width` scratch pixels: where results outside the image go
};

constexpr int block_threads = tuning_policy::vertical_block_threads;

// Row tables: for each padded row a block reads, a pointer to its source row (the pad row where
// the border supplies `pad`), and for each result row, its output row (a scratch row for
// results outside the image). Built once per block, so the unrolled engine loop has no border
// arithmetic, no bounds tests and no branches: one shared load, one add and the global access.
template <class T>
__device__ __forceinline__ void fill_source_rows(const T** table, int count, i64 first, const vargs<T>& a) {
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 row = granula::detail::border_index(first + t, a.n, a.mode);
        table[t] = row < 0 ? a.pad_row : a.in + row * a.in_stride;
    }
}
template <class T>
__device__ __forceinline__ void fill_output_rows(T** table, int count, i64 first, const vargs<T>& a) {
    for (int t = threadIdx.x; t < count; t += blockDim.x) {
        const i64 x = first + t;
        table[t] = x >= 0 && x < a.n ? a.out + x * a.out_stride : a.trash_row;
    }
}

// Views here hold whole words only (vertical_pass splits off the last width % P columns), so
// every access is one aligned word.
template <class V>
__device__ __forceinline__ typename V::word full_word(const typename V::elem* row, i64 w) {
    return V::unpack(load_ro(reinterpret_cast<const typename V::mem*>(row) + w));
}
template <class V>
__device__ __forceinline__ void store_full_word(typename V::elem* row, i64 w, typename V::word v) {
    reinterpret_cast<typename V::mem*>(row)[w] = V::pack(v);
}

// Grid: x = blocks of column words (fastest, so the blocks running together cover whole rows),
// y = runs of K chunks down the columns.
template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(block_threads) vertical_vhgw_kernel(const vargs<typename V::elem> a) {
    using T = typename V::elem;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    __shared__ const T* rows_a[K * C];
    __shared__ const T* rows_b[K * C + C];
    __shared__ T* rows_out[K * C];
    const i64 w = static_cast<i64>(blockIdx.x) * block_threads + threadIdx.x;
    const i64 runs = (a.ca_max - a.ca_min + K) / K;
    for (i64 run = blockIdx.y; run < runs; run += gridDim.y) {
        const i64 ca0 = a.ca_min + run * K;
        const int nchunks = static_cast<int>(min(static_cast<i64>(K), a.ca_max - ca0 + 1));
        const i64 a_first = ca0 * C, b_first = (ca0 + a.m) * C;
        __syncthreads();  // the previous run's tables are no longer read
        fill_source_rows(rows_a, K * C, a_first, a);
        fill_source_rows(rows_b, K * C + a.r, b_first, a);
        fill_output_rows(rows_out, K * C, a_first + a.before, a);
        __syncthreads();
        if (w >= a.n_words) continue;
        auto load_a = [&](int p) { return full_word<V>(rows_a[p], w); };
        auto load_b = [&](int q) { return full_word<V>(rows_b[q], w); };
        auto wload = [&](int k) { return window_word<V, Max>(a.W, a.W_stride, a.W_count, ca0 + k - a.ca_min, w); };
        auto store = [&](int k, int j, word v) { store_full_word<V>(rows_out[k * C + j], w, v); };
        // Results stored 16 at a time (the b-stream's loads issue together), except for words of
        // one uint8 or uint16 pixel, whose 32-row chunks then spill.
        constexpr bool defer = V::P > 1 || sizeof(T) == 4;
        vhgw_run<Op, C, K, defer>(nchunks, a.m, a.r, load_a, load_b, wload, store);
    }
}

// Chunk minima for the coarse level: cm row k = min over rows (ca_min + 1 + k) * C + [0, C).
template <class V, bool Max, int C, int K>
__global__ void __launch_bounds__(block_threads) vertical_chunk_kernel(const vargs<typename V::elem> a) {
    using T = typename V::elem;
    using Op = word_op<V, Max>;
    using word = typename V::word;
    __shared__ const T* rows[K * C];
    const i64 w = static_cast<i64>(blockIdx.x) * block_threads + threadIdx.x;
    const i64 runs = (a.n_coarse + K - 1) / K;
    for (i64 run = blockIdx.y; run < runs; run += gridDim.y) {
        const i64 first_chunk = run * K;  // coarse index
        __syncthreads();
        fill_source_rows(rows, K * C, (a.ca_min + 1 + first_chunk) * C, a);
        __syncthreads();
        if (w >= a.n_words) continue;
#pragma unroll 1
        for (int k = 0; k < K; ++k) {
            const i64 idx = first_chunk + k;
            if (idx >= a.n_coarse) break;
            word acc = Op::identity();
#pragma unroll
            for (int j = 0; j < C; ++j) acc = Op::apply(acc, full_word<V>(rows[k * C + j], w));
            store_full_word<V>(a.cm + idx * a.cm_stride, w, acc);
        }
    }
}

dim3 grid_for(i64 runs, i64 n_words) {
    const i64 word_blocks = (n_words + block_threads - 1) / block_threads;
    return dim3(static_cast<unsigned>(word_blocks), static_cast<unsigned>(std::min<i64>(runs, 65535)));
}

template <class V, bool Max, int C>
void run_vertical(vargs<typename V::elem> a, const line_geometry& g, cudaStream_t stream) {
    using T = typename V::elem;
    constexpr int K = std::max(1, tuning_policy::vertical_rows_per_thread / C);
    scratch_image<T> rows(a.width, 2, stream), cm, W;  // row 0: pad row, row 1: trash row
    a.pad_row = rows.view().row(0);
    a.trash_row = rows.view().row(1);
    fill_row<T>(rows.view().row(0), a.width, a.pad, stream);
    if (g.m >= 2) {
        cm = scratch_image<T>(a.width, g.n_coarse(), stream);
        a.cm = cm.view().data();
        a.cm_stride = cm.view().stride();
        vertical_chunk_kernel<V, Max, C, K>
            <<<grid_for((g.n_coarse() + K - 1) / K, a.n_words), block_threads, 0, stream>>>(a);
        check_launch("vertical_chunk_kernel");
        const window_rows<T> window = chunk_window<T, Max>(cm.view(), g.m, W, stream, 2);
        a.W = window.rows.data();
        a.W_stride = window.rows.stride();
        a.W_count = window.count;
    }
    const dim3 grid = grid_for((g.n_chunks() + K - 1) / K, a.n_words);
    if (K > 1 && static_cast<i64>(grid.x) * grid.y < tuning_policy::vertical_min_blocks_per_sm * multiprocessors()) {
        // Small images (the coarse W pass above all): one chunk per thread, more threads.
        vertical_vhgw_kernel<V, Max, C, 1><<<grid_for(g.n_chunks(), a.n_words), block_threads, 0, stream>>>(a);
    } else {
        vertical_vhgw_kernel<V, Max, C, K><<<grid, block_threads, 0, stream>>>(a);
    }
    check_launch("vertical_vhgw_kernel");
}

// Words of several pixels take chunks of up to vertical_packed_max_chunk rows; one-pixel words
// (unaligned views, float32) up to max_chunk.
template <class V>
constexpr int vertical_max_chunk = V::P > 1 ? tuning_policy::vertical_packed_max_chunk : tuning_policy::max_chunk;

template <class V, bool Max>
void dispatch_chunk(const vargs<typename V::elem>& a, const line_geometry& g, cudaStream_t stream) {
    with_chunk_length<vertical_max_chunk<V>>(g.C,
                                             [&](auto C) { run_vertical<V, Max, decltype(C)::value>(a, g, stream); });
}

template <class V>
void vertical_words(device_view<const typename V::elem> in, device_view<typename V::elem> out,
                    const pass_params<typename V::elem>& p, i64 before, i64 after, cudaStream_t stream) {
    const line_geometry g = make_geometry(in.height(), before, after, vertical_max_chunk<V>);
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
        granula::copy<T>(in, out, granula::stream(stream));
        return;
    }
    if constexpr (sizeof(T) < 4) {
        if (!word_aligned<T>(in.data(), in.stride()) || !word_aligned<T>(out.data(), out.stride())) {
            vertical_words<scalar<T>>(in, out, p, before, after, stream);
            return;
        }
        // The last width % P columns (a partial word) go through the one-column kernel, so the
        // packed kernels never test for partial words.
        constexpr i64 P = packed<T>::P;
        const i64 whole = in.width() / P * P;
        if (whole < in.width()) {
            vertical_words<scalar<T>>(in.subview(whole, 0, in.width() - whole, in.height()),
                                      out.subview(whole, 0, in.width() - whole, in.height()), p, before, after, stream);
            if (whole == 0) return;
            in = in.subview(0, 0, whole, in.height());
            out = out.subview(0, 0, whole, in.height());
        }
    }
    vertical_words<packed<T>>(in, out, p, before, after, stream);
}

}  // namespace granula::cuda::detail
