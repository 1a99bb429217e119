// Opening and closing by one vertical or one horizontal line in a single kernel (`run` in
// morphology_cuda.cu dispatches here, top-hats included, under border ignore or constant):
// the first stage's result stays in shared memory, so the image is read once and written once,
// where the two passes read and write it twice and go through a scratch image. The results equal
// the two passes' exactly: the second stage sees the first's rows outside the image as its own
// padding (the operation's identity for ignore, cval for constant), as the second pass does.
// Other border modes extend the first stage's result by its own values: they keep the passes.
//
// Vertical (fused_vertical_kernel, float32 only): a block owns a strip of fused_strip_words word columns and
// R output rows [y0, y0 + R). It stages the input rows [y0 - b1 - b2, y0 + R + a1 + a2) (b, a:
// each stage's arms before and after the row), runs the first stage (vhgw.cuh's engine, one
// thread per column and 32 rows) into rows [y0 - b2, y0 + R + a2) of a second array, then the
// second stage over those, whose results go straight to the image. Neighbouring blocks read the
// same halo rows, mostly from L2.
//
// Horizontal, uint8 lines under 256 pixels and uint16 ones under 128: row_doubling.cuh, both
// stages in registers. Otherwise (fused_row_kernel): the whole-row kernel of horizontal_pass.cuh
// with a second extended row in shared memory: the first stage's results land there, between
// the second stage's padding words, and the second stage stores the row group.
//
// Measured on one H200 (2026-11-27, a standalone harness calling fused_line_pair against two
// calls of the passes into a preallocated scratch image and a cudaMemcpyAsync, 8000^2, kernels
// back to back over 4 buffer pairs, median of 15; docs/benchmarks.md, issue 4 GPU):
//   rows:    uint8 L = 41 / 101 0.155 / 0.155 ms against 0.162 / 0.163 (4.6x copy against 4.8x);
//            uint16 L = 41 0.178 against 0.194. The whole-row kernel is not bound by memory
//            here, so saving one read and write of the image gains little: each stage's scans
//            and block-wide carries cost what a pass costs. The doubling kernel (2026-12-02,
//            bench_gpu_shapes --size 8000 --op opening, same run): uint8 L = 41 / 101 / 201
//            0.078 / 0.093 / 0.125 ms against 0.154 / 0.155 / 0.156 (2.3x / 2.8x / 3.7x copy);
//            Nsight Compute at L = 41: 77 us, 53 M warp instructions (735 a lane), issue-bound
//            (69% of cycles issue), DRAM 64 MB read and 45 MB written. uint16 (2026-12-02,
//            likewise): L = 41 / 101 0.144 / 0.171 ms against 0.178 / 0.178 (2.2x / 2.6x copy);
//            L = 201 0.220 against 0.178, so the whole-row kernel keeps uint16 from 128 on.
//   columns: float32 L = 41 0.381 against 0.521 ms (3.1x copy against 4.2x), this version:
//            strips of 16 words, 256-row bands, 256 threads, tasks of 32 rows, chunks of at most
//            16 (fused_max_chunk). uint8 (L = 41 / 101) against the passes' 0.172 / 0.234 ms:
//            0.276 / 0.336 with __vminu4 words and chunks of 32 (118-128 registers, 2 blocks per
//            SM); 0.210 / 0.248 with u16x2-split words and chunks of 16; 0.180 / 0.247 with tasks
//            of 16 rows and one thread per task (float32 then 0.585). The stages' idle threads
//            (the second stage has half the first's tasks), the halo rows (1.4x / 1.9x the
//            band) and the shared-memory indexing outweigh the saved read and write for uint8.
#pragma once

#include <algorithm>
#include <type_traits>

#include "morphology/cuda/horizontal_pass.cuh"

