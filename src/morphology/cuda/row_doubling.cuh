// Min/max windows along the rows of a uint8 or uint16 image by doubling, in registers: one pass
// (horizontal_pass.cuh) or an opening or closing in one kernel (fused_opening.cuh).
//
// A warp owns one row's columns [c0, c0 + S): lane t holds 32 columns from c0 + 32 t on, as NW
// words of P columns (doubling_words: uint8 as split u16x2 halves, uint16 as u16x2 words; min.u16x2
// is native on sm_90). A window of L columns starting at i is op(N(i), N(i + L - 2^K)), N = op
// over 2^K columns, K = floor(log2 L) (a sparse table): N doubles K times, each by a
// compile-time shift (renamed registers within a lane, a byte permute within a word, shuffles
// from the lanes to the right), and the one runtime shift, L - 2^K, goes bit by bit. No shared
// memory, no barrier, no scan carried between threads; each stage costs about K + 1 min
// operations a word. Windows near the warp's right end read wrapped lanes and are discarded: a
// warp writes S less its stages' L - 1, rounded down to 16. One stage (a min or max pass) or two
// (an opening or closing: the first stage's results stay in registers, the second sees its
// padding outside the image). K is a template parameter: as a run-time loop bound, each level's
// branch cost copies of all 16 registers where the paths merge.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "granula/core/device.hpp"
#include "granula/core/image.hpp"
#include "core/cuda/check.cuh"
#include "morphology/cuda/line_pass.cuh"
#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/words.cuh"

