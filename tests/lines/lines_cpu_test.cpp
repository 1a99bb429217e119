// Differential, property and error tests of the CPU linear filters against the brute-force
// scan-line reference (tests/reference/scanline_reference.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "granula/io/io.hpp"
#include "reference/scanline_reference.hpp"
#include "support/lines_cases.hpp"
#include "support/morphology_cases.hpp"
#include "support/simd_setting.hpp"

namespace granula {
namespace {

using namespace granula::test_support;

// Sets the thread count for a scope.
struct scoped_threads {
    int before = num_threads();
    explicit scoped_threads(int threads) { set_num_threads(threads); }
    ~scoped_threads() { set_num_threads(before); }
    scoped_threads(const scoped_threads&) = delete;
    scoped_threads& operator=(const scoped_threads&) = delete;
};

template <class T>
class LinesCpu : public ::testing::Test {};
using PixelTypes = ::testing::Types<std::uint8_t, std::uint16_t, float>;
TYPED_TEST_SUITE(LinesCpu, PixelTypes);

// 64 random (angle, length) pairs plus the axes and diagonals twice, every kind, mode and algorithm,
// on random sizes: equal to the reference along the same scan lines (openings: dilation of the
// erosion; closings: erosion of the dilation), bit for bit.
TYPED_TEST(LinesCpu, EqualsScanLineReference) {
    using T = TypeParam;
    const std::uint64_t seed = 20261121;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(1, 37), coin(0, 3);
    std::uniform_real_distribution<double> any_angle(-180.0, 360.0);
    for (int trial = 0; trial < 72; ++trial) {
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const double angle = trial < 8 ? 45.0 * trial : any_angle(rng);  // 180..315: the same lines again
        const std::int64_t extent = angle_is_steep(angle) ? h : w;
        const std::int64_t length = std::uniform_int_distribution<std::int64_t>(1, extent)(rng);
        const auto img = random_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200, trial % 3 == 0);
        for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion,
                                line_filter_kind::dilation})
            for (const border_mode m : line_modes) {
                const border mode{m, std::is_floating_point_v<T> ? 1.5 : 7.0};
                const auto want =
                    kind == line_filter_kind::erosion || kind == line_filter_kind::dilation
                        ? reference::scanline_erosion_or_dilation<T>(img.view(), length, angle, mode,
                                                                     kind == line_filter_kind::dilation)
                        : reference::scanline_opening_or_closing<T>(img.view(), length, angle, mode,
                                                                    kind == line_filter_kind::closing);
                for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack})
                    for (const bool simd : {false, true}) {
                        simd_setting setting(simd);
                        host_image<T> got(w, h);
                        line_filter<T>(img.view(), got.view(), angle, {length, kind, mode, algorithm});
                        ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                            << "seed " << seed << " trial " << trial << " " << w << "x" << h << " length " << length
                            << " angle " << angle << " " << to_string(kind) << " mode " << to_string(m) << " "
                            << to_string(algorithm) << (simd ? " simd" : " scalar");
                    }
            }
    }
}

// Lines of 2048 pixels or more, over many strips of the vectorised path: it equals the per-line
// fifo path (itself equal to the reference above) there too, reductions included.
TYPED_TEST(LinesCpu, LongLinesEqualFifo) {
    using T = TypeParam;
    std::mt19937_64 rng(23);
    for (const auto& [w, h] : {std::pair<std::int64_t, std::int64_t>{2100, 512}, {512, 2100}}) {
        const auto img = random_image<T>(rng, w, h, 50, false);
        std::vector<double> angles;
        for (int i = 0; i < 4; ++i) {
            const double a = std::uniform_real_distribution<double>(0, 180)(rng);
            if (angle_is_steep(a) == (h > w)) angles.push_back(a);  // lines along the long side
        }
        angles.push_back(h > w ? 90.0 : 0.0);
        for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion})
            for (const border_mode m : line_modes) {
                const std::int64_t length = std::uniform_int_distribution<std::int64_t>(2, 300)(rng);
                std::vector<host_image<T>> results;
                std::vector<host_image<std::int32_t>> orientations;
                std::vector<std::vector<double>> spectra;
                for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo}) {
                    results.emplace_back(w, h);
                    orientations.emplace_back(w, h);
                    spectra.emplace_back(angles.size());
                    host_line_outputs<T> out;
                    out.extremum = results.back().view();
                    out.orientation = orientations.back().view();
                    out.spectrum = spectra.back();
                    line_filter_angles<T>(img.view(), angles, {length, kind, {m, 3.0}, algorithm}, out);
                }
                const std::string what = std::to_string(w) + "x" + std::to_string(h) + " " +
                                         std::string(to_string(kind)) + " " + std::string(to_string(m));
                ASSERT_TRUE(equal_images<T>(results[0].view(), results[1].view())) << what;
                ASSERT_TRUE(equal_images<std::int32_t>(orientations[0].view(), orientations[1].view())) << what;
                for (std::size_t i = 0; i < angles.size(); ++i)
                    EXPECT_NEAR(spectra[0][i], spectra[1][i], 1e-9 * std::abs(spectra[1][i])) << what;
            }
    }
}

