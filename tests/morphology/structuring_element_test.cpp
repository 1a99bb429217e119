// Structuring elements: footprints against their definitions (written out here independently),
// decompositions whose union is the footprint, the CLI syntax and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <tuple>

#include "granula/core/error.hpp"
#include "granula/morphology/structuring_element.hpp"
#include "support/morphology_cases.hpp"

namespace granula {
namespace {

// The mask the definition gives: member(dx, dy) over a w x h box with the origin at the centre.
footprint_mask defined_mask(std::int64_t w, std::int64_t h, const std::function<bool(std::int64_t, std::int64_t)>& member) {
    footprint_mask m;
    m.width = w, m.height = h, m.origin_x = w / 2, m.origin_y = h / 2;
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) m.mask.push_back(member(x - w / 2, y - h / 2) ? 1 : 0);
    return m;
}

::testing::AssertionResult same_mask(const footprint_mask& got, const footprint_mask& want) {
    if (got.width != want.width || got.height != want.height || got.origin_x != want.origin_x ||
        got.origin_y != want.origin_y)
        return ::testing::AssertionFailure() << "box " << got.width << "x" << got.height << " origin (" << got.origin_y
                                             << ", " << got.origin_x << "), want " << want.width << "x" << want.height
                                             << " origin (" << want.origin_y << ", " << want.origin_x << ")";
    for (std::int64_t y = 0; y < want.height; ++y)
        for (std::int64_t x = 0; x < want.width; ++x)
            if (got.at(y, x) != want.at(y, x))
                return ::testing::AssertionFailure() << "pixel (row " << y << ", col " << x << ") differs";
    return ::testing::AssertionSuccess();
}

TEST(StructuringElement, RectangleFootprintAndOriginFollowTheGuide) {
    const auto even = structuring_element::rectangle(4, 3).footprint();
    EXPECT_EQ(even.width, 4);
    EXPECT_EQ(even.height, 3);
    EXPECT_EQ(even.origin_x, 2);  // floor(n / 2), as OpenCV, SciPy and DIPlib
    EXPECT_EQ(even.origin_y, 1);
    EXPECT_EQ(even.mask.size(), 12u);
    for (auto m : even.mask) EXPECT_EQ(m, 1);
}

TEST(StructuringElement, RectangleDecomposesIntoItsSides) {
    const auto terms = structuring_element::rectangle(5, 8).decomposition();
    ASSERT_EQ(terms.size(), 1u);
    const auto& parts = terms[0].segments;
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0], (line_segment{5, 1, 0, 2}));
    EXPECT_EQ(parts[1], (line_segment{8, 0, 1, 4}));
    EXPECT_TRUE(structuring_element::square(1).decomposition()[0].segments.empty());
    EXPECT_TRUE(structuring_element::rectangle(5, 8).separable());
    EXPECT_FALSE(structuring_element::disk(3).separable());
}

TEST(StructuringElement, ShapesEqualTheirDefinitions) {
    for (std::int64_t r : {1, 2, 3, 7, 31}) {
        const std::int64_t n = 2 * r + 1;
        EXPECT_TRUE(same_mask(structuring_element::disk(r).footprint(),
                              defined_mask(n, n, [&](auto x, auto y) { return x * x + y * y <= r * r; })))
            << "disk " << r;
        EXPECT_TRUE(same_mask(structuring_element::diamond(r).footprint(),
                              defined_mask(n, n, [&](auto x, auto y) { return std::abs(x) + std::abs(y) <= r; })))
            << "diamond " << r;
    }
    for (auto [w, h] : {std::pair{1, 1}, {3, 2}, {7, 4}, {10, 10}}) {
        const auto want = defined_mask(2 * w + 1, 2 * h + 1, [&](auto x, auto y) {
            const double a = x / (w + 1.0), b = y / (h + 1.0);
            return a * a + b * b < 1.0;
        });
        EXPECT_TRUE(same_mask(structuring_element::ellipse(w, h).footprint(), want)) << "ellipse " << w << "x" << h;
    }
    for (std::int64_t m = 1; m <= 12; ++m)
        for (std::int64_t n = 1; n <= 12; ++n) {
        const std::int64_t s = m + 2 * n;
        const auto want = defined_mask(s, s, [&](auto dx, auto dy) {
            const std::int64_t x = dx + s / 2, y = dy + s / 2;  // corners: x + y >= n from each side
            return x + y >= n && (s - 1 - x) + y >= n && x + (s - 1 - y) >= n && (s - 1 - x) + (s - 1 - y) >= n;
        });
        EXPECT_TRUE(same_mask(structuring_element::octagon(m, n).footprint(), want)) << "octagon " << m << "," << n;
        }
}

