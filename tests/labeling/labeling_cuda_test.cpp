// Differential tests of the CUDA labelling, each GPU method (the default and the seed paper's
// tile merge): bit for bit against the BFS reference and the CPU backend (labels, count,
// statistics), over YACCLAB-style random images, structured images, every input type, both
// connectivities, a non-zero background, sizes that are not multiples of the tile or warp, and
// strided device sub-views. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "labeling/labeling_cases.hpp"
#include "reference/labeling_reference.hpp"
#include "support/require_gpu.hpp"

namespace granula {
namespace {


using namespace granula::test_support;

// Labels `in` on the GPU into a padded device sub-view and compares with the CPU backend
// (itself tested against the reference) and, for small images, with the reference directly.
template <class T>
void expect_same_as_cpu(label_method method, host_view<const T> in, int connectivity, T background,
                        const std::string& what, std::int64_t pad = 0) {
    SCOPED_TRACE(std::string(to_string(method)) + " " + what + " " + std::to_string(in.width()) + "x" +
                 std::to_string(in.height()) + " connectivity " + std::to_string(connectivity) + " pad " +
                 std::to_string(pad));
    host_image<std::int32_t> cpu_labels(in.width(), in.height());
    region_statistics cpu_stats;
    const std::int64_t cpu_count = label<T>(in, cpu_labels.view(), connectivity, background, &cpu_stats);
    if (in.pixel_count() <= 100000) {
        const auto [expected, expected_count] = reference::label<T>(in, connectivity, background);
        ASSERT_EQ(cpu_count, expected_count);
        for (std::int64_t y = 0; y < in.height(); ++y)
            for (std::int64_t x = 0; x < in.width(); ++x)
                ASSERT_EQ(cpu_labels.view()(y, x), expected[y * in.width() + x]);
    }

    // Input and output are sub-views of larger device images: the input's padding holds
    // foreground values that must not leak in, the output's a sentinel that must survive.
    host_image<T> in_padded(in.width() + 2 * pad, in.height() + pad);
    fill<T>(in_padded.view(), T{1});
    copy<T>(in, in_padded.view().subview(pad, pad, in.width(), in.height()));
    const device_image<T> d_in_padded = upload<T>(in_padded.view());
    const device_view<const T> d_in =
        device_view<const T>(d_in_padded.view()).subview(pad, pad, in.width(), in.height());
    host_image<std::int32_t> sentinel(in.width() + pad, in.height() + pad);
    fill<std::int32_t>(sentinel.view(), -5);
    device_image<std::int32_t> d_out_padded = upload<std::int32_t>(sentinel.view());
    const device_view<std::int32_t> d_out = d_out_padded.view().subview(pad, 0, in.width(), in.height());

    // Without statistics, with host statistics, with device statistics downloaded afterwards.
    for (const int stats_kind : {0, 1, 2}) {
        const bool with_stats = stats_kind > 0;
        region_statistics gpu_stats;
        std::int64_t gpu_count = 0;
        if (stats_kind == 2) {
            device_region_statistics on_device;
            gpu_count = label<T>(d_in, d_out, connectivity, background, on_device, {}, method);
            ASSERT_EQ(on_device.size(), gpu_count);
            gpu_stats = on_device.download();
        } else {
            gpu_count = label<T>(d_in, d_out, connectivity, background, with_stats ? &gpu_stats : nullptr, {}, method);
        }
        ASSERT_EQ(gpu_count, cpu_count);
        const host_image<std::int32_t> back = download<std::int32_t>(d_out_padded.view());
        for (std::int64_t y = 0; y < in.height() + pad; ++y)
            for (std::int64_t x = 0; x < in.width() + pad; ++x) {
                const bool inside = x >= pad && y < in.height();
                const std::int32_t expected = inside ? cpu_labels.view()(y, x - pad) : -5;
                ASSERT_EQ(back.view()(y, x), expected) << "at (" << y << ", " << x << ") statistics " << stats_kind;
            }
        if (!with_stats) continue;
        ASSERT_EQ(gpu_stats.size(), cpu_count);
        for (std::int64_t c = 0; c < cpu_count; ++c) {
            ASSERT_EQ(gpu_stats.area[c], cpu_stats.area[c]) << "component " << c + 1;
            ASSERT_EQ(gpu_stats.min_row[c], cpu_stats.min_row[c]) << "component " << c + 1;
            ASSERT_EQ(gpu_stats.min_col[c], cpu_stats.min_col[c]) << "component " << c + 1;
            ASSERT_EQ(gpu_stats.max_row[c], cpu_stats.max_row[c]) << "component " << c + 1;
            ASSERT_EQ(gpu_stats.max_col[c], cpu_stats.max_col[c]) << "component " << c + 1;
            ASSERT_EQ(gpu_stats.value[c], cpu_stats.value[c]) << "component " << c + 1;
            ASSERT_DOUBLE_EQ(gpu_stats.centroid_row[c], cpu_stats.centroid_row[c]) << "component " << c + 1;
            ASSERT_DOUBLE_EQ(gpu_stats.centroid_col[c], cpu_stats.centroid_col[c]) << "component " << c + 1;
        }
    }

    // int64 labels (64-bit indices and forest, as on images over 2^31 pixels) into a padded
    // sub-view, with device statistics: the same labels and statistics.
    host_image<std::int64_t> wide_sentinel(in.width() + pad, in.height() + pad);
    fill<std::int64_t>(wide_sentinel.view(), -5);
    device_image<std::int64_t> d_wide_padded = upload<std::int64_t>(wide_sentinel.view());
    const device_view<std::int64_t> d_wide = d_wide_padded.view().subview(pad, 0, in.width(), in.height());
    device_region_statistics on_device;
    if (method == label_method::tile_merge) {  // int32 element indices only
        EXPECT_THROW(label<T>(d_in, d_wide, connectivity, background, on_device, {}, method), unsupported);
        return;
    }
    ASSERT_EQ(label<T>(d_in, d_wide, connectivity, background, on_device, {}, method), cpu_count);
    const region_statistics wide_stats = on_device.download();
    const host_image<std::int64_t> wide_back = download<std::int64_t>(d_wide_padded.view());
    for (std::int64_t y = 0; y < in.height() + pad; ++y)
        for (std::int64_t x = 0; x < in.width() + pad; ++x) {
            const bool inside = x >= pad && y < in.height();
            ASSERT_EQ(wide_back.view()(y, x), inside ? cpu_labels.view()(y, x - pad) : -5)
                << "int64 at (" << y << ", " << x << ")";
        }
    expect_same_statistics(wide_stats, cpu_stats);
}

// The tests every method passes.
class LabelingCudaMethod : public testing::TestWithParam<label_method> {};

TEST_P(LabelingCudaMethod, RandomBinaryEveryDensityAndGranularity) {
    GRANULA_REQUIRE_GPU();
    const std::uint64_t seed = 6101;
    std::mt19937_64 rng(seed);
    for (double density : {0.1, 0.3, 0.5, 0.7, 0.9})
        for (int granularity : {1, 2, 4, 16})
            for (int connectivity : {1, 2}) {
                const auto img = random_blocks<std::uint8_t>(rng, 197, 131, density, granularity);
                std::ostringstream what;
                what << "seed " << seed << " density " << density << " granularity " << granularity;
                expect_same_as_cpu<std::uint8_t>(GetParam(), img.view(), connectivity, 0, what.str(), 3);
            }
}

TEST_P(LabelingCudaMethod, EdgeSizesAndStructuredImages) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(6102);
    const std::int64_t sizes[][2] = {{1, 1}, {1, 37}, {37, 1}, {31, 15}, {32, 16}, {33, 17}, {257, 3}, {1, 3000},
                                     {3000, 1}, {513, 259},
                                     {127, 31}, {128, 32}, {129, 33}, {385, 97}};
    for (const auto& s : sizes)
        for (int connectivity : {1, 2})
            for (double density : {0.0, 0.5, 1.0}) {
                const auto img = random_blocks<std::uint8_t>(rng, s[0], s[1], density, 1);
                expect_same_as_cpu<std::uint8_t>(GetParam(), img.view(), connectivity, 0, "seed 6102 edge size",
                                                 s[0] % 3);
            }
    for (int connectivity : {1, 2}) {
        expect_same_as_cpu<std::uint8_t>(GetParam(), chessboard<std::uint8_t>(131, 67, 1).view(), connectivity, 0,
                                         "chessboard");
        expect_same_as_cpu<std::uint8_t>(GetParam(), rings<std::uint8_t>(301, 257).view(), connectivity, 0, "rings",
                                         1);
    }
}

TEST_P(LabelingCudaMethod, EqualValueEveryTypeAndBackground) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(6103);
    for (int connectivity : {1, 2})
        for (int granularity : {1, 3}) {
            const auto a = random_blocks<std::uint8_t>(rng, 183, 97, 0.8, granularity, 3);
            expect_same_as_cpu<std::uint8_t>(GetParam(), a.view(), connectivity, 0, "seed 6103 uint8", 2);
            expect_same_as_cpu<std::uint8_t>(GetParam(), a.view(), connectivity, 2, "seed 6103 uint8 background 2", 1);
            const auto b = random_blocks<std::uint16_t>(rng, 97, 183, 0.9, granularity, 1000);
            expect_same_as_cpu<std::uint16_t>(GetParam(), b.view(), connectivity, 0, "seed 6103 uint16", 5);
            auto c = random_blocks<std::uint32_t>(rng, 129, 65, 0.7, granularity, 2);
            for (std::int64_t y = 0; y < c.height(); ++y)
                for (std::int64_t x = 0; x < c.width(); ++x)
                    if (c.view()(y, x) == 2) c.view()(y, x) = 0x10002u;
            expect_same_as_cpu<std::uint32_t>(GetParam(), c.view(), connectivity, 0, "seed 6103 uint32", 1);
        }
}

