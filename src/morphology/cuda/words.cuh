// Pixel words for the CUDA morphology kernels.
//
// A "word" is what one thread holds for one position along a line:
//  - packed<T>: a 4-byte word of P = 4 / sizeof(T) pixels (uint8 x4, uint16 x2, float x1), with
//    SIMD min/max (__vminu4, __vminu2, min.NaN.f32). In the vertical pass the P pixels are P
//    adjacent columns; in the horizontal pass (shared memory) they are P adjacent rows.
//  - scalar<T>: one pixel; used where a view is not 4-byte aligned.
// Float min/max propagate NaN (any NaN operand gives NaN), as the CPU backend does.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/border_index.hpp"

namespace granula::cuda::detail {

using i64 = long long;

using granula::detail::floor_div;  // one definition for both backends (border_index.hpp)

__device__ __forceinline__ float fmin_nan(float a, float b) {
    float d;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    return d;
}
__device__ __forceinline__ float fmax_nan(float a, float b) {
    float d;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    return d;
}

// The identity of min (the type's largest value, +inf for float) or max (lowest, -inf).
template <class T, bool Max>
__host__ __device__ constexpr T identity_value() {
    if constexpr (std::is_floating_point_v<T>)
        return Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
        return Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
}

// Every word type has
//   mem:   the 4-byte (or one-pixel) unit in memory, with get/put of pixel i and raw bits;
//   word:  what the min/max runs on, with unpack(mem) / pack(word) between the two.
template <class T>
struct packed;

// uint8 as two u16x2 halves, bytes 0 and 2 in `lo`, bytes 1 and 3 in `hi`: native min.u16x2 (2
// instructions per min) at the price of twice the registers.
struct u8x4_split {
    std::uint32_t lo, hi;
};

// A packed uint8 word split into its halves by byte permutes (one PRMT each) and packed back (one
// PRMT): the split words below (packed_u8_split), the accumulators and row_doubling.cuh. With
// masks and shifts instead, runs_kernel<uint8_t> had 4712 SASS instructions against 4640, and a
// 16384^2 erosion by disk:31 took 4.59 ms against 4.09 (one H200; docs/benchmarks.md, stop 37).
__device__ __forceinline__ u8x4_split split_u8_by_permutes(std::uint32_t m) {
    return {__byte_perm(m, 0, 0x4240), __byte_perm(m, 0, 0x4341)};
}
__device__ __forceinline__ std::uint32_t pack_u8_by_permute(u8x4_split w) { return __byte_perm(w.lo, w.hi, 0x6240); }

// Four uint8 pixels in a 4-byte word of memory: what both uint8 word types share.
struct u8x4_memory {
    using elem = std::uint8_t;
    using mem = std::uint32_t;
    static constexpr int P = 4;
    __host__ __device__ static mem splat_mem(elem v) { return 0x01010101u * v; }
    __device__ static elem get(mem w, int i) { return static_cast<elem>(w >> (8 * i)); }
    __device__ static mem put(mem w, int i, elem v) { return w | (static_cast<mem>(v) << (8 * i)); }
    __device__ static std::uint32_t bits(mem w) { return w; }
    __device__ static mem from_bits(std::uint32_t b) { return b; }
};

// uint8 as split words for every GRANULA_CUDA_U8_SPLIT setting (split_word below).
struct packed_u8_split : u8x4_memory {
    using word = u8x4_split;
    __device__ static word unpack(mem m) { return split_u8_by_permutes(m); }
    __device__ static mem pack(word w) { return pack_u8_by_permute(w); }
    __device__ static word vmin(word a, word b) { return {__vminu2(a.lo, b.lo), __vminu2(a.hi, b.hi)}; }
    __device__ static word vmax(word a, word b) { return {__vmaxu2(a.lo, b.lo), __vmaxu2(a.hi, b.hi)}; }
    __host__ __device__ static word splat(elem v) { return {0x00010001u * v, 0x00010001u * v}; }
};

// uint8 words for the vertical pass, two ways (GRANULA_CUDA_U8_SPLIT picks; tuning.hpp has the
// measurements):
//  0: one 4 x 8-bit word, __vminu4/__vmaxu4 (emulated on Hopper in ~7 instructions);
//  1: split words (packed_u8_split).
#if !defined(GRANULA_CUDA_U8_SPLIT)
#define GRANULA_CUDA_U8_SPLIT 0
#endif
#if GRANULA_CUDA_U8_SPLIT
template <>
struct packed<std::uint8_t> : packed_u8_split {};
#else
template <>
struct packed<std::uint8_t> : u8x4_memory {
    using word = std::uint32_t;
    __device__ static word unpack(mem m) { return m; }
    __device__ static mem pack(word w) { return w; }
    __device__ static word vmin(word a, word b) { return __vminu4(a, b); }
    __device__ static word vmax(word a, word b) { return __vmaxu4(a, b); }
    __host__ __device__ static word splat(elem v) { return 0x01010101u * v; }
};
#endif

template <>
struct packed<std::uint16_t> {
    using elem = std::uint16_t;
    using mem = std::uint32_t;
    using word = std::uint32_t;
    static constexpr int P = 2;
    __device__ static word unpack(mem m) { return m; }
    __device__ static mem pack(word w) { return w; }
    __device__ static word vmin(word a, word b) { return __vminu2(a, b); }
    __device__ static word vmax(word a, word b) { return __vmaxu2(a, b); }
    __host__ __device__ static word splat(elem v) { return 0x00010001u * v; }
    __host__ __device__ static mem splat_mem(elem v) { return 0x00010001u * v; }
    __device__ static elem get(mem w, int i) { return static_cast<elem>(w >> (16 * i)); }
    __device__ static mem put(mem w, int i, elem v) { return w | (static_cast<mem>(v) << (16 * i)); }
    __device__ static std::uint32_t bits(mem w) { return w; }
    __device__ static mem from_bits(std::uint32_t b) { return b; }
};

template <>
struct packed<float> {
    using elem = float;
    using mem = float;
    using word = float;
    static constexpr int P = 1;
    __device__ static word unpack(mem m) { return m; }
    __device__ static mem pack(word w) { return w; }
    __device__ static word vmin(word a, word b) { return fmin_nan(a, b); }
    __device__ static word vmax(word a, word b) { return fmax_nan(a, b); }
    __host__ __device__ static word splat(elem v) { return v; }
    __host__ __device__ static mem splat_mem(elem v) { return v; }
    __device__ static elem get(mem w, int) { return w; }
    __device__ static mem put(mem, int, elem v) { return v; }
    __device__ static std::uint32_t bits(mem w) { return __float_as_uint(w); }
    __device__ static mem from_bits(std::uint32_t b) { return __uint_as_float(b); }
};

// The word type of the engines that read shared memory (the horizontal pass, runs_kernel,
// sheared_staged_kernel): uint8 as two u16x2 halves, native min.u16x2 at the price of twice the
// registers, which those kernels can spare; the others as packed<T>. Measured: the horizontal
// pass 4-10% faster than with __vminu4 words; the sheared pass alone (16384^2 uint8,
// line:63:45, one H200) 0.52 ms with __vminu4 words, 0.46 ms split.
template <class T>
struct split_word {
    using type = packed<T>;
};
template <>
struct split_word<std::uint8_t> {
    using type = packed_u8_split;
};

// One pixel per word (unaligned views).
template <class T>
struct scalar {
    using elem = T;
    using mem = T;
    using word = T;
    static constexpr int P = 1;
    __device__ static word unpack(mem m) { return m; }
    __device__ static mem pack(word w) { return w; }
    __device__ static word vmin(word a, word b) {
        if constexpr (std::is_floating_point_v<T>)
            return fmin_nan(a, b);
        else
            return b < a ? b : a;
    }
    __device__ static word vmax(word a, word b) {
        if constexpr (std::is_floating_point_v<T>)
            return fmax_nan(a, b);
        else
            return b > a ? b : a;
    }
    __host__ __device__ static word splat(elem v) { return v; }
    __host__ __device__ static mem splat_mem(elem v) { return v; }
    __device__ static elem get(mem w, int) { return w; }
    __device__ static mem put(mem, int, elem v) { return v; }
};

// What the engines' running minima accumulate in (vhgw.cuh): the word itself, except for
// __vminu4 uint8 words, whose min Hopper emulates in about 7 instructions. Those accumulate as
// split u16x2 halves (native min.u16x2: 2 instructions, and a byte permute to split or pack a
// word), while the registers that hold a chunk keep packed words (split registers took the
// vertical pass to 96 registers: tuning.hpp).
template <class V>
struct accumulator {
    using ops = V;
    __device__ static typename V::word from_word(typename V::word w) { return w; }
    __device__ static typename V::word to_word(typename V::word a) { return a; }
};
#if !GRANULA_CUDA_U8_SPLIT
template <>
struct accumulator<packed<std::uint8_t>> {
    using ops = packed_u8_split;
    __device__ static u8x4_split from_word(std::uint32_t w) { return split_u8_by_permutes(w); }
    __device__ static std::uint32_t to_word(u8x4_split a) { return pack_u8_by_permute(a); }
};
#endif

// min (Max = false) or max over words, with its identity; `combine` is the same over
// accumulators.
template <class V, bool Max>
struct word_op {
    using word = typename V::word;
    using acc = typename accumulator<V>::ops::word;
    __device__ static word apply(word a, word b) {
        if constexpr (Max)
            return V::vmax(a, b);
        else
            return V::vmin(a, b);
    }
    __host__ __device__ static word identity() { return V::splat(identity_value<typename V::elem, Max>()); }
    __device__ static acc to_acc(word w) { return accumulator<V>::from_word(w); }
    __device__ static word from_acc(acc a) { return accumulator<V>::to_word(a); }
    __device__ static acc combine(acc a, acc b) {
        if constexpr (Max)
            return accumulator<V>::ops::vmax(a, b);
        else
            return accumulator<V>::ops::vmin(a, b);
    }
};

template <class T>
__device__ __forceinline__ T load_ro(const T* p) {
    return __ldg(p);
}

// P = V::P elements from p on, at any alignment, for 4-byte words (uint8, uint16): two aligned
// words and a funnel shift (the second holds p[P - 1], so it is read only when p is not aligned).
template <class V>
__device__ __forceinline__ typename V::mem load_unaligned(const typename V::elem* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    const auto* aligned = reinterpret_cast<const std::uint32_t*>(address & ~std::uintptr_t{3});
    const unsigned shift = 8 * static_cast<unsigned>(address & 3);
    const std::uint32_t lo = load_ro(aligned);
    return V::from_bits(shift ? __funnelshift_r(lo, load_ro(aligned + 1), shift) : lo);
}

// Memory word w of a row of `width` pixels (columns w*P .. w*P+P-1); pixels past the row read
// as 0. Requires the row pointer to be aligned to the word size.
template <class V>
__device__ __forceinline__ typename V::mem load_mem(const typename V::elem* row, i64 w, i64 width) {
    using mem = typename V::mem;
    constexpr int P = V::P;
    if constexpr (P == 1) {
        return load_ro(row + w);
    } else {
        if ((w + 1) * P <= width) return load_ro(reinterpret_cast<const mem*>(row) + w);
        mem x = 0;
        for (int i = 0; i < P; ++i)
            if (w * P + i < width) x = V::put(x, i, load_ro(row + w * P + i));
        return x;
    }
}

// Stores memory word w of a row, writing only the pixels that lie inside the row.
template <class V>
__device__ __forceinline__ void store_mem(typename V::elem* row, i64 w, i64 width, typename V::mem v) {
    using mem = typename V::mem;
    constexpr int P = V::P;
    if constexpr (P == 1) {
        row[w] = v;
    } else {
        if ((w + 1) * P <= width) {
            reinterpret_cast<mem*>(row)[w] = v;
            return;
        }
        for (int i = 0; i < P; ++i)
            if (w * P + i < width) row[w * P + i] = V::get(v, i);
    }
}

template <class V>
__device__ __forceinline__ typename V::word load_word(const typename V::elem* row, i64 w, i64 width) {
    return V::unpack(load_mem<V>(row, w, width));
}
template <class V>
__device__ __forceinline__ void store_word(typename V::elem* row, i64 w, i64 width, typename V::word v) {
    store_mem<V>(row, w, width, V::pack(v));
}

// Transposes a P x P block held as P 4-byte words: in[k] holds P pixels of row k, out[i] holds
// pixel i of every row (and the other way round: the transpose is its own inverse).
template <int P>
__device__ __forceinline__ void transpose_words(const std::uint32_t* in, std::uint32_t* out) {
    if constexpr (P == 4) {
        const std::uint32_t t0 = __byte_perm(in[0], in[1], 0x5140), t1 = __byte_perm(in[0], in[1], 0x7362);
        const std::uint32_t t2 = __byte_perm(in[2], in[3], 0x5140), t3 = __byte_perm(in[2], in[3], 0x7362);
        out[0] = __byte_perm(t0, t2, 0x5410);
        out[1] = __byte_perm(t0, t2, 0x7632);
        out[2] = __byte_perm(t1, t3, 0x5410);
        out[3] = __byte_perm(t1, t3, 0x7632);
    } else if constexpr (P == 2) {
        out[0] = __byte_perm(in[0], in[1], 0x5410);
        out[1] = __byte_perm(in[0], in[1], 0x7632);
    } else {
        out[0] = in[0];
    }
}

}  // namespace granula::cuda::detail
