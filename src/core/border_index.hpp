// Where an index outside [0, n) reads from under each border mode (GUIDE §1 "Borders").
// Shared by the CPU and CUDA backends so both extend images the same way.
#pragma once

#include <cstdint>

#include "granula/core/border.hpp"

#if defined(__CUDACC__)
#define GRANULA_HOST_DEVICE __host__ __device__
#else
#define GRANULA_HOST_DEVICE
#endif

namespace granula::detail {

// The source index in [0, n) for index i, or -1 when the pixel takes the padding value
// (border_mode::ignore and border_mode::constant). n >= 1.
GRANULA_HOST_DEVICE inline std::int64_t border_index(std::int64_t i, std::int64_t n, border_mode mode) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case border_mode::nearest: return i < 0 ? 0 : n - 1;
    case border_mode::reflect: {  // c b a | a b c | c b a: period 2n
        std::int64_t k = i % (2 * n);
        if (k < 0) k += 2 * n;
        return k < n ? k : 2 * n - 1 - k;
    }
    case border_mode::mirror: {  // c b | a b c | b a: period 2n - 2
        if (n == 1) return 0;
        const std::int64_t period = 2 * n - 2;
        std::int64_t k = i % period;
        if (k < 0) k += period;
        return k < n ? k : period - k;
    }
    case border_mode::wrap: {
        std::int64_t k = i % n;
        return k < 0 ? k + n : k;
    }
    default: return -1;
    }
}

// True for the modes that give every index off [0, n) one value, the pad (border_index -1):
// ignore and constant. Passes can then pad instead of reading the image's own pixels.
GRANULA_HOST_DEVICE inline bool pads_with_one_value(border_mode mode) {
    return mode == border_mode::ignore || mode == border_mode::constant;
}

// floor(a / b) for b > 0.
GRANULA_HOST_DEVICE inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// A window arm longer than 2n reaches no value a 2n arm does not (every mode repeats with a
// period of at most 2n), so arms are clipped to keep padding proportional to the image.
GRANULA_HOST_DEVICE inline std::int64_t clip_arm(std::int64_t arm, std::int64_t n) { return arm < 2 * n ? arm : 2 * n; }

}  // namespace granula::detail
