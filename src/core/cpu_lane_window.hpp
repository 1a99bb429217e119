// Lane-parallel building blocks shared by the CPU kernel sources: 1-D min/max windows over
// "rows of lanes" (van Herk/Gil-Werman, 3 comparisons per output whatever the length, and
// direct windows), and register transposes of 16-byte blocks.
// Included by sources compiled once per instruction set (cmake/GranulaSimd.cmake), inside
// their granula::GRANULA_SIMD_NAMESPACE; GRANULA_SIMD_SCALAR marks the copy built with
// vectorisation off.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/cpu_streaming_stores.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

// apply() works on scalars and, in the SIMD builds, on GCC vector types lane by lane.
template <class T>
struct min_op {
    template <class V>
    static V apply(V a, V b) {
        if constexpr (std::is_floating_point_v<T>)
            return (b < a || b != b) ? b : a;  // NaN in either operand gives NaN
        else
            return b < a ? b : a;
    }
};
template <class T>
struct max_op {
    template <class V>
    static V apply(V a, V b) {
        if constexpr (std::is_floating_point_v<T>)
            return (b > a || b != b) ? b : a;
        else
            return b > a ? b : a;
    }
};

// a - b, at zero where an unsigned b exceeds a: a top-hat's or a gradient's difference.
template <class T>
struct difference_op {
    template <class V>
    static V apply(V a, V b) {
        if constexpr (std::is_floating_point_v<T>)
            return a - b;
        else
            return (a > b ? a : b) - b;
    }
};

// Bytes of one vector register in this copy (AVX-512 or AVX2 width).
#if defined(__AVX512BW__)
constexpr std::int64_t vector_bytes = 64;
#else
constexpr std::int64_t vector_bytes = 32;
#endif
// Elements of four vector registers: the lanes a kernel keeps in registers across all its reads.
template <class T>
constexpr std::int64_t register_strip = 4 * vector_bytes / sizeof(T);

// Lane-wise operations over w lanes. Lanes > 0 fixes w at compile time, so that a transposed
// strip's row (one or two vector registers) is a single unrolled operation with no loop
// overhead; Lanes == 0 takes w at run time (whole image rows).
template <class Op, std::int64_t Lanes, class T>
inline void combine(T* __restrict dst, const T* __restrict a, const T* __restrict b, std::int64_t w) {
    if constexpr (Lanes > 0) w = Lanes;
    for (std::int64_t i = 0; i < w; ++i) dst[i] = Op::apply(a[i], b[i]);
}
template <class Op, std::int64_t Lanes, class T>
inline void accumulate(T* __restrict acc, const T* __restrict src, std::int64_t w) {
    if constexpr (Lanes > 0) w = Lanes;
    for (std::int64_t i = 0; i < w; ++i) acc[i] = Op::apply(acc[i], src[i]);
}
// The prefix pass's step: prefix = Op(prefix, src), then dst = Op(suffix, prefix), in one loop
// that reads and writes the running prefix once. As accumulate() then combine(), the vertical
// passes' bands were slower (4096x4096 uint8, AMD EPYC build VM, AVX2): the opening by
// line(101, 90) 4.03-4.38 ms against 3.73-3.90 on one thread (binaries alternated), 2-4% on two
// (alternated in one process); the erosion by vline:63 2.02-2.48 against 1.79-2.05.
template <class Op, std::int64_t Lanes, class T>
inline void extend_prefix(T* __restrict dst, T* __restrict prefix, const T* __restrict src, const T* __restrict suffix,
                          std::int64_t w) {
    if constexpr (Lanes > 0) w = Lanes;
    for (std::int64_t i = 0; i < w; ++i) {
        const T extended = Op::apply(prefix[i], src[i]);
        prefix[i] = extended;
        dst[i] = Op::apply(suffix[i], extended);
    }
}
// Rows ahead that window_rows() prefetches when rows are separate image rows.
constexpr std::int64_t prefetch_rows = 6;
// Prefetches the cache lines of w lanes from p (p need not start a line).
template <class T>
inline void prefetch_lanes(const T* p, std::int64_t w) {
    const char* bytes = reinterpret_cast<const char*>(p);
    const std::int64_t first = -static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) % 64);
    for (std::int64_t b = first; b < w * static_cast<std::int64_t>(sizeof(T)); b += 64) __builtin_prefetch(bytes + b);
}

