// The CPU binary-morphology kernels, compiled once per instruction set
// (cmake/GranulaSimd.cmake), and once more for AVX-512 (with VBMI2's funnel shifts), which
// binary.cpp picks on CPUs that have it. Every kernel writes only the output's pixels: the
// bits past the width in each row's last word keep their value. Input and
// output must not overlap.
#pragma once

#include "binary/bit_pass.hpp"
#include "granula/binary/bit_image.hpp"

#define GRANULA_DECLARE_BINARY_KERNELS(ns)                                                          \
    namespace granula::ns {                                                                         \
    void bit_segment_pass(const_host_bit_view in, host_bit_view out, const detail::bit_pass& pass); \
    void bit_rectangle_pass(const_host_bit_view in, host_bit_view out, const detail::bit_pass& vertical, \
                            const detail::bit_pass& horizontal);                                    \
    void bit_complement(const_host_bit_view in, host_bit_view out);                                 \
    void bit_and(const_host_bit_view a, host_bit_view out);                                         \
    template <class T>                                                                              \
    void pack_bits(host_view<const T> in, host_bit_view out, T threshold);                          \
    template <class T>                                                                              \
    void unpack_bits(const_host_bit_view in, host_view<T> out);                                     \
    }

GRANULA_DECLARE_BINARY_KERNELS(simd_scalar)
GRANULA_DECLARE_BINARY_KERNELS(simd_baseline)
GRANULA_DECLARE_BINARY_KERNELS(simd_avx2)
GRANULA_DECLARE_BINARY_KERNELS(simd_avx512)
#undef GRANULA_DECLARE_BINARY_KERNELS