// The vectorised path streams each strip of lines down its rows through two van Herk buffers of
// L rows, and flat lines read through the image's tiles in segments of whole van Herk blocks (at
// least 128 rows): lines of several blocks and segments, lengths around those sizes, every angle
// class, against the reference.
TYPED_TEST(LinesCpu, StreamedSegmentsEqualReference) {
    using T = TypeParam;
    std::mt19937_64 rng(29);
    const std::int64_t lengths[] = {1, 2, 5, 42, 43, 64, 127, 128, 129, 200, 261};
    const double angles[] = {90.0, 60.0, 100.0, 135.0, 0.0, 30.0, 170.0, 45.0, 12.0};
    for (int trial = 0; trial < 33; ++trial) {
        const double angle = angles[trial % 9];
        const std::int64_t length = lengths[trial % 11];
        const bool steep = angle_is_steep(angle);
        const std::int64_t along = std::uniform_int_distribution<std::int64_t>(length + 1, 400)(rng);
        const std::int64_t across = std::uniform_int_distribution<std::int64_t>(1, 70)(rng);
        const std::int64_t w = steep ? across : along, h = steep ? along : across;
        const auto img = random_image<T>(rng, w, h, 200, false);
        const auto kind = trial % 3 == 0   ? line_filter_kind::erosion
                          : trial % 3 == 1 ? line_filter_kind::opening
                                           : line_filter_kind::closing;
        const border mode{line_modes[trial % 4], 7.0};
        const bool two_stages = kind != line_filter_kind::erosion;
        const auto want = two_stages ? reference::scanline_opening_or_closing<T>(img.view(), length, angle, mode,
                                                                                 kind == line_filter_kind::closing)
                                     : reference::scanline_erosion_or_dilation<T>(img.view(), length, angle, mode, false);
        for (const bool simd : {false, true}) {
            simd_setting setting(simd);
            host_image<T> got(w, h);
            const host_view<T> filtered[] = {got.view()};
            host_line_outputs<T> out;
            out.filtered = filtered;
            const double one[] = {angle};
            line_filter_angles<T>(img.view(), one, {length, kind, mode}, out);
            ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                << "trial " << trial << " " << w << "x" << h << " length " << length << " angle " << angle << " "
                << to_string(kind) << " " << to_string(mode.mode) << (simd ? " simd" : " scalar");
        }
    }
}

// One angle's automatic path against the per-line fifo path on img (w x h; inside: the output
// is a view at an odd offset of a larger image too): equal images and sums, and the output's
// pixels outside its view left alone. The output's rows are w + spare_columns apart.
template <class T>
void expect_automatic_equals_fifo(host_view<const T> img, bool inside, double angle, std::int64_t length,
                                  line_filter_kind kind, border_mode m, const std::string& what,
                                  std::int64_t spare_columns = 11) {
    const std::int64_t w = img.width(), h = img.height();
    std::vector<host_image<T>> results;
    std::vector<std::vector<double>> spectra;
    for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo}) {
        results.emplace_back(w + spare_columns, h + 3);
        for (std::int64_t y = 0; y < h + 3; ++y)  // untouched outside the view
            std::fill_n(results.back().view().row(y), w + spare_columns, T(7));
        spectra.emplace_back(1);
        const host_view<T> filtered[] = {inside ? results.back().view().subview(5, 2, w, h)
                                                : results.back().view().subview(0, 0, w, h)};
        host_line_outputs<T> out;
        out.filtered = filtered;
        out.spectrum = spectra.back();
        const double one[] = {angle};
        line_filter_angles<T>(img, one, {length, kind, {m, 3.0}, algorithm}, out);
    }
    ASSERT_TRUE(equal_images<T>(results[0].view(), results[1].view())) << what;
    EXPECT_NEAR(spectra[0][0], spectra[1][0], 1e-9 * std::abs(spectra[1][0])) << what;
}

