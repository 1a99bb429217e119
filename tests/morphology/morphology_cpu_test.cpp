// Differential and property tests of the CPU morphology paths (scalar and SIMD) against the
// brute-force reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "granula/granula.hpp"
#include "reference/morphology_reference.hpp"
#include "support/morphology_cases.hpp"
#include "support/simd_setting.hpp"

namespace granula {
namespace {

using namespace granula::test_support;

// A w x h image inside a larger buffer at a random offset, with random padding per row.
template <class T>
struct test_image {
    std::vector<T> storage;
    host_view<T> view;
};

template <class T>
test_image<T> make_image(std::mt19937_64& rng, std::int64_t w, std::int64_t h, int levels, bool strided) {
    std::uniform_int_distribution<std::int64_t> pad(0, strided ? 13 : 0);
    const std::int64_t x0 = pad(rng), y0 = pad(rng), stride = w + x0 + pad(rng);
    test_image<T> img;
    img.storage.resize(static_cast<std::size_t>(stride * (h + y0)));
    for (auto& v : img.storage) v = random_pixel<T>(rng, levels);
    img.view = host_view<T>(img.storage.data(), stride, h + y0, stride).subview(x0, y0, w, h);
    return img;
}

// A buffer of height + 2 rows of `width` elements on a cache line, filled with a sentinel, and
// a width x height image with contiguous rows from element `begin` of it: a result written there
// must leave every element outside the image as it was.
template <class T>
struct image_in_sentinels {
    static constexpr T sentinel = T(7);
    host_image<T> frame;
    host_view<T> view;
    std::int64_t begin;

    image_in_sentinels(std::int64_t width, std::int64_t height, std::int64_t first)
        : frame(width, height + 2), begin(first) {
        std::fill_n(frame.view().data(), elements(), sentinel);
        view = host_view<T>(frame.view().data() + begin, width, height, width);
    }
    std::int64_t elements() const { return frame.width() * frame.height(); }
    ::testing::AssertionResult outside_untouched() const {
        const T* all = frame.view().data();
        for (std::int64_t i = 0; i < elements(); ++i)
            if ((i < begin || i >= begin + view.width() * view.height()) && !(all[i] == sentinel))
                return ::testing::AssertionFailure() << "element " << i << " outside the image was written";
        return ::testing::AssertionSuccess();
    }
};

// op on in, scalar and SIMD, on one and two threads: every result equals want.
template <class T>
void expect_every_path_equals(morphology_op op, host_view<const T> in, const structuring_element& se, border mode,
                              const host_image<T>& want) {
    for (bool simd : {false, true})
        for (int threads : {1, 2}) {
            simd_setting setting(simd);
            set_num_threads(threads);
            host_image<T> got(in.width(), in.height());
            morphology<T>(op, in, got.view(), se, mode);
            set_num_threads(0);
            ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                << in.width() << "x" << in.height() << " " << se.to_string() << " " << to_string(op) << " mode "
                << to_string(mode.mode) << (simd ? " simd" : " scalar") << " threads " << threads;
        }
}

template <class T>
class MorphologyCpu : public ::testing::Test {};
using PixelTypes = ::testing::Types<std::uint8_t, std::uint16_t, float>;
TYPED_TEST_SUITE(MorphologyCpu, PixelTypes);

// Every op, mode and path on random sizes and lengths, including lengths beyond the image.
TYPED_TEST(MorphologyCpu, EqualsReferenceOnRandomInputs) {
    using T = TypeParam;
    const std::uint64_t seed = 20261120;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(1, 40), length(1, 90), coin(0, 3);
    for (int trial = 0; trial < 60; ++trial) {
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const auto img = make_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200, trial % 2 == 1);
        const std::int64_t a = length(rng), b = length(rng);
        const structuring_element se = trial % 3 == 0   ? structuring_element::hline(a)
                                       : trial % 3 == 1 ? structuring_element::vline(a)
                                                        : structuring_element::rectangle(a % 12 + 1, b % 12 + 1);
        for (auto mode : all_modes)
            for (auto op : all_ops) {
                const border b_mode{mode, std::is_floating_point_v<T> ? 1.5 : 7.0};
                const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                for (bool simd : {false, true}) {
                    simd_setting setting(simd);
                    host_image<T> got(w, h);
                    morphology<T>(op, img.view, got.view(), se, b_mode);
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << "seed " << seed << " trial " << trial << " " << w << "x" << h << " "
                        << se.to_string() << " " << to_string(op) << " mode " << to_string(mode)
                        << (simd ? " simd" : " scalar");
                }
            }
    }
}

TYPED_TEST(MorphologyCpu, EveryElementEqualsReference) {
    using T = TypeParam;
    const std::uint64_t seed = 20261121;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(1, 37), coin(0, 3);
    const auto elements = assorted_elements(rng, 72);
    for (std::size_t e = 0; e < elements.size(); ++e) {
        const auto& se = elements[e];
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const auto img = make_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200, e % 2 == 1);
        const auto mode = all_modes[e % std::size(all_modes)];
        const border b_mode{mode, std::is_floating_point_v<T> ? -2.5 : 9.0};
        for (auto op : e % 4 == 0 ? std::vector<morphology_op>(std::begin(all_ops), std::end(all_ops))
                                  : std::vector<morphology_op>{morphology_op::erosion, morphology_op::dilation}) {
            const auto want = reference::morphology<T>(op, img.view, se, b_mode);
            for (bool simd : {false, true}) {
                simd_setting setting(simd);
                host_image<T> got(w, h);
                morphology<T>(op, img.view, got.view(), se, b_mode);
                ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                    << "seed " << seed << " element " << e << " " << w << "x" << h << " " << se.to_string() << " "
                    << to_string(op) << " mode " << to_string(mode) << (simd ? " simd" : " scalar");
            }
        }
    }
}

