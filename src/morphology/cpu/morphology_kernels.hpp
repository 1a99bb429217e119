// The CPU morphology kernels, compiled once per instruction set (cmake/GranulaSimd.cmake).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "morphology/element_plan.hpp"

namespace granula::detail {

// The value min (max) ignores: +inf (-inf) for floats, the type's largest (smallest) value.
template <class T>
T neutral_value(bool maximum) {
    if constexpr (std::numeric_limits<T>::has_infinity)
        return maximum ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
        return maximum ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
}

// One 1-D pass: out(x) = min (or max) of in over the window [x - before, x + after] along
// the pass direction, pixels outside the image supplied by `mode` (`pad` when the mode has
// no source index: ignore -> the operation's neutral value, constant -> cval).
template <class T>
struct line_pass {
    std::int64_t before = 0;
    std::int64_t after = 0;
    bool maximum = false;
    border_mode mode = border_mode::ignore;
    T pad{};
};

}  // namespace granula::detail

// horizontal_passes: windows along rows, any border mode, each pass on the previous one's result
//   (in may be out); the strips of a chain stay in cache between its passes.
// vertical_passes: one vertical pass, or two, the second on the first's result, streamed so that
//   the intermediate rows stay in cache (in must not be out). The result is stored past the cache
//   unless `result_read_next` says another pass reads it next (a single pass only; a pair is an
//   opening's or closing's last step).
// vertical_pass: windows along columns, any border mode (in must not be out), the result left in
//   the cache for the pass that reads it; out row j is the window at image row j - top, so out
//   may have more rows than in (the rows of a padded frame).
// sheared_pass: windows along the periodic paths p, p + (dx, dy), p + 2 (dx, dy), ... (dy >= 1),
//   with pixels off the image taking `pad` (border mode ignore or constant only); out(p) is the
//   window at p + at (out may be a crop of in's frame).
// accumulate_shifted: acc(p) = min (or max) of acc(p) and src(p + s) for every s in `shifts`
//   with p + s inside src.
// accumulate_runs: the same for the runs src(p + s .. p + s + (length - 1) step) of every run,
//   step (1, 0), or (0, 1) when `vertical`, computed in tiles that stay in cache; runs sorted
//   by length. Pixels off src are neutral, so every pixel of acc is written; `initialise`
//   ignores what acc held.
#define GRANULA_DECLARE_MORPHOLOGY_KERNELS(ns)                                                                 \
    namespace granula::ns {                                                                                    \
    template <class T>                                                                                         \
    void horizontal_passes(host_view<const T> in, host_view<T> out, std::span<const detail::line_pass<T>> passes); \
    template <class T>                                                                                         \
    void vertical_passes(host_view<const T> in, host_view<T> out, std::span<const detail::line_pass<T>> passes,\
                         bool result_read_next);                                                               \
    template <class T>                                                                                         \
    void vertical_pass(host_view<const T> in, host_view<T> out, const detail::line_pass<T>& pass,            \
                       std::int64_t top = 0);                                                                 \
    template <class T>                                                                                         \
    void sheared_pass(host_view<const T> in, host_view<T> out, const detail::line_pass<T>& pass, int dx, int dy,  \
                      detail::pixel_shift at);                                                                 \
    template <class T>                                                                                         \
    void accumulate_shifted(host_view<T> acc, host_view<const T> src, const std::vector<detail::pixel_shift>& shifts, \
                            bool maximum);                                                                     \
    template <class T>                                                                                         \
    void accumulate_runs(host_view<T> acc, host_view<const T> src, const std::vector<detail::shifted_runs>& runs,   \
                         bool vertical, bool maximum, bool initialise);                                        \
    }

GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_scalar)
GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_baseline)
GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_avx2)
GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_avx512)
#undef GRANULA_DECLARE_MORPHOLOGY_KERNELS