// MATLAB's strel('disk', r, n) as its documentation and Adams (1993) describe it, built here
// point by point: the Minkowski sum of n periodic lines i v, |i| <= floor(k / |v|), with
// k = 2 r / (cot(pi / 2n) + 1 / sin(pi / 2n)) and v MATLAB's (row, column) basis vectors, then a
// horizontal and a vertical line of 2 (r - reach - 1) + 1 pixels when that is 3 or more.
footprint_mask matlab_periodic_disk(std::int64_t r, int n) {
    const std::vector<std::pair<int, int>> basis =
        n == 4   ? std::vector<std::pair<int, int>>{{1, 0}, {1, 1}, {0, 1}, {-1, 1}}
        : n == 6 ? std::vector<std::pair<int, int>>{{1, 0}, {1, 2}, {2, 1}, {0, 1}, {-1, 2}, {-2, 1}}
                 : std::vector<std::pair<int, int>>{{1, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 1}, {-1, 2}, {-1, 1}, {-2, 1}};
    const double pi = std::acos(-1.0), theta = pi / (2 * n);
    const double k = 2.0 * r / (std::cos(theta) / std::sin(theta) + 1.0 / std::sin(theta));
    std::set<std::pair<std::int64_t, std::int64_t>> points{{0, 0}};  // (row, column)
    const auto sum_with = [&](const std::vector<std::pair<std::int64_t, std::int64_t>>& line) {
        std::set<std::pair<std::int64_t, std::int64_t>> next;
        for (const auto& [pr, pc] : points)
            for (const auto& [lr, lc] : line) next.insert({pr + lr, pc + lc});
        points = std::move(next);
    };
    for (const auto& [vr, vc] : basis) {
        const auto p = static_cast<std::int64_t>(std::floor(k / std::sqrt(double(vr * vr + vc * vc))));
        std::vector<std::pair<std::int64_t, std::int64_t>> line;
        for (std::int64_t i = -p; i <= p; ++i) line.push_back({i * vr, i * vc});
        sum_with(line);
    }
    std::int64_t reach = 0;
    for (const auto& point : points) reach = std::max(reach, point.first);
    const std::int64_t len = 2 * (r - reach - 1) + 1;
    if (len >= 3) {
        std::vector<std::pair<std::int64_t, std::int64_t>> horizontal, vertical;
        for (std::int64_t i = -(len / 2); i <= len / 2; ++i) horizontal.push_back({0, i}), vertical.push_back({i, 0});
        sum_with(horizontal);
        sum_with(vertical);
    }
    std::int64_t half = 0;
    for (const auto& [pr, pc] : points) half = std::max({half, std::abs(pr), std::abs(pc)});
    return defined_mask(2 * half + 1, 2 * half + 1, [&](auto x, auto y) { return points.count({y, x}) != 0; });
}