// Lines off the axes run as shift programs of rows in rings (openings and closings as one
// program): long lines on images larger than the rings' strips, on one and two threads.
TYPED_TEST(MorphologyCpu, LongLinesAtAnglesEqualReference) {
    using T = TypeParam;
    const std::uint64_t seed = 20261123;
    std::mt19937_64 rng(seed);
    // Two threads split the rows in two chunks where the image is tall enough (the 400 rows).
    // Their periodic lines grow through 1, 3 (101 at 30 degrees); 1, 4, 16, 64 (64 at 45); ...;
    // 1, 2, 6, 17 (17 at 45); 1, 3, 10 (10 at 135): growth_chain's factors 2 to 4 and last
    // stages that grow by less. Bases as pieces (101 at 30: 25 pixels from pieces of 11 and 6)
    // or by shared pairs (the others). Lines shorter than two periods have no periodic line:
    // their runs alone, shared pairs and one stage (31 at 30 degrees: row runs of 1 and 2
    // pixels; 45 at 73: single pixels; 9 at 150).
    const std::pair<std::int64_t, double> lines[] = {{101, 30}, {64, 45}, {77, 60}, {101, 135}, {90, 161.5}, {53, 100},
                                                     {64, 30},  {17, 45}, {10, 135}, {31, 30}, {45, 73},     {9, 150}};
    for (std::size_t i = 0; i < std::size(lines); ++i) {
        const auto se = structuring_element::line(lines[i].first, lines[i].second);
        const auto k = static_cast<std::int64_t>(i);
        const std::int64_t w = i == 6 ? 61 : 110 + 23 * k, h = i == 6 ? 400 : 170 - 17 * (k % 9);
        const auto img = make_image<T>(rng, w, h, i % 2 ? 5 : 200, true);
        const border b_mode{all_modes[i % std::size(all_modes)], std::is_floating_point_v<T> ? -2.5 : 9.0};
        // Gradients and top-hats run as one program too, its last stage a difference: all three
        // in the modes that pad with one value (the only ones where a top-hat does), one in the others.
        std::vector<morphology_op> ops = {morphology_op::erosion, morphology_op::opening, morphology_op::closing};
        const morphology_op joined[] = {morphology_op::gradient, morphology_op::white_tophat,
                                        morphology_op::black_tophat};
        if (b_mode.mode == border_mode::ignore || b_mode.mode == border_mode::constant)
            ops.insert(ops.end(), std::begin(joined), std::end(joined));
        else
            ops.push_back(joined[i % 3]);
        for (auto op : ops) {
            const auto want = reference::morphology<T>(op, img.view, se, b_mode);
            for (int threads : {1, 2}) {
                set_num_threads(threads);
                host_image<T> got(w, h);
                morphology<T>(op, img.view, got.view(), se, b_mode);
                set_num_threads(0);
                ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                    << "seed " << seed << " " << w << "x" << h << " " << se.to_string() << " " << to_string(op)
                    << " mode " << to_string(b_mode.mode) << " threads " << threads;
            }
        }
    }
}

// Diagonal lines run on the linear filters' scan lines down the rows (borders ignore and
// constant; openings and closings from diagonal_opening_length_min on, top-hats from
// diagonal_tophat_length_min, morphology_cpu.cpp): both diagonals at every angle that names
// them, odd and even lengths (the 45-degree arms mirrored), lengths beyond the image, every op,
// NaN in float images, strided views, scalar and SIMD, one and two threads, against the
// reference with the element's footprint.
TYPED_TEST(MorphologyCpu, DiagonalLinesOnScanLinesEqualReference) {
    using T = TypeParam;
    std::mt19937_64 rng(20261207);
    const std::pair<std::int64_t, double> lines[] = {{31, 45}, {64, 135}, {101, -45}, {42, 225}, {151, 45}, {2, 135}};
    for (std::size_t i = 0; i < std::size(lines); ++i) {
        const auto se = structuring_element::line(lines[i].first, lines[i].second);
        const auto k = static_cast<std::int64_t>(i);
        const auto img = make_image<T>(rng, 80 + 23 * k, 110 - 11 * k, i % 2 ? 6 : 150, true);
        if constexpr (std::is_floating_point_v<T>) {  // a few NaN, which spread through every window
            std::uniform_int_distribution<std::int64_t> x(0, img.view.width() - 1), y(0, img.view.height() - 1);
            for (int n = 0; n < 3; ++n) img.view(y(rng), x(rng)) = std::numeric_limits<T>::quiet_NaN();
        }
        for (const border_mode mode : {border_mode::ignore, border_mode::constant}) {
            const border b{mode, std::is_floating_point_v<T> ? 1.5 : 40.0};
            for (const morphology_op op : all_ops)
                expect_every_path_equals<T>(op, img.view, se, b, reference::morphology<T>(op, img.view, se, b));
        }
    }
}

// Lines longer than the image along their dominant axis (2 E + 2 pixels and more), which the
// operations shorten to 2 E + 1 under borders ignore and constant (shortened_for), equal the
// reference with the whole line's footprint: every convention, every border mode (the others
// are not shortened), even and odd lengths, images down to one pixel across.
TYPED_TEST(MorphologyCpu, LinesLongerThanTheImageEqualReference) {
    using T = TypeParam;
    std::mt19937_64 rng(20261204);
    for (const auto& [w, h, se, i] : lines_longer_than_their_images()) {
        const auto img = make_image<T>(rng, w, h, i % 2 ? 5 : 200, i % 3 == 1);
        const border b_mode{all_modes[i % std::size(all_modes)], std::is_floating_point_v<T> ? -2.5 : 9.0};
        for (auto c : all_conventions)
            for (auto op : all_ops) {
                const auto want = reference::peer_morphology<T>(op, img.view, se, c, b_mode);
                host_image<T> got(w, h);
                morphology<T>(op, img.view, got.view(), se, c, b_mode);
                ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                    << w << "x" << h << " " << se.to_string() << " " << to_string(op) << " convention "
                    << to_string(c) << " mode " << to_string(b_mode.mode);
            }
    }
    // A line far beyond any image: as fast as its shortened self, not padded by its reach.
    const auto img = make_image<T>(rng, 64, 48, 200, false);
    host_image<T> got(64, 48);
    const auto far_line = structuring_element::line(100'000'000, 30);
    morphology<T>(morphology_op::opening, img.view, got.view(), far_line);
    const auto want = reference::morphology<T>(morphology_op::opening, img.view, far_line.shortened_for(64, 48));
    EXPECT_TRUE(equal_images<T>(got.view(), want.view()));
}