template <std::int64_t Lanes, class T>
inline void copy_lanes(T* __restrict dst, const T* __restrict src, std::int64_t w) {
    if constexpr (Lanes > 0) w = Lanes;
    std::memcpy(dst, src, w * sizeof(T));
}

// A fixed number of lanes handled as one value: a GCC vector in the SIMD builds, an array
// processed element by element in the scalar build.
#if defined(GRANULA_SIMD_SCALAR)
template <class T, std::int64_t Lanes>
struct lane_block {
    T v[Lanes];
};
template <class Op, class T, std::int64_t Lanes>
inline lane_block<T, Lanes> block_apply(const lane_block<T, Lanes>& a, const lane_block<T, Lanes>& b) {
    lane_block<T, Lanes> r;
    for (std::int64_t i = 0; i < Lanes; ++i) r.v[i] = Op::apply(a.v[i], b.v[i]);
    return r;
}
#else
template <class T, std::int64_t Lanes>
struct lane_vector {
    typedef T type __attribute__((vector_size(Lanes * sizeof(T))));
};
template <class T, std::int64_t Lanes>
using lane_block = typename lane_vector<T, Lanes>::type;
template <class Op, class V>
inline V block_apply(V a, V b) {
    return Op::apply(a, b);
}
#endif

// Short windows, directly: dst(x) = Op over src(x) .. src(x + L - 1), lane-wise over w lanes,
// for x in [0, n); L - 1 comparisons per output.
template <class Op, class T, class Src, class Dst>
void window_rows_direct(Src src, Dst dst, std::int64_t n, std::int64_t L, std::int64_t w) {
    for (std::int64_t x = 0; x < n; ++x) {
        T* d = dst(x);
        if (L == 1) {
            std::memcpy(d, src(x), w * sizeof(T));
            continue;
        }
        combine<Op, 0>(d, src(x), src(x + 1), w);
        for (std::int64_t j = 2; j < L; ++j) accumulate<Op, 0>(d, src(x + j), w);
    }
}

// Windows along one row by doubling: dst[x] = Op over src[x] .. src[x + L - 1] for x in [0, n),
// src holding n + L - 1 values. Windows of 2, 4, 8, ... values are built alternately in work_a
// and work_b (n + L - 2 values each), each from the last with one comparison per value, and
// the result combines the largest power of two p <= L at x and at x + L - p: ceil(log2 L)
// comparisons per output, every one a contiguous pass over a row that stays in the L1 cache.
template <class Op, class T>
void window_row_doubling(const T* src, T* dst, T* work_a, T* work_b, std::int64_t n, std::int64_t L) {
    if (L == 1) {
        std::memcpy(dst, src, n * sizeof(T));
        return;
    }
    const std::int64_t m = n + L - 1;
    const T* windows = src;  // windows of p values, m - p + 1 of them
    std::int64_t p = 1;
    for (T* next = work_a; 2 * p <= L; p *= 2, next = next == work_a ? work_b : work_a) {
        combine<Op, 0>(next, windows, windows + p, m - 2 * p + 1);
        windows = next;
    }
    combine<Op, 0>(dst, windows, windows + (L - p), n);
}