TEST(StructuringElement, PeriodicLineDisksAreMatlabs) {
    for (int n : {4, 6, 8})
        for (std::int64_t r = 3; r <= 60; r += (r < 12 ? 1 : 7)) {
            const auto se = structuring_element::disk(r, n);
            EXPECT_TRUE(same_mask(se.footprint(), matlab_periodic_disk(r, n))) << "disk " << r << ", " << n;
            EXPECT_EQ(se.to_string(), "disk:" + std::to_string(r) + ":" + std::to_string(n));
            EXPECT_EQ(structuring_element::parse(se.to_string()), se);
            ASSERT_EQ(se.decomposition().size(), 1u);  // one sum of lines, none longer than needed
            EXPECT_LE(se.decomposition()[0].segments.size(), static_cast<std::size_t>(n));
        }
    // strel('disk', 4) as MATLAB prints it.
    const std::vector<std::uint8_t> four = {0, 0, 1, 1, 1, 0, 0,  //
                                            0, 1, 1, 1, 1, 1, 0,  //
                                            1, 1, 1, 1, 1, 1, 1,  //
                                            1, 1, 1, 1, 1, 1, 1,  //
                                            1, 1, 1, 1, 1, 1, 1,  //
                                            0, 1, 1, 1, 1, 1, 0,  //
                                            0, 0, 1, 1, 1, 0, 0};
    EXPECT_EQ(structuring_element::disk(4, 4).footprint().mask, four);
    // Below radius 3 MATLAB uses the exact disk; 0 lines is the exact disk.
    for (std::int64_t r : {0, 1, 2}) EXPECT_EQ(structuring_element::disk(r, 8), structuring_element::disk(r));
    EXPECT_EQ(structuring_element::disk(9, 0).to_string(), "disk:9");
    for (int n : {-4, 1, 2, 3, 5, 7, 9, 16}) EXPECT_THROW(structuring_element::disk(5, n), invalid_argument) << n;
    for (const char* bad : {"disk:5:0", "disk:5:5", "disk:5:x", "disk:5:4:1", "disk::4"})
        EXPECT_THROW(structuring_element::parse(bad), invalid_argument) << bad;
}

TEST(StructuringElement, MaskKeepsItsBoxAndOrigin) {
    footprint_mask m;
    m.width = 4, m.height = 3, m.origin_x = 3, m.origin_y = 0;
    m.mask = {0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1};
    const auto se = structuring_element::from_mask(m);
    EXPECT_TRUE(same_mask(se.footprint(), m));
    // One run at the origin, so separable, that does not fill the box.
    for (const footprint_mask& run : {footprint_mask{3, 1, 0, 0, {1, 1, 0}}, footprint_mask{1, 2, 0, 1, {0, 1}}})
        EXPECT_TRUE(same_mask(structuring_element::from_mask(run).footprint(), run));
    EXPECT_EQ(se.width(), 4);
    EXPECT_EQ(se.height(), 3);
    auto empty = m;
    empty.mask.assign(12, 0);
    EXPECT_THROW(structuring_element::from_mask(empty), invalid_argument);
    auto outside = m;
    outside.origin_x = 4;
    EXPECT_THROW(structuring_element::from_mask(outside), invalid_argument);
    auto wrong_size = m;
    wrong_size.mask.pop_back();
    EXPECT_THROW(structuring_element::from_mask(wrong_size), invalid_argument);
}

// The pixels of a line as (dominant, minor) coordinates relative to the origin.
std::vector<std::pair<std::int64_t, std::int64_t>> line_pixels(const footprint_mask& f, bool x_dominant) {
    std::vector<std::pair<std::int64_t, std::int64_t>> pixels;
    for (std::int64_t y = 0; y < f.height; ++y)
        for (std::int64_t x = 0; x < f.width; ++x)
            if (f.at(y, x)) {
                const std::int64_t dx = x - f.origin_x, dy = y - f.origin_y;
                pixels.emplace_back(x_dominant ? dx : dy, x_dominant ? -dy : -dx);
            }
    return pixels;
}