// Horizontal lines short enough (morphology_cpu.cpp: up to 256 bytes for an erosion or
// dilation, 16 pixels for an opening or closing; modes ignore and constant) run as shift
// programs whose reads all lie in one row, the others as separable passes: lengths on both
// sides of each type's limits, even and odd (origins), images narrower than the line and wider
// than a register strip, every mode, scalar and SIMD, one and two threads.
TYPED_TEST(MorphologyCpu, HorizontalLinesThroughTheProgram) {
    using T = TypeParam;
    std::mt19937_64 rng(31);
    const std::pair<std::int64_t, std::int64_t> sizes[] = {{300, 9}, {5, 40}, {131, 23}, {1, 7}};
    for (std::int64_t L : {2, 3, 15, 16, 17, 63, 64, 65, 128, 129, 255, 256, 257})
        for (std::size_t i = 0; i < std::size(sizes); ++i) {
            const auto [w, h] = sizes[i];
            const auto img = make_image<T>(rng, w, h, L % 2 ? 5 : 200, i % 2 == 1);
            const border b_mode{all_modes[(static_cast<std::size_t>(L) + i) % std::size(all_modes)],
                                std::is_floating_point_v<T> ? -2.5 : 9.0};
            const auto se = L % 2 ? structuring_element::line(L, 0) : structuring_element::hline(L);
            for (auto op : {morphology_op::erosion, morphology_op::dilation, morphology_op::opening,
                            morphology_op::closing}) {
                const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                ASSERT_NO_FATAL_FAILURE(expect_every_path_equals<T>(op, img.view, se, b_mode, want));
            }
        }
}

// Each convention equals its peer's definition (reference::peer_morphology), with the peer's
// default border and with a given one, scalar and SIMD.
TYPED_TEST(MorphologyCpu, ConventionsEqualTheirPeersDefinitions) {
    using T = TypeParam;
    const std::uint64_t seed = 20261122;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(1, 29), coin(0, 3);
    const auto elements = convention_elements(rng, 24);
    for (std::size_t e = 0; e < elements.size(); ++e) {
        const auto& se = elements[e];
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const auto img = make_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200, e % 2 == 1);
        const border given{all_modes[e % std::size(all_modes)], std::is_floating_point_v<T> ? -2.5 : 9.0};
        for (auto c : all_conventions)
            for (auto mode : {std::optional<border>{}, std::optional<border>{given}})
                for (auto op : all_ops) {
                    const auto want = reference::peer_morphology<T>(op, img.view, se, c, mode.value_or(default_border(c)));
                    for (bool simd : {false, true}) {
                        simd_setting setting(simd);
                        host_image<T> got(w, h);
                        morphology<T>(op, img.view, got.view(), se, c, mode);
                        ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                            << "seed " << seed << " element " << e << " " << w << "x" << h << " " << se.to_string()
                            << " " << to_string(op) << " convention " << to_string(c) << " mode "
                            << (mode ? to_string(mode->mode) : "default") << (simd ? " simd" : " scalar");
                    }
                }
    }
}

TEST(MorphologyConventions, NamesDefaultBordersAndOverloads) {
    for (auto c : all_conventions) EXPECT_EQ(parse_convention(to_string(c)), c);
    EXPECT_EQ(default_border(convention::scipy).mode, border_mode::reflect);
    for (auto c : {convention::granula, convention::opencv, convention::matlab})
        EXPECT_EQ(default_border(c).mode, border_mode::ignore) << to_string(c);
    try {
        parse_convention("octave");
        FAIL() << "expected invalid_argument";
    } catch (const invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown convention 'octave'; allowed: granula, opencv, scipy, matlab");
    }
    // The named operations take a convention, with and without a border. hline(2) is the
    // offsets {-1, 0}: cv::dilate is max(f(x - 1), f(x)), granula's dilation max(f(x), f(x + 1)).
    host_image<std::uint8_t> img(4, 1), out(4, 1);
    const std::uint8_t row[] = {1, 5, 2, 3};
    std::copy(std::begin(row), std::end(row), img.view().data());
    const auto se = structuring_element::hline(2);
    dilation(img.view(), out.view(), se, convention::opencv);
    EXPECT_EQ(std::vector<std::uint8_t>(out.view().data(), out.view().data() + 4), (std::vector<std::uint8_t>{1, 5, 5, 3}));
    dilation(img.view(), out.view(), se);
    EXPECT_EQ(std::vector<std::uint8_t>(out.view().data(), out.view().data() + 4), (std::vector<std::uint8_t>{5, 5, 3, 3}));
    const auto scipy_border = dilation(img.view(), se, convention::scipy, border{border_mode::constant, 7.0});
    EXPECT_EQ(scipy_border.view()(0, 3), 7);  // max(f(3), cval)
    const auto matlab = erosion(img.view(), se, convention::matlab);  // origin at 0: min(f(x), f(x + 1))
    EXPECT_EQ(std::vector<std::uint8_t>(matlab.view().data(), matlab.view().data() + 4), (std::vector<std::uint8_t>{1, 2, 2, 3}));
}

