// Opening and closing by one vertical or one horizontal line in a single kernel (`run` in
// morphology_cuda.cu dispatches here, top-hats included, under border ignore or constant):
// the first stage's result stays in shared memory, so the image is read once and written once,
// where the two passes read and write it twice and go through a scratch image. The results equal
// the two passes' exactly: the second stage sees the first's rows outside the image as its own
// padding (the operation's identity for ignore, cval for constant), as the second pass does.
// Other border modes extend the first stage's result by its own values: they keep the passes.
//
// Vertical, uint8 and uint16 lines of at most tuning_policy::streamed_max_length pixels on rows
// aligned to 16 bytes (streamed_vertical_kernel): a warp streams a 128-byte strip down a long
// segment of rows, each stage by van Herk/Gil-Werman in blocks of the line's length, the input a
// block ahead by cp.async (the section "vertical, uint8 and uint16" below). One H100, 8000^2
// (2026-12-07, bench_gpu_shapes --op opening, against the passes in the same call), uint8:
// L = 15 / 41 / 61 0.079 / 0.099 / 0.116 ms against 0.122 / 0.120 / 0.131, L = 81 0.149
// against 0.142; uint16: L = 15 / 41 / 101 0.128 / 0.123 / 0.204 against 0.229 / 0.195 /
// 0.222, L = 128 0.266 against 0.245. Its shared memory (512 bytes a row of the line per warp)
// bounds the warps per SM (10 at 41, 4 at 101), and with fewer warps its loop hides less
// latency: the time grows with L where the passes' hardly does. Its loops take 8 rows at a time,
// loads first: one row at a time, L = 61 / 101 took 0.124 / 0.177 ms (uint8).
//
// Vertical, float32 (fused_vertical_kernel): a block owns a strip of fused_strip_words word columns and
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
//            band) and the shared-memory indexing outweigh the saved read and write for uint8
//            in bands; streamed down strips (2026-12-07) it wins: the halo is a segment's, the
//            block's rows are one warp's, and cp.async keeps a block of rows in flight.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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

// ---- vertical, uint8 and uint16: streamed down strips ----------------------------------------------
// A warp owns a strip of 128 bytes of columns (a 4-byte word a lane) and a segment of output rows, and
// walks down it once. Its input rows arrive in shared memory by cp.async one block of k rows
// ahead (k: both stages' window). Each stage is van Herk/Gil-Werman in blocks of k rows: a
// forward pass of running minima against the previous block's suffix minima, then the block's
// own suffix minima. With both windows k long, the first stage's results for its block m - 1
// are complete when the forward pass over input block m ends, and they come out in order, so
// the second stage's forward pass runs in the same loop and each output row is stored as it
// comes: the image is read once (plus 2(k - 1) rows of halo a segment) and written once.
template <class T>
struct streamed_args {
    const T* in = nullptr;
    i64 in_stride = 0;
    T* out = nullptr;
    i64 out_stride = 0;
    int width = 0, height = 0;
    int k = 0;            // both stages' window, in rows
    int halo_above = 0;   // b1 + b2: input rows a segment reads above its first output row
    int first_above = 0;  // b1: the first stage's window starts this many rows above its row
    int segment_rows = 0, strips = 0;
    std::uint32_t pad1 = 0, pad2 = 0;  // each stage's padding in every pixel of a word
};

// Rows a loop of the kernel takes at a time (batched below).
constexpr int streamed_batch = 8;

// Shared words per warp: two blocks of k input rows, the first stage's suffix minima of the last
// block, and its results of one block (in place of which go the second stage's suffix minima).
constexpr int streamed_words_per_warp(int k) { return 4 * k * 32; }