// Flat lines with no reductions over angles are read from and written to the image through
// small transposed tiles and pieces of several tiles: long lines (wide lane blocks) and short
// ones, rising and falling, images whose rows start off the cache lines (views into larger
// images, and rows a whole number of cache lines apart, where every row's lines fall on the
// same columns), equal the per-line fifo path, sums included.
TYPED_TEST(LinesCpu, FlatLinesOnTheImageEqualFifo) {
    using T = TypeParam;
    std::mt19937_64 rng(31);
    // 70 and 64 columns: a block's tiles gather the image's last 64 columns (uint8).
    struct image_size {
        std::int64_t w, h, spare_columns;
    };
    for (const auto& [w, h, spare] : {image_size{2100, 301, 9}, image_size{333, 97, 9}, image_size{70, 45, 9},
                                      image_size{64, 130, 9}, image_size{1024, 300, 64}})
        for (const double angle : {0.0, 7.5, 30.0, 44.9, 136.0, 170.0})
            for (const bool inside : {false, true}) {
                // inside: the input and output are views at odd offsets of larger images.
                auto big_in = random_image<T>(rng, w + spare, h + 2, 50, false);
                const host_view<const T> img =
                    inside ? big_in.view().subview(3, 1, w, h) : big_in.view().subview(0, 0, w, h);
                const std::int64_t longest = std::min<std::int64_t>(150, w);
                const std::int64_t length = std::uniform_int_distribution<std::int64_t>(1, longest)(rng);
                for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion})
                    for (const border_mode m : line_modes)
                        expect_automatic_equals_fifo<T>(
                            img, inside, angle, length, kind, m,
                            std::to_string(w) + "x" + std::to_string(h) + " angle " + std::to_string(angle) +
                                " length " + std::to_string(length) + " " + std::string(to_string(kind)) + " " +
                                std::string(to_string(m)) + (inside ? " inside" : ""),
                            spare);
            }
}

// Steep lines stream strips of 256 bytes, which prefetch the rows they read and write their
// result rows past the cache, the lines they share with the next strip completed by it
// (seam_lines: joined in registers by the AVX-512 copy, through memory by the others; uint8 only
// in registers) or stored in parts (uint8 elsewhere, a task's ends, the parallelogram's ends): on
// views into larger images (rows that start off the cache lines, a stride that is not the width),
// the image's last rows included, they equal the per-line fifo path, sums included, and leave
// the pixels outside the output view alone. At 60 degrees the scalar copy runs too (the joins
// through memory, wherever the CPU has AVX-512).
TYPED_TEST(LinesCpu, WideSteepBlocksOnViewsEqualFifo) {
    using T = TypeParam;
    std::mt19937_64 rng(43);
    const std::int64_t w = 1100, h = 2100;
    for (const double angle : {60.0, 90.0, 100.0, 120.0, 135.0, 45.0})
        for (const bool inside : {false, true}) {
            auto big_in = random_image<T>(rng, w + 9, h + 2, 50, false);
            const host_view<const T> img = inside ? big_in.view().subview(3, 1, w, h) : big_in.view().subview(0, 0, w, h);
            // Odd at 45 degrees, whose lines then run down the rows (diagonal_down_rows in lines.cpp).
            const std::int64_t length = std::uniform_int_distribution<std::int64_t>(2, 300)(rng) | (angle == 45.0);
            for (const bool simd : {true, false}) {
                if (!simd && angle != 60.0) continue;
                simd_setting setting(simd);
                for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing})
                    for (const border_mode m : line_modes)
                        expect_automatic_equals_fifo<T>(img, inside, angle, length, kind, m,
                                                        "angle " + std::to_string(angle) + " length " +
                                                            std::to_string(length) + " " +
                                                            std::string(to_string(kind)) + " " +
                                                            std::string(to_string(m)) + (inside ? " inside" : "") +
                                                            (simd ? " simd" : " scalar"));
            }
        }
}

// With reductions over angles, flat angles run on the transposed image: transposes of whole
// 512-byte blocks, of 64-byte tiles and of single pixels at the right and bottom, both ways.
// Every output equals the per-line fifo path.
TYPED_TEST(LinesCpu, ReductionsOnLargeImagesEqualFifo) {
    using T = TypeParam;
    std::mt19937_64 rng(37);
    const std::int64_t w = 1100, h = 530;
    const auto img = random_image<T>(rng, w, h, 60, false);
    const double angles[] = {30.0, 150.0, 60.0};
    for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing}) {
        std::vector<host_image<T>> extrema, filtered;
        filtered.reserve(6);
        std::vector<host_image<std::int32_t>> orientations;
        std::vector<std::vector<double>> spectra;
        for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo}) {
            extrema.emplace_back(w, h);
            orientations.emplace_back(w, h);
            spectra.emplace_back(3);
            std::vector<host_view<T>> views;
            for (int i = 0; i < 3; ++i) views.push_back(filtered.emplace_back(w, h).view());
            host_line_outputs<T> out;
            out.extremum = extrema.back().view();
            out.orientation = orientations.back().view();
            out.filtered = views;
            out.spectrum = spectra.back();
            line_filter_angles<T>(img.view(), angles, {37, kind, {}, algorithm}, out);
        }
        const std::string what(to_string(kind));
        ASSERT_TRUE(equal_images<T>(extrema[0].view(), extrema[1].view())) << what;
        ASSERT_TRUE(equal_images<std::int32_t>(orientations[0].view(), orientations[1].view())) << what;
        for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(equal_images<T>(filtered[i].view(), filtered[3 + i].view())) << what << " angle " << angles[i];
            EXPECT_NEAR(spectra[0][i], spectra[1][i], 1e-9 * std::abs(spectra[1][i])) << what;
        }
    }
}