// Widths around the transpose block and lane sizes; window lengths around the doubling steps
// and the switch to transposed strips (16), long windows, the vHGW path in both passes.
TYPED_TEST(MorphologyCpu, EqualsReferenceAroundBlockSizes) {
    using T = TypeParam;
    std::mt19937_64 rng(7);
    for (std::int64_t w : {15, 16, 17, 31, 32, 33, 63, 65, 97}) {
        const std::int64_t h = 97 - w / 2;
        const auto img = make_image<T>(rng, w, h, 50, true);
        for (std::int64_t L : {2, 3, 4, 5, 6, 7, 8, 11, 15, 16, 33, 64, 200}) {
            for (const auto& se : {structuring_element::hline(L), structuring_element::vline(L)}) {
                for (auto mode : {border_mode::ignore, border_mode::reflect, border_mode::wrap}) {
                    const auto want = reference::morphology<T>(morphology_op::erosion, img.view, se, {mode, 0});
                    const auto want_d = reference::morphology<T>(morphology_op::dilation, img.view, se, {mode, 0});
                    host_image<T> got(w, h);
                    erosion(img.view, got.view(), se, {mode, 0});
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view())) << w << "x" << h << " " << se.to_string();
                    dilation(img.view, got.view(), se, {mode, 0});
                    ASSERT_TRUE(equal_images<T>(got.view(), want_d.view())) << w << "x" << h << " " << se.to_string();
                }
            }
        }
    }
}

// Openings and closings by a vertical line stream both passes down strips of 128 bytes: width
// 600 gives every type a partial last strip (88 uint8 lanes of 128, 24 uint16 of 64, 24 float
// of 32), the height several blocks of the window's length. Short windows in every mode, long
// ones in some, even lengths, one longer than the image; scalar and SIMD, one and two threads.
TYPED_TEST(MorphologyCpu, VerticalOpeningChainAcrossBands) {
    using T = TypeParam;
    std::mt19937_64 rng(29);
    const auto img = make_image<T>(rng, 600, 300, 200, true);
    for (std::int64_t L : {3, 6, 64, 100, 401})
        for (std::size_t m = 0; m < std::size(all_modes); ++m) {
            if (L >= 64 && m % (L == 64 ? 2 : 3) != 0) continue;  // the reference is slow there
            const border b_mode{all_modes[m], std::is_floating_point_v<T> ? -2.5 : 9.0};
            const auto se = structuring_element::vline(L);
            for (auto op : {morphology_op::opening, morphology_op::closing}) {
                const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                ASSERT_NO_FATAL_FAILURE(expect_every_path_equals<T>(op, img.view, se, b_mode, want));
            }
        }
}

// The streamed vertical passes (one, or an opening's pair) write their rows past the cache by
// whole 64-byte lines and by plain stores at the partial lines of either end: outputs whose
// rows start off a line (numpy's arrays start 16 bytes into one) and views whose rows end
// inside one, the pixels around the view untouched, on one and two threads.
// Also with rows a whole number of cache lines apart, so that the output's first line falls
// inside the row (the vertical pair's strips and the horizontal pass's column groups start there).
TYPED_TEST(MorphologyCpu, AxisLinePassesIntoUnalignedViews) {
    using T = TypeParam;
    std::mt19937_64 rng(31);
    const auto img = make_image<T>(rng, 533, 260, 200, true);
    const border b_mode{border_mode::ignore, 0.0};
    const T sentinel = T(7);
    constexpr auto line = static_cast<std::int64_t>(64 / sizeof(T));
    for (std::int64_t L : {41, 101})
        for (const auto& se : {structuring_element::vline(L), structuring_element::hline(L)})
        for (auto op : {morphology_op::erosion, morphology_op::dilation, morphology_op::opening, morphology_op::closing}) {
            const auto want = reference::morphology<T>(op, img.view, se, b_mode);
            for (const std::int64_t offset : {std::int64_t{1}, std::int64_t{5}, 16 / static_cast<std::int64_t>(sizeof(T))})
                for (int threads : {1, 2})
                for (bool whole_lines : {false, true}) {
                    const std::int64_t frame_width = img.view.width() + offset + 3;
                    host_image<T> frame(whole_lines ? (frame_width + line - 1) / line * line : frame_width,
                                        img.view.height() + 2);
                    std::fill_n(frame.view().data(), frame.view().stride() * frame.view().height(), sentinel);
                    const host_view<T> got = frame.view().subview(offset, 1, img.view.width(), img.view.height());
                    set_num_threads(threads);
                    morphology<T>(op, img.view, got, se, b_mode);
                    set_num_threads(0);
                    ASSERT_TRUE(equal_images<T>(got, want.view()))
                        << "L " << L << (se.width() > 1 ? " horizontal " : " vertical ") << to_string(op) << " offset "
                        << offset << " threads " << threads << (whole_lines ? " rows of whole lines" : "");
                    for (std::int64_t y = 0; y < frame.view().height(); ++y)
                        for (std::int64_t x = 0; x < frame.view().width(); ++x) {
                            if (y == 0 || y > img.view.height() || x < offset || x >= offset + img.view.width()) {
                                ASSERT_EQ(frame.view()(y, x), sentinel) << "pixel (" << x << ", " << y << ") outside the view";
                            }
                        }
                }
        }
}