namespace granula::cuda::detail {
namespace {

using granula::detail::check_launch;

// A lane's lane_columns columns as NW words of P columns: uint8 as split u16x2 halves (bytes 0, 2
// in `lo`, 1, 3 in `hi`), uint16 as one u16x2 word (min.u16x2 is native on sm_90 for both). The
// words and their min/max are split_word<T>'s (words.cuh); the row kernel adds the count a lane,
// the split from and the pack to memory order (uint8: words.cuh's byte permutes), and the shifts.
constexpr int lane_columns = 32;
template <class T>
struct doubling_words_base {
    using V = typename split_word<T>::type;
    using word = typename V::word;
    static constexpr int P = V::P;
    template <bool Max>
    __device__ static word apply(word a, word b) {
        return word_op<V, Max>::apply(a, b);
    }
};
template <class T>
struct doubling_words;
template <>
struct doubling_words<std::uint8_t> : doubling_words_base<std::uint8_t> {
    static constexpr int NW = 8;
    __device__ static word split(std::uint32_t m) { return split_u8_by_permutes(m); }
    __device__ static std::uint32_t pack(word w) { return pack_u8_by_permute(w); }
    __device__ static word shfl_down(word w, int lanes) {
        return {__shfl_down_sync(0xffffffffu, w.lo, lanes), __shfl_down_sync(0xffffffffu, w.hi, lanes)};
    }
    // Columns R .. R + 3 of the eight held by a (0 .. 3) and b (4 .. 7), R < 4.
    template <int R>
    __device__ static word shift(word a, word b) {
        if constexpr (R == 0) return a;
        if constexpr (R == 1) return {a.hi, __byte_perm(a.lo, b.lo, 0x5432)};
        if constexpr (R == 2) return {__byte_perm(a.lo, b.lo, 0x5432), __byte_perm(a.hi, b.hi, 0x5432)};
        if constexpr (R == 3) return {__byte_perm(a.hi, b.hi, 0x5432), b.lo};
    }
};
template <>
struct doubling_words<std::uint16_t> : doubling_words_base<std::uint16_t> {
    static constexpr int NW = 16;
    __device__ static word split(std::uint32_t m) { return m; }
    __device__ static std::uint32_t pack(word w) { return w; }
    __device__ static word shfl_down(word w, int lanes) { return __shfl_down_sync(0xffffffffu, w, lanes); }
    // Columns R, R + 1 of the four held by a (0, 1) and b (2, 3), R < 2.
    template <int R>
    __device__ static word shift(word a, word b) {
        if constexpr (R == 0) return a;
        if constexpr (R == 1) return __byte_perm(a, b, 0x5432);
    }
};
static_assert(doubling_words<std::uint8_t>::NW * doubling_words<std::uint8_t>::P == lane_columns);
static_assert(doubling_words<std::uint16_t>::NW * doubling_words<std::uint16_t>::P == lane_columns);

// out[j] = the P columns D past word j's first (compile-time D); garbage near the warp's end.
template <class T, int D>
__device__ __forceinline__ void shifted(const typename doubling_words<T>::word (&a)[doubling_words<T>::NW],
                                        typename doubling_words<T>::word (&out)[doubling_words<T>::NW]) {
    using W = doubling_words<T>;
    constexpr int q = D / W::P, r = D % W::P, K = W::NW + (r ? 1 : 0);
    typename W::word src[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const int k = q + i;
        src[i] = k < W::NW ? a[k] : W::shfl_down(a[k % W::NW], k / W::NW);
    }
#pragma unroll
    for (int j = 0; j < W::NW; ++j) out[j] = W::template shift<r>(src[j], src[r ? j + 1 : j]);
}

// double_level: n := op(n, n shifted by D); shift_level: n := n shifted by D.
template <class T, int D, bool Max>
__device__ __forceinline__ void double_level(typename doubling_words<T>::word (&n)[doubling_words<T>::NW]) {
    using W = doubling_words<T>;
    typename W::word s[W::NW];
    shifted<T, D>(n, s);
#pragma unroll
    for (int j = 0; j < W::NW; ++j) n[j] = W::template apply<Max>(n[j], s[j]);
}
template <class T, int D>
__device__ __forceinline__ void shift_level(typename doubling_words<T>::word (&n)[doubling_words<T>::NW]) {
    using W = doubling_words<T>;
    typename W::word s[W::NW];
    shifted<T, D>(n, s);
#pragma unroll
    for (int j = 0; j < W::NW; ++j) n[j] = s[j];
}

// n := op over n[i, i + L), 2^K <= L < 2^(K + 1): K doublings, then op with a copy shifted by
// t = L - 2^K, bit by bit.
template <class T, bool Max, int K, int... k>
__device__ __forceinline__ void row_window(typename doubling_words<T>::word (&n)[doubling_words<T>::NW], int L,
                                           std::integer_sequence<int, k...>) {
    using W = doubling_words<T>;
    (double_level<T, 1 << k, Max>(n), ...);
    typename W::word m[W::NW];
#pragma unroll
    for (int j = 0; j < W::NW; ++j) m[j] = n[j];
    const int t = L - (1 << K);
    ((t >> k & 1 ? shift_level<T, 1 << k>(m) : void()), ...);
#pragma unroll
    for (int j = 0; j < W::NW; ++j) n[j] = W::template apply<Max>(n[j], m[j]);
}
template <class T, bool Max, int K>
__device__ __forceinline__ void row_window(typename doubling_words<T>::word (&n)[doubling_words<T>::NW], int L) {
    row_window<T, Max, K>(n, L, std::make_integer_sequence<int, K>{});
}

template <class T>
struct row_doubling_args {
    const T* in = nullptr;
    i64 in_stride = 0;
    T* out = nullptr;
    i64 out_stride = 0;
    i64 width = 0;
    int L1 = 0, L2 = 0, b1 = 0;
    int lead = 0;      // c0 = X - lead: the first input column of the warp writing from X (lead % P == 0)
    int delta = 0;     // lead - the stages' arms before (< P): register column delta holds output column X
    int span = 0;      // output columns per warp, a multiple of 16
    int segments = 0;  // warps per row
    unsigned tasks = 0;  // warps in all
    T pad1 = 0, pad2 = 0;
};

// Packed word m (P elements of T) with its element i replaced by v.
template <class T>
__device__ __forceinline__ std::uint32_t with_element(std::uint32_t m, int i, T v) {
    if constexpr (sizeof(T) == 1)
        return __byte_perm(m, v, (0x3210 & ~(0xf << (4 * i))) | (4 << (4 * i)));
    else
        return __byte_perm(m, v, i ? 0x5410 : 0x3254);
}

// Replaces the columns of packed word m (first column `col`) outside [0, width) by `pad`.
template <class T>
__device__ __forceinline__ std::uint32_t pad_outside(std::uint32_t m, i64 col, i64 width, T pad) {
#pragma unroll
    for (int i = 0; i < packed<T>::P; ++i)
        if (col + i < 0 || col + i >= width) m = with_element<T>(m, i, pad);
    return m;
}

template <class T, bool Max1, int K, bool Two>
__global__ void __launch_bounds__(tuning_policy::doubling_threads, 2)
    row_doubling_kernel(const row_doubling_args<T> a) {
    using W = doubling_words<T>;
    constexpr int P = W::P, NW = W::NW;
    constexpr int S = 32 * lane_columns;  // columns per warp
    const int lane = threadIdx.x % 32;
    const unsigned task = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (task >= a.tasks) return;  // whole warps
    const i64 y = task / static_cast<unsigned>(a.segments);
    const i64 X = static_cast<i64>(task % static_cast<unsigned>(a.segments)) * a.span;
    const i64 c0 = X - a.lead, ct = c0 + lane_columns * lane;
    const T* row = a.in + y * a.in_stride;
    typename W::word n[NW];
    if (c0 >= 0 && c0 + S <= a.width) {
        const auto* src = reinterpret_cast<const std::uint32_t*>(row + ct);
#pragma unroll
        for (int j = 0; j < NW; ++j) n[j] = W::split(__ldg(src + j));
    } else {  // words lie wholly left of column 0 or right of it (c0 % P == 0)
#pragma unroll
        for (int j = 0; j < NW; ++j) {
            const i64 col = ct + P * j;
            std::uint32_t m = packed<T>::splat_mem(a.pad1);
            if (col >= 0 && col + P <= a.width) {
                m = __ldg(reinterpret_cast<const std::uint32_t*>(row + col));
            } else if (col >= 0 && col < a.width) {
                for (int i = 0; col + i < a.width; ++i) m = with_element<T>(m, i, __ldg(row + col + i));
            }
            n[j] = W::split(m);
        }
    }
    row_window<T, Max1, K>(n, a.L1);
    if constexpr (Two) {
        // The second stage's input: the first's results, its padding outside the image.
        const i64 ce = ct + a.b1;
        if (c0 + a.b1 < 0 || c0 + a.b1 + S > a.width)
#pragma unroll
            for (int j = 0; j < NW; ++j)
                n[j] = W::split(pad_outside<T>(W::pack(n[j]), ce + P * j, a.width, a.pad2));
        row_window<T, !Max1, K>(n, a.L2);
    }
    // Register column delta + u holds output column X + u: a funnel shift by delta columns, the
    // lane's last word from the next lane's first.
    std::uint32_t p[NW + 1];
#pragma unroll
    for (int j = 0; j < NW; ++j) p[j] = W::pack(n[j]);
    p[NW] = __shfl_down_sync(0xffffffffu, p[0], 1);
    const unsigned sh = 8 * sizeof(T) * static_cast<unsigned>(a.delta);
    std::uint32_t o[NW];
#pragma unroll
    for (int j = 0; j < NW; ++j) o[j] = __funnelshift_r(p[j], p[j + 1], sh);
    T* orow = a.out + y * a.out_stride;
    const i64 end = std::min<i64>(X + a.span, a.width);
    constexpr int vector_columns = 4 * P;  // one 16-byte store
#pragma unroll
    for (int v = 0; v < NW / 4; ++v) {
        const i64 col = X + lane_columns * lane + vector_columns * v;
        if (col + vector_columns <= end) {
            *reinterpret_cast<uint4*>(orow + col) = make_uint4(o[4 * v], o[4 * v + 1], o[4 * v + 2], o[4 * v + 3]);
        } else if (col < end) {  // the row's last columns
            for (int i = 0; col + i < end; ++i) orow[col + i] = packed<T>::get(o[4 * v + i / P], i % P);
        }
    }
}

template <class T>
struct row_doubling_stage {
    i64 before = 0, after = 0;  // the window's arms, clipped to the row
    T pad{};                    // the value of columns outside the row
};

// One min (max_first) or max pass along the rows (N = 1 stage), or two (N = 2: the second the
// other op): uint8, and uint16 openings and closings under 128 pixels (where it was faster).
// False (nothing launched) where it does not apply: windows of 256 pixels or more, stages of
// different K, a warp's halo over half its columns, rows not 16-byte aligned, or `in` and `out`
// overlapping (a warp reads the columns its neighbours write).
template <class T, std::size_t N>
bool row_doubling(device_view<const T> in, device_view<T> out, bool max_first,
                  const row_doubling_stage<T> (&stages)[N], cudaStream_t stream) {
    static_assert(N == 1 || N == 2);
    constexpr bool two = N == 2;
    // uint16: openings and closings under 128 pixels only. One H200 (2026-12-02, against the
    // whole-row and fused kernels, two rounds): 8000^2 openings by hline:41 / 101 / 201 0.178 ->
    // 0.144 / 0.171 / 0.220 ms; 16384^2 erosions by hline:63 0.396 -> 0.637, rect:63x63 0.733 ->
    // 0.978.
    constexpr bool u16 = std::is_same_v<T, std::uint16_t>;
    constexpr int max_K = u16 ? 6 : 7;
    if constexpr (!std::is_same_v<T, std::uint8_t> && !(u16 && two)) {
        return false;
    } else {
        constexpr int S = 32 * lane_columns, P = doubling_words<T>::P;
        const row_doubling_stage<T>& first = stages[0];
        const i64 L1 = first.before + first.after + 1;
        const i64 L2 = two ? stages[N - 1].before + stages[N - 1].after + 1 : 1;
        const i64 h = first.before + (two ? stages[N - 1].before : 0);
        const auto log2 = [](i64 L) { return std::bit_width(static_cast<std::uint64_t>(L)) - 1; };
        const int K = log2(L1);
        if (L1 < 2 || K > max_K || (two && log2(L2) != K)) return false;
        if (!aligned16(in.data(), in.stride() * static_cast<i64>(sizeof(T))) ||
            !aligned16(out.data(), out.stride() * static_cast<i64>(sizeof(T))))
            return false;
        if (overlaps(in, out)) return false;
        row_doubling_args<T> a;
        a.lead = static_cast<int>((h + P - 1) / P * P);
        a.delta = static_cast<int>(a.lead - h);
        const i64 most = (S - (L1 - 1) - (L2 - 1) - a.delta) / 16 * 16;  // output columns a warp can write
        if (most < S / 2) return false;
        a.in = in.data();
        a.in_stride = in.stride();
        a.out = out.data();
        a.out_stride = out.stride();
        a.width = in.width();
        a.L1 = static_cast<int>(L1);
        a.L2 = static_cast<int>(L2);
        a.b1 = static_cast<int>(first.before);
        const i64 segments = (a.width + most - 1) / most;
        a.span = static_cast<int>(((a.width + segments - 1) / segments + 15) / 16 * 16);
        a.segments = static_cast<int>(segments);
        a.pad1 = first.pad;
        a.pad2 = stages[N - 1].pad;
        constexpr int per_block = tuning_policy::doubling_threads / 32;
        const i64 warps = in.height() * segments, blocks = (warps + per_block - 1) / per_block;
        if (blocks * tuning_policy::doubling_threads > 0xffffffffll) return false;
        a.tasks = static_cast<unsigned>(warps);
        const auto launch = [&](auto max1) {
            const auto run = [&](auto k) {
                row_doubling_kernel<T, decltype(max1)::value, decltype(k)::value, two>
                    <<<static_cast<unsigned>(blocks), tuning_policy::doubling_threads, 0, stream>>>(a);
            };
            with_constant<1, max_K>(K, run);
            check_launch("row_doubling_kernel");
        };
        max_first ? launch(std::true_type{}) : launch(std::false_type{});
        return true;
    }
}

}  // namespace
}  // namespace granula::cuda::detail