TEST(StructuringElement, LinesHaveOnePixelPerStepNearTheTrueLine) {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> angle(-200.0, 400.0);
    std::uniform_int_distribution<std::int64_t> length(1, 301);
    for (int trial = 0; trial < 200; ++trial) {
        const double a = trial < 8 ? 22.5 * trial : angle(rng);
        const std::int64_t L = length(rng);
        const auto se = structuring_element::line(L, a);
        const auto f = se.footprint();
        double folded = std::fmod(a, 180.0);
        if (folded < 0) folded += 180.0;
        const bool x_dominant = folded <= 45.0 || folded >= 135.0;
        const double radians = folded * M_PI / 180.0;
        const double slope = x_dominant ? std::tan(radians) : 1.0 / std::tan(radians);
        const auto pixels = line_pixels(f, x_dominant);
        ASSERT_EQ(static_cast<std::int64_t>(pixels.size()), L) << "line " << L << " at " << a;
        // Where some slope p/q with q <= 64 keeps the line's ends within a quarter pixel of the
        // exact slope's, snapping does, so every pixel lies within 3/4 of a pixel of the exact line
        // (1/4 and the rounding's 1/2); elsewhere it moves the slope by at most 1/128.
        double nearest = 1;
        for (int q = 1; q <= 64; ++q) nearest = std::min(nearest, std::abs(slope - std::round(slope * q) / q));
        const bool within_quarter = nearest * static_cast<double>(L / 2) <= 0.25;
        std::set<std::int64_t> steps;
        for (const auto& [u, w] : pixels) {
            steps.insert(u);
            const double bound = within_quarter ? 0.75 : 0.5 + std::abs(u) / 128.0;
            EXPECT_LE(std::abs(w - u * slope), bound + 1e-9) << "line " << L << " at " << a;
        }
        EXPECT_EQ(*steps.begin(), -(L / 2)) << "line " << L << " at " << a;
        EXPECT_EQ(*steps.rbegin(), L - 1 - L / 2) << "line " << L << " at " << a;
        EXPECT_EQ(static_cast<std::int64_t>(steps.size()), L) << "one pixel per step";
        // Cost bounded independently of the length: the runs of fewer than two periods (q <= 64),
        // each with at most one periodic line after its run, and from L = 128 (two periods of
        // any q) the same periodic line for every term, so that they form one group.
        const auto& terms = se.decomposition();
        EXPECT_LE(terms.size(), 127u);
        for (const auto& t : terms) {
            EXPECT_LE(t.segments.size(), 2u);
            if (L >= 128) {
                EXPECT_TRUE(!t.segments.empty() && t.segments.back() == terms[0].segments.back());
            }
        }
    }
}

TEST(StructuringElement, LinesOnAxesAndDiagonalsAreExact) {
    const auto f0 = structuring_element::line(5, 0).footprint(), f90 = structuring_element::line(5, 90).footprint();
    EXPECT_TRUE(same_mask(f0, structuring_element::hline(5).footprint()));
    EXPECT_TRUE(same_mask(f90, structuring_element::vline(5).footprint()));
    EXPECT_TRUE(same_mask(structuring_element::line(5, 180).footprint(), f0));
    EXPECT_TRUE(same_mask(structuring_element::line(5, 45).footprint(),
                          defined_mask(5, 5, [](auto x, auto y) { return x == -y; })));  // rises to the right
    EXPECT_TRUE(same_mask(structuring_element::line(5, 135).footprint(),
                          defined_mask(5, 5, [](auto x, auto y) { return x == y; })));
    EXPECT_TRUE(same_mask(structuring_element::line(6, -45).footprint(), structuring_element::line(6, 135).footprint()));
    // A rational slope is used as it is: atan(1/2), y = round(x / 2) half up, upwards.
    const auto half = structuring_element::line(9, std::atan(0.5) * 180.0 / M_PI).footprint();
    EXPECT_TRUE(same_mask(half, defined_mask(9, 5, [](auto x, auto y) {
                              return -y == static_cast<std::int64_t>(std::floor(x / 2.0 + 0.5));
                          })));
}