// van Herk/Gil-Werman: the same result with 3 comparisons per output whatever L, over w lanes
// (Lanes when > 0). src(i) is defined for i in [0, n + L - 1). `suffix` holds L * w values,
// `prefix` w.
template <class Op, std::int64_t Lanes, class T, class Src, class Dst>
void window_rows(Src src, Dst dst, std::int64_t n, std::int64_t L, std::int64_t w, T* suffix, T* prefix) {
    if constexpr (Lanes > 0) {
        // A strip's row is one or two registers: keep the running suffix and prefix in a
        // register, since reloading the value just stored stalls on store forwarding.
        using block = lane_block<T, Lanes>;
        const auto load = [](const T* p) { block v; std::memcpy(&v, p, sizeof(block)); return v; };
        const auto store = [](T* p, const block& v) { std::memcpy(p, &v, sizeof(block)); };
        for (std::int64_t k0 = 0; k0 < n; k0 += L) {
            block acc = load(src(k0 + L - 1));
            store(suffix + (L - 1) * Lanes, acc);
            for (std::int64_t t = L - 2; t >= 0; --t) {
                acc = block_apply<Op>(acc, load(src(k0 + t)));
                store(suffix + t * Lanes, acc);
            }
            store(dst(k0), acc);
            const std::int64_t t_end = std::min(L, n - k0);
            if (t_end > 1) acc = load(src(k0 + L));
            for (std::int64_t t = 1; t < t_end; ++t) {
                if (t > 1) acc = block_apply<Op>(acc, load(src(k0 + L + t - 1)));
                store(dst(k0 + t), block_apply<Op>(load(suffix + t * Lanes), acc));
            }
        }
        return;
    }
    for (std::int64_t k0 = 0; k0 < n; k0 += L) {
        // Suffix minima of the block [k0, k0 + L): suffix row t covers src(k0 + t .. k0 + L - 1).
        copy_lanes<Lanes>(suffix + (L - 1) * w, src(k0 + L - 1), w);
        for (std::int64_t t = L - 2; t >= 0; --t)
            combine<Op, Lanes>(suffix + t * w, src(k0 + t), suffix + (t + 1) * w, w);
        copy_lanes<Lanes>(dst(k0), suffix, w);
        // Prefix minima of the next block complete each window: x = k0 + t needs src(k0 + L .. x + L - 1).
        const std::int64_t t_end = std::min(L, n - k0);
        if (t_end > 1) {
            copy_lanes<Lanes>(prefix, src(k0 + L), w);
            combine<Op, Lanes>(dst(k0 + 1), suffix + w, prefix, w);
        }
        for (std::int64_t t = 2; t < t_end; ++t) {
            // The prefix pass is the first to touch these rows; their segments are short and a
            // page apart, which the hardware prefetcher does not follow.
            if (k0 + L + t - 1 + prefetch_rows < n + L - 1) prefetch_lanes(src(k0 + L + t - 1 + prefetch_rows), w);
            extend_prefix<Op, Lanes>(dst(k0 + t), prefix, src(k0 + L + t - 1), suffix + t * w, w);
        }
    }
}

// ---- streamed windows ---------------------------------------------------------------------------
// A strip: two 64-byte lines of each row, narrow enough that both stages' van Herk buffers (a
// window's length of strip rows each) stay in the L1 cache. The vertical pair's 4096x4096 uint8
// opening by line(101, 90), Intel Xeon build VM (48 KiB L1), one / two threads, in a prototype:
// strips of 64 bytes 3.0-3.7 / 1.6-1.9 ms, 128 bytes 2.0-2.3 / 1.1-1.3, 256 2.3-2.6 / 1.3-1.5,
// 2048 (both buffers in the L2 cache) 2.4-2.8 / 1.4-1.6. A strip's row is two lines of a page,
// which the hardware prefetchers do not follow: the opening takes about what copying the image
// by such strips takes (1.7-2.1 / 0.9-1.2 ms). The bands it replaced, and the scan lines' strips
// (line_strip_bytes): docs/benchmarks.md, "2026-12-05 (stop 60)".
constexpr std::int64_t strip_bytes = 128;
template <class T>
constexpr std::int64_t strip_lanes = strip_bytes / static_cast<std::int64_t>(sizeof(T));
// Rows ahead of the one read that a strip prefetches (4 to 128 measured alike).
constexpr std::int64_t strip_prefetch_rows = 16;