// Images laid out as numpy lays out large arrays: rows contiguous (stride = width, a whole
// number of cache lines), the output starting inside a line, so that a row's last line is the
// next row's first: the streamed vertical passes (one, or an opening's pair) take each row's
// tail and the next row's head as one strip (the seam), whose rows meet the border half by half.
// Every offset into the line, every border mode, scalar and SIMD, one and two threads, the
// elements before and after the image untouched.
TYPED_TEST(MorphologyCpu, VerticalPassesIntoContiguousRows) {
    using T = TypeParam;
    std::mt19937_64 rng(37);
    constexpr auto line = static_cast<std::int64_t>(64 / sizeof(T));
    for (const std::int64_t width : {std::int64_t{512}, 2 * line})
        for (const std::int64_t height : {std::int64_t{1}, std::int64_t{70}}) {
            const auto img = make_image<T>(rng, width, height, 200, false);  // rows contiguous
            for (const border_mode m : all_modes) {
                const border b_mode{m, 9.0};
                for (std::int64_t L : {7, 41})
                    for (auto op : {morphology_op::erosion, morphology_op::dilation, morphology_op::opening,
                                    morphology_op::closing}) {
                        const auto se = structuring_element::vline(L);
                        const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                        for (std::int64_t offset = 0; offset < line; offset += std::max<std::int64_t>(1, line / 8))
                            for (bool simd : {false, true})
                            for (int threads : {1, 2}) {
                                // The image `offset` elements before a line.
                                const image_in_sentinels<T> got(width, height, width - offset);
                                simd_setting setting(simd);
                                set_num_threads(threads);
                                morphology<T>(op, img.view, got.view, se, b_mode);
                                set_num_threads(0);
                                ASSERT_TRUE(equal_images<T>(got.view, want.view()))
                                    << width << "x" << height << " L " << L << " " << to_string(op) << " mode "
                                    << to_string(b_mode.mode) << " offset " << offset
                                    << (simd ? " simd" : " scalar") << " threads " << threads;
                                ASSERT_TRUE(got.outside_untouched()) << "offset " << offset;
                            }
                    }
            }
        }
}

// Small elements of any shape run as one shift program of their rows' runs (runs_program in
// morphology_cpu.cpp; openings and closings in modes ignore and constant as one program of both
// stages): random masks with random origins, disks, diamonds, octagons, ellipses, rectangles
// with even sides, short vertical lines, on images narrower and shorter than the elements and
// wider than a register strip, every mode, scalar and SIMD, one and two threads; floats with
// NaNs.
TYPED_TEST(MorphologyCpu, SmallElementsThroughTheRunsProgram) {
    using T = TypeParam;
    std::mt19937_64 rng(43);
    std::uniform_int_distribution<std::int64_t> side(1, 12);
    std::vector<structuring_element> elements = {
        structuring_element::square(3),    structuring_element::rectangle(4, 6), structuring_element::rectangle(9, 2),
        structuring_element::vline(2),     structuring_element::vline(9),        structuring_element::disk(1),
        structuring_element::disk(5),      structuring_element::diamond(4),      structuring_element::octagon(2, 2),
        structuring_element::octagon(1, 3), structuring_element::ellipse(7, 3),  structuring_element::disk(3, 4)};
    for (int i = 0; i < 12; ++i) elements.push_back(random_mask_element(rng, side(rng), side(rng)));
    const std::pair<std::int64_t, std::int64_t> sizes[] = {{150, 90}, {7, 33}, {1, 20}, {64, 1}, {129, 17}};
    for (std::size_t e = 0; e < elements.size(); ++e) {
        const auto& se = elements[e];
        const auto [w, h] = sizes[e % std::size(sizes)];
        const auto img = make_image<T>(rng, w, h, e % 3 == 0 ? 4 : 200, e % 2 == 1);
        if constexpr (std::is_floating_point_v<T>)
            for (std::int64_t k = static_cast<std::int64_t>(e); k < img.view.pixel_count(); k += 97)
                img.view(k / w, k % w) = std::numeric_limits<T>::quiet_NaN();
        for (const auto mode : {border_mode::ignore, border_mode::constant, all_modes[2 + e % 4]}) {
            const border b_mode{mode, std::is_floating_point_v<T> ? -2.5 : 9.0};
            for (auto op : e % 4 == 0 ? std::vector<morphology_op>(std::begin(all_ops), std::end(all_ops))
                                      : std::vector<morphology_op>{morphology_op::erosion, morphology_op::dilation,
                                                                   morphology_op::opening, morphology_op::closing}) {
                const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                ASSERT_NO_FATAL_FAILURE(expect_every_path_equals<T>(op, img.view, se, b_mode, want));
            }
        }
    }
}

// Elements past the runs program's limits keep their paths: the mask path's tiles and pair
// images (a dense random mask), an octagon's and a periodic-line disk's passes, on an image
// wider than a tile (256 bytes of columns), two modes.
TYPED_TEST(MorphologyCpu, ElementsBeyondTheRunsProgramLimits) {
    using T = TypeParam;
    std::mt19937_64 rng(47);
    const auto img = make_image<T>(rng, 300, 140, 200, true);
    footprint_mask m;
    m.width = 28, m.height = 22, m.origin_x = 20, m.origin_y = 5;
    for (std::int64_t k = 0; k < m.width * m.height; ++k) m.mask.push_back(static_cast<std::uint8_t>(rng() % 2));
    m.mask[static_cast<std::size_t>(m.origin_y * m.width + m.origin_x)] = 1;
    const structuring_element elements[] = {structuring_element::from_mask(m), structuring_element::octagon(27, 18),
                                            structuring_element::disk(31, 4)};
    for (const auto& se : elements)
        for (auto mode : {border_mode::ignore, border_mode::reflect})
            for (auto op : {morphology_op::erosion, morphology_op::dilation}) {
                const border b_mode{mode, 0.0};
                const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                for (bool simd : {false, true}) {
                    simd_setting setting(simd);
                    host_image<T> got(img.view.width(), img.view.height());
                    morphology<T>(op, img.view, got.view(), se, b_mode);
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << se.to_string() << " " << to_string(op) << " mode " << to_string(mode)
                        << (simd ? " simd" : " scalar");
                }
            }
}