// The reductions over `angles` (extremum, orientation; the sums too when with_sums) by
// params.algorithm.
template <class T>
struct reductions {
    host_image<T> extremum;
    host_image<std::int32_t> orientation;
    std::vector<double> spectrum;
};
template <class T>
reductions<T> reductions_of(host_view<const T> img, std::span<const double> angles, const line_params& params,
                            bool with_sums, angle_reduction reduction = angle_reduction::automatic) {
    reductions<T> r{host_image<T>(img.width(), img.height()), host_image<std::int32_t>(img.width(), img.height()), {}};
    host_line_outputs<T> out;
    out.extremum = r.extremum.view();
    out.orientation = r.orientation.view();
    out.reduction = reduction;
    if (with_sums) {
        r.spectrum.assign(angles.size(), 0.0);
        out.spectrum = r.spectrum;
    }
    line_filter_angles<T>(img, angles, params, out);
    return r;
}

// The work is split into tasks by the thread count; single filters (flat and steep), the
// reductions over angles and their sums come out bit for bit the same on one, two and three
// threads. float32 pixels with fractions, so that a sum added up in another order would round
// differently.
TEST(LinesCpuThreads, ResultsAndSumsIndependentOfThreadCount) {
    std::mt19937_64 rng(59);
    std::uniform_real_distribution<float> value(0.0f, 1.0f);
    const std::int64_t w = 900, h = 700;  // over parallel_min_pixels
    host_image<float> img(w, h);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = value(rng);
    const double angles[] = {30.0, 60.0, 100.0};
    const auto run = [&](int threads) {
        const scoped_threads scope(threads);
        std::vector<host_image<float>> singles;
        for (const double angle : angles) {
            singles.emplace_back(w, h);
            line_filter<float>(img.view(), singles.back().view(), angle, {41, line_filter_kind::opening});
        }
        return std::pair{std::move(singles), reductions_of<float>(img.view(), angles, {41}, true)};
    };
    const auto [one_singles, one] = run(1);
    for (const int threads : {2, 3}) {
        const auto [singles, r] = run(threads);
        for (std::size_t i = 0; i < std::size(angles); ++i)
            EXPECT_TRUE(equal_images<float>(singles[i].view(), one_singles[i].view()))
                << threads << " threads, angle " << angles[i];
        EXPECT_TRUE(equal_images<float>(r.extremum.view(), one.extremum.view())) << threads << " threads";
        EXPECT_TRUE(equal_images<std::int32_t>(r.orientation.view(), one.orientation.view())) << threads << " threads";
        ASSERT_EQ(r.spectrum.size(), std::size(angles));
        for (std::size_t i = 0; i < std::size(angles); ++i)
            EXPECT_EQ(r.spectrum[i], one.spectrum[i]) << threads << " threads, angle " << angles[i];
    }
}

// uint8 reductions hold 256 angles: more run in groups (lines_cpu.cpp). A repeated angle on
// either side of the groups' boundary (sorted positions 255 and 256) ties, and the first copy
// must win; the orientation alone (no extremum asked for) must come out the same. Both
// extrema over the angles.
TEST(LinesCpuGroups, ManyAnglesEqualFifo) {
    std::mt19937_64 rng(43);
    const std::int64_t w = 61, h = 47;
    const auto img = random_image<std::uint8_t>(rng, w, h, 6, false);
    std::vector<double> angles = evenly_spaced_angles(300);
    angles.push_back(angles[255]);
    for (const auto reduction : {angle_reduction::supremum, angle_reduction::infimum})
    for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing}) {
        const auto automatic = reductions_of<std::uint8_t>(img.view(), angles, {9, kind}, true, reduction);
        const auto fifo =
            reductions_of<std::uint8_t>(img.view(), angles, {9, kind, {}, line_algorithm::fifo}, true, reduction);
        host_image<std::int32_t> orientation(w, h);
        host_line_outputs<std::uint8_t> orientation_only;
        orientation_only.orientation = orientation.view();
        orientation_only.reduction = reduction;
        line_filter_angles<std::uint8_t>(img.view(), angles, {9, kind}, orientation_only);
        const std::string what = std::string(to_string(kind)) + ", " + std::string(to_string(reduction));
        ASSERT_TRUE(equal_images<std::uint8_t>(automatic.extremum.view(), fifo.extremum.view())) << what;
        ASSERT_TRUE(equal_images<std::int32_t>(automatic.orientation.view(), fifo.orientation.view())) << what;
        ASSERT_TRUE(equal_images<std::int32_t>(orientation.view(), fifo.orientation.view())) << what;
        EXPECT_EQ(automatic.spectrum, fifo.spectrum) << what;
    }
}

