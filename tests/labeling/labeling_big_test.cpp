// Labelling of images over 2^31 pixels (46400 x 46400 = 2,152,960,000), CPU and GPU: int64
// labels past 2^31 - 1 components, int32 labels refused there and equal to the int64 ones where
// N fits, statistics. Each test needs tens of GiB and skips, saying so, where the host (or the
// GPU) has less available; the small-size int64 paths are in the CPU and CUDA suites.
//
// The images have labels known without a reference labeller on 2 Gpx:
//   - "pixels": values 1 + (x & 1) + 2 (y & 1), so every pixel differs from its 8 neighbours
//     and is its own component: N = W * H > 2^31 - 1, label(y, x) = y * W + x + 1.
//   - "copies": a random W x 2000 strip R repeated down the image below a background row each
//     (the last copy cut short): the components of copy k are R's (or its top part's), numbered
//     after those of the copies above, with the statistics' rows shifted; R is labelled by the
//     ordinary int32 labeller, which the CPU suite tests against the BFS reference.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(GRANULA_TEST_CUDART)
#include <cuda_runtime.h>
#endif

#include "granula/granula.hpp"
#include "labeling/labeling_cases.hpp"

namespace granula {
namespace {

using namespace granula::test_support;

constexpr std::int64_t side = 46400;  // side^2 > 2^31 - 1
constexpr std::int64_t copy_rows = 2000;
constexpr std::int64_t copies = side / (copy_rows + 1), top_rows = side - copies * (copy_rows + 1);
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

double available_host_gib() {
    std::ifstream meminfo("/proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line))
        if (line.rfind("MemAvailable:", 0) == 0) return std::stod(line.substr(13)) / (1024.0 * 1024.0);  // kB
    return 0;
}

double peak_host_gib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);
}

#define REQUIRE_HOST_GIB(n)                                                                                       \
    do {                                                                                                         \
        if (available_host_gib() < (n))                                                                          \
            GTEST_SKIP() << "needs " << (n) << " GiB of available host memory for a " << side << "x" << side      \
                         << " image; this machine has " << available_host_gib() << " GiB";                       \
    } while (0)

#if defined(GRANULA_TEST_CUDART)
double free_device_gib() {
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return 0;
    return static_cast<double>(free_bytes) / gib;
}
#define REQUIRE_DEVICE_GIB(n)                                                                                     \
    do {                                                                                                         \
        if (!cuda_available()) GTEST_SKIP() << "no CUDA device";                                                 \
        if (free_device_gib() < (n))                                                                             \
            GTEST_SKIP() << "needs " << (n) << " GiB of free GPU memory; the GPU has " << free_device_gib();     \
    } while (0)
#else
double free_device_gib() { return 0; }
#define REQUIRE_DEVICE_GIB(n) GTEST_SKIP() << "this build has no CUDA backend (or the test no CUDA runtime)"
#endif

// Seconds since `start`, printed with `what`.
void report(const char* what, std::chrono::steady_clock::time_point start) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[ big      ] %-46s %7.2f s  (peak host RSS %.1f GiB)\n", what, s, peak_host_gib());
    std::fflush(stdout);
}

// f(first, last) over [0, n) split across the hardware threads.
void parallel_ranges(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f) {
    const std::int64_t k = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (std::int64_t i = 0; i < k; ++i) threads.emplace_back(f, n * i / k, n * (i + 1) / k);
    for (std::thread& t : threads) t.join();
}

host_image<std::uint8_t> every_pixel_its_own() {
    host_image<std::uint8_t> img(side, side);
    parallel_ranges(side, [&](std::int64_t y0, std::int64_t y1) {
        for (std::int64_t y = y0; y < y1; ++y) {
            std::uint8_t* row = img.view().row(y);
            for (std::int64_t x = 0; x < side; ++x) row[x] = static_cast<std::uint8_t>(1 + (x & 1) + 2 * (y & 1));
        }
    });
    return img;
}

// Every label is y * side + x + 1.
template <class L>
void expect_raster_indices(host_view<const L> labels) {
    std::vector<std::int64_t> bad_row(64, -1);
    std::atomic<int> slot{0};
    parallel_ranges(side, [&](std::int64_t y0, std::int64_t y1) {
        for (std::int64_t y = y0; y < y1; ++y) {
            const L* row = labels.row(y);
            for (std::int64_t x = 0; x < side; ++x)
                if (row[x] != y * side + x + 1) {
                    bad_row[static_cast<std::size_t>(slot++ % 64)] = y;
                    return;
                }
        }
    });
    ASSERT_EQ(slot.load(), 0) << "wrong labels, e.g. in row " << bad_row[0];
}

