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
    // The running extremum over angles (keys) and the rank of the angle attaining it; a later
    // angle replaces it only when strictly better, or always when `first`.
    host_view<key> best;
    host_view<std::uint16_t> rank;  // 2 bytes, not 4: the reductions' traffic bounds the many-angle case
    std::uint16_t angle_rank = 0;
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