TEST_P(LabelingCudaMethod, LargeImages) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(6104);
    for (int connectivity : {1, 2}) {
        const auto img = random_blocks<std::uint8_t>(rng, 2049, 1537, 0.55, 1);
        expect_same_as_cpu<std::uint8_t>(GetParam(), img.view(), connectivity, 0, "seed 6104 random 2049x1537");
    }
    const auto ones = random_blocks<std::uint8_t>(rng, 2000, 1500, 1.0, 1);
    expect_same_as_cpu<std::uint8_t>(GetParam(), ones.view(), 2, 0, "all ones");
    expect_same_as_cpu<std::uint8_t>(GetParam(), rings<std::uint8_t>(1023, 1999).view(), 1, 0, "rings");
}

INSTANTIATE_TEST_SUITE_P(LabelingCuda, LabelingCudaMethod,
                         testing::Values(label_method::automatic, label_method::tile_merge),
                         [](const testing::TestParamInfo<label_method>& info) {
                             return std::string(to_string(info.param));
                         });

// The tile merge's levels (32-pixel tiles merged 4x4 per level) on sizes that need up to six of
// them along one axis and none along the other, partial groups at both edges, and thin paths
// crossing many tile borders.
TEST(LabelingCuda, TileMergeLevels) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(6106);
    const std::int64_t sizes[][2] = {{4099, 37}, {37, 4099}, {32769, 3}, {2, 40000}, {1025, 1023}, {4096, 64}};
    for (const auto& s : sizes)
        for (int connectivity : {1, 2})
            for (int granularity : {1, 8}) {
                const auto img = random_blocks<std::uint8_t>(rng, s[0], s[1], 0.6, granularity, 2);
                expect_same_as_cpu<std::uint8_t>(label_method::tile_merge, img.view(), connectivity, 0,
                                                 "seed 6106 levels", 1);
            }
    for (int connectivity : {1, 2}) {
        expect_same_as_cpu<std::uint8_t>(label_method::tile_merge, rings<std::uint8_t>(2053, 517).view(),
                                         connectivity, 0, "rings");
        expect_same_as_cpu<std::uint8_t>(label_method::tile_merge, chessboard<std::uint8_t>(1031, 777, 1).view(),
                                         connectivity, 0, "chessboard", 2);
    }
}

