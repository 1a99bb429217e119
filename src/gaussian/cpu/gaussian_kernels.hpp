// The CPU Gaussian kernels, compiled once per instruction set (cmake/GranulaSimd.cmake).
#pragma once

#include "gaussian/gaussian_plan.hpp"
#include "granula/core/image.hpp"

// One pass along axis 0 (columns: vertical_pass) or axis 1 (rows: horizontal_pass), from
// pixel type T to pixel type U. A plan of kind identity converts pixels only. fir_both and
// fir_by_rows: both axes fir in one pass (out must not overlap in).
#define GRANULA_DECLARE_GAUSSIAN_KERNELS(ns)                                                                  \
    namespace granula::ns {                                                                                   \
    template <class T, class U>                                                                               \
    void gaussian_vertical_pass(host_view<const T> in, host_view<U> out, const detail::axis_plan& plan);      \
    template <class T, class U>                                                                               \
    void gaussian_horizontal_pass(host_view<const T> in, host_view<U> out, const detail::axis_plan& plan);    \
    template <class T, class U>                                                                               \
    void gaussian_fir_both(host_view<const T> in, host_view<U> out, const detail::axis_plan& rows_axis,        \
                           const detail::axis_plan& cols_axis);                                               \
    template <class T, class U>                                                                               \
    void gaussian_fir_by_rows(host_view<const T> in, host_view<U> out, const detail::axis_plan& rows_axis,     \
                              const detail::axis_plan& cols_axis);                                            \
    }

GRANULA_DECLARE_GAUSSIAN_KERNELS(simd_scalar)
GRANULA_DECLARE_GAUSSIAN_KERNELS(simd_baseline)
GRANULA_DECLARE_GAUSSIAN_KERNELS(simd_avx2)
GRANULA_DECLARE_GAUSSIAN_KERNELS(simd_avx512)
#undef GRANULA_DECLARE_GAUSSIAN_KERNELS