// On the axes and diagonals the scan lines are the footprint lines: opening() by line(L, angle)
// gives the same image. The scan-line paths are reached through line_filter_angles (line_filter
// hands these angles to morphology() under the automatic algorithm, which takes the diagonals
// down the rows itself, lines/diagonal_line_plan.hpp).
TYPED_TEST(LinesCpu, AxesAndDiagonalsEqualFootprintMode) {
    using T = TypeParam;
    std::mt19937_64 rng(7);
    const auto img = random_image<T>(rng, 53, 41, 50, false);
    for (const double angle : {0.0, 45.0, 90.0, 135.0, -45.0, 180.0})
        for (const std::int64_t length : {1, 2, 7, 30})
            for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing}) {
                host_image<T> want(53, 41);
                morphology<T>(kind == line_filter_kind::opening ? morphology_op::opening : morphology_op::closing,
                              img.view(), want.view(), structuring_element::line(length, angle));
                for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack}) {
                    host_image<T> got(53, 41);
                    const host_view<T> filtered[] = {got.view()};
                    host_line_outputs<T> out;
                    out.filtered = filtered;
                    const double angles[] = {angle};
                    line_filter_angles<T>(img.view(), angles, {length, kind, {}, algorithm}, out);
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << angle << " " << length << " " << to_string(algorithm);
                }
            }
}

// The reductions over angles equal what the single-angle results give: the extremum (Eq. 3's,
// the supremum or the infimum), the first angle (by value) attaining it, and the sum per angle.
// Every kind, the vectorised and the per-line paths, unsorted and repeated angles, float NaN.
TYPED_TEST(LinesCpu, ReductionsOverAnglesMatchSingleAngles) {
    using T = TypeParam;
    std::mt19937_64 rng(11);
    const std::int64_t w = 45, h = 38;
    const auto img = random_image<T>(rng, w, h, 4, std::is_floating_point_v<T>);
    const std::vector<double> angles = {100.0, 10.0, 170.0, 45.0, 10.0, 0.0, 133.3, 62.0};
    for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion,
                            line_filter_kind::dilation}) {
        const bool closing = kind == line_filter_kind::closing, opening = kind == line_filter_kind::opening;
        std::vector<host_image<T>> singles;
        for (const double a : angles)
            singles.push_back(opening || closing
                                  ? reference::scanline_opening_or_closing<T>(img.view(), 9, a, {}, closing)
                                  : reference::scanline_erosion_or_dilation<T>(img.view(), 9, a, {},
                                                                               kind == line_filter_kind::dilation));
        for (const auto algorithm : {line_algorithm::automatic, line_algorithm::fifo})
            for (const auto reduction :
                 {angle_reduction::automatic, angle_reduction::supremum, angle_reduction::infimum}) {
                const std::string what = std::string(to_string(kind)) + ", " + std::string(to_string(algorithm)) +
                                         ", " + std::string(to_string(reduction));
                host_line_results<T> got(w, h, angles.size(), true);
                line_filter_angles<T>(img.view(), angles, {9, kind, {}, algorithm}, got.outputs(reduction));
                // "Better" for the reduction: larger for the supremum (Eq. 3's for openings and
                // erosions), smaller for the infimum; NaN best.
                const bool largest = reduction == angle_reduction::supremum ||
                                     (reduction == angle_reduction::automatic &&
                                      (opening || kind == line_filter_kind::erosion));
                const auto better = [&](T a, T b) {
                    if (b != b) return false;
                    if (a != a) return true;
                    return largest ? a > b : a < b;
                };
                for (std::size_t i = 0; i < angles.size(); ++i) {
                    ASSERT_TRUE(equal_images<T>(got.filtered[i].view(), singles[i].view()))
                        << what << ", angle " << angles[i];
                    double sum = 0;
                    for (std::int64_t y = 0; y < h; ++y)
                        for (std::int64_t x = 0; x < w; ++x) sum += static_cast<double>(singles[i].view()(y, x));
                    if (std::isnan(sum)) {
                        EXPECT_TRUE(std::isnan(got.spectrum[i])) << what;
                    } else {
                        EXPECT_NEAR(got.spectrum[i], sum, 1e-9 * std::abs(sum)) << what << ", angle " << angles[i];
                    }
                }
                for (std::int64_t y = 0; y < h; ++y)
                    for (std::int64_t x = 0; x < w; ++x) {
                        std::size_t best = 0;
                        for (std::size_t i = 1; i < angles.size(); ++i) {
                            const T v = singles[i].view()(y, x), b = singles[best].view()(y, x);
                            if (better(v, b) || (!better(b, v) && same_pixel(v, b) && angles[i] < angles[best]))
                                best = i;
                        }
                        ASSERT_TRUE(same_pixel(got.extremum.view()(y, x), singles[best].view()(y, x)))
                            << what << " at " << y << "," << x;
                        ASSERT_EQ(got.orientation.view()(y, x), static_cast<std::int32_t>(best))
                            << what << " at " << y << "," << x;
                    }
            }
    }
}

