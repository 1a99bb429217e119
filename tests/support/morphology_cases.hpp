// What the morphology tests of every backend share: the lists of modes and operations, random
// pixels with many ties, and a bit-exact image comparison (NaN equals NaN).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "granula/morphology/morphology.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula::test_support {

constexpr border_mode all_modes[] = {border_mode::ignore,  border_mode::constant, border_mode::nearest,
                                     border_mode::reflect, border_mode::mirror,   border_mode::wrap};
constexpr morphology_op all_ops[] = {morphology_op::erosion,      morphology_op::dilation,
                                     morphology_op::opening,      morphology_op::closing,
                                     morphology_op::white_tophat, morphology_op::black_tophat,
                                     morphology_op::gradient};

// One of `levels` values spread over the type's range: few levels make ties common, which is
// where min/max bugs hide.
template <class T>
T random_pixel(std::mt19937_64& rng, int levels) {
    std::uniform_int_distribution<int> d(0, levels - 1);
    if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(d(rng)) * 0.37f - 3.0f;
    else
        return static_cast<T>(d(rng) * (std::numeric_limits<T>::max() / std::max(1, levels - 1)));
}

template <class T>
bool same_pixel(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
::testing::AssertionResult equal_images(host_view<const T> got, host_view<const T> want) {
    if (got.width() != want.width() || got.height() != want.height())
        return ::testing::AssertionFailure() << "sizes differ";
    for (std::int64_t y = 0; y < want.height(); ++y)
        for (std::int64_t x = 0; x < want.width(); ++x)
            if (!same_pixel(got(y, x), want(y, x)))
                return ::testing::AssertionFailure() << "first difference at (row " << y << ", col " << x
                                                     << "): got " << +got(y, x) << ", want " << +want(y, x);
    return ::testing::AssertionSuccess();
}

// A random width x height mask with a random origin and at least one set pixel.
inline structuring_element random_mask_element(std::mt19937_64& rng, std::int64_t width, std::int64_t height) {
    std::uniform_int_distribution<std::int64_t> coin(0, 1);
    footprint_mask m;
    m.width = width, m.height = height;
    std::uniform_int_distribution<std::int64_t> ox(0, m.width - 1), oy(0, m.height - 1);
    m.origin_x = ox(rng), m.origin_y = oy(rng);
    for (std::int64_t k = 0; k < m.width * m.height; ++k) m.mask.push_back(static_cast<std::uint8_t>(coin(rng)));
    m.mask[static_cast<std::size_t>(oy(rng) * m.width + ox(rng))] = 1;
    return structuring_element::from_mask(m);
}

// Elements of every kind: lines at random angles and lengths (beyond the image too), exact and
// periodic-line disks, diamonds, octagons, ellipses and random masks with random origins, every
// mode, both paths.
inline std::vector<structuring_element> assorted_elements(std::mt19937_64& rng, int count) {
    std::uniform_real_distribution<double> angle(0.0, 180.0);
    std::uniform_int_distribution<std::int64_t> length(1, 301), small(1, 6), coin(0, 1);
    std::vector<structuring_element> elements;
    for (int i = 0; i < count; ++i) {
        switch (i % 6) {
        case 0:
        case 1: elements.push_back(structuring_element::line(length(rng) % (i % 3 == 0 ? 301 : 40) + 1, angle(rng))); break;
        case 2:
            elements.push_back(coin(rng) ? structuring_element::disk(small(rng))
                                         : structuring_element::disk(small(rng) + 2, 4 + 2 * static_cast<int>(small(rng) % 3)));
            break;
        case 3:
            elements.push_back(coin(rng) ? structuring_element::diamond(small(rng))
                                         : structuring_element::octagon(small(rng), small(rng) % 3 + 1));
            break;
        case 4: elements.push_back(structuring_element::ellipse(small(rng), small(rng))); break;
        default: {
            const std::int64_t width = small(rng) * 2, height = small(rng) + 1;
            elements.push_back(random_mask_element(rng, width, height));
        }
        }
    }
    return elements;
}

// Elements for the peer conventions: even and odd rectangles (where OpenCV's and MATLAB's
// conventions differ from granula's), then assorted_elements.
inline std::vector<structuring_element> convention_elements(std::mt19937_64& rng, int count) {
    std::vector<structuring_element> elements = {
        structuring_element::hline(4),         structuring_element::vline(6),
        structuring_element::rectangle(4, 3),  structuring_element::rectangle(5, 7),
        structuring_element::rectangle(2, 2),  structuring_element::line(8, 30),
        structuring_element::line(10, 135),    structuring_element::ellipse(3, 2)};
    for (auto& se : assorted_elements(rng, count)) elements.push_back(std::move(se));
    return elements;
}

constexpr convention all_conventions[] = {convention::granula, convention::opencv, convention::scipy,
                                          convention::matlab};

// Lines of 2 E + 2 to 2 E + 6 pixels, E the image's extent along the line's dominant axis, which
// the operations shorten to 2 E + 1 under borders ignore and constant (shortened_for), on images
// down to one pixel across; `index` varies the pixels and modes a test picks.
struct long_line_case {
    std::int64_t width, height;
    structuring_element line;
    std::size_t index;
};
inline std::vector<long_line_case> lines_longer_than_their_images() {
    const std::pair<std::int64_t, std::int64_t> sizes[] = {{23, 17}, {1, 9}, {9, 1}, {40, 6}};
    const double angles[] = {30, 80, 135, 161.5, 0, 97};
    std::vector<long_line_case> cases;
    for (const auto& [w, h] : sizes)
        for (const double angle : angles) {
            const double folded = std::fmod(angle, 180.0);
            const std::int64_t extent = folded <= 45 || folded >= 135 ? w : h;
            const auto index = cases.size();
            const auto extra = static_cast<std::int64_t>(index % 5);
            cases.push_back({w, h, structuring_element::line(2 * extent + 2 + extra, angle), index});
        }
    return cases;
}

}  // namespace granula::test_support