// uint8 images of 2^22 pixels and more take runs programs with shared pairs (morphology_cpu.cpp,
// runs_pairs_pixels_min): their results equal those of crops of the image, which take the
// programs without pairs (equal to the reference above), wherever the crops' own edges inside
// the image cannot reach. disk:31:4 and octagon:27:18 become programs only so.
TEST(MorphologyCpuLarge, RunsProgramsWithPairsEqualCropsWithout) {
    std::mt19937_64 rng(56);
    const std::int64_t n = 2048, c = 400;
    const auto img = make_image<std::uint8_t>(rng, n, n, 200, false);
    const structuring_element elements[] = {structuring_element::disk(31, 4), structuring_element::octagon(27, 18),
                                            structuring_element::disk(20)};
    const std::pair<std::int64_t, std::int64_t> corners[] = {{0, 0}, {n - c, 0}, {0, n - c}, {n - c, n - c}, {824, 824}};
    for (const auto& se : elements)
        for (auto op : {morphology_op::erosion, morphology_op::dilation, morphology_op::opening, morphology_op::closing})
            for (bool simd : {false, true}) {
                if (!simd && op != morphology_op::erosion) continue;
                simd_setting setting(simd);
                host_image<std::uint8_t> whole(n, n);
                morphology<std::uint8_t>(op, img.view, whole.view(), se);
                // Two stages reach twice the element's extent.
                const std::int64_t reach = 2 * std::max(se.width(), se.height());
                for (const auto& [x0, y0] : corners) {
                    host_image<std::uint8_t> crop(c, c);
                    morphology<std::uint8_t>(op, img.view.subview(x0, y0, c, c), crop.view(), se);
                    const std::int64_t left = x0 > 0 ? reach : 0, right = x0 + c < n ? c - reach : c;
                    const std::int64_t top = y0 > 0 ? reach : 0, bottom = y0 + c < n ? c - reach : c;
                    for (std::int64_t y = top; y < bottom; ++y)
                        for (std::int64_t x = left; x < right; ++x)
                            ASSERT_EQ(whole.view()(y0 + y, x0 + x), crop.view()(y, x))
                                << se.to_string() << " " << to_string(op) << (simd ? " simd" : " scalar") << " at ("
                                << x0 + x << ", " << y0 + y << ")";
                }
            }
}

// Lines (row and column runs) and small elements on an image larger than the mask path's tiles
// (256 x 256 pixels) and the programs' register strips: disks (runs of many lengths, two of
// each, read from fewer grown lengths), an octagon with a long run, a mask.
TYPED_TEST(MorphologyCpu, GeneralElementsAcrossTiles) {
    using T = TypeParam;
    std::mt19937_64 rng(17);
    const auto img = make_image<T>(rng, 531, 259, 200, true);
    footprint_mask m;
    m.width = 13, m.height = 9, m.origin_x = 4, m.origin_y = 6;
    for (std::int64_t k = 0; k < m.width * m.height; ++k) m.mask.push_back(static_cast<std::uint8_t>(rng() % 2));
    m.mask[static_cast<std::size_t>(m.origin_y * m.width + m.origin_x)] = 1;
    const structuring_element elements[] = {
        structuring_element::line(61, 30),  structuring_element::line(45, 63),  structuring_element::line(40, 135),
        structuring_element::line(37, 100.5), structuring_element::disk(6), structuring_element::disk(23), structuring_element::octagon(17, 2),
        structuring_element::from_mask(m)};
    for (std::size_t e = 0; e < std::size(elements); ++e)
        for (auto mode : {border_mode::ignore, e % 2 ? border_mode::constant : border_mode::reflect})
            for (auto op : {morphology_op::erosion, morphology_op::dilation}) {
                const border b_mode{mode, std::is_floating_point_v<T> ? -2.5 : 9.0};
                const auto want = reference::morphology<T>(op, img.view, elements[e], b_mode);
                for (bool simd : {false, true}) {
                    simd_setting setting(simd);
                    host_image<T> got(img.view.width(), img.view.height());
                    morphology<T>(op, img.view, got.view(), elements[e], b_mode);
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << elements[e].to_string() << " " << to_string(op) << " mode " << to_string(mode)
                        << (simd ? " simd" : " scalar");
                }
            }
}

// Masks with hundreds of runs, so that each run length's shifts pair up through several pair
// images (pair_shifts), at densities that leave most runs single pixels or long: erosion and
// dilation (the mask reflected), every mode, on an image of several tiles in both directions,
// floats with a few NaNs.
TYPED_TEST(MorphologyCpu, LargeMasksThroughPairImages) {
    using T = TypeParam;
    std::mt19937_64 rng(29);
    const auto img = make_image<T>(rng, 270, 259, 200, true);
    if constexpr (std::is_floating_point_v<T>)
        for (std::int64_t k = 0; k < img.view.pixel_count(); k += 1999)
            img.view(k / img.view.width(), k % img.view.width()) = std::numeric_limits<T>::quiet_NaN();
    for (const int percent : {30, 50, 80}) {
        footprint_mask m;
        m.width = 31, m.height = 25, m.origin_x = 9, m.origin_y = 16;
        for (std::int64_t k = 0; k < m.width * m.height; ++k)
            m.mask.push_back(static_cast<std::uint8_t>(static_cast<int>(rng() % 100) < percent));
        m.mask[static_cast<std::size_t>(m.origin_y * m.width + m.origin_x)] = 1;
        const auto se = structuring_element::from_mask(m);
        for (auto mode : all_modes)
            for (auto op : {morphology_op::erosion, morphology_op::dilation}) {
                const border b_mode{mode, std::is_floating_point_v<T> ? -2.5 : 9.0};
                const auto want = reference::morphology<T>(op, img.view, se, b_mode);
                host_image<T> got(img.view.width(), img.view.height());
                morphology<T>(op, img.view, got.view(), se, b_mode);
                ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                    << percent << "% mask " << to_string(op) << " mode " << to_string(mode);
            }
    }
}