// Openings are anti-extensive and idempotent, closings extensive and idempotent (border
// ignore), and the two are dual under negation of the pixel order.
TYPED_TEST(LinesCpu, OpeningAndClosingProperties) {
    using T = TypeParam;
    std::mt19937_64 rng(3);
    const auto img = random_image<T>(rng, 61, 47, 30, false);
    for (const double angle : {13.0, 71.5, 118.0}) {
        host_image<T> open(61, 47), open2(61, 47), close(61, 47), close2(61, 47);
        line_filter<T>(img.view(), open.view(), angle, {11, line_filter_kind::opening});
        line_filter<T>(open.view(), open2.view(), angle, {11, line_filter_kind::opening});
        line_filter<T>(img.view(), close.view(), angle, {11, line_filter_kind::closing});
        line_filter<T>(close.view(), close2.view(), angle, {11, line_filter_kind::closing});
        EXPECT_TRUE(equal_images<T>(open.view(), open2.view()));
        EXPECT_TRUE(equal_images<T>(close.view(), close2.view()));
        for (std::int64_t y = 0; y < 47; ++y)
            for (std::int64_t x = 0; x < 61; ++x) {
                ASSERT_LE(open.view()(y, x), img.view()(y, x));
                ASSERT_GE(close.view()(y, x), img.view()(y, x));
            }
    }
}

// Real images of every type (the page, coins in uint16, the page in float32), 64 random angles
// and lengths each, against the reference.
template <class T>
void check_real_image(const std::string& file, std::uint64_t seed) {
    const auto image = io::read_image(std::string(GRANULA_DATA_DIR) + "/" + file);
    const host_view<const T> full = image.as<T>();
    const host_view<const T> img = full.subview(100, 40, 120, 70);  // the reference is slow
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> any_angle(0.0, 180.0);
    for (int trial = 0; trial < 64; ++trial) {
        const double angle = any_angle(rng);
        const std::int64_t length = std::uniform_int_distribution<std::int64_t>(2, 60)(rng);
        const auto kind = trial % 2 ? line_filter_kind::closing : line_filter_kind::opening;
        host_image<T> got(img.width(), img.height());
        line_filter<T>(img, got.view(), angle, {length, kind});
        const auto want =
            reference::scanline_opening_or_closing<T>(img, length, angle, {}, kind == line_filter_kind::closing);
        ASSERT_TRUE(equal_images<T>(got.view(), want.view())) << file << " " << angle << " " << length;
    }
}

TEST(LinesCpuRealImage, PageCoinsAndFloatPageEqualReference) {
    check_real_image<std::uint8_t>("page.png", 5);
    check_real_image<std::uint16_t>("coins16.png", 6);
    check_real_image<float>("page_float32.npy", 7);
}

// The reductions over `angles` (extremum, orientation) of the automatic path equal the per-line
// fifo path's; where sums_are_nan, both paths' sums are also taken, and must all be NaN.
::testing::AssertionResult reductions_equal_fifo(host_view<const float> img, std::span<const double> angles,
                                                 const line_params& params, bool sums_are_nan) {
    line_params p = params;
    p.algorithm = line_algorithm::automatic;
    const auto automatic = reductions_of<float>(img, angles, p, sums_are_nan);
    p.algorithm = line_algorithm::fifo;
    const auto fifo = reductions_of<float>(img, angles, p, sums_are_nan);
    if (auto r = equal_images<float>(automatic.extremum.view(), fifo.extremum.view()); !r) return r << " (extremum)";
    if (auto r = equal_images<std::int32_t>(automatic.orientation.view(), fifo.orientation.view()); !r)
        return r << " (orientation)";
    for (std::size_t i = 0; sums_are_nan && i < angles.size(); ++i)
        if (!std::isnan(automatic.spectrum[i]) || !std::isnan(fifo.spectrum[i]))
            return ::testing::AssertionFailure() << "sum " << i << ": " << automatic.spectrum[i] << " and "
                                                 << fifo.spectrum[i];
    return ::testing::AssertionSuccess();
}

