// rotate (geometry.hpp): exact at multiples of 90 degrees, bilinear in between, fill outside;
// errors. (python/tests/test_lines.py compares it with scipy.ndimage.rotate.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "granula/granula.hpp"

namespace granula {
namespace {

template <class T>
host_image<T> random_image(std::int64_t w, std::int64_t h, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> v(0, 255);
    host_image<T> img(w, h);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(v(rng));
    return img;
}

template <class T>
class Rotate : public ::testing::Test {};
using PixelTypes = ::testing::Types<std::uint8_t, std::uint16_t, float>;
TYPED_TEST_SUITE(Rotate, PixelTypes);

TYPED_TEST(Rotate, MultiplesOfNinetyAreExact) {
    using T = TypeParam;
    const auto in = random_image<T>(13, 13, 1);
    host_image<T> out(13, 13);
    for (const double angle : {0.0, 360.0, -720.0}) {
        rotate<T>(in.view(), out.view(), angle, 0);
        for (std::int64_t y = 0; y < 13; ++y)
            for (std::int64_t x = 0; x < 13; ++x) ASSERT_EQ(out.view()(y, x), in.view()(y, x));
    }
    rotate<T>(in.view(), out.view(), 90, 0);  // counter-clockwise on screen: numpy.rot90
    for (std::int64_t y = 0; y < 13; ++y)
        for (std::int64_t x = 0; x < 13; ++x) ASSERT_EQ(out.view()(y, x), in.view()(x, 12 - y));
    const auto wide = random_image<T>(9, 4, 2);
    host_image<T> turned(9, 4);
    rotate<T>(wide.view(), turned.view(), -180, 0);
    for (std::int64_t y = 0; y < 4; ++y)
        for (std::int64_t x = 0; x < 9; ++x) ASSERT_EQ(turned.view()(y, x), wide.view()(3 - y, 8 - x));
}

// A bilinear rotation of a linear ramp is the rotated ramp wherever the pre-image is inside; the
// fill elsewhere.
TEST(RotateFloat, RampAndFill) {
    const std::int64_t w = 41, h = 31;
    host_image<float> ramp(w, h), out(w, h);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) ramp.view()(y, x) = static_cast<float>(2 * x + 3 * y);
    const double angle = 17.0, c = std::cos(angle * M_PI / 180), s = std::sin(angle * M_PI / 180);
    rotate<float>(ramp.view(), out.view(), angle, -1);
    int inside = 0, outside = 0;
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            const double dx = x - 20.0, dy = y - 15.0, sx = 20 + c * dx - s * dy, sy = 15 + s * dx + c * dy;
            if (sx >= 0 && sx <= w - 1 && sy >= 0 && sy <= h - 1) {
                EXPECT_NEAR(out.view()(y, x), 2 * sx + 3 * sy, 1e-3);
                ++inside;
            } else if (sx < -1e-6 || sx > w - 1 + 1e-6 || sy < -1e-6 || sy > h - 1 + 1e-6) {
                EXPECT_EQ(out.view()(y, x), -1.0f);
                ++outside;
            }
        }
    EXPECT_GT(inside, 500);
    EXPECT_GT(outside, 50);
}

TEST(RotateErrors, BadArguments) {
    host_image<std::uint8_t> a(5, 4), b(4, 5);
    EXPECT_THROW(rotate<std::uint8_t>(a.view(), b.view(), 10, 0), invalid_argument);
    EXPECT_THROW(rotate<std::uint8_t>(a.view(), a.view(), 10, 0), invalid_argument);
    host_image<std::uint8_t> c(5, 4);
    EXPECT_THROW(rotate<std::uint8_t>(a.view(), c.view(), NAN, 0), invalid_argument);
    EXPECT_THROW(rotate<std::uint8_t>(a.view(), c.view(), 10, 256), invalid_argument);
    EXPECT_THROW(rotate<std::uint8_t>(a.view(), c.view(), 10, -1), invalid_argument);
    host_image<float> f(5, 4), g(5, 4);
    fill<float>(f.view(), 1.0f);
    rotate<float>(f.view(), g.view(), 45, std::numeric_limits<double>::quiet_NaN());  // NaN fill is allowed
    EXPECT_TRUE(std::isnan(g.view()(0, 0)));
    EXPECT_EQ(g.view()(2, 2), 1.0f);
}

}  // namespace
}  // namespace granula