__device__ __forceinline__ void cp_async_16(void* shared, const void* global) {
    const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(global));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all_but_one() { asm volatile("cp.async.wait_group 1;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

// Steps i = begin .. end - 1 of a loop whose shared-memory loads do not depend on its earlier
// steps' stores, Batch steps at a time: all of a batch's loads (load(i) returns them) are issued
// before its steps run (step(i, loaded)). The compiler cannot tell the loads from the stores to
// the same shared array apart, so one step at a time each load waits for the previous store.
template <int Batch, class Load, class Step>
__device__ __forceinline__ void batched(int begin, int end, Load load, Step step) {
    int i = begin;
    for (; i + Batch <= end; i += Batch) {
        decltype(load(i)) loaded[Batch];
#pragma unroll
        for (int j = 0; j < Batch; ++j) loaded[j] = load(i + j);
#pragma unroll
        for (int j = 0; j < Batch; ++j) step(i + j, loaded[j]);
    }
    for (; i < end; ++i) step(i, load(i));
}

// V: packed_u8_split (uint8) or packed<uint16_t>.
template <class V, bool Closing>
__global__ void __launch_bounds__(32) streamed_vertical_kernel(streamed_args<typename V::elem> a) {
    using T = typename V::elem;
    using word = typename V::word;
    constexpr int chunk_pixels = 16 / static_cast<int>(sizeof(T)), P = V::P;
    const auto op1 = [](word u, word v) { return Closing ? V::vmax(u, v) : V::vmin(u, v); };
    const auto op2 = [](word u, word v) { return Closing ? V::vmin(u, v) : V::vmax(u, v); };
    extern __shared__ std::uint32_t streamed_shared[];
    const int lane = static_cast<int>(threadIdx.x);
    const int task = static_cast<int>(blockIdx.x);  // one block (warp) a task
    const int k = a.k;
    const int strip = task % a.strips, segment = task / a.strips;
    std::uint32_t* const x_blocks = streamed_shared;  // [2][k][32]
    std::uint32_t* const h1 = streamed_shared + 2 * k * 32 + lane;  // [k][32], this lane's column
    std::uint32_t* const e = h1 + k * 32;
    const int y0 = segment * a.segment_rows, y1 = min(a.height, y0 + a.segment_rows);
    const int s0 = y0 - a.halo_above;       // image row of input position 0
    const int m_last = (y1 - y0 - 1) / k + 2;  // output p of block m - 2 is row y0 + (m - 2) k + p
    const int col0 = strip * 32 * P, x = col0 + P * lane;

    // Input block m into slot m % 2, 16-byte chunks, eight lanes a row: rows off the image hold
    // pad1; chunks right of the image are skipped (their columns are never stored) and the one the
    // image's right edge cuts is read byte by byte, so no read passes a row's last pixel.
    const auto load = [&](int m) {
        if (m <= m_last) {
            std::uint32_t* slot = x_blocks + (m & 1) * k * 32;
            const int chunk = lane & 7, col = col0 + chunk_pixels * chunk;
            for (int r = lane >> 3; r < k; r += 4) {
                const int y = s0 + m * k + r;
                std::uint32_t* to = slot + r * 32 + 4 * chunk;
                if (y < 0 || y >= a.height)
                    *reinterpret_cast<uint4*>(to) = make_uint4(a.pad1, a.pad1, a.pad1, a.pad1);
                else if (col + chunk_pixels <= a.width)
                    cp_async_16(to, a.in + y * a.in_stride + col);
                else
                    for (int b = 0; b < a.width - col; ++b)
                        reinterpret_cast<T*>(to)[b] = a.in[y * a.in_stride + col + b];
            }
        }
        cp_async_commit();
    };
    const auto store = [&](int y, word v) {
        if (y >= y1 || x >= a.width) return;
        const std::uint32_t w = V::pack(v);
        T* to = a.out + y * a.out_stride + x;
        if (x + P <= a.width)
            *reinterpret_cast<std::uint32_t*>(to) = w;
        else
            for (int b = 0; b < a.width - x; ++b) to[b] = V::get(w, b);
    };

    load(0);
    const word identity1 = V::unpack(Closing ? 0u : ~0u);
    for (int m = 0; m <= m_last; ++m) {
        load(m + 1);
        cp_async_wait_all_but_one();
        __syncwarp();
        const std::uint32_t* xb = x_blocks + (m & 1) * k * 32 + lane;
        if (m >= 1) {
            // First-stage results of block m - 1: position p is image row e_row + p; off the image
            // they are the second stage's padding.
            const int e_row = s0 + (m - 1) * k + a.first_above;
            const int p_lo = max(0, -e_row), p_hi = min(k, a.height - e_row);
            const auto clipped = [&](std::uint32_t v, int p) { return p < p_lo || p >= p_hi ? a.pad2 : v; };
            const bool outputs = m >= 2;
            const int y_base = y0 + (m - 2) * k;
            const std::uint32_t e0 = clipped(h1[0], 0);
            word g2 = V::unpack(e0);
            if (outputs) {
                store(y_base, V::unpack(e[0]));
                store(y_base + 1, op2(V::unpack(e[32]), g2));
            }
            e[0] = e0;
            word g1 = identity1;
            // Row t: the first stage's result t + 1 of block m - 1 (into e, where the second
            // stage's suffix maximum t + 1 was), then output row t + 2.
            batched<streamed_batch>(
                0, k - 2, [&](int t) { return std::array{xb[t * 32], h1[(t + 1) * 32], e[(t + 2) * 32]}; },
                [&](int t, const std::array<std::uint32_t, 3>& v) {
                    g1 = op1(g1, V::unpack(v[0]));
                    const std::uint32_t r = clipped(V::pack(op1(V::unpack(v[1]), g1)), t + 1);
                    e[(t + 1) * 32] = r;
                    g2 = op2(g2, V::unpack(r));
                    if (outputs) store(y_base + t + 2, op2(V::unpack(v[2]), g2));
                });
            {  // k >= 2: the block's last result (no output row of its own: the next block's first)
                const int t = k - 2;
                g1 = op1(g1, V::unpack(xb[t * 32]));
                e[(t + 1) * 32] = clipped(V::pack(op1(V::unpack(h1[(t + 1) * 32]), g1)), t + 1);
            }
            word suffix = V::unpack(e[(k - 1) * 32]);
            batched<streamed_batch>(
                0, k - 1, [&](int i) { return std::array{e[(k - 2 - i) * 32]}; },
                [&](int i, const std::array<std::uint32_t, 1>& v) {
                    suffix = op2(suffix, V::unpack(v[0]));
                    e[(k - 2 - i) * 32] = V::pack(suffix);
                });
        }
        const std::uint32_t last = xb[(k - 1) * 32];
        word suffix = V::unpack(last);
        h1[(k - 1) * 32] = last;
        batched<streamed_batch>(
            0, k - 1, [&](int i) { return std::array{xb[(k - 2 - i) * 32]}; },
            [&](int i, const std::array<std::uint32_t, 1>& v) {
                suffix = op1(suffix, V::unpack(v[0]));
                h1[(k - 2 - i) * 32] = V::pack(suffix);
            });
        __syncwarp();  // the slot just read is the next load's
    }
    cp_async_wait_all();
}

// False where the kernel does not apply: stages of different lengths, lines longer than
// tuning_policy::streamed_max_length, or views whose rows cp.async cannot read in 16-byte chunks
// or the stores write in 4-byte words.
template <class V, bool Closing>
bool streamed_vertical(device_view<const typename V::elem> in, device_view<typename V::elem> out, i64 b1, i64 a1,
                       i64 b2, i64 a2, typename V::elem pad1, typename V::elem pad2, cudaStream_t stream) {
    using T = typename V::elem;
    const i64 k = b1 + a1 + 1;
    if (b2 + a2 + 1 != k || k > tuning_policy::streamed_max_length(sizeof(T))) return false;
    if (in.width() >= (i64{1} << 30) || in.height() >= (i64{1} << 30)) return false;  // int indices
    const auto misaligned = [](const void* p, std::size_t to) { return reinterpret_cast<std::uintptr_t>(p) % to != 0; };
    if (misaligned(in.data(), 16) || in.stride() * sizeof(T) % 16 != 0 || misaligned(out.data(), 4) ||
        out.stride() * sizeof(T) % 4 != 0)
        return false;
    const i64 strips = (in.width() + 32 * V::P - 1) / (32 * V::P);
    streamed_args<T> a;
    a.in = in.data();
    a.in_stride = in.stride();
    a.out = out.data();
    a.out_stride = out.stride();
    a.width = static_cast<int>(in.width());
    a.height = static_cast<int>(in.height());
    a.k = static_cast<int>(k);
    a.halo_above = static_cast<int>(b1 + b2);
    a.first_above = static_cast<int>(b1);
    a.pad1 = V::splat_mem(pad1);
    a.pad2 = V::splat_mem(pad2);
    const auto kernel = streamed_vertical_kernel<V, Closing>;
    const int smem = streamed_words_per_warp(a.k) * 4;
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "cudaFuncSetAttribute");
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32, smem),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (per_sm == 0) return false;
    // One wave of warps: as many segments a strip as fill the GPU, each at least a few blocks
    // long so that the halo stays a fraction of it.
    const i64 segments = std::max<i64>(1, static_cast<i64>(per_sm) * granula::detail::multiprocessors() / strips);
    const i64 rows = std::max((in.height() + segments - 1) / segments, tuning_policy::streamed_min_blocks * k);
    a.segment_rows = static_cast<int>(std::min<i64>(rows, in.height()));
    a.strips = static_cast<int>(strips);
    const i64 tasks = strips * ((in.height() + a.segment_rows - 1) / a.segment_rows);
    if (tasks > std::numeric_limits<int>::max()) return false;
    kernel<<<static_cast<unsigned>(tasks), 32, smem, stream>>>(a);
    check_launch("streamed_vertical_kernel");
    return true;
}

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
    // Vertical: uint8 and uint16 streamed down strips, float32 in bands (see the notes at the top).
    if constexpr (!std::is_same_v<T, float>) {
        using V = std::conditional_t<std::is_same_v<T, std::uint8_t>, packed_u8_split, packed<T>>;
        return closing ? streamed_vertical<V, true>(in, out, b1, a1, b2, a2, first.pad, second.pad, stream)
                       : streamed_vertical<V, false>(in, out, b1, a1, b2, a2, first.pad, second.pad, stream);
    }
    if constexpr (std::is_same_v<T, float>)
        return closing ? fused_vertical<packed<float>, true>(in, out, b1, a1, b2, a2, first.pad, second.pad, stream)
                       : fused_vertical<packed<float>, false>(in, out, b1, a1, b2, a2, first.pad, second.pad, stream);
    return false;
}

}  // namespace granula::cuda::detail