// A strip's row (Bytes wide) as vector registers. Loaded and stored a register at a time: with
// one memcpy of the whole row GCC kept the rows of streamed_window (its prefix, the windows) on
// the stack, a store and a reload around every minimum: the 4096x4096 uint8 opening by
// line(101, 90) took 2.14-2.23 ms on one thread and 1.08-1.12 on two, against 1.56-1.61 and
// 0.77-0.83 a register at a time (Intel Sapphire Rapids build VM, three rounds); the vertical
// erosions 15-17% faster for uint8, 3-8% for float, the steep scan-line openings 14-20%
// (docs/benchmarks.md, stop 75).
template <class T, std::int64_t Bytes = strip_bytes>
struct strip_row {
    static constexpr std::int64_t lanes = vector_bytes / static_cast<std::int64_t>(sizeof(T));
    static constexpr std::int64_t count = Bytes / vector_bytes;
    static constexpr std::int64_t width = Bytes / static_cast<std::int64_t>(sizeof(T));  // lanes of the row
    using block = lane_block<T, lanes>;
    block v[count];

    [[gnu::always_inline]] static strip_row load(const T* p) {
        strip_row r;
        for (std::int64_t k = 0; k < count; ++k) std::memcpy(&r.v[k], p + k * lanes, sizeof(block));
        return r;
    }
    [[gnu::always_inline]] void store(T* p) const {
        for (std::int64_t k = 0; k < count; ++k) std::memcpy(p + k * lanes, &v[k], sizeof(block));
    }
};

template <class Op, class Row>
[[gnu::always_inline]] inline Row apply_rows(const Row& a, const Row& b) {
    Row r;
    for (std::int64_t k = 0; k < Row::count; ++k) r.v[k] = block_apply<Op>(a.v[k], b.v[k]);
    return r;
}

// van Herk/Gil-Werman down a stream of a strip's rows: push() takes the next row and gives the
// window of the L rows ending at it, once L rows have come. Rows come in blocks of L; `held`
// (L strip rows) takes the block's rows as they come, over the previous block's suffix extrema,
// each slot's suffix read one row before the slot is overwritten: window = Op(suffix of the
// previous block from slot + 1, prefix of this block). At a block's last row the block's own
// suffixes are made in place, and its first is the window ending there. Each row is read once,
// and the buffer is the only memory the pass touches: 2 loads and 2 stores a row.
template <class Op, class T, std::int64_t Bytes = strip_bytes>
class streamed_window {
    using row_type = strip_row<T, Bytes>;

public:
    streamed_window(T* held, std::int64_t L) : held_(held), L_(L) {}

    [[gnu::always_inline]] bool push(const row_type& row, row_type& window) {
        constexpr std::int64_t S = row_type::width;
        prefix_ = slot_ == 0 ? row : apply_rows<Op>(prefix_, row);
        const bool complete = primed_;
        if (slot_ + 1 < L_) {
            if (primed_) window = apply_rows<Op>(row_type::load(held_ + (slot_ + 1) * S), prefix_);
            row.store(held_ + slot_ * S);
            ++slot_;
            return complete;
        }
        row_type suffix = row;
        row.store(held_ + slot_ * S);
        for (std::int64_t t = L_ - 2; t >= 0; --t) {
            suffix = apply_rows<Op>(suffix, row_type::load(held_ + t * S));
            suffix.store(held_ + t * S);
        }
        window = suffix;
        slot_ = 0;
        primed_ = true;
        return true;
    }

private:
    T* held_;
    std::int64_t L_, slot_ = 0;
    bool primed_ = false;
    row_type prefix_{};
};