// Intensity statistics on the GPU against the CPU's: equal for integer pixels (their sums are
// exact in double), the mean within rounding for float pixels; NaN pixels skipped by min and max.
TEST(LabelingCuda, IntensityStatisticsEqualTheCpu) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(6105);
    for (double density : {0.3, 0.7, 1.0}) {
        const auto img = random_blocks<std::uint8_t>(rng, 1031, 517, density, 2);
        host_image<std::int32_t> labels(img.width(), img.height());
        region_statistics cpu_stats;
        label<std::uint8_t>(img.view(), labels.view(), 2, 0, &cpu_stats);
        host_image<std::uint16_t> grey(img.width(), img.height());
        host_image<float> real(img.width(), img.height());
        std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
        for (std::int64_t y = 0; y < img.height(); ++y)
            for (std::int64_t x = 0; x < img.width(); ++x) {
                grey.view()(y, x) = static_cast<std::uint16_t>(rng() % 65536);
                real.view()(y, x) = (x + y) % 97 == 0 ? std::nanf("") : unit(rng);
            }
        const auto d_labels = upload<std::int32_t>(host_view<const std::int32_t>(labels.view()));
        host_image<std::int64_t> wide_labels(img.width(), img.height());
        for (std::int64_t y = 0; y < img.height(); ++y)
            for (std::int64_t x = 0; x < img.width(); ++x) wide_labels.view()(y, x) = labels.view()(y, x);
        device_region_statistics on_device;
        label<std::uint8_t>(device_view<const std::uint8_t>(upload<std::uint8_t>(img.view()).view()),
                            device_image<std::int32_t>(img.width(), img.height()).view(), 2, 0, on_device);
        EXPECT_EQ(on_device.mean_intensity(), nullptr);
        for (int kind : {0, 1}) {
            SCOPED_TRACE("density " + std::to_string(density) + (kind ? " float32" : " uint16"));
            region_statistics want = cpu_stats;
            const any_host_view intensity = kind ? any_host_view(host_view<const float>(real.view()))
                                                 : any_host_view(host_view<const std::uint16_t>(grey.view()));
            intensity_statistics(host_view<const std::int32_t>(labels.view()), intensity, want);
            const auto d_grey = upload<std::uint16_t>(host_view<const std::uint16_t>(grey.view()));
            const auto d_real = upload<float>(host_view<const float>(real.view()));
            const any_device_view d_intensity = kind ? any_device_view(device_view<const float>(d_real.view()))
                                                     : any_device_view(device_view<const std::uint16_t>(d_grey.view()));
            intensity_statistics(device_view<const std::int32_t>(d_labels.view()), d_intensity, on_device);
            const region_statistics got = on_device.download();
            // From int64 labels: the same numbers.
            const auto d_wide_labels = upload<std::int64_t>(host_view<const std::int64_t>(wide_labels.view()));
            intensity_statistics(device_view<const std::int64_t>(d_wide_labels.view()), d_intensity, on_device);
            const region_statistics got_wide = on_device.download();
            for (const region_statistics* g : {&got, &got_wide}) {
                SCOPED_TRACE(g == &got ? "int32 labels" : "int64 labels");
                ASSERT_EQ(g->mean_intensity.size(), want.mean_intensity.size());
                for (std::size_t c = 0; c < want.mean_intensity.size(); ++c) {
                    if (kind == 0)
                        ASSERT_EQ(g->mean_intensity[c], want.mean_intensity[c]) << "component " << c + 1;
                    else if (std::isnan(want.mean_intensity[c]))
                        ASSERT_TRUE(std::isnan(g->mean_intensity[c])) << "component " << c + 1;
                    else
                        ASSERT_NEAR(g->mean_intensity[c], want.mean_intensity[c], 1e-12) << "component " << c + 1;
                    ASSERT_EQ(g->min_intensity[c], want.min_intensity[c]) << "component " << c + 1;
                    ASSERT_EQ(g->max_intensity[c], want.max_intensity[c]) << "component " << c + 1;
                }
            }
        }
    }
    // A label beyond the statistics' components is an error, as on the CPU.
    host_image<std::uint8_t> zeros(4, 2);
    fill<std::uint8_t>(zeros.view(), 0);
    host_image<std::int32_t> sevens(4, 2);
    fill<std::int32_t>(sevens.view(), 7);
    const auto d_zeros = upload<std::uint8_t>(host_view<const std::uint8_t>(zeros.view()));
    const auto d_sevens = upload<std::int32_t>(host_view<const std::int32_t>(sevens.view()));
    device_image<std::int32_t> d_zero_labels(4, 2);
    device_region_statistics none;
    ASSERT_EQ(label<std::uint8_t>(device_view<const std::uint8_t>(d_zeros.view()), d_zero_labels.view(), 2, 0, none), 0);
    EXPECT_THROW(intensity_statistics(device_view<const std::int32_t>(d_sevens.view()),
                                      any_device_view(device_view<const std::uint8_t>(d_zeros.view())), none),
                 invalid_argument);
}

