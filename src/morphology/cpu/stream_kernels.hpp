// The CPU kernel that runs a shift program (morphology/shift_program.hpp), compiled once per
// instruction set (cmake/GranulaSimd.cmake).
#pragma once

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "morphology/shift_program.hpp"

// run_shift_program: out = the program's last stage on `in` (same size), pixels off `in`
//   given by `mode` (`pad` where the mode has no source pixel: ignore, constant); a stage
//   clipped to the image takes `clip_pad` off it.
#define GRANULA_DECLARE_STREAM_KERNELS(ns)                                                                     \
    namespace granula::ns {                                                                                    \
    template <class T>                                                                                         \
    void run_shift_program(host_view<const T> in, host_view<T> out, const detail::shift_program& program,     \
                           border_mode mode, T pad, T clip_pad);                                               \
    }

GRANULA_DECLARE_STREAM_KERNELS(simd_scalar)
GRANULA_DECLARE_STREAM_KERNELS(simd_baseline)
GRANULA_DECLARE_STREAM_KERNELS(simd_avx2)
GRANULA_DECLARE_STREAM_KERNELS(simd_avx512)
#undef GRANULA_DECLARE_STREAM_KERNELS