// ---- transposes ---------------------------------------------------------------------------------
// A strip's rows are moved in groups of N rows x 64 bytes (G columns): each row's cache line is
// read (or written) once, whole, into registers, and the group is transposed as 64 / 16 blocks
// of N x N, N = 16 bytes / sizeof(T). Touching the rows 16 bytes at a time
// instead thrashes the L1 cache when the row stride is a multiple of 4 KiB (all rows map to
// one cache set): that was 3x slower at 4096 columns.
template <class T>
constexpr std::int64_t block_n = 16 / sizeof(T);
template <class T>
constexpr std::int64_t group_columns = 64 / sizeof(T);

#if defined(GRANULA_SIMD_SCALAR)
// rows[i][x + j] -> columns[j * K + i], for i < N, j < G.
template <class T>
inline void gather_group(const T* const* rows, std::int64_t x, T* columns, std::int64_t K) {
    for (std::int64_t i = 0; i < block_n<T>; ++i)
        for (std::int64_t j = 0; j < group_columns<T>; ++j) columns[j * K + i] = rows[i][x + j];
}
// columns[j * K + i] -> rows[i][x + j].
template <class T>
inline void scatter_group(const T* columns, std::int64_t K, T* const* rows, std::int64_t x) {
    for (std::int64_t i = 0; i < block_n<T>; ++i)
        for (std::int64_t j = 0; j < group_columns<T>; ++j) rows[i][x + j] = columns[j * K + i];
}
#else
// The N x N blocks sit in the 16-byte lanes of the widest register, where the interleaves
// (vpunpck*) stay: a 512-bit register carries all four blocks of a row, a 256-bit one two.
// Against 16-byte registers through a stack tile, AVX2 (AMD EPYC build VM, one thread, medians
// of 3-5 in alternated rounds): the 4096x4096 opening by line(101, 30) 12.4-13.8 -> 11.8-12.1
// ms (uint16 24-25 -> 22-24, float32 43-47 -> 39-41), the 640x640 map over 180 angles 52-56 ->
// 47-48, uint16 and float32 erosions by hline(255) 6.9-7.5 -> 5.6-6.0 and 14-16 -> 12-13;
// AVX-512 (Zen 5): uint8 horizontal chains 10-13% faster.
#if defined(__AVX512BW__)
constexpr std::size_t group_register_bytes = 64;
#elif defined(__AVX2__)
constexpr std::size_t group_register_bytes = 32;
#else
constexpr std::size_t group_register_bytes = 16;
#endif
template <class T, std::size_t Bytes>
struct vector_of {
    typedef T type __attribute__((vector_size(Bytes)));
};
template <class T>
using group_register = vector_of<T, group_register_bytes>;

template <class V, std::size_t... I>
inline auto concatenate(V low, V high, std::index_sequence<I...>) {
    return __builtin_shufflevector(low, high, I...);
}
// The 16-byte pieces piece(first), piece(first + 1), ... side by side in one register of Bytes,
// joined in registers (vinserti128): 16-byte moves into a vector in memory read back whole
// failed store forwarding, and float horizontal chains (hline:255) were 18% slower so.
template <class T, std::size_t Bytes, class Piece>
inline typename vector_of<T, Bytes>::type load_pieces(const Piece& piece, std::int64_t first) {
    if constexpr (Bytes == 16) {
        typename vector_of<T, 16>::type v;
        std::memcpy(&v, piece(first), 16);
        return v;
    } else {
        return concatenate(load_pieces<T, Bytes / 2>(piece, first), load_pieces<T, Bytes / 2>(piece, first + Bytes / 32),
                           std::make_index_sequence<Bytes / sizeof(T)>{});
    }
}