namespace granula::cuda::detail {
namespace {

// ---- vertical -------------------------------------------------------------------------------------
constexpr int vstrip = tuning_policy::fused_strip_words;
constexpr int vthreads = tuning_policy::fused_vertical_threads;
constexpr int vtask_rows = 32;  // rows per engine task: K = 32 / C chunks

template <class T>
struct fvargs {
    const T* in = nullptr;
    i64 in_stride = 0;
    T* out = nullptr;
    i64 out_stride = 0;
    i64 width = 0, n = 0, n_words = 0;
    int R = 0;        // output rows per block
    int top = 0;      // staged row s is image row y0 - top + s (top = b1 + b2)
    int before2 = 0;  // first-stage row e is image row y0 - before2 + e
    int m1 = 1, r1 = 0, m2 = 1, r2 = 0;
    int chunks1 = 0, chunks2 = 0;  // chunks of C rows each stage computes
    int nx = 0, ne = 0, ncm = 0;   // rows of the staged, first-stage and chunk-minima arrays
    T pad1{}, pad2{};
};

// Shared-memory index of (row, column) in an array of vstrip-word rows. A warp's two halves run
// rows 32 apart (tasks of 32 rows); flipping bit 0 of the row with bit 5 puts them in different
// banks (a bijection: bit 5 is unchanged).
__device__ __forceinline__ int vsidx(int row, int col) { return (row ^ ((row >> 5) & 1)) * vstrip + col; }

// W(ca) = min (max) of chunks ca + 1 .. ca + m - 1 of `src` for ca < chunks, into W (row ca);
// cm holds the chunk minima. Starts and ends with a barrier.
template <class V, class Op, int C>
__device__ __forceinline__ void vwindow(const typename V::mem* src, int chunks, int m, typename V::mem* cm,
                                        typename V::mem* W) {
    using word = typename V::word;
    __syncthreads();
    for (int t = threadIdx.x; t < (chunks + m - 2) * vstrip; t += vthreads) {
        const int k = t / vstrip, col = t % vstrip;
        word acc = Op::identity();
#pragma unroll
        for (int j = 0; j < C; ++j) acc = Op::apply(acc, V::unpack(src[vsidx((k + 1) * C + j, col)]));
        cm[t] = V::pack(acc);
    }
    __syncthreads();
    for (int t = threadIdx.x; t < chunks * vstrip; t += vthreads) {
        word acc = Op::identity();
        for (int i = 0; i < m - 1; ++i) acc = Op::apply(acc, V::unpack(cm[t + i * vstrip]));
        W[t] = V::pack(acc);
    }
    __syncthreads();
}

// One stage over `src`: output i (i < chunks * C) is the min (max) of rows [i, i + L - 1], handed
// to store(i, word); tasks of 32 rows, a column per thread.
template <class V, class Op, int C, class Store>
__device__ __forceinline__ void vstage(const typename V::mem* src, const typename V::mem* W, int chunks, int m, int r,
                                       Store&& store) {
    using word = typename V::word;
    constexpr int K = vtask_rows / C;
    const int col = threadIdx.x % vstrip;
    const int tasks = (chunks + K - 1) / K;
    for (int t = threadIdx.x / vstrip; t < tasks; t += vthreads / vstrip) {
        const int ca0 = t * K;
        auto load_a = [&](int p) { return V::unpack(src[vsidx(ca0 * C + p, col)]); };
        auto load_b = [&](int q) { return V::unpack(src[vsidx((ca0 + m) * C + q, col)]); };
        auto wload = [&](int k) { return V::unpack(W[(ca0 + k) * vstrip + col]); };
        auto st = [&](int k, int j, word v) { store((ca0 + k) * C + j, v); };
        vhgw_run<Op, C, K>(min(K, chunks - ca0), m, r, load_a, load_b, wload, st);
    }
}

// Max1: the first stage is the dilation (closing).
template <class V, bool Max1, int C>
__global__ void __launch_bounds__(vthreads) fused_vertical_kernel(const fvargs<typename V::elem> a) {
    using mem = typename V::mem;
    using word = typename V::word;
    using Op1 = word_op<V, Max1>;
    using Op2 = word_op<V, !Max1>;
    extern __shared__ std::uint32_t fused_sm[];
    mem* X = reinterpret_cast<mem*>(fused_sm);
    mem* Y = X + a.nx * vstrip;
    mem* cm = Y + a.ne * vstrip;
    mem* W = cm + a.ncm * vstrip;
    const int col = threadIdx.x % vstrip;
    const i64 w = static_cast<i64>(blockIdx.x) * vstrip + col;
    const bool live = w < a.n_words;
    const i64 y0 = static_cast<i64>(blockIdx.y) * a.R;
    const mem pad1 = V::splat_mem(a.pad1), pad2 = V::splat_mem(a.pad2);
#pragma unroll 4
    for (int s = threadIdx.x / vstrip; s < a.nx; s += vthreads / vstrip) {
        const i64 y = y0 - a.top + s;
        X[vsidx(s, col)] = live && y >= 0 && y < a.n ? load_mem<V>(a.in + y * a.in_stride, w, a.width) : pad1;
    }
    if (a.m1 >= 2) vwindow<V, Op1, C>(X, a.chunks1, a.m1, cm, W);
    else __syncthreads();
    vstage<V, Op1, C>(X, W, a.chunks1, a.m1, a.r1, [&](int e, word v) {
        const i64 y = y0 - a.before2 + e;
        Y[vsidx(e, col)] = y >= 0 && y < a.n ? V::pack(v) : pad2;
    });
    if (a.m2 >= 2) vwindow<V, Op2, C>(Y, a.chunks2, a.m2, cm, W);
    else __syncthreads();
    vstage<V, Op2, C>(Y, W, a.chunks2, a.m2, a.r2, [&](int o, word v) {
        const i64 y = y0 + o;
        if (live && y < a.n) store_mem<V>(a.out + y * a.out_stride, w, a.width, V::pack(v));
    });
}

// False when the staged rows do not fit the shared-memory budget (long lines on tall images).
template <class V, bool Max1>
bool fused_vertical(device_view<const typename V::elem> in, device_view<typename V::elem> out, i64 b1, i64 a1, i64 b2,
                    i64 a2, typename V::elem pad1, typename V::elem pad2, cudaStream_t stream) {
    using mem = typename V::mem;
    const i64 L1 = b1 + a1 + 1, L2 = b2 + a2 + 1, n = in.height();
    const int C = chunk_length(std::min(L1, L2), tuning_policy::fused_max_chunk);
    fvargs<typename V::elem> a;
    a.in = in.data();
    a.in_stride = in.stride();
    a.out = out.data();
    a.out_stride = out.stride();
    a.width = in.width();
    a.n = n;
    a.n_words = (in.width() + V::P - 1) / V::P;
    a.top = static_cast<int>(b1 + b2);
    a.before2 = static_cast<int>(b2);
    a.m1 = static_cast<int>((L1 - 1) / C);
    a.r1 = static_cast<int>((L1 - 1) % C);
    a.m2 = static_cast<int>((L2 - 1) / C);
    a.r2 = static_cast<int>((L2 - 1) % C);
    a.pad1 = pad1;
    a.pad2 = pad2;
    const auto even = [](i64 rows) { return static_cast<int>((rows + 1) / 2 * 2); };  // vsidx may flip bit 0
    std::size_t smem = 0;
    // The most rows per block (multiples of 32, at most the image's) whose arrays fit the budget.
    for (i64 R = std::min<i64>(tuning_policy::fused_rows, (n + 31) / 32 * 32);; R -= 32) {
        if (R < 32) return false;
        a.R = static_cast<int>(R);
        a.chunks2 = static_cast<int>(R / C);
        a.chunks1 = static_cast<int>((R + L2 - 1 + C - 1) / C);
        a.ne = even(static_cast<i64>(a.chunks1) * C);
        a.nx = even(static_cast<i64>(a.chunks1) * C + L1 - 1);
        const int m = std::max(a.m1, a.m2);
        a.ncm = m >= 2 ? a.chunks1 + m - 2 : 0;
        const i64 w_rows = m >= 2 ? a.chunks1 : 0;
        smem = static_cast<std::size_t>(a.nx + a.ne + a.ncm + w_rows) * vstrip * sizeof(mem);
        if (smem <= static_cast<std::size_t>(tuning_policy::fused_max_shared)) break;
    }
    const i64 bands = (n + a.R - 1) / a.R;
    if (bands > 65535) return false;
    const dim3 grid(static_cast<unsigned>((a.n_words + vstrip - 1) / vstrip), static_cast<unsigned>(bands));
    with_chunk_length(C, [&](auto Cc) {
        auto kernel = fused_vertical_kernel<V, Max1, decltype(Cc)::value>;
        check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                   "cudaFuncSetAttribute");
        kernel<<<grid, vthreads, smem, stream>>>(a);
    });
    check_launch("fused_vertical_kernel");
    return true;
}

// ---- horizontal -----------------------------------------------------------------------------------
template <class T>
struct fused_row_stage {
    int before = 0, L = 0, NE = 0;
    int offset = 0;  // the second extended row's first word in shared memory
    T pad{};
};

template <class T, bool Max1>
__global__ void __launch_bounds__(tuning_policy::horizontal_row_threads, 1)
    fused_row_kernel(const rargs<T> a, const fused_row_stage<T> b) {
    using V = typename split_word<T>::type;
    using Op1 = word_op<V, Max1>;
    using Op2 = word_op<V, !Max1>;
    using mem = typename V::mem;
    constexpr int P = V::P, E = row_run;
    extern __shared__ std::uint32_t sm[];
    mem* ext = reinterpret_cast<mem*>(sm);
    mem* ext2 = ext + b.offset;
    __shared__ scan_scratch<V> sc;
    const int n = a.n, tid = threadIdx.x;
    // The second row's padding and both rows' identity tails stay for every row group.
    if (tid < E) {
        ext[rpad(a.NE + tid)] = V::pack(Op1::identity());
        ext2[rpad(b.NE + tid)] = V::pack(Op2::identity());
    }
    const mem pad2 = V::splat_mem(b.pad);
    for (int t = tid; t < b.before; t += blockDim.x) ext2[rpad(t)] = pad2;
    for (int t = b.before + n + tid; t < b.NE; t += blockDim.x) ext2[rpad(t)] = pad2;
    const i64 groups = (a.height + P - 1) / P;
    for (i64 grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        const i64 row0 = grp * P;
        load_row_group(a, row0, ext);
        __syncthreads();
        row_stage<V, Op1>(ext, n, a.L, sc, [&](int x0, const mem* out) {
            const run_ptr<mem> dst(ext2, b.before + x0);
#pragma unroll
            for (int j = 0; j < E; ++j)
                if (x0 + j < n) dst[j] = out[j];
        });
        __syncthreads();
        row_stage<V, Op2>(ext2, n, b.L, sc, [&](int x0, const mem* out) { store_unit(a, row0, x0, out); });
    }
}

template <class T, bool Max1>
bool fused_rows(device_view<const T> in, device_view<T> out, border_mode mode, i64 b1, i64 a1, i64 b2, i64 a2, T pad1,
                T pad2, cudaStream_t stream) {
    const row_doubling_stage<T> stages[] = {{b1, a1, pad1}, {b2, a2, pad2}};
    if (row_doubling(in, out, Max1, stages, stream)) return true;
    if (in.width() + std::max(b1 + a1, b2 + a2) + 1 > (i64{1} << 24)) return false;
    const rargs<T> a = row_args<T>(in, out, mode, pad1, b1, a1);
    fused_row_stage<T> b;
    b.before = static_cast<int>(b2);
    b.L = static_cast<int>(b2 + a2 + 1);
    b.NE = static_cast<int>(in.width() + b2 + a2);
    b.offset = static_cast<int>(row_words(a.NE));
    b.pad = pad2;
    return launch_rows<T>(fused_row_kernel<T, Max1>, (row_words(a.NE) + row_words(b.NE)) * 4, a, stream, b);
}

}  // namespace

