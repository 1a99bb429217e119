// Differential tests of the CUDA linear filters: bit for bit against the CPU backend (itself
// tested against the brute-force scan-line reference in lines_cpu_test.cpp), every type, kind,
// border mode and algorithm, on odd sizes, 1xN, Nx1, long lines cut into zones, queues too long
// for shared memory, and strided device sub-views. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "support/lines_cases.hpp"
#include "support/morphology_cases.hpp"
#include "support/require_gpu.hpp"

namespace granula {
namespace {

using namespace granula::test_support;

// A device copy of `img` inside a larger image (offset `pad`), so the view is strided.
template <class T>
struct padded_device {
    device_image<T> storage;
    device_view<T> view;
    padded_device(host_view<const T> img, std::int64_t pad, T fill_value) {
        host_image<T> big(img.width() + 2 * pad + 3, img.height() + pad + 1);
        fill<T>(big.view(), fill_value);
        copy<T>(img, big.view().subview(pad, pad, img.width(), img.height()));
        storage = upload<T>(big.view());
        view = storage.view().subview(pad, pad, img.width(), img.height());
    }
    host_image<T> download_view() const {
        host_image<T> all = download<T>(storage.view());
        host_image<T> part(view.width(), view.height());
        const std::int64_t pad = (all.width() - view.width() - 3) / 2;
        copy<T>(all.view().subview(pad, pad, view.width(), view.height()), part.view());
        return part;
    }
};

// line_filter of a whole device image (d_in holds img) equals the CPU's, bit for bit.
template <class T>
bool whole_image_equals_cpu(host_view<const T> img, device_view<const T> d_in, double angle,
                            const line_params& params) {
    host_image<T> want(img.width(), img.height());
    line_filter<T>(img, want.view(), angle, params);
    device_image<T> d_out(img.width(), img.height());
    line_filter<T>(d_in, d_out.view(), angle, params);
    return equal_images<T>(download<T>(d_out.view()).view(), want.view());
}

template <class T>
class LinesCuda : public ::testing::Test {};
using PixelTypes = ::testing::Types<std::uint8_t, std::uint16_t, float>;
TYPED_TEST_SUITE(LinesCuda, PixelTypes);

// 64 random (angle, length) pairs plus the axes and diagonals, every kind, mode and algorithm:
// the GPU's single-angle filter equals the CPU's bit for bit. Sizes include 1, odd sizes up to
// 37 and long sides (200-700) whose lines are cut into zones; input and output are strided
// sub-views, and the output's surroundings must survive.
TYPED_TEST(LinesCuda, SingleAngleEqualsCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261122;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> small(1, 37), large(200, 700), coin(0, 3);
    std::uniform_real_distribution<double> any_angle(-180.0, 360.0);
    const auto side = [&] {
        const auto c = coin(rng);
        return c == 0 ? std::int64_t{1} : c == 1 ? large(rng) : small(rng);
    };
    for (int trial = 0; trial < 68; ++trial) {
        const std::int64_t w = side(), h = side();
        const double angle = trial < 4 ? 45.0 * trial : any_angle(rng);
        const std::int64_t extent = angle_is_steep(angle) ? h : w;
        // Short lengths often, so that long lines are cut into several zones.
        const std::int64_t length = std::uniform_int_distribution<std::int64_t>(1, coin(rng) == 0 ? extent
                                                                                                  : std::min<std::int64_t>(extent, 12))(rng);
        const auto img = random_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200, trial % 3 == 0);
        const padded_device<T> d_in(img.view(), trial % 5, T{7});
        for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion,
                                line_filter_kind::dilation})
            for (const border_mode m : line_modes) {
                const border mode{m, std::is_floating_point_v<T> ? 1.5 : 7.0};
                for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack}) {
                    const line_params params{length, kind, mode, algorithm};
                    host_image<T> want(w, h);
                    line_filter<T>(img.view(), want.view(), angle, params);
                    host_image<T> sentinel(w, h);
                    fill<T>(sentinel.view(), T{3});
                    padded_device<T> d_out(sentinel.view(), 2, T{5});
                    line_filter<T>(device_view<const T>(d_in.view), d_out.view, angle, params);
                    const host_image<T> got = d_out.download_view();
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << "seed " << seed << " trial " << trial << " " << w << "x" << h << " length " << length
                        << " angle " << angle << " " << to_string(kind) << " mode " << to_string(m) << " "
                        << to_string(algorithm);
                    const host_image<T> all = download<T>(d_out.storage.view());
                    for (std::int64_t y = 0; y < all.height(); ++y)
                        for (std::int64_t x = 0; x < all.width(); ++x) {
                            const bool inside = y >= 2 && y < 2 + h && x >= 2 && x < 2 + w;
                            if (!inside) {
                                ASSERT_EQ(all.view()(y, x), T{5}) << "written outside the output view";
                            }
                        }
                }
            }
    }
}