// The vectorised path applies the NaN rule inside its two stages (NaN the lowest key in the
// first, the highest in the second). Wherever one NaN lies in a large image (the first rows,
// the last, between; lines through them run long) and whatever its sign and payload, single
// openings and closings at a flat and a steep angle (lanes on the image through tiles, and on it
// directly) and the reductions over both (flat lanes on the transposed image) equal the per-line
// fifo path, on two threads. An infinity gives equal results too.
TEST(LinesCpuNan, OneNanAnywhereInALargeImageEqualsFifo) {
    const scoped_threads threads(2);
    std::mt19937_64 rng(53);
    const std::int64_t w = 700, h = 400;
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::signaling_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
    const std::pair<std::int64_t, std::int64_t> places[] = {{0, 350}, {h - 1, 349}, {203, 350}};  // (row, column)
    const double angles[] = {30.0, 60.0};
    for (const float special : specials)
        for (const auto& [y, x] : places) {
            auto img = random_image<float>(rng, w, h, 50, false);
            img.view()(y, x) = special;
            const std::string what = std::to_string(special) + " at row " + std::to_string(y) + ", column " +
                                     std::to_string(x);
            for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing}) {
                for (const double angle : angles) {
                    host_image<float> automatic(w, h), fifo(w, h);
                    line_filter<float>(img.view(), automatic.view(), angle, {41, kind, {}, line_algorithm::automatic});
                    line_filter<float>(img.view(), fifo.view(), angle, {41, kind, {}, line_algorithm::fifo});
                    EXPECT_EQ(std::isnan(special), std::isnan(automatic.view()(y, x))) << what;
                    ASSERT_TRUE(equal_images<float>(automatic.view(), fifo.view()))
                        << what << " angle " << angle << " " << to_string(kind);
                }
                ASSERT_TRUE(reductions_equal_fifo(img.view(), angles, {41, kind}, false)) << what;
            }
        }
}

// Many NaN (5% of the pixels) in a large image: every kind of single filter at a flat and a
// steep angle, both borders, and the reductions and sums over both angles equal the per-line
// fifo path.
TEST(LinesCpuNan, ManyNanEqualFifo) {
    std::mt19937_64 rng(59);
    const std::int64_t w = 900, h = 500;
    auto img = random_image<float>(rng, w, h, 50, false);
    std::bernoulli_distribution nan(0.05);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x)
            if (nan(rng)) img.view()(y, x) = std::numeric_limits<float>::quiet_NaN();
    for (const double angle : {20.0, 75.0})
        for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing, line_filter_kind::erosion,
                                line_filter_kind::dilation})
            for (const border_mode m : line_modes) {
                host_image<float> automatic(w, h), fifo(w, h);
                line_filter<float>(img.view(), automatic.view(), angle, {9, kind, {m, 2.5}, line_algorithm::automatic});
                line_filter<float>(img.view(), fifo.view(), angle, {9, kind, {m, 2.5}, line_algorithm::fifo});
                ASSERT_TRUE(equal_images<float>(automatic.view(), fifo.view()))
                    << "angle " << angle << " " << to_string(kind) << " " << to_string(m);
            }
    const double angles[] = {20.0, 75.0};
    for (const auto kind : {line_filter_kind::opening, line_filter_kind::closing})
        for (const border_mode m : line_modes)
            ASSERT_TRUE(reductions_equal_fifo(img.view(), angles, {9, kind, {m, 2.5}}, true))
                << to_string(kind) << " " << to_string(m);
}

