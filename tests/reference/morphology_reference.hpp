// Brute-force grey morphology for the tests: for every pixel, the min/max over the explicit
// footprint offsets, each outside pixel looked up by its own border rule. Shares no code with
// the library's fast paths (not even its border mapping).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "granula/morphology/morphology.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula::reference {

// Index i mapped into [0, n) by the border rule, or nullopt when the pad value applies.
inline std::optional<std::int64_t> source_index(std::int64_t i, std::int64_t n, border_mode mode) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case border_mode::ignore:
    case border_mode::constant: return std::nullopt;
    case border_mode::nearest: return std::clamp<std::int64_t>(i, 0, n - 1);
    case border_mode::wrap: return ((i % n) + n) % n;
    case border_mode::reflect:
        // Walk the reflection one bounce at a time: -1 -> 0, -2 -> 1, n -> n-1, ...
        while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - i - 1;
        return i;
    case border_mode::mirror:
        if (n == 1) return 0;
        while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - i - 2;
        return i;
    }
    return std::nullopt;
}

template <class T>
T pixel_at(host_view<const T> f, std::int64_t y, std::int64_t x, border mode, bool for_max) {
    const auto sy = source_index(y, f.height(), mode.mode), sx = source_index(x, f.width(), mode.mode);
    if (sy && sx) return f(*sy, *sx);
    if (mode.mode == border_mode::constant) return static_cast<T>(mode.cval);
    if constexpr (std::is_floating_point_v<T>)
        return for_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
        return for_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
}

// NaN-propagating min/max, written independently of the library's.
template <class T>
T pick(T a, T b, bool for_max) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return for_max ? std::max(a, b) : std::min(a, b);
}

// Erosion: min of f(x + b); dilation: max of f(x - b), b over the footprint relative to its origin.
template <class T>
host_image<T> erode_or_dilate(host_view<const T> f, const footprint_mask& fp, border mode, bool dilate) {
    host_image<T> out(f.width(), f.height());
    for (std::int64_t y = 0; y < f.height(); ++y)
        for (std::int64_t x = 0; x < f.width(); ++x) {
            bool first = true;
            T acc{};
            for (std::int64_t j = 0; j < fp.height; ++j)
                for (std::int64_t i = 0; i < fp.width; ++i) {
                    if (!fp.at(j, i)) continue;
                    const std::int64_t by = j - fp.origin_y, bx = i - fp.origin_x;
                    const T v = dilate ? pixel_at(f, y - by, x - bx, mode, true) : pixel_at(f, y + by, x + bx, mode, false);
                    acc = first ? v : pick(acc, v, dilate);
                    first = false;
                }
            out.view()(y, x) = acc;
        }
    return out;
}

template <class T>
T difference(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        return a - b;
    else
        return a > b ? static_cast<T>(a - b) : T{0};
}

// Erosions by `erosion_fp`, dilations by `dilation_fp` (the same footprint but for some peers).
template <class T>
host_image<T> morphology(morphology_op op, host_view<const T> f, const footprint_mask& erosion_fp,
                         const footprint_mask& dilation_fp, border mode) {
    const auto ero = [&](host_view<const T> g) { return erode_or_dilate<T>(g, erosion_fp, mode, false); };
    const auto dil = [&](host_view<const T> g) { return erode_or_dilate<T>(g, dilation_fp, mode, true); };
    const auto subtract = [&](host_view<const T> a, host_view<const T> b) {
        host_image<T> out(a.width(), a.height());
        for (std::int64_t y = 0; y < a.height(); ++y)
            for (std::int64_t x = 0; x < a.width(); ++x) out.view()(y, x) = difference(a(y, x), b(y, x));
        return out;
    };
    switch (op) {
    case morphology_op::erosion: return ero(f);
    case morphology_op::dilation: return dil(f);
    case morphology_op::opening: return dil(ero(f).view());
    case morphology_op::closing: return ero(dil(f).view());
    case morphology_op::white_tophat: return subtract(f, dil(ero(f).view()).view());
    case morphology_op::black_tophat: return subtract(ero(dil(f).view()).view(), f);
    case morphology_op::gradient: return subtract(dil(f).view(), ero(f).view());
    }
    return ero(f);
}

template <class T>
host_image<T> morphology(morphology_op op, host_view<const T> f, const structuring_element& se, border mode = {}) {
    const footprint_mask fp = se.footprint();
    return morphology<T>(op, f, fp, fp, mode);
}

// The offsets -b of a footprint: its mask turned by 180 degrees about the origin.
inline footprint_mask mirrored(const footprint_mask& fp) {
    footprint_mask m = fp;
    m.origin_x = fp.width - 1 - fp.origin_x, m.origin_y = fp.height - 1 - fp.origin_y;
    for (std::int64_t y = 0; y < fp.height; ++y)
        for (std::int64_t x = 0; x < fp.width; ++x)
            m.mask[static_cast<std::size_t>(y * fp.width + x)] = fp.at(fp.height - 1 - y, fp.width - 1 - x);
    return m;
}

// What each peer computes, by its own documentation, with the element's mask:
// OpenCV dilates by max f(x + b) (the footprint not reflected, anchor at the origin); MATLAB
// puts the origin at floor((size + 1) / 2) counted from 1; scipy.ndimage is granula's.
template <class T>
host_image<T> peer_morphology(morphology_op op, host_view<const T> f, const structuring_element& se, convention c,
                              border mode) {
    footprint_mask fp = se.footprint();
    switch (c) {
    case convention::opencv: return morphology<T>(op, f, fp, mirrored(fp), mode);
    case convention::matlab:
        fp.origin_x = (fp.width + 1) / 2 - 1, fp.origin_y = (fp.height + 1) / 2 - 1;
        return morphology<T>(op, f, fp, fp, mode);
    case convention::granula:
    case convention::scipy: break;
    }
    return morphology<T>(op, f, fp, fp, mode);
}

}  // namespace granula::reference