// Flat angles read the image and write their results through transposes that move square tiles
// of 16-byte rows where both views are aligned to 16 bytes (whole device images, as here), whole
// 4-byte words at those tiles' right and bottom and where rows are aligned to 4 bytes, and one
// element at a time elsewhere (the strided views above): odd sizes, so that tiles are partial
// in both directions and rows end inside a word, and sizes with whole 16-byte tiles and strips
// beside them (1001 x 203: seven tiles of 128 uint8 columns).
TYPED_TEST(LinesCuda, FlatAnglesOnWholeImagesEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(29);
    struct shape {
        std::int64_t w, h;
    };
    for (const shape s : {shape{37, 29}, shape{130, 67}, shape{257, 5}, shape{9, 301}, shape{1001, 203}})
        for (const double angle : {10.0, -30.0, 160.0, 44.0}) {
            const auto img = random_image<T>(rng, s.w, s.h, 200, std::is_floating_point_v<T>);
            const device_image<T> d_in = upload<T>(img.view());
            for (const std::int64_t length : {std::min<std::int64_t>(s.w, 5), std::min<std::int64_t>(s.w, 41)})
                for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing})
                    for (const border_mode m : line_modes) {
                        const line_params params{length, kind, {m, 7.0}, line_algorithm::automatic};
                        ASSERT_TRUE(whole_image_equals_cpu<T>(img.view(), d_in.view(), angle, params))
                            << s.w << "x" << s.h << " angle " << angle << " length " << length << " "
                            << to_string(kind) << " " << to_string(m);
                    }
        }
}

// One angle's filtered image alone (uint8, uint16) runs the scan-line passes: images tall and
// wide enough for several runs of rows and a thread's lanes on the image in all of them (no
// bounds tests), windows with one, two and several coarse chunks (λ up to 301), steep and flat
// angles leaning both ways, strided views at several byte offsets of input and output.
TYPED_TEST(LinesCuda, LargeSingleAnglesEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(31);
    const auto img = random_image<T>(rng, 1203, 1001, 200, std::is_floating_point_v<T>);
    int trial = 0;
    for (const double angle : {60.0, 120.0, 100.0, 30.0, 150.0, 3.0, 135.0, 45.0})
        for (const std::int64_t length : {2, 33, 101, 301}) {
            // Kinds rotate against the lengths, so each length meets every kind over the angles.
            const auto kind = static_cast<line_filter_kind>((trial + trial / 4) % 4);
            const border_mode m = trial % 3 == 0 ? border_mode::constant : border_mode::ignore;
            const line_params params{length, kind, {m, 7.0}, line_algorithm::automatic};
            host_image<T> want(img.width(), img.height());
            line_filter<T>(img.view(), want.view(), angle, params);
            const std::int64_t offset = trial % 4;
            const padded_device<T> d_in(img.view(), offset, T{9});
            host_image<T> sentinel(img.width(), img.height());
            fill<T>(sentinel.view(), T{3});
            padded_device<T> d_out(sentinel.view(), (offset + 1) % 4, T{5});
            line_filter<T>(device_view<const T>(d_in.view), d_out.view, angle, params);
            ASSERT_TRUE(equal_images<T>(d_out.download_view().view(), want.view()))
                << "angle " << angle << " length " << length << " " << to_string(kind) << " " << to_string(m)
                << " offsets " << offset << ", " << (offset + 1) % 4;
            ++trial;
        }
}

// Lines so close to the axes that every shift is 0, on an image whose oriented width is whole
// words: every word of every run is inside, so the scan-line passes launch no edge kernel.
TYPED_TEST(LinesCuda, NoEdgeWordsEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(43);
    const auto img = random_image<T>(rng, 1024, 600, 200, std::is_floating_point_v<T>);
    const device_image<T> d_in = upload<T>(img.view());
    for (const double angle : {89.99, 90.01, 0.01})
        for (const auto kind : {line_filter_kind::opening, line_filter_kind::erosion})
            for (const std::int64_t length : {33, 101}) {
                const line_params params{length, kind, {border_mode::ignore}, line_algorithm::automatic};
                ASSERT_TRUE(whole_image_equals_cpu<T>(img.view(), d_in.view(), angle, params))
                    << "angle " << angle << " length " << length << " " << to_string(kind);
            }
}