// The slope is the simplest fraction that keeps the line's ends within a quarter pixel of the
// exact slope's: at 30 degrees 1/2 for L = 7, 4/7 for 63, 11/19 for 255; 15/26, the nearest with
// q <= 64, for 1001, which no simpler one gets there.
TEST(StructuringElement, LinesTakeTheSimplestSlopeWithinAQuarterPixel) {
    const std::tuple<std::int64_t, std::int64_t, std::int64_t> cases[] = {{7, 1, 2}, {63, 4, 7}, {255, 11, 19}, {1001, 15, 26}};
    for (const auto& [L, p, q] : cases) {
        const auto pixels = line_pixels(structuring_element::line(L, 30).footprint(), true);
        ASSERT_EQ(static_cast<std::int64_t>(pixels.size()), L);
        for (const auto& [u, w] : pixels)
            ASSERT_EQ(w, static_cast<std::int64_t>(std::floor((2.0 * u * p + q) / (2.0 * q)))) << "line " << L << " at u " << u;
    }
}

TEST(StructuringElement, ParsesTheCliSyntax) {
    EXPECT_EQ(structuring_element::parse("hline:15").to_string(), "hline:15");
    EXPECT_EQ(structuring_element::parse("vline:1").to_string(), "hline:1");  // 1x1 spells as hline:1
    EXPECT_EQ(structuring_element::parse("rect:7x3").to_string(), "rect:7x3");
    EXPECT_EQ(structuring_element::parse("square:5").width(), 5);
    EXPECT_EQ(structuring_element::parse("line:31:30").to_string(), "line:31:30");
    EXPECT_EQ(structuring_element::parse("line:31:-12.5"), structuring_element::line(31, -12.5));
    EXPECT_EQ(structuring_element::parse("disk:4"), structuring_element::disk(4));
    EXPECT_EQ(structuring_element::parse("diamond:4"), structuring_element::diamond(4));
    EXPECT_EQ(structuring_element::parse("octagon:3:2"), structuring_element::octagon(3, 2));
    EXPECT_EQ(structuring_element::parse("ellipse:5x3"), structuring_element::ellipse(5, 3));
    EXPECT_EQ(structuring_element::parse("line:7:0"), structuring_element::hline(7));
    for (const char* bad : {"", "hline", "hline:", "hline:0", "hline:-3", "hline:3x", "rect:3", "rect:3x0", "rect:x3",
                            "circle:3", "square:1.5", "hline:99999999999999999999", "disk:-2",
                            "line:5", "line:0:30", "line:5:nan", "line:5:inf", "line:5:abc", "octagon:3",
                            "octagon:0:2", "ellipse:3", "diamond:x"})
        EXPECT_THROW(structuring_element::parse(bad), invalid_argument) << bad;
    EXPECT_THROW(structuring_element::line(5, std::nan("")), invalid_argument);
    EXPECT_THROW(structuring_element::line(-1, 0), invalid_argument);
}

// The offsets (dx, dy) of a footprint, relative to its origin.
std::set<std::pair<std::int64_t, std::int64_t>> offsets(const footprint_mask& f) {
    std::set<std::pair<std::int64_t, std::int64_t>> result;
    for (std::int64_t y = 0; y < f.height; ++y)
        for (std::int64_t x = 0; x < f.width; ++x)
            if (f.at(y, x)) result.emplace(x - f.origin_x, y - f.origin_y);
    return result;
}

// Every segment of the decomposition has its origin among its pixels (what the passes assume).
::testing::AssertionResult segments_hold_their_origins(const structuring_element& se) {
    for (const auto& t : se.decomposition())
        for (const auto& s : t.segments)
            if (s.origin < 0 || s.origin >= s.length)
                return ::testing::AssertionFailure() << "segment of " << s.length << " pixels with origin " << s.origin;
    return ::testing::AssertionSuccess();
}