// A periodic-line disk whose first segment, vertical and long, runs on the whole source: that
// pass reads the image through the border rule and writes the padded frame itself (rows from
// its own border rule, columns by the mode's mapping). Every mode, on an image not much larger
// than the element's reach; radius 31, since smaller ones run as runs programs.
TYPED_TEST(MorphologyCpu, PeriodicDiskWritesItsPaddedFrame) {
    using T = TypeParam;
    std::mt19937_64 rng(23);
    const auto img = make_image<T>(rng, 90, 70, 200, true);
    const auto se = structuring_element::disk(31, 4);
    for (auto mode : {border_mode::ignore, border_mode::constant, border_mode::nearest, border_mode::reflect,
                      border_mode::mirror, border_mode::wrap})
        for (auto op : {morphology_op::erosion, morphology_op::dilation}) {
            const border b_mode{mode, std::is_floating_point_v<T> ? -2.5 : 9.0};
            const auto want = reference::morphology<T>(op, img.view, se, b_mode);
            host_image<T> got(img.view.width(), img.view.height());
            morphology<T>(op, img.view, got.view(), se, b_mode);
            ASSERT_TRUE(equal_images<T>(got.view(), want.view())) << to_string(op) << " mode " << to_string(mode);
        }
}

TEST(MorphologyCpuLarge, OddLargeImageScalarEqualsSimd) {
    std::mt19937_64 rng(11);
    const auto img = make_image<std::uint8_t>(rng, 4097, 3001, 256, false);
    for (const auto& se : {structuring_element::rectangle(255, 3), structuring_element::vline(101)}) {
        host_image<std::uint8_t> scalar(4097, 3001), simd(4097, 3001);
        {
            simd_setting s(false);
            erosion(img.view, scalar.view(), se);
        }
        {
            simd_setting s(true);
            erosion(img.view, simd.view(), se);
        }
        ASSERT_TRUE(equal_images<std::uint8_t>(simd.view(), scalar.view())) << se.to_string();
        // Spot-check rows against the reference on a crop that has the same windows inside it.
        const auto crop = img.view.subview(1000, 1000, 600, 300);
        const auto want = reference::morphology<std::uint8_t>(morphology_op::erosion, crop, se);
        const auto got = erosion(crop, se);
        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), want.view()));
    }
}

// Results of 2 MiB and more leave the shift programs by stores past the cache (smaller ones by
// plain stores, which every other test here takes): a 1450x1450 uint8 image in rows that do not
// start on a cache line, small elements (erosion and opening) and a line at 30 degrees, against
// the reference.
TEST(MorphologyCpuLarge, ProgramResultsPastTheCacheEqualReference) {
    std::mt19937_64 rng(53);
    const auto img = make_image<std::uint8_t>(rng, 1450, 1450, 256, true);
    const std::pair<structuring_element, morphology_op> cases[] = {
        {structuring_element::square(3), morphology_op::erosion}, {structuring_element::square(3), morphology_op::opening},
        {structuring_element::disk(3), morphology_op::closing}, {structuring_element::line(21, 30), morphology_op::erosion}};
    for (const auto& [se, op] : cases) {
        const auto want = reference::morphology<std::uint8_t>(op, img.view, se);
        ASSERT_NO_FATAL_FAILURE(expect_every_path_equals<std::uint8_t>(op, img.view, se, border{}, want));
    }
}

// Results into rows that start anywhere in a cache line (numpy's start 16 bytes into one), from
// an input whose rows do too: the shift programs' row ends past the cache (store_row), and the
// scratch images of the separable passes, the two-program openings, top-hats and gradients laid
// out like the output (detail::scratch_like), against the reference, nothing written outside.
TEST(MorphologyCpuLarge, ResultsIntoRowsOffTheCacheLines) {
    std::mt19937_64 rng(59);
    const std::int64_t width = 1450, height = 1450;
    const struct {
        structuring_element se;
        morphology_op op;
        border_mode mode;
    } cases[] = {{structuring_element::line(21, 30), morphology_op::opening, border_mode::ignore},
                 {structuring_element::square(15), morphology_op::opening, border_mode::ignore},
                 {structuring_element::disk(3), morphology_op::white_tophat, border_mode::ignore},
                 {structuring_element::square(3), morphology_op::gradient, border_mode::ignore},
                 {structuring_element::square(3), morphology_op::opening, border_mode::reflect},
                 {structuring_element::line(41, 30), morphology_op::closing, border_mode::reflect}};
    const auto img = make_image<std::uint8_t>(rng, width, height, 256, false);
    for (const auto& c : cases) {
        const auto want = reference::morphology<std::uint8_t>(c.op, img.view, c.se, border{c.mode});
        for (const std::int64_t in_offset : {0, 16, 45}) {
            // The input `in_offset` bytes into a line, its rows contiguous.
            host_image<std::uint8_t> in_frame(width, height + 1);
            const host_view<std::uint8_t> in(in_frame.view().data() + in_offset, width, height, width);
            copy<std::uint8_t>(img.view, in);
            for (const std::int64_t out_offset : {0, 16, 45})
                for (int threads : {1, 2}) {
                    const image_in_sentinels<std::uint8_t> got(width, height, width + out_offset);
                    set_num_threads(threads);
                    morphology<std::uint8_t>(c.op, in, got.view, c.se, border{c.mode});
                    set_num_threads(0);
                    ASSERT_TRUE(equal_images<std::uint8_t>(got.view, want.view()))
                        << c.se.to_string() << " " << to_string(c.op) << " mode " << to_string(c.mode) << " input +"
                        << in_offset << " output +" << out_offset << " threads " << threads;
                    ASSERT_TRUE(got.outside_untouched()) << c.se.to_string();
                }
        }
    }
}

