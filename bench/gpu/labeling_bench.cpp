// GPU benchmark of granula's CUDA labelling on YACCLAB-style random images (density x
// granularity), all ones and all zeros, timed with CUDA events against a device-to-device copy
// of the int32 label image in the same run.
//
// Method (GUIDE §5): one warm-up, then the median of `--reps` runs; runs alternate between two
// input/output pairs (each 5 bytes per pixel, 320 MB at 8192^2: several times the 60 MB L2).
// The timed call includes everything label() does: the merges, the consecutive relabelling,
// reading the count back; "dstats" (8-connectivity) also the statistics left in device memory
// (device_region_statistics, done when the timing event after the call fires), "hstats" the
// statistics copied into host vectors (region_statistics) inside the call. "tile merge" is the
// seed paper's method (label_method::tile_merge) with the same relabelling, 8- and
// 4-connectivity; "auto/tm" the default path's speed over it (8-connectivity).
//
//   bench_gpu_labeling [--size N] [--reps N] [--image NAME]   (NAME: one category, e.g. "d90 g1")
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_timing.hpp"
#include "granula/granula.hpp"

namespace {

using granula_bench::check;
using granula_bench::median_ms;
// Each run waits for the previous: the time of a whole call, host work included.
constexpr auto timing = granula_bench::runs::each_alone;

// YACCLAB-style image: g x g blocks, each foreground with probability `density` (xorshift RNG).
granula::host_image<std::uint8_t> random_blocks(std::int64_t n, double density, int g, std::uint64_t seed) {
    granula::host_image<std::uint8_t> img(n, n);
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    const std::uint64_t threshold = static_cast<std::uint64_t>(density * 18446744073709551615.0);
    const std::int64_t blocks = (n + g - 1) / g;
    std::vector<std::uint8_t> row(static_cast<std::size_t>(blocks));
    for (std::int64_t by = 0; by < blocks; ++by) {
        for (auto& b : row) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            b = density >= 1.0 ? 1 : state < threshold ? 1 : 0;
        }
        for (std::int64_t y = by * g; y < std::min(n, (by + 1) * g); ++y)
            for (std::int64_t x = 0; x < n; ++x) img.view()(y, x) = row[static_cast<std::size_t>(x / g)];
    }
    return img;
}

}  // namespace

int main(int argc, char** argv) {
    std::int64_t n = 8192;
    int reps = 15;
    std::string only;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--size") n = std::atoll(argv[i + 1]);
        else if (a == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
        else if (a == "--image") only = argv[i + 1];
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    if (!granula::cuda_available()) {
        std::fprintf(stderr, "no CUDA device\n");
        return 2;
    }
    const double px = static_cast<double>(n) * static_cast<double>(n);
    granula::device_image<std::int32_t> out[2] = {granula::device_image<std::int32_t>(n, n),
                                                  granula::device_image<std::int32_t>(n, n)};
    granula::device_image<std::int32_t> copy_dst(n, n);
    const double copy_ms = median_ms(reps, 1, timing, [&](int i) {
        granula::copy<std::int32_t>(out[i % 2].view(), copy_dst.view());
    });
    std::printf("# %lldx%lld, median of %d runs; copy of the int32 image (read+write %.0f MB): %.3f ms = %.0f GB/s\n",
                static_cast<long long>(n), static_cast<long long>(n), reps, 8 * px / 1e6, copy_ms,
                8 * px / copy_ms / 1e6);
    std::printf("%-18s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "image", "components",
                "conn2 ms", "conn2 Gpx/s", "conn1 ms", "conn1 Gpx/s", "dstats ms", "dstats Gpx/s", "hstats ms",
                "hstats Gpx/s", "tm2 ms", "tm2 Gpx/s", "tm1 Gpx/s", "auto/tm");
    struct category {
        std::string name;
        double density;
        int granularity;
    };
    std::vector<category> cats;
    for (int g : {1, 2, 4, 8, 16})
        for (double d : {0.1, 0.3, 0.5, 0.7, 0.9})
            cats.push_back({"d" + std::to_string(static_cast<int>(d * 10)) + "0 g" + std::to_string(g), d, g});
    cats.push_back({"all ones", 1.0, 1});
    cats.push_back({"all zeros", 0.0, 1});
    for (const category& c : cats) {
        if (!only.empty() && c.name != only) continue;
        granula::device_image<std::uint8_t> in[2] = {
            granula::upload<std::uint8_t>(random_blocks(n, c.density, c.granularity, 1).view()),
            granula::upload<std::uint8_t>(random_blocks(n, c.density, c.granularity, 2).view())};
        std::int64_t count = 0;
        auto run = [&](int connectivity, granula::region_statistics* st,
                       granula::label_method method = granula::label_method::automatic) {
            return median_ms(reps, 1, timing, [&](int i) {
                count = granula::label<std::uint8_t>(in[i % 2].view(), out[i % 2].view(), connectivity, 0, st, {},
                                                     method);
            });
        };
        granula::region_statistics st;
        const double t1 = run(1, nullptr);
        const double t2 = run(2, nullptr);
        const std::int64_t count2 = count;
        const double ts = run(2, &st);
        granula::device_region_statistics dst;
        const double td = median_ms(reps, 1, timing, [&](int i) {
            granula::label<std::uint8_t>(in[i % 2].view(), out[i % 2].view(), 2, 0, dst);
        });
        const double tm2 = run(2, nullptr, granula::label_method::tile_merge);
        if (count != count2) {
            std::fprintf(stderr, "%s: tile merge found %lld components, the default path %lld\n", c.name.c_str(),
                         static_cast<long long>(count), static_cast<long long>(count2));
            return 1;
        }
        const double tm1 = run(1, nullptr, granula::label_method::tile_merge);
        std::printf("%-18s %10lld %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %10.3f %10.2f %10.2f"
                    " %9.1fx\n",
                    c.name.c_str(), static_cast<long long>(count2), t2, px / t2 / 1e6, t1, px / t1 / 1e6, td,
                    px / td / 1e6, ts, px / ts / 1e6, tm2, px / tm2 / 1e6, px / tm1 / 1e6, tm2 / t2);
    }
    return 0;
}