// Elements of every kind, masks with empty border rows and columns and off-centre origins.
std::vector<structuring_element> transform_cases() {
    std::vector<structuring_element> elements = {
        structuring_element::hline(1),       structuring_element::hline(4),       structuring_element::vline(7),
        structuring_element::rectangle(4, 6), structuring_element::rectangle(5, 2), structuring_element::disk(3),
        structuring_element::diamond(2),     structuring_element::octagon(1, 2),  structuring_element::octagon(3, 2),
        structuring_element::ellipse(4, 2),
        // Separable decompositions that do not fill their box.
        structuring_element::from_mask({3, 1, 0, 0, {1, 1, 0}}), structuring_element::from_mask({1, 2, 0, 1, {0, 1}})};
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> angle(0.0, 180.0);
    std::uniform_int_distribution<std::int64_t> length(1, 200), side(1, 7);
    for (int i = 0; i < 40; ++i) elements.push_back(structuring_element::line(length(rng), i < 8 ? 22.5 * i : angle(rng)));
    for (int i = 0; i < 20; ++i) {
        const std::int64_t width = side(rng), height = side(rng);
        elements.push_back(test_support::random_mask_element(rng, width, height));
    }
    return elements;
}

TEST(StructuringElement, ReflectedNegatesEveryOffset) {
    for (const auto& se : transform_cases()) {
        const auto f = se.footprint();
        const auto r = se.reflected();
        const auto rf = r.footprint();
        EXPECT_EQ(rf.width, f.width) << se.to_string();
        EXPECT_EQ(rf.height, f.height) << se.to_string();
        EXPECT_EQ(rf.origin_x, f.width - 1 - f.origin_x) << se.to_string();
        EXPECT_EQ(rf.origin_y, f.height - 1 - f.origin_y) << se.to_string();
        std::set<std::pair<std::int64_t, std::int64_t>> negated;
        for (const auto& [dx, dy] : offsets(f)) negated.emplace(-dx, -dy);
        EXPECT_EQ(offsets(rf), negated) << se.to_string();
        EXPECT_TRUE(segments_hold_their_origins(r)) << se.to_string();
        EXPECT_EQ(r.separable(), se.separable()) << se.to_string();
        EXPECT_TRUE(same_mask(r.reflected().footprint(), f)) << se.to_string();
    }
    // Symmetric elements come back as they were, named; others become masks.
    EXPECT_EQ(structuring_element::disk(4).reflected().to_string(), "disk:4");
    EXPECT_EQ(structuring_element::rectangle(5, 3).reflected().to_string(), "rect:5x3");
    EXPECT_EQ(structuring_element::hline(4).reflected().to_string(), "mask:4x1");
    EXPECT_EQ(structuring_element::hline(4).reflected().decomposition()[0].segments[0], (line_segment{4, 1, 0, 1}));
}