// Queues too long for shared memory (global-memory queues), alone and with zones, and a length
// equal to the extent.
TYPED_TEST(LinesCuda, LongLinesEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(17);
    const auto img = random_image<T>(rng, 17000, 3, 200, std::is_floating_point_v<T>);
    const device_image<T> d_in = upload<T>(img.view());
    for (const std::int64_t length : {700, 2047, 16384, 17000})
        for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack})
            for (const border_mode m : {border_mode::ignore, border_mode::reflect}) {
                const line_params params{length, line_filter_kind::opening, {m}, algorithm};
                ASSERT_TRUE(whole_image_equals_cpu<T>(img.view(), d_in.view(), 0.5, params))
                    << length << " " << to_string(algorithm) << " " << to_string(m);
            }
}

// Many angles at once: extremum (either one), orientation, spectrum and the filtered images
// equal the CPU's (unsorted and repeated angles, every kind, NaN floats; spectrum exact for
// integer types and within 1e-12 relative for float, whose sums are added in another order).
template <class T>
void expect_angles_equal_cpu(host_view<const T> img, const std::vector<double>& angles, const line_params& params,
                             bool with_filtered, const std::string& what,
                             angle_reduction reduction = angle_reduction::automatic) {
    SCOPED_TRACE(what);
    const std::int64_t w = img.width(), h = img.height();
    const std::size_t n = angles.size();
    host_line_results<T> cpu(w, h, n, with_filtered);
    line_filter_angles<T>(img, angles, params, cpu.outputs(reduction));

    const padded_device<T> d_in(img, 3, T{9});
    device_line_results<T> gpu(w, h, n, with_filtered);
    line_filter_angles<T>(device_view<const T>(d_in.view), angles, params, gpu.outputs(reduction));

    ASSERT_TRUE(equal_images<T>(download<T>(gpu.extremum.view()).view(), cpu.extremum.view())) << "extremum";
    ASSERT_TRUE(equal_images<std::int32_t>(download<std::int32_t>(gpu.orientation.view()).view(), cpu.orientation.view()))
        << "orientation";
    for (std::size_t i = 0; i < n; ++i) {
        if (with_filtered) {
            ASSERT_TRUE(equal_images<T>(download<T>(gpu.filtered[i].view()).view(), cpu.filtered[i].view()))
                << "filtered, angle " << angles[i];
        }
        if (std::isnan(cpu.spectrum[i])) {
            EXPECT_TRUE(std::isnan(gpu.spectrum[i])) << "angle " << angles[i];
        } else if (std::is_floating_point_v<T>) {
            EXPECT_NEAR(gpu.spectrum[i], cpu.spectrum[i], 1e-12 * std::abs(cpu.spectrum[i])) << "angle " << angles[i];
        } else {
            EXPECT_EQ(gpu.spectrum[i], cpu.spectrum[i]) << "angle " << angles[i];
        }
    }
}

TYPED_TEST(LinesCuda, ReductionsOverAnglesEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(11);
    const std::vector<double> angles = {100.0, 10.0, 170.0, 45.0, 10.0, 0.0, 133.3, 62.0, 90.0, 135.0, -30.0};
    struct shape {
        std::int64_t w, h, length;
    };
    for (const shape s : {shape{45, 38, 9}, shape{1, 30, 5}, shape{30, 1, 5}, shape{613, 7, 4}, shape{7, 613, 4},
                          shape{301, 257, 21}})
        for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion,
                                line_filter_kind::dilation})
            for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack})
                for (const auto reduction :
                     {angle_reduction::automatic, angle_reduction::supremum, angle_reduction::infimum}) {
                    // Few levels: many ties between angles.
                    const auto img = random_image<T>(rng, s.w, s.h, 4, std::is_floating_point_v<T>);
                    std::vector<double> usable;  // the length must fit every angle
                    for (const double a : angles)
                        if (s.length <= (angle_is_steep(a) ? s.h : s.w)) usable.push_back(a);
                    for (const border_mode m : line_modes)
                        expect_angles_equal_cpu<T>(img.view(), usable, {s.length, kind, {m, 2.0}, algorithm}, true,
                                                   std::to_string(s.w) + "x" + std::to_string(s.h) + " " +
                                                       std::string(to_string(kind)) + " " +
                                                       std::string(to_string(algorithm)) + " " +
                                                       std::string(to_string(m)) + " " +
                                                       std::string(to_string(reduction)),
                                                   reduction);
                }
}

// The case: the orientation map of a 640x640 uint8 image over 180 angles, λ = 41.
TEST(LinesCudaLarge, OrientationMap640x640Over180Angles) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(21);
    const auto img = random_image<std::uint8_t>(rng, 640, 640, 256, false);
    for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack})
        expect_angles_equal_cpu<std::uint8_t>(img.view(), evenly_spaced_angles(180),
                                              {41, line_filter_kind::opening, {}, algorithm}, false,
                                              std::string(to_string(algorithm)));
}

}  // namespace
}  // namespace granula
