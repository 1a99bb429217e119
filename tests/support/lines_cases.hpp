// Inputs shared by the CPU and CUDA tests of the linear filters.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "granula/lines/lines.hpp"
#include "support/morphology_cases.hpp"

namespace granula::test_support {

// `levels` values (random_pixel), and for floats with_nan puts a NaN at about 1 pixel in 40.
template <class T>
host_image<T> random_image(std::mt19937_64& rng, std::int64_t w, std::int64_t h, int levels, bool with_nan) {
    host_image<T> img(w, h);
    std::uniform_int_distribution<int> one_in(0, 40);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            T v = random_pixel<T>(rng, levels);
            if constexpr (std::is_floating_point_v<T>)
                if (with_nan && one_in(rng) == 0) v = std::numeric_limits<T>::quiet_NaN();
            img.view()(y, x) = v;
        }
    return img;
}

// Steep angles have one scan-line pixel per row (the height bounds the length), flat ones one per column.
inline bool angle_is_steep(double angle) {
    const double a = std::fmod(std::fmod(angle, 180.0) + 180.0, 180.0);
    return a > 45.0 && a < 135.0;
}

// Images (host or device) for every output of line_filter_angles over n angles (the filtered
// images only when asked for), and the outputs that write them. The spectrum starts at -1, so
// that a value left unwritten differs from the other backend's.
template <class Space, class T>
struct line_results {
    image<T, Space> extremum;
    image<std::int32_t, Space> orientation;
    std::vector<double> spectrum;
    std::vector<image<T, Space>> filtered;

    line_results(std::int64_t w, std::int64_t h, std::size_t n, bool with_filtered)
        : extremum(w, h), orientation(w, h), spectrum(n, -1.0) {
        if (with_filtered)
            for (std::size_t i = 0; i < n; ++i) filtered_views_.push_back(filtered.emplace_back(w, h).view());
    }
    line_angle_outputs<Space, T> outputs(angle_reduction reduction) {
        line_angle_outputs<Space, T> out;
        out.extremum = extremum.view();
        out.orientation = orientation.view();
        out.reduction = reduction;
        out.spectrum = spectrum;
        out.filtered = filtered_views_;
        return out;
    }

private:
    std::vector<image_view<T, Space>> filtered_views_;
};
template <class T>
using host_line_results = line_results<host_memory, T>;
template <class T>
using device_line_results = line_results<device_memory, T>;

constexpr border_mode line_modes[] = {border_mode::ignore, border_mode::constant, border_mode::nearest,
                                      border_mode::reflect};

}  // namespace granula::test_support