TEST(MorphologyCpuNaN, NaNPropagatesThroughTheWindow) {
    host_image<float> img(9, 1);
    fill<float>(img.view(), 1.0f);
    img.view()(0, 4) = std::numeric_limits<float>::quiet_NaN();
    for (bool simd : {false, true}) {
        simd_setting s(simd);
        for (auto op : {morphology_op::erosion, morphology_op::dilation}) {
            host_image<float> out(9, 1);
            morphology<float>(op, img.view(), out.view(), structuring_element::hline(3));
            for (std::int64_t x = 0; x < 9; ++x)
                EXPECT_EQ(std::isnan(out.view()(0, x)), x >= 3 && x <= 5) << "x=" << x;
        }
    }
}

// ---- properties -----------------------------------------------------------------------------------
TYPED_TEST(MorphologyCpu, OrderingAndIdempotenceUnderIgnore) {
    using T = TypeParam;
    std::mt19937_64 rng(3);
    const auto img = make_image<T>(rng, 53, 41, 100, true);
    const auto se = structuring_element::rectangle(7, 4);
    const auto ero = erosion(img.view, se), dil = dilation(img.view, se);
    const auto open = opening(img.view, se), close = closing(img.view, se);
    const auto open2 = opening(open.view(), se), close2 = closing(close.view(), se);
    for (std::int64_t y = 0; y < 41; ++y)
        for (std::int64_t x = 0; x < 53; ++x) {
            const T f = img.view(y, x);
            ASSERT_LE(ero.view()(y, x), open.view()(y, x));
            ASSERT_LE(open.view()(y, x), f);
            ASSERT_LE(f, close.view()(y, x));
            ASSERT_LE(close.view()(y, x), dil.view()(y, x));
            ASSERT_EQ(open2.view()(y, x), open.view()(y, x));
            ASSERT_EQ(close2.view()(y, x), close.view()(y, x));
        }
}

// Erosion of f equals the negation of the dilation of -f by the reflected element; a
// rectangle of odd sides is its own reflection.
TEST(MorphologyCpuProperties, DualityUnderNegation) {
    std::mt19937_64 rng(5);
    const auto img = make_image<std::uint8_t>(rng, 37, 29, 256, false);
    host_image<std::uint8_t> neg(37, 29);
    for (std::int64_t y = 0; y < 29; ++y)
        for (std::int64_t x = 0; x < 37; ++x) neg.view()(y, x) = 255 - img.view(y, x);
    const auto se = structuring_element::rectangle(7, 5);
    for (auto mode : {border_mode::ignore, border_mode::reflect, border_mode::nearest}) {
        const auto ero = erosion(img.view, se, {mode, 0});
        const auto dil = dilation(neg.view(), se, {mode, 0});
        for (std::int64_t y = 0; y < 29; ++y)
            for (std::int64_t x = 0; x < 37; ++x) ASSERT_EQ(ero.view()(y, x), 255 - dil.view()(y, x));
    }
}

TEST(MorphologyCpuProperties, ThreadCountDoesNotChangeResults) {
    std::mt19937_64 rng(9);
    const auto img = make_image<std::uint16_t>(rng, 700, 500, 65535, false);
    const auto se = structuring_element::rectangle(41, 17);
    const int previous = num_threads();
    set_num_threads(1);
    const auto one = erosion(img.view, se);
    set_num_threads(3);
    const auto three = erosion(img.view, se);
    set_num_threads(previous);
    ASSERT_TRUE(equal_images<std::uint16_t>(three.view(), one.view()));
}

TEST(MorphologyCpuProperties, InPlaceEqualsOutOfPlace) {
    std::mt19937_64 rng(13);
    auto img = make_image<std::uint8_t>(rng, 64, 48, 256, false);
    const auto se = structuring_element::rectangle(9, 9);
    const auto want = closing(img.view, se);
    closing(img.view, img.view, se);
    ASSERT_TRUE(equal_images<std::uint8_t>(img.view, want.view()));
}

// ---- errors -----------------------------------------------------------------------------------------
TEST(MorphologyCpuErrors, RejectsBadArguments) {
    host_image<std::uint8_t> img(8, 8), small(4, 8), empty(0, 5);
    fill<std::uint8_t>(img.view(), 1);
    const auto se = structuring_element::square(3);
    EXPECT_THROW(erosion(empty.view(), small.view(), se), invalid_argument);
    EXPECT_THROW(erosion(img.view(), small.view(), se), invalid_argument);
    EXPECT_THROW(erosion(img.view(), img.view(), se, {border_mode::constant, 300.0}), invalid_argument);
    EXPECT_THROW(erosion(img.view(), img.view(), se, {border_mode::constant, std::nan("")}), invalid_argument);
    host_image<float> f(4, 4);
    fill<float>(f.view(), 1.0f);
    EXPECT_NO_THROW(erosion(f.view(), f.view(), se, {border_mode::constant, -std::numeric_limits<double>::infinity()}));
    EXPECT_EQ(f.view()(0, 0), -std::numeric_limits<float>::infinity());
    EXPECT_THROW(erosion(f.view(), f.view(), se, {border_mode::constant, 1e40}), invalid_argument);
    EXPECT_THROW(structuring_element::hline(0), invalid_argument);
    EXPECT_THROW(structuring_element::rectangle(3, -1), invalid_argument);
    EXPECT_THROW(parse_morphology_op("erode"), invalid_argument);
    try {
        erosion(img.view(), small.view(), se);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("must match"), std::string::npos) << e.what();
    }
}

TEST(MorphologyDeviceErrors, DeviceViewsWithoutGpuGiveAClearError) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; tests/cuda covers the device path";
    std::uint8_t dummy[4] = {};
    device_view<const std::uint8_t> in(dummy, 2, 2);
    device_view<std::uint8_t> out(dummy, 2, 2);
    try {
        erosion(in, out, structuring_element::square(3));
        FAIL() << "expected an exception";
    } catch (const cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos);
    } catch (const unsupported& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos);
    }
}

}  // namespace
}  // namespace granula