template <class T>
bool fused_line_pair(device_view<const T> in, device_view<T> out, bool vertical, const pass_params<T>& first,
                     const pass_params<T>& second, cudaStream_t stream) {
    if (first.mode != border_mode::ignore && first.mode != border_mode::constant) return false;
    const i64 n = vertical ? in.height() : in.width();
    const i64 b1 = granula::detail::clip_arm(first.before, n), a1 = granula::detail::clip_arm(first.after, n);
    const i64 b2 = granula::detail::clip_arm(second.before, n), a2 = granula::detail::clip_arm(second.after, n);
    if (b1 + a1 == 0 || b2 + a2 == 0) return false;  // a stage of one pixel is a copy: the passes
    const bool closing = first.maximum;
    if (!vertical)
        return closing ? fused_rows<T, true>(in, out, first.mode, b1, a1, b2, a2, first.pad, second.pad, stream)
                       : fused_rows<T, false>(in, out, first.mode, b1, a1, b2, a2, first.pad, second.pad, stream);
    // Vertical: float32 only, the one type measured faster than the two passes (uint8 was slower
    // in every variant tried, uint16 not measured; see the notes at the top).
    if constexpr (std::is_same_v<T, float>)
        return closing ? fused_vertical<packed<float>, true>(in, out, b1, a1, b2, a2, first.pad, second.pad, stream)
                       : fused_vertical<packed<float>, false>(in, out, b1, a1, b2, a2, first.pad, second.pad, stream);
    return false;
}

}  // namespace granula::cuda::detail