template <class V, std::size_t N, std::size_t... I>
inline V interleave_low_lanes(V a, V b, std::index_sequence<I...>) {
    constexpr std::size_t total = sizeof...(I);
    return __builtin_shufflevector(a, b, (I % N % 2 ? total : 0) + I / N * N + I % N / 2 ...);
}
template <class V, std::size_t N, std::size_t... I>
inline V interleave_high_lanes(V a, V b, std::index_sequence<I...>) {
    constexpr std::size_t total = sizeof...(I);
    return __builtin_shufflevector(a, b, (I % N % 2 ? total : 0) + I / N * N + N / 2 + I % N / 2 ...);
}

// Each 16-byte lane of r[0..N) transposed as its own N x N block: interleaving row i with row
// i + N/2, log2(N) times.
template <class T>
inline void transpose_lanes(typename group_register<T>::type* r) {
    using V = typename group_register<T>::type;
    constexpr std::size_t N = block_n<T>;
    constexpr auto idx = std::make_index_sequence<sizeof(V) / sizeof(T)>{};
#pragma GCC unroll 4
    for (std::size_t stage = 1; stage < N; stage *= 2) {
        V t[N];
#pragma GCC unroll 16
        for (std::size_t i = 0; i < N / 2; ++i) {
            t[2 * i] = interleave_low_lanes<V, N>(r[i], r[i + N / 2], idx);
            t[2 * i + 1] = interleave_high_lanes<V, N>(r[i], r[i + N / 2], idx);
        }
#pragma GCC unroll 16
        for (std::size_t i = 0; i < N; ++i) r[i] = t[i];
    }
}

// Registers a row's 64 bytes take, and 16-byte blocks a register holds.
constexpr std::int64_t group_parts = 64 / group_register_bytes, group_lanes = group_register_bytes / 16;

// Each row's 64 bytes are loaded (stored) together, register by register: a stack tile
// filled by a 64-byte memcpy (which GCC expands as 16-byte moves) and read back 32 bytes at a
// time failed store forwarding, and uint16 horizontal chains were 20% slower with it.
template <class T>
inline void gather_group(const T* const* rows, std::int64_t x, T* columns, std::int64_t K) {
    using V = typename group_register<T>::type;
    constexpr std::int64_t N = block_n<T>, part = group_register_bytes / sizeof(T);
    V r[group_parts][N];
#pragma GCC unroll 16
    for (std::int64_t i = 0; i < N; ++i)
#pragma GCC unroll 4
        for (std::int64_t h = 0; h < group_parts; ++h) std::memcpy(&r[h][i], rows[i] + x + h * part, sizeof(V));
#pragma GCC unroll 4
    for (std::int64_t h = 0; h < group_parts; ++h) {
        transpose_lanes<T>(r[h]);
#pragma GCC unroll 16
        for (std::int64_t j = 0; j < N; ++j)
#pragma GCC unroll 4
            for (std::int64_t b = 0; b < group_lanes; ++b)
                std::memcpy(columns + ((h * group_lanes + b) * N + j) * K,
                            reinterpret_cast<const char*>(&r[h][j]) + 16 * b, 16);
    }
}

template <class T>
inline void scatter_group(const T* columns, std::int64_t K, T* const* rows, std::int64_t x) {
    using V = typename group_register<T>::type;
    constexpr std::int64_t N = block_n<T>, part = group_register_bytes / sizeof(T);
    V r[group_parts][N];
#pragma GCC unroll 4
    for (std::int64_t h = 0; h < group_parts; ++h) {
#pragma GCC unroll 16
        for (std::int64_t j = 0; j < N; ++j)
            r[h][j] = load_pieces<T, group_register_bytes>(
                [&](std::int64_t b) { return columns + ((h * group_lanes + b) * N + j) * K; }, 0);
        transpose_lanes<T>(r[h]);
    }
#pragma GCC unroll 16
    for (std::int64_t i = 0; i < N; ++i)
#pragma GCC unroll 4
        for (std::int64_t h = 0; h < group_parts; ++h) std::memcpy(rows[i] + x + h * part, &r[h][i], sizeof(V));
}
#endif

}  // namespace
}  // namespace granula::GRANULA_SIMD_NAMESPACE
