// One pass of binary morphology: the AND (erosion) or OR (dilation) of a bit
// image over one line segment, as the front file (binary.cpp) describes it to
// the CPU and CUDA backends.
#pragma once

#include <cstdint>

#include "granula/core/border.hpp"

namespace granula::detail {

struct bit_pass {
    enum class direction { horizontal, vertical, general };
    direction dir = direction::horizontal;
    // Axis passes: out(x) = op of in over [x - before, x + after] along the axis,
    // arms already clipped to 2n (every border mode repeats within 2n).
    std::int64_t before = 0;
    std::int64_t after = 0;
    // General passes: out(p) = op over k in [0, length) of in(p + (start + k) *
    // (dx, dy)).
    std::int64_t length = 1;
    std::int64_t start = 0;
    int dx = 1;
    int dy = 0;
    bool dilate = false;  // OR instead of AND
    border_mode mode = border_mode::ignore;
    bool pad = true;  // the value outside the image for ignore and constant
};

}  // namespace granula::detail