TEST(LabelingBig, CpuEveryPixelItsOwnComponent) {
    REQUIRE_HOST_GIB(80);
    auto t = std::chrono::steady_clock::now();
    const host_image<std::uint8_t> img = every_pixel_its_own();
    report("cpu pixels: image", t);
    {
        host_image<std::int32_t> narrow(side, side);
        t = std::chrono::steady_clock::now();
        try {
            label<std::uint8_t>(img.view(), narrow.view(), 2);
            ADD_FAILURE() << "int32 labels for " << side * side << " components did not throw";
        } catch (const unsupported& e) {
            EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
        }
        report("cpu pixels: int32 refused", t);
    }
    host_image<std::int64_t> wide(side, side);
    t = std::chrono::steady_clock::now();
    ASSERT_EQ(label<std::uint8_t>(img.view(), wide.view(), 2), side * side);
    report("cpu pixels: int64 labels, connectivity 2", t);
    expect_raster_indices<std::int64_t>(wide.view());
}

// The "copies" image and the expected labels of each copy (R's, or its top part's, and counts).
struct copies_case {
    host_image<std::uint8_t> image{side, side};
    host_image<std::int32_t> strip_labels{side, copy_rows}, top_labels{side, top_rows};
    region_statistics strip_stats, top_stats;
    std::int64_t strip_count = 0, top_count = 0;
    std::int64_t expected_count() const { return copies * strip_count + top_count; }
};

copies_case make_copies(int connectivity) {
    copies_case c;
    std::mt19937_64 rng(6301);
    // Granularity 4, three values: equal-value runs and millions of components.
    const host_image<std::uint8_t> strip = random_blocks<std::uint8_t>(rng, side, copy_rows, 0.6, 4, 3);
    c.strip_count = label<std::uint8_t>(strip.view(), c.strip_labels.view(), connectivity, 0, &c.strip_stats);
    const host_view<const std::uint8_t> top = host_view<const std::uint8_t>(strip.view()).subview(0, 0, side, top_rows);
    c.top_count = label<std::uint8_t>(top, c.top_labels.view(), connectivity, 0, &c.top_stats);
    parallel_ranges(side, [&](std::int64_t y0, std::int64_t y1) {
        for (std::int64_t y = y0; y < y1; ++y) {
            const std::int64_t r = y % (copy_rows + 1);
            std::uint8_t* row = c.image.view().row(y);
            if (r == copy_rows)
                std::fill(row, row + side, std::uint8_t{0});
            else
                std::copy_n(strip.view().row(r), side, row);
        }
    });
    return c;
}

// Labels and statistics of the whole image against the copies'.
template <class L>
void expect_copies(const copies_case& c, host_view<const L> labels, const region_statistics* stats) {
    std::atomic<std::int64_t> bad{-1};
    parallel_ranges(side, [&](std::int64_t y0, std::int64_t y1) {
        for (std::int64_t y = y0; y < y1; ++y) {
            const std::int64_t k = y / (copy_rows + 1), r = y % (copy_rows + 1);
            const L* row = labels.row(y);
            if (r == copy_rows) {
                if (std::any_of(row, row + side, [](L l) { return l != 0; })) bad = y;
                continue;
            }
            const std::int32_t* want = (k < copies ? c.strip_labels.view() : c.top_labels.view()).row(r);
            const std::int64_t offset = k * c.strip_count;
            for (std::int64_t x = 0; x < side; ++x)
                if (row[x] != (want[x] == 0 ? 0 : want[x] + offset)) {
                    bad = y;
                    break;
                }
        }
    });
    ASSERT_EQ(bad.load(), -1) << "wrong labels in row " << bad.load();
    if (!stats) return;
    ASSERT_EQ(stats->size(), c.expected_count());
    for (std::int64_t k = 0; k <= copies; ++k) {
        const region_statistics& want = k < copies ? c.strip_stats : c.top_stats;
        const std::int64_t shift = k * (copy_rows + 1), offset = k * c.strip_count;
        for (std::int64_t i = 0; i < want.size(); ++i) {
            const std::size_t g = static_cast<std::size_t>(offset + i), w = static_cast<std::size_t>(i);
            ASSERT_EQ(stats->area[g], want.area[w]) << "copy " << k << " component " << i + 1;
            ASSERT_EQ(stats->min_row[g], want.min_row[w] + shift) << "copy " << k << " component " << i + 1;
            ASSERT_EQ(stats->max_row[g], want.max_row[w] + shift) << "copy " << k << " component " << i + 1;
            ASSERT_EQ(stats->min_col[g], want.min_col[w]) << "copy " << k << " component " << i + 1;
            ASSERT_EQ(stats->max_col[g], want.max_col[w]) << "copy " << k << " component " << i + 1;
            ASSERT_EQ(stats->value[g], want.value[w]) << "copy " << k << " component " << i + 1;
            ASSERT_NEAR(stats->centroid_row[g], want.centroid_row[w] + static_cast<double>(shift), 1e-6);
            ASSERT_DOUBLE_EQ(stats->centroid_col[g], want.centroid_col[w]);
        }
    }
}