TEST(LinesCpuErrors, BadArgumentsAreClearErrors) {
    host_image<std::uint8_t> img(20, 10), out(20, 10), small(5, 5);
    const double one[] = {30.0};
    const auto expect_error = [](auto&& f, const std::string& words) {
        try {
            f();
            ADD_FAILURE() << "no exception; expected one mentioning '" << words << "'";
        } catch (const invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    expect_error([&] { line_filter<std::uint8_t>(img.view(), out.view(), 0, {0}); }, ">= 1");
    expect_error([&] { line_filter<std::uint8_t>(img.view(), out.view(), 90, {11}); }, "does not fit");
    expect_error([&] { line_filter<std::uint8_t>(img.view(), out.view(), 0, {21}); }, "does not fit");
    expect_error([&] { line_filter<std::uint8_t>(img.view(), out.view(), NAN, {3}); }, "finite");
    expect_error([&] { line_filter<std::uint8_t>(img.view(), out.view(), 0, {3, {}, {border_mode::mirror}}); },
                 "allowed: ignore, constant, nearest, reflect");
    expect_error([&] { line_filter<std::uint8_t>(img.view(), small.view(), 0, {3}); }, "must match");
    expect_error([&] { line_filter<std::uint8_t>(img.view(), out.view(), 0, {3, {}, {border_mode::constant, 300}}); },
                 "not representable");
    expect_error([&] { line_filter_angles<std::uint8_t>(img.view(), std::span<const double>{}, {3}, {}); }, "empty");
    std::vector<double> short_spectrum(2);
    host_line_outputs<std::uint8_t> bad;
    bad.spectrum = short_spectrum;
    expect_error([&] { line_filter_angles<std::uint8_t>(img.view(), one, {3}, bad); }, "must match");
    host_line_outputs<std::uint8_t> aliased;
    aliased.extremum = img.view();
    expect_error([&] { line_filter_angles<std::uint8_t>(img.view(), one, {3}, aliased); }, "overlaps");
    host_image<std::uint8_t> empty(0, 0);
    expect_error([&] { line_filter<std::uint8_t>(empty.view(), empty.view(), 0, {1}); }, "empty");
    expect_error([] { angle_range(-10, 10, 0); }, "step");
    expect_error([] { angle_range(10, -10, 1); }, "empty");
    expect_error([] { evenly_spaced_angles(0); }, "number of angles");
    expect_error([] { evenly_spaced_angles(max_line_angles + 1); }, "must be in 1..1000000");
    expect_error([] { angle_range(-10, 10, 1e-9); }, "more than 1000000 angles");
    const std::vector<double> too_many_angles(static_cast<std::size_t>(max_line_angles + 1), 0.0);
    expect_error([&] { line_filter_angles<std::uint8_t>(img.view(), too_many_angles, {3}, {}); }, "too many");
    const std::vector<std::int64_t> too_many_lengths(static_cast<std::size_t>(max_line_angles + 1), 3);
    expect_error([&] { line_granulometry<std::uint8_t>(img.view(), too_many_lengths, one, {}); }, "too many");
    expect_error([] { parse_line_algorithm("quick"); }, "allowed: auto, fifo, stack");
    expect_error([] { parse_line_filter_kind("tophat"); }, "allowed: opening, closing, erosion, dilation");
    expect_error([] { parse_angle_reduction("median"); }, "allowed: auto, max, min");
    host_image<std::uint8_t> extremum(img.width(), img.height());
    host_line_outputs<std::uint8_t> bad_reduction;
    bad_reduction.extremum = extremum.view();
    bad_reduction.reduction = static_cast<angle_reduction>(7);
    expect_error([&] { line_filter_angles<std::uint8_t>(img.view(), one, {3}, bad_reduction); }, "reduction");
    expect_error([&] { line_granulometry<std::uint8_t>(img.view(), std::span<const std::int64_t>{}, one, {}); },
                 "lengths is empty");
}

TEST(LinesCpuAngles, RangesAndEvenSpacing) {
    EXPECT_EQ(evenly_spaced_angles(4), (std::vector<double>{0, 45, 90, 135}));
    const auto r = angle_range(-10, 10, 0.1);
    ASSERT_EQ(r.size(), 201u);
    EXPECT_DOUBLE_EQ(r.front(), -10);
    EXPECT_NEAR(r.back(), 10, 1e-9);
}

// The granulometry's sums are those of the extremum images, and decrease with the length.
TEST(LinesCpuGranulometry, SumsOfExtremaDecreaseWithLength) {
    std::mt19937_64 rng(9);
    const auto img = random_image<std::uint8_t>(rng, 64, 48, 200, false);
    const std::vector<std::int64_t> lengths = {1, 3, 9, 27};
    const auto angles = evenly_spaced_angles(8);
    const auto sums = line_granulometry<std::uint8_t>(img.view(), lengths, angles, {});
    ASSERT_EQ(sums.size(), lengths.size());
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        host_image<std::uint8_t> extremum(64, 48);
        host_line_outputs<std::uint8_t> out;
        out.extremum = extremum.view();
        line_filter_angles<std::uint8_t>(img.view(), angles, {lengths[i]}, out);
        double sum = 0;
        for (std::int64_t y = 0; y < 48; ++y)
            for (std::int64_t x = 0; x < 64; ++x) sum += extremum.view()(y, x);
        EXPECT_EQ(sums[i], sum);
        if (i > 0) {
            EXPECT_LE(sums[i], sums[i - 1]);
        }
    }
    double original = 0;
    for (std::int64_t y = 0; y < 48; ++y)
        for (std::int64_t x = 0; x < 64; ++x) original += img.view()(y, x);
    EXPECT_EQ(sums[0], original);  // length 1 leaves the image unchanged
}

}  // namespace
}  // namespace granula