TEST(LabelingCuda, MethodNames) {
    EXPECT_EQ(parse_label_method("auto"), label_method::automatic);
    EXPECT_EQ(parse_label_method("tile_merge"), label_method::tile_merge);
    EXPECT_EQ(to_string(label_method::tile_merge), "tile_merge");
    EXPECT_THROW(parse_label_method("bke"), invalid_argument);
}

TEST(LabelingCuda, Errors) {
    GRANULA_REQUIRE_GPU();
    device_image<std::uint8_t> in(8, 4);
    device_image<std::int32_t> out(8, 4), small(7, 4);
    const device_view<const std::uint8_t> v = in.view();
    EXPECT_THROW(label<std::uint8_t>(v, out.view(), 3), invalid_argument);
    EXPECT_THROW(label<std::uint8_t>(v, small.view(), 2), invalid_argument);
    EXPECT_THROW(label<std::uint8_t>(v.subview(0, 0, 0, 4), out.view().subview(0, 0, 0, 4), 2), invalid_argument);
    device_image<float> f(8, 4);
    EXPECT_THROW(label(any_device_view(device_view<const float>(f.view())), out.view(), 2), invalid_argument);
    device_image<std::int64_t> wide(8, 4), wide_small(7, 4);
    EXPECT_THROW(label<std::uint8_t>(v, wide.view(), 0), invalid_argument);
    EXPECT_THROW(label<std::uint8_t>(v, wide_small.view(), 2), invalid_argument);
}

}  // namespace
}  // namespace granula
