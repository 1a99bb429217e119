// Differential tests of the CPU labelling against the BFS reference (tests/reference): labels
// bit for bit and statistics, over YACCLAB-style random images, structured images, every input
// type, both connectivities, a non-zero background, strided sub-views, 1 and several threads;
// and every documented error.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "labeling/labeling_cases.hpp"
#include "reference/labeling_reference.hpp"

namespace granula {
namespace {

using namespace granula::test_support;

// Labels `in` on the CPU and compares labels, count and statistics with the reference; int64
// labels (the path of images over 2^31 pixels, 64-bit provisional labels) must equal them.
template <class T>
void expect_reference(host_view<const T> in, int connectivity, T background, const std::string& what) {
    SCOPED_TRACE(what + " " + std::to_string(in.width()) + "x" + std::to_string(in.height()) + " connectivity " +
                 std::to_string(connectivity));
    const auto [expected, expected_count] = reference::label<T>(in, connectivity, background);
    // The output is a strided view with sentinel padding, so stray writes show.
    host_image<std::int32_t> buffer(in.width() + 3, in.height());
    fill<std::int32_t>(buffer.view(), -7);
    host_view<std::int32_t> out = buffer.view().subview(1, 0, in.width(), in.height());
    region_statistics stats;
    const std::int64_t count = label<T>(in, out, connectivity, background, &stats);
    ASSERT_EQ(count, expected_count);
    for (std::int64_t y = 0; y < in.height(); ++y) {
        ASSERT_EQ(buffer.view()(y, 0), -7) << "row " << y;
        for (std::int64_t x = 0; x < in.width(); ++x)
            ASSERT_EQ(out(y, x), expected[y * in.width() + x]) << "at (" << y << ", " << x << ")";
        ASSERT_EQ(buffer.view()(y, in.width() + 1), -7) << "row " << y;
    }
    const reference::statistics r = reference::region_statistics<T>(in, expected, expected_count);
    ASSERT_EQ(stats.size(), count);
    for (std::int64_t c = 0; c < count; ++c) {
        ASSERT_EQ(stats.area[c], r.area[c]) << "component " << c + 1;
        ASSERT_EQ(stats.min_row[c], r.min_row[c]) << "component " << c + 1;
        ASSERT_EQ(stats.min_col[c], r.min_col[c]) << "component " << c + 1;
        ASSERT_EQ(stats.max_row[c], r.max_row[c]) << "component " << c + 1;
        ASSERT_EQ(stats.max_col[c], r.max_col[c]) << "component " << c + 1;
        ASSERT_EQ(stats.value[c], r.value[c]) << "component " << c + 1;
        ASSERT_NEAR(stats.centroid_row[c], r.sum_row[c] / r.area[c], 1e-9) << "component " << c + 1;
        ASSERT_NEAR(stats.centroid_col[c], r.sum_col[c] / r.area[c], 1e-9) << "component " << c + 1;
    }
    host_image<std::int64_t> wide(in.width(), in.height());
    region_statistics wide_stats;
    ASSERT_EQ(label<T>(in, wide.view(), connectivity, background, &wide_stats), count);
    for (std::int64_t y = 0; y < in.height(); ++y)
        for (std::int64_t x = 0; x < in.width(); ++x)
            ASSERT_EQ(wide.view()(y, x), expected[y * in.width() + x]) << "int64 at (" << y << ", " << x << ")";
    expect_same_statistics(wide_stats, stats);
}

class thread_counts : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override { set_num_threads(GetParam()); }
    void TearDown() override { set_num_threads(0); }
};

TEST_P(thread_counts, RandomBinaryEveryDensityAndGranularity) {
    const std::uint64_t seed = 6001;
    std::mt19937_64 rng(seed);
    for (double density : {0.1, 0.3, 0.5, 0.7, 0.9})
        for (int granularity : {1, 2, 4, 16})
            for (int connectivity : {1, 2}) {
                const auto img = random_blocks<std::uint8_t>(rng, 97, 61, density, granularity);
                std::ostringstream what;
                what << "seed " << seed << " density " << density << " granularity " << granularity;
                expect_reference<std::uint8_t>(img.view(), connectivity, 0, what.str());
            }
}

TEST_P(thread_counts, LargeImagesRunInStrips) {
    // Over parallel_min_pixels, so several threads cut the image into strips with seams.
    const std::uint64_t seed = 6002;
    std::mt19937_64 rng(seed);
    for (int connectivity : {1, 2}) {
        const auto binary = random_blocks<std::uint8_t>(rng, 611, 523, 0.55, 1);
        expect_reference<std::uint8_t>(binary.view(), connectivity, 0, "seed 6002 binary");
        const auto grains = random_blocks<std::uint16_t>(rng, 599, 541, 0.6, 3, 4);
        expect_reference<std::uint16_t>(grains.view(), connectivity, 0, "seed 6002 multi-valued");
    }
    const auto ones = random_blocks<std::uint8_t>(rng, 700, 400, 1.0, 1);
    expect_reference<std::uint8_t>(ones.view(), 2, 0, "all ones");
    expect_reference<std::uint8_t>(rings<std::uint8_t>(641, 509).view(), 1, 0, "rings");
}

// A bit image labelled without unpacking equals label() of its 0/1 image: labels, count and
// statistics, at widths around the 64-bit word, on views of wider images whose bits past the
// view's width are set, and in strips (the larger image).
TEST_P(thread_counts, BitImagesEqualTheirUnpackedImage) {
    std::mt19937_64 rng(6003);
    for (const auto& [w, h] : {std::pair<std::int64_t, std::int64_t>{1, 9}, {63, 17}, {64, 20}, {65, 33}, {200, 41},
                               {611, 523}})
        for (double density : {0.1, 0.5, 0.9})
            for (int connectivity : {1, 2}) {
                const auto img = random_blocks<std::uint8_t>(rng, w, h, density, w > 300 ? 1 : 2);
                host_bit_image wide(w + 64, h);
                for (std::int64_t y = 0; y < h; ++y)
                    for (std::int64_t x = 0; x < w + 64; ++x) wide.view().set(y, x, x >= w || img.view()(y, x) != 0);
                const const_host_bit_view bits = static_cast<const host_bit_image&>(wide).view().subview(0, 0, w, h);
                host_image<std::int32_t> want(w, h), got(w, h);
                region_statistics want_stats, got_stats;
                const std::int64_t want_count = label<std::uint8_t>(img.view(), want.view(), connectivity, 0, &want_stats);
                const std::int64_t got_count = label(bits, got.view(), connectivity, &got_stats);
                const std::string what = std::to_string(w) + "x" + std::to_string(h) + " density " +
                                         std::to_string(density) + " connectivity " + std::to_string(connectivity);
                ASSERT_EQ(got_count, want_count) << what;
                for (std::int64_t y = 0; y < h; ++y)
                    for (std::int64_t x = 0; x < w; ++x) ASSERT_EQ(got.view()(y, x), want.view()(y, x)) << what;
                ASSERT_EQ(got_stats.area, want_stats.area) << what;
                ASSERT_EQ(got_stats.min_col, want_stats.min_col) << what;
                ASSERT_EQ(got_stats.max_col, want_stats.max_col) << what;
                ASSERT_EQ(got_stats.min_row, want_stats.min_row) << what;
                ASSERT_EQ(got_stats.centroid_col, want_stats.centroid_col) << what;
                ASSERT_EQ(got_stats.value, std::vector<std::uint32_t>(static_cast<std::size_t>(got_count), 1u)) << what;
                host_image<std::int64_t> wide_labels(w, h);
                region_statistics wide_stats;
                ASSERT_EQ(label(bits, wide_labels.view(), connectivity, &wide_stats), want_count) << what;
                for (std::int64_t y = 0; y < h; ++y)
                    for (std::int64_t x = 0; x < w; ++x)
                        ASSERT_EQ(wide_labels.view()(y, x), want.view()(y, x)) << what;
                expect_same_statistics(wide_stats, want_stats);
            }
}

INSTANTIATE_TEST_SUITE_P(Labeling, thread_counts, ::testing::Values(1, 2, 5));

TEST(Labeling, EdgeSizes) {
    std::mt19937_64 rng(6003);
    const std::int64_t sizes[][2] = {{1, 1}, {1, 37}, {37, 1}, {2, 2}, {3, 5}, {33, 17}, {64, 64}, {65, 3}, {1, 1000},
                                     {1000, 1}};
    for (const auto& s : sizes)
        for (int connectivity : {1, 2})
            for (double density : {0.0, 0.5, 1.0}) {
                const auto img = random_blocks<std::uint8_t>(rng, s[0], s[1], density, 1);
                expect_reference<std::uint8_t>(img.view(), connectivity, 0, "seed 6003 edge size");
            }
}

TEST(Labeling, StructuredImages) {
    for (int connectivity : {1, 2}) {
        expect_reference<std::uint8_t>(chessboard<std::uint8_t>(31, 29, 1).view(), connectivity, 0, "chessboard 1");
        expect_reference<std::uint8_t>(chessboard<std::uint8_t>(45, 39, 3).view(), connectivity, 0, "chessboard 3");
        expect_reference<std::uint8_t>(rings<std::uint8_t>(53, 47).view(), connectivity, 0, "rings");
        expect_reference<std::uint8_t>(rings<std::uint8_t>(1, 9).view(), connectivity, 0, "rings 1 wide");
    }
}

TEST(Labeling, EqualValueEveryType) {
    std::mt19937_64 rng(6004);
    for (int connectivity : {1, 2})
        for (int granularity : {1, 2, 5}) {
            const auto a = random_blocks<std::uint8_t>(rng, 83, 71, 0.8, granularity, 3);
            expect_reference<std::uint8_t>(a.view(), connectivity, 0, "seed 6004 uint8 3 levels");
            const auto b = random_blocks<std::uint16_t>(rng, 71, 83, 0.9, granularity, 1000);
            expect_reference<std::uint16_t>(b.view(), connectivity, 0, "seed 6004 uint16 1000 levels");
            auto c = random_blocks<std::uint32_t>(rng, 67, 59, 0.7, granularity, 2);
            // Values above 2^16 tell a uint32 path from a narrower one.
            for (std::int64_t y = 0; y < c.height(); ++y)
                for (std::int64_t x = 0; x < c.width(); ++x)
                    if (c.view()(y, x) == 2) c.view()(y, x) = 0x10002u;
            expect_reference<std::uint32_t>(c.view(), connectivity, 0, "seed 6004 uint32");
        }
}

// 8-bit rows are cut into runs 64 pixels at a time: widths around that chunk, runs of several
// values meeting at chunk edges, a non-zero background.
TEST(Labeling, EightBitRowsAroundChunkWidths) {
    std::mt19937_64 rng(6007);
    for (std::int64_t w : {63, 64, 65, 127, 128, 129, 200})
        for (int granularity : {1, 3})
            for (int connectivity : {1, 2}) {
                const auto img = random_blocks<std::uint8_t>(rng, w, 23, 0.8, granularity, 3);
                const std::string what = "seed 6007 width " + std::to_string(w);
                expect_reference<std::uint8_t>(img.view(), connectivity, 0, what);
                expect_reference<std::uint8_t>(img.view(), connectivity, 1, what + " background 1");
            }
}

TEST(Labeling, NonZeroBackground) {
    std::mt19937_64 rng(6005);
    for (int connectivity : {1, 2}) {
        const auto img = random_blocks<std::uint8_t>(rng, 57, 43, 0.7, 2, 3);
        // Background 2: pixels of value 0 are foreground and connect to each other.
        expect_reference<std::uint8_t>(img.view(), connectivity, 2, "seed 6005 background 2");
    }
}

TEST(Labeling, StridedSubViews) {
    std::mt19937_64 rng(6006);
    const auto big = random_blocks<std::uint16_t>(rng, 120, 90, 0.5, 2, 2);
    std::uniform_int_distribution<int> off(0, 20);
    for (int i = 0; i < 10; ++i) {
        const std::int64_t x = off(rng), y = off(rng), w = 1 + off(rng) * 4, h = 1 + off(rng) * 3;
        const host_view<const std::uint16_t> v = big.view().subview(x, y, w, h);
        expect_reference<std::uint16_t>(v, 1 + i % 2, 0, "seed 6006 sub-view " + std::to_string(i));
    }
}

TEST(Labeling, LabelsAreStableUnderTransposition) {
    // Transposing keeps the components (the partition), though not their numbers.
    std::mt19937_64 rng(6007);
    const auto img = random_blocks<std::uint8_t>(rng, 73, 41, 0.5, 1);
    host_image<std::uint8_t> t(41, 73);
    for (std::int64_t y = 0; y < 41; ++y)
        for (std::int64_t x = 0; x < 73; ++x) t.view()(x, y) = img.view()(y, x);
    host_image<std::int32_t> a(73, 41), b(41, 73);
    const std::int64_t na = label<std::uint8_t>(img.view(), a.view(), 2);
    const std::int64_t nb = label<std::uint8_t>(t.view(), b.view(), 2);
    ASSERT_EQ(na, nb);
    std::vector<std::int32_t> map(static_cast<std::size_t>(na + 1), -1);
    for (std::int64_t y = 0; y < 41; ++y)
        for (std::int64_t x = 0; x < 73; ++x) {
            const std::int32_t la = a.view()(y, x), lb = b.view()(x, y);
            if (map[la] < 0) map[la] = lb;
            ASSERT_EQ(map[la], lb);
        }
}

TEST(Labeling, IntensityStatistics) {
    std::mt19937_64 rng(6008);
    const auto img = random_blocks<std::uint8_t>(rng, 47, 39, 0.5, 2);
    host_image<float> intensity(47, 39);
    std::uniform_real_distribution<float> u(-5, 5);
    for (std::int64_t y = 0; y < 39; ++y)
        for (std::int64_t x = 0; x < 47; ++x) intensity.view()(y, x) = u(rng);
    host_image<std::int32_t> labels(47, 39);
    region_statistics stats;
    const std::int64_t n = label<std::uint8_t>(img.view(), labels.view(), 2, 0, &stats);
    intensity_statistics(labels.view(), host_view<const float>(intensity.view()), stats);
    std::vector<double> sum(n, 0), lo(n, 1e9), hi(n, -1e9);
    for (std::int64_t y = 0; y < 39; ++y)
        for (std::int64_t x = 0; x < 47; ++x)
            if (const std::int32_t l = labels.view()(y, x); l > 0) {
                sum[l - 1] += intensity.view()(y, x);
                lo[l - 1] = std::min<double>(lo[l - 1], intensity.view()(y, x));
                hi[l - 1] = std::max<double>(hi[l - 1], intensity.view()(y, x));
            }
    for (std::int64_t c = 0; c < n; ++c) {
        EXPECT_NEAR(stats.mean_intensity[c], sum[c] / stats.area[c], 1e-9);
        EXPECT_EQ(stats.min_intensity[c], lo[c]);
        EXPECT_EQ(stats.max_intensity[c], hi[c]);
    }
    // The same from int64 labels.
    host_image<std::int64_t> wide(47, 39);
    region_statistics wide_stats;
    ASSERT_EQ(label<std::uint8_t>(img.view(), wide.view(), 2, 0, &wide_stats), n);
    intensity_statistics(wide.view(), host_view<const float>(intensity.view()), wide_stats);
    EXPECT_EQ(wide_stats.mean_intensity, stats.mean_intensity);
    EXPECT_EQ(wide_stats.min_intensity, stats.min_intensity);
    EXPECT_EQ(wide_stats.max_intensity, stats.max_intensity);
}

// Runs `call`, which must throw invalid_argument saying `says` (what was wrong or what is allowed).
template <class Call>
void expect_invalid_argument(Call call, const std::string& says) {
    try {
        call();
        ADD_FAILURE() << "no invalid_argument; expected one saying '" << says << "'";
    } catch (const invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
}

TEST(LabelingErrors, BadArguments) {
    host_image<std::uint8_t> img(5, 4);
    fill<std::uint8_t>(img.view(), 1);
    host_image<std::int32_t> out(5, 4), small(4, 4);
    const host_view<const std::uint8_t> in = img.view();
    for (int c : {0, 3, -1, 4})
        expect_invalid_argument([&] { label<std::uint8_t>(in, out.view(), c); },
                                "connectivity " + std::to_string(c) +
                                    " is not allowed; use 1 (4-neighbours) or 2 (8-neighbours)");
    EXPECT_THROW(label<std::uint8_t>(in, small.view(), 2), invalid_argument);
    host_image<std::int64_t> wide(5, 4), wide_small(5, 3);
    EXPECT_THROW(label<std::uint8_t>(in, wide.view(), 3), invalid_argument);
    EXPECT_THROW(label<std::uint8_t>(in, wide_small.view(), 2), invalid_argument);
    // Rows of 2^31 pixels or more: refused before any pixel is read (the views point nowhere).
    const host_view<const std::uint8_t> too_wide(reinterpret_cast<const std::uint8_t*>(64), std::int64_t{1} << 31, 1);
    const host_view<std::int64_t> too_wide_out(reinterpret_cast<std::int64_t*>(std::uintptr_t{1} << 40),
                                               std::int64_t{1} << 31, 1);
    EXPECT_THROW(label<std::uint8_t>(too_wide, too_wide_out, 2), unsupported);
    EXPECT_THROW(label<std::uint8_t>(in, out.view(), 2, 256), invalid_argument);
    expect_invalid_argument([&] { label<std::uint8_t>(in.subview(0, 0, 0, 4), out.view().subview(0, 0, 0, 4), 2); },
                            "the input image is empty (0x4); labelling needs at least 1x1 pixels");
    expect_invalid_argument([&] { label<std::uint8_t>(in.subview(0, 0, 5, 0), out.view().subview(0, 0, 5, 0), 2); },
                            "empty");
    // The tile merge is a GPU method; the CPU says so.
    try {
        label<std::uint8_t>(in, out.view(), 2, 0, nullptr, label_method::tile_merge);
        ADD_FAILURE() << "tile_merge on the CPU did not throw";
    } catch (const invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("GPU method"), std::string::npos) << e.what();
    }
    EXPECT_EQ(label<std::uint8_t>(in, out.view(), 2, 0, nullptr, label_method::automatic), 1);
    host_image<float> f(5, 4);
    expect_invalid_argument([&] { label(any_host_view(host_view<const float>(f.view())), out.view(), 2); },
                            "float32 input cannot be labelled; allowed pixel types: uint8, uint16, uint32");
    // In and out sharing memory.
    host_image<std::uint32_t> shared(5, 4);
    const host_view<std::int32_t> alias(reinterpret_cast<std::int32_t*>(shared.data()), 5, 4);
    EXPECT_THROW(label<std::uint32_t>(shared.view(), alias, 2), invalid_argument);
    // Bit images: the same checks.
    host_bit_image bits(5, 4), no_bits(0, 4);
    EXPECT_THROW(label(bits.view(), small.view(), 2), invalid_argument);
    EXPECT_THROW(label(bits.view(), out.view(), 3), invalid_argument);
    EXPECT_THROW(label(no_bits.view(), out.view().subview(0, 0, 0, 4), 2), invalid_argument);
    host_image<std::int32_t> words(8, 4);  // bits and labels in one buffer
    const const_host_bit_view aliased_bits(reinterpret_cast<const bit_word*>(words.data()), 5, 4, 4);
    EXPECT_THROW(label(aliased_bits, words.view().subview(0, 0, 5, 4), 2), invalid_argument);
    region_statistics stats;
    stats.area = {1};
    host_image<float> wrong(3, 3);
    EXPECT_THROW(intensity_statistics(out.view(), any_host_view(host_view<const float>(wrong.view())), stats),
                 invalid_argument);
}

TEST(LabelingErrors, DeviceWithoutGpu) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; the no-GPU error cannot be shown";
    const device_view<const std::uint8_t> in(reinterpret_cast<const std::uint8_t*>(16), 4, 4);
    const device_view<std::int32_t> out(reinterpret_cast<std::int32_t*>(4096), 4, 4);
    if (cuda_built())
        EXPECT_THROW(label<std::uint8_t>(in, out, 2), cuda_error);
    else
        EXPECT_THROW(label<std::uint8_t>(in, out, 2), unsupported);
}

}  // namespace
}  // namespace granula
