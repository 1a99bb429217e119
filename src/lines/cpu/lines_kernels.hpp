// The vectorised CPU path of the linear filters (border ignore or constant): blocks of adjacent
// scan lines are filtered together, one SIMD lane per line, by van Herk/Gil-Werman erosion then
// dilation down the rows of the oriented image. Compiled once per instruction set
// (cmake/GranulaSimd.cmake).
#pragma once

#include <cstdint>
#include <type_traits>

#include "granula/core/image.hpp"
#include "lines/scan_line_filter.hpp"
#include "lines/scan_lines.hpp"

namespace granula::detail {

// The running extremum over angles and the rank of the angle attaining it, in one word: the key
// above rank_bits, ranks - 1 - rank below, so that the larger word holds the larger key, ties
// to the smaller rank (the smaller angle), and one max a pixel updates both. uint8 keeps 2 bytes
// a pixel, so a reduction holds 256 ranks (lines_cpu.cpp runs more angles in groups). A key
// image and a rank image took 3 bytes and a compare-and-select: the 640x640 uint8 map over 180
// angles took about a third longer so (docs/benchmarks.md, 2026-12-03, stop 42).
template <class T>
struct reduction_word;
template <>
struct reduction_word<std::uint8_t> {
    using type = std::uint16_t;
    static constexpr int rank_bits = 8;
};
template <>
struct reduction_word<std::uint16_t> {
    using type = std::uint32_t;
    static constexpr int rank_bits = 16;
};
template <>
struct reduction_word<float> {
    using type = std::int64_t;  // the key is signed: the shifts keep its order
    static constexpr int rank_bits = 16;
};

template <class T>
struct packed_best {
    using word = typename reduction_word<T>::type;
    using key = typename line_keys<T>::key;
    static constexpr int rank_bits = reduction_word<T>::rank_bits;
    static constexpr std::int64_t ranks = std::int64_t{1} << rank_bits;
    static word pack(key k, std::uint32_t rank) {
        return static_cast<word>((static_cast<word>(k) << rank_bits) | (ranks - 1 - rank));
    }
    static key key_of(word w) { return static_cast<key>(w >> rank_bits); }
    static std::uint32_t rank_of(word w) { return static_cast<std::uint32_t>(ranks - 1 - (w & (ranks - 1))); }
};

// One angle's work, in the coordinates of the oriented image (scan_lines).
template <class T>
struct line_band_job {
    using key = typename line_keys<T>::key;
    // Exact for integer pixels (below 2^64), double for float.
    using sum_type = std::conditional_t<std::is_floating_point_v<T>, double, std::uint64_t>;
    host_view<const T> oriented;
    // Flat lines only: `oriented` and `filtered` are the image itself, not its transpose (oriented
    // row r is image column r), read and written through small transposed tiles. No best/rank.
    bool on_image = false;
    const scan_lines* lines = nullptr;
    line_extension<key> extension;  // ignore or constant
    bool closing = false;
    bool first_stage_only = false;  // erosion (dilation): no second stage
    // The running extremum over angles and its angle's rank (packed_best); a later angle
    // replaces it only when strictly better, or always when `first`.
    host_view<typename reduction_word<T>::type> best;
    std::uint32_t angle_rank = 0;
    bool reduction_reversed = false;  // best's keys: line_keys::reduction_key(key, this)
    bool first = false;
    host_view<T> filtered;  // empty: not wanted
    bool want_sum = false;
};

}  // namespace granula::detail

// filter_angle_bands: runs the job and returns the sum of the filtered values (0 unless
//   want_sum).
// transpose: out(x, y) = in(y, x).
#define GRANULA_DECLARE_LINES_KERNELS(ns)                                                  \
    namespace granula::ns {                                                                \
    template <class T>                                                                     \
    double filter_angle_bands(const detail::line_band_job<T>& job);                        \
    template <class T>                                                                     \
    void transpose(host_view<const T> in, host_view<T> out);                               \
    }

GRANULA_DECLARE_LINES_KERNELS(simd_scalar)
GRANULA_DECLARE_LINES_KERNELS(simd_baseline)
GRANULA_DECLARE_LINES_KERNELS(simd_avx2)
GRANULA_DECLARE_LINES_KERNELS(simd_avx512)
#undef GRANULA_DECLARE_LINES_KERNELS