TEST(LabelingBig, CpuCopiesWithStatistics) {
    REQUIRE_HOST_GIB(60);
    for (int connectivity : {1, 2}) {
        SCOPED_TRACE("connectivity " + std::to_string(connectivity));
        auto t = std::chrono::steady_clock::now();
        const copies_case c = make_copies(connectivity);
        report("cpu copies: image and strip labels", t);
        std::printf("[ big      ] connectivity %d: %lld components\n", connectivity,
                    static_cast<long long>(c.expected_count()));
        {
            host_image<std::int64_t> wide(side, side);
            region_statistics stats;
            t = std::chrono::steady_clock::now();
            ASSERT_EQ(label<std::uint8_t>(c.image.view(), wide.view(), connectivity, 0, &stats), c.expected_count());
            report("cpu copies: int64 labels + statistics", t);
            expect_copies<std::int64_t>(c, wide.view(), &stats);
        }
        // N fits int32: int32 labels over 64-bit provisional labels.
        host_image<std::int32_t> narrow(side, side);
        t = std::chrono::steady_clock::now();
        ASSERT_EQ(label<std::uint8_t>(c.image.view(), narrow.view(), connectivity), c.expected_count());
        report("cpu copies: int32 labels", t);
        expect_copies<std::int32_t>(c, narrow.view(), nullptr);
    }
}

TEST(LabelingBig, GpuEveryPixelItsOwnComponent) {
    REQUIRE_HOST_GIB(24);
    REQUIRE_DEVICE_GIB(40);
    auto t = std::chrono::steady_clock::now();
    const host_image<std::uint8_t> img = every_pixel_its_own();
    const device_image<std::uint8_t> d_img = upload<std::uint8_t>(img.view());
    stream{}.synchronize();
    report("gpu pixels: image, upload", t);
    const device_view<const std::uint8_t> in = d_img.view();
    {
        device_image<std::int32_t> narrow(side, side);
        t = std::chrono::steady_clock::now();
        try {
            label<std::uint8_t>(in, narrow.view(), 2);
            ADD_FAILURE() << "int32 labels for " << side * side << " components did not throw";
        } catch (const unsupported& e) {
            EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
        }
        report("gpu pixels: int32 refused", t);
    }
    device_image<std::int64_t> wide(side, side);
    t = std::chrono::steady_clock::now();
    ASSERT_EQ(label<std::uint8_t>(in, wide.view(), 2), side * side);
    report("gpu pixels: int64 labels, connectivity 2", t);
    std::printf("[ big      ] free GPU memory with the int64 labels: %.1f GiB\n", free_device_gib());
    host_image<std::int64_t> back(side, side);
    copy<std::int64_t>(wide.view(), back.view());
    stream{}.synchronize();
    expect_raster_indices<std::int64_t>(back.view());
}

TEST(LabelingBig, GpuCopiesWithStatistics) {
    REQUIRE_HOST_GIB(40);
    REQUIRE_DEVICE_GIB(40);
    for (int connectivity : {1, 2}) {
        SCOPED_TRACE("connectivity " + std::to_string(connectivity));
        auto t = std::chrono::steady_clock::now();
        const copies_case c = make_copies(connectivity);
        const device_image<std::uint8_t> d_img = upload<std::uint8_t>(c.image.view());
        stream{}.synchronize();
        report("gpu copies: image, strip labels, upload", t);
        const device_view<const std::uint8_t> in = d_img.view();
        {
            device_image<std::int64_t> wide(side, side);
            device_region_statistics on_device;
            t = std::chrono::steady_clock::now();
            ASSERT_EQ(label<std::uint8_t>(in, wide.view(), connectivity, 0, on_device), c.expected_count());
            stream{}.synchronize();
            report("gpu copies: int64 labels + device statistics", t);
            const region_statistics stats = on_device.download();
            host_image<std::int64_t> back(side, side);
            copy<std::int64_t>(wide.view(), back.view());
            stream{}.synchronize();
            expect_copies<std::int64_t>(c, back.view(), &stats);
        }
        device_image<std::int32_t> narrow(side, side);
        t = std::chrono::steady_clock::now();
        ASSERT_EQ(label<std::uint8_t>(in, narrow.view(), connectivity), c.expected_count());
        report("gpu copies: int32 labels (int64 scratch forest)", t);
        host_image<std::int32_t> back(side, side);
        copy<std::int32_t>(narrow.view(), back.view());
        stream{}.synchronize();
        expect_copies<std::int32_t>(c, back.view(), nullptr);
    }
}

}  // namespace
}  // namespace granula
