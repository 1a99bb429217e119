// The CPU morphology kernels, compiled once per instruction set (cmake/GranulaSimd.cmake).
#pragma once

#include <cstdint>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"

namespace granula::detail {

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

#define GRANULA_DECLARE_MORPHOLOGY_KERNELS(ns)                                                        \
    namespace granula::ns {                                                                           \
    template <class T>                                                                                \
    void horizontal_pass(host_view<const T> in, host_view<T> out, const detail::line_pass<T>& pass); \
    template <class T>                                                                                \
    void vertical_pass(host_view<const T> in, host_view<T> out, const detail::line_pass<T>& pass);   \
    }

GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_scalar)
GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_baseline)
GRANULA_DECLARE_MORPHOLOGY_KERNELS(simd_avx2)
#undef GRANULA_DECLARE_MORPHOLOGY_KERNELS