// Elements far larger than any image: a line's decomposition stays a base and a periodic line
// whatever its length (its base's runs once took a mask reaching from the origin, L/2 wide),
// masks that would not fit in memory are refused by name, and shortened_for gives the line of
// 2 E + 1 pixels.
TEST(StructuringElement, HugeElementsStayCompactOrGiveClearErrors) {
    const auto long_line = structuring_element::line(100'000'000, 30);
    EXPECT_EQ(long_line.width(), 100'000'000);
    EXPECT_LE(long_line.decomposition().size(), 127u);
    EXPECT_EQ(long_line.reflected().width(), long_line.width());
    const auto refused = [](const auto& make, const std::string& what) {
        try {
            make();
        } catch (const invalid_argument& e) {
            return std::string(e.what()).find(what) != std::string::npos &&
                   std::string(e.what()).find("too large") != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(refused([&] { return long_line.footprint(); }, "line:100000000:30"));
    EXPECT_TRUE(refused([] { return structuring_element::disk(100'000); }, "disk:100000"));
    EXPECT_TRUE(refused([] { return structuring_element::disk(std::int64_t{1} << 62); }, "disk:"));
    EXPECT_TRUE(refused([] { return structuring_element::diamond(100'000); }, "diamond:100000"));
    EXPECT_TRUE(refused([] { return structuring_element::ellipse(100'000, 3000); }, "ellipse:100000x3000"));
    EXPECT_NO_THROW(structuring_element::disk(100'000, 8));  // periodic lines: no mask
    EXPECT_NO_THROW(structuring_element::ellipse(100'000, 3));

    // Shortening keeps the slope (line(129, 30) alone snaps to another): the middle 129 pixels.
    const auto whole = structuring_element::line(1001, 30), middle = whole.shortened_for(64, 20);
    EXPECT_EQ(middle.to_string(), "line:129:30");
    const auto offsets = [](const footprint_mask& m, std::int64_t reach) {
        std::set<std::pair<std::int64_t, std::int64_t>> out;
        for (std::int64_t y = 0; y < m.height; ++y)
            for (std::int64_t x = 0; x < m.width; ++x)
                if (m.at(y, x) && std::abs(x - m.origin_x) <= reach) out.insert({x - m.origin_x, y - m.origin_y});
        return out;
    };
    const auto middle_offsets = offsets(middle.footprint(), 64);
    EXPECT_EQ(middle_offsets.size(), 129u);
    EXPECT_EQ(middle_offsets, offsets(whole.footprint(), 64));
    EXPECT_EQ(structuring_element::line(1001, 80).shortened_for(64, 20).to_string(), "line:41:80");
    EXPECT_EQ(structuring_element::line(130, -150).shortened_for(64, 20).to_string(), "line:129:-150");
    EXPECT_EQ(structuring_element::line(129, 30).shortened_for(64, 20).to_string(), "line:129:30");
    EXPECT_EQ(structuring_element::disk(40).shortened_for(8, 8).to_string(), "disk:40");
    EXPECT_EQ(structuring_element::hline(1001).shortened_for(8, 8).to_string(), "hline:1001");
}

TEST(StructuringElement, WithOriginMovesTheOriginOnly) {
    std::mt19937_64 rng(9);
    for (const auto& se : transform_cases()) {
        const auto f = se.footprint();
        std::uniform_int_distribution<std::int64_t> x(0, f.width - 1), y(0, f.height - 1);
        for (int trial = 0; trial < 3; ++trial) {
            const std::int64_t ox = trial == 0 ? (f.width - 1) / 2 : x(rng), oy = trial == 0 ? (f.height - 1) / 2 : y(rng);
            const auto moved = se.with_origin(ox, oy);
            auto want = f;
            want.origin_x = ox, want.origin_y = oy;
            EXPECT_TRUE(same_mask(moved.footprint(), want)) << se.to_string() << " origin " << ox << "," << oy;
            std::set<std::pair<std::int64_t, std::int64_t>> shifted;
            for (const auto& [dx, dy] : offsets(f)) shifted.emplace(dx + f.origin_x - ox, dy + f.origin_y - oy);
            EXPECT_EQ(offsets(moved.footprint()), shifted) << se.to_string();
            EXPECT_TRUE(segments_hold_their_origins(moved)) << se.to_string();
        }
    }
    // Rectangles keep their separable decomposition, their sides' origins moved.
    const auto moved = structuring_element::rectangle(4, 6).with_origin(1, 2);
    EXPECT_TRUE(moved.separable());
    EXPECT_EQ(moved.decomposition()[0].segments, (std::vector<line_segment>{{4, 1, 0, 1}, {6, 0, 1, 2}}));
    EXPECT_EQ(structuring_element::disk(2).with_origin(2, 2).to_string(), "disk:2");  // unmoved
    for (auto [x, y] : {std::pair{-1, 0}, {0, -1}, {4, 0}, {0, 6}}) {
        try {
            static_cast<void>(structuring_element::rectangle(4, 6).with_origin(x, y));
            FAIL() << "expected invalid_argument for " << x << "," << y;
        } catch (const invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("is outside the 6x4 footprint"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace granula
