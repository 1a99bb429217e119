// Bilinear rotation about the centre (geometry.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "granula/core/error.hpp"
#include "granula/geometry/geometry.hpp"

namespace granula {
namespace {

// cos and sin of `angle` degrees, exact at multiples of 90.
void exact_cos_sin(double angle, double& c, double& s) {
    const double quarter = angle / 90.0;
    if (quarter == std::floor(quarter) && std::abs(quarter) < 1e15) {
        const long long q = ((static_cast<long long>(quarter) % 4) + 4) % 4;
        constexpr double cos_of[] = {1, 0, -1, 0}, sin_of[] = {0, 1, 0, -1};
        c = cos_of[q], s = sin_of[q];
        return;
    }
    const double radians = angle * (std::acos(-1.0) / 180.0);
    c = std::cos(radians), s = std::sin(radians);
}

template <class T>
T to_pixel(double v) {
    if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(v);
    else
        return static_cast<T>(std::floor(v + 0.5));
}

}  // namespace

template <pixel T>
void rotate(host_view<const T> in, host_view<T> out, double angle, double fill) {
    if (!std::isfinite(angle))
        throw invalid_argument("rotation angle " + std::to_string(angle) + " is not a finite number of degrees");
    if (out.width() != in.width() || out.height() != in.height())
        throw invalid_argument("rotate: the output is " + std::to_string(out.width()) + "x" +
                               std::to_string(out.height()) + " but the input is " + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "; they must match");
    if (overlaps(in, out)) throw invalid_argument("rotate: the output overlaps the input; give separate memory");
    const double lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    const bool fill_ok = std::is_floating_point_v<T> ? std::isnan(fill) || std::isinf(fill) || std::abs(fill) <= hi
                                                     : fill >= lo && fill <= hi;
    if (!fill_ok)
        throw invalid_argument("rotate: fill " + std::to_string(fill) + " is not representable as " +
                               std::string(pixel_traits<T>::name));
    double c = 1, s = 0;
    exact_cos_sin(angle, c, s);
    const std::int64_t w = in.width(), h = in.height();
    const double cx = 0.5 * static_cast<double>(w - 1), cy = 0.5 * static_cast<double>(h - 1);
    const T fill_value = to_pixel<T>(fill);
    // The pre-image of output (x, y) is centre + R(-angle)·(x - cx, y - cy) in screen coordinates.
    constexpr double slack = 1e-9;  // rounding of the pre-image must not drop the border pixels
    for (std::int64_t y = 0; y < h; ++y) {
        T* row = out.row(y);
        const double dy = static_cast<double>(y) - cy;
        for (std::int64_t x = 0; x < w; ++x) {
            const double dx = static_cast<double>(x) - cx;
            const double sx = cx + c * dx - s * dy, sy = cy + s * dx + c * dy;
            if (!(sx >= -slack && sx <= static_cast<double>(w - 1) + slack && sy >= -slack &&
                  sy <= static_cast<double>(h - 1) + slack)) {
                row[x] = fill_value;
                continue;
            }
            const double fx = std::floor(sx), fy = std::floor(sy);
            const std::int64_t x0 =
                std::min<std::int64_t>(std::max<std::int64_t>(static_cast<std::int64_t>(fx), 0), w - 1);
            const std::int64_t y0 =
                std::min<std::int64_t>(std::max<std::int64_t>(static_cast<std::int64_t>(fy), 0), h - 1);
            const std::int64_t x1 = std::min<std::int64_t>(x0 + 1, w - 1), y1 = std::min<std::int64_t>(y0 + 1, h - 1);
            const double ax = std::min(std::max(sx - static_cast<double>(x0), 0.0), 1.0);
            const double ay = std::min(std::max(sy - static_cast<double>(y0), 0.0), 1.0);
            const T* r0 = in.row(y0);
            const T* r1 = in.row(y1);
            // Zero weights skip their samples, so an exact pre-image copies its pixel (and a NaN
            // beside it stays out).
            double v = 0;
            const double wts[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
            const T samples[4] = {r0[x0], r0[x1], r1[x0], r1[x1]};
            for (int k = 0; k < 4; ++k)
                if (wts[k] != 0) v += wts[k] * static_cast<double>(samples[k]);
            row[x] = to_pixel<T>(v);
        }
    }
}

#define GRANULA_INSTANTIATE(T, name) template void rotate<T>(host_view<const T>, host_view<T>, double, double);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula
