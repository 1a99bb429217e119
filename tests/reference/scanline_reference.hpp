// Brute-force scan-line morphology for the tests (include/granula/lines/lines.hpp): for every
// pixel, the scan line through it is walked pixel by pixel, and the erosion or dilation is the
// min or max over its window, outside samples taken by the border rule. Openings and closings
// are the two stages composed, as their definition says. Shares no code with the library.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "reference/morphology_reference.hpp"

namespace granula::reference {

// The pixels of the scan line through (x, y) at `angle`, in order along the dominant axis, and
// the position of (x, y) among them.
inline std::pair<std::vector<std::pair<std::int64_t, std::int64_t>>, std::int64_t> scan_line_through(
    std::int64_t x, std::int64_t y, double angle, std::int64_t width, std::int64_t height) {
    double a = std::fmod(angle, 180.0);
    if (a < 0) a += 180.0;
    const bool steep = a > 45.0 && a < 135.0;
    double k;
    if (a == 0.0 || a == 90.0) k = 0;
    else if (a == 45.0) k = -1;
    else if (a == 135.0) k = 1;
    else {
        const double rad = a * 3.14159265358979323846 / 180.0;
        k = steep ? -std::cos(rad) / std::sin(rad) : -std::tan(rad);
    }
    // k in units of 2^-32, as the definition says: s(u) = floor(u K / 2^32 + 1/2), exactly.
    const auto K = static_cast<std::int64_t>(std::llround(std::ldexp(k, 32)));
    const auto s = [K](std::int64_t u) {
        const std::int64_t num = u * K + (std::int64_t{1} << 31), den = std::int64_t{1} << 32;
        return num >= 0 ? num / den : -((-num + den - 1) / den);
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> pixels;
    std::int64_t position = -1;
    if (steep) {
        for (std::int64_t r = 0; r < height; ++r) {
            const std::int64_t col = x + s(r) - s(y);
            if (col < 0 || col >= width) continue;
            if (r == y) position = static_cast<std::int64_t>(pixels.size());
            pixels.push_back({col, r});
        }
    } else {
        for (std::int64_t c = 0; c < width; ++c) {
            const std::int64_t row = y + s(c) - s(x);
            if (row < 0 || row >= height) continue;
            if (c == x) position = static_cast<std::int64_t>(pixels.size());
            pixels.push_back({c, row});
        }
    }
    return {pixels, position};
}

// One stage along the scan lines: erosion (window [i - L/2, i + (L-1)/2]) or dilation (the
// window reflected). NaN in the window gives NaN.
template <class T>
host_image<T> scanline_erosion_or_dilation(host_view<const T> in, std::int64_t length, double angle, border mode,
                                           bool dilation) {
    host_image<T> out(in.width(), in.height());
    const std::int64_t before = dilation ? (length - 1) / 2 : length / 2;
    const std::int64_t after = length - 1 - before;
    constexpr T top = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                           : std::numeric_limits<T>::max();
    const T neutral = dilation ? (std::numeric_limits<T>::has_infinity ? -top : std::numeric_limits<T>::lowest()) : top;
    for (std::int64_t y = 0; y < in.height(); ++y)
        for (std::int64_t x = 0; x < in.width(); ++x) {
            const auto [pixels, i] = scan_line_through(x, y, angle, in.width(), in.height());
            const auto n = static_cast<std::int64_t>(pixels.size());
            T acc = neutral;
            bool nan = false;
            for (std::int64_t j = i - before; j <= i + after; ++j) {
                const auto src = source_index(j, n, mode.mode);
                const T v = src ? in.row(pixels[*src].second)[pixels[*src].first]
                                : (mode.mode == border_mode::constant ? static_cast<T>(mode.cval) : neutral);
                if (v != v) nan = true;
                acc = dilation ? std::max(acc, v) : std::min(acc, v);
            }
            out.view().row(y)[x] = nan ? std::numeric_limits<T>::quiet_NaN() : acc;
        }
    return out;
}

template <class T>
host_image<T> scanline_opening_or_closing(host_view<const T> in, std::int64_t length, double angle, border mode,
                                          bool closing) {
    const host_image<T> first = scanline_erosion_or_dilation<T>(in, length, angle, mode, closing);
    return scanline_erosion_or_dilation<T>(first.view(), length, angle, mode, !closing);
}

}  // namespace granula::reference
