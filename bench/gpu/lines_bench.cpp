// GPU benchmark of granula's linear openings along scan lines (issue 4's targets), timed with
// CUDA events against a device-to-device copy of the same image in the same run:
//   - the orientation map (extremum + orientation) of a 640x640 uint8 image over 180 angles,
//     λ = 41 (target <= 1 ms on an H200);
//   - a single opening of an 8000x8000 uint8 image at several angles, λ = 41 and 101
//     (target: within 3x of the copy); --kind and --lengths time other filters and lengths
//     (issue 3's lines at 16384^2: --size 16384 --kind erosion --lengths 63,255,1001), --mode
//     another border (the case's name then ends in mode=M).
// The copy is one cudaMemcpyAsync of the image's bytes (rows and their padding): the floor.
// Method (GUIDE §5): one warm-up, then the median of `--reps` runs; runs alternate between two
// input/output pairs (256 MB at 8000^2, several times the 60 MB L2). A timed call is the whole
// public call: planning on the host (scan-line tables), their upload and every kernel; with
// --queued the runs are queued back to back instead, so that the host's work hides behind the
// previous run's kernels: the device's time alone.
//
//   bench_gpu_lines [--size N] [--reps N] [--angles A,B,..] [--algorithms auto,fifo,stack] [--no-map]
//                   [--kind opening|closing|erosion|dilation] [--lengths L,..] [--mode M] [--queued]
//                   [--json FILE]
// (--angles, --algorithms and --no-map narrow the cases, e.g. to profile one opening.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cuda_timing.hpp"
#include "granula/granula.hpp"

namespace {

using granula_bench::check;
using granula_bench::median_ms;

void copy_image(const granula::device_image<std::uint8_t>& from, granula::device_image<std::uint8_t>& to) {
    check(cudaMemcpyAsync(to.data(), from.data(), static_cast<std::size_t>(from.stride() * from.height()),
                          cudaMemcpyDeviceToDevice),
          "cudaMemcpyAsync");
}

granula::host_image<std::uint8_t> random_u8(std::int64_t w, std::int64_t h, std::uint64_t seed) {
    granula::host_image<std::uint8_t> img(w, h);
    granula_bench::fill_random(img, seed);
    return img;
}

struct row {
    std::string case_name;
    std::string algorithm;
    double ms, copy_ms;
};

}  // namespace

int main(int argc, char** argv) {
    std::int64_t n = 8000;
    int reps = 21;
    std::string json;
    std::vector<double> angles = {0.0, 30.0, 45.0, 60.0, 90.0, 120.0, 150.0};
    using granula::line_algorithm;
    std::vector<line_algorithm> algorithms = {line_algorithm::automatic, line_algorithm::fifo, line_algorithm::stack};
    bool map = true;
    auto kind = granula::line_filter_kind::opening;
    granula::border mode{};
    std::vector<std::int64_t> lengths = {41, 101};
    auto timing = granula_bench::runs::each_alone;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&] { return granula_bench::option_value(i, argc, argv); };
        if (a == "--size") n = std::atoll(value().c_str());
        else if (a == "--reps") reps = std::max(1, std::atoi(value().c_str()));
        else if (a == "--json") json = value();
        else if (a == "--no-map") map = false;
        else if (a == "--queued") timing = granula_bench::runs::back_to_back;
        else if (a == "--kind") kind = granula::parse_line_filter_kind(value());
        else if (a == "--mode") mode.mode = granula::parse_border_mode(value());
        else if (a == "--lengths") {
            lengths.clear();
            for (const std::string& v : granula_bench::split(value())) lengths.push_back(std::atoll(v.c_str()));
        }
        else if (a == "--angles") {
            angles.clear();
            for (const std::string& v : granula_bench::split(value())) angles.push_back(std::atof(v.c_str()));
        } else if (a == "--algorithms") {
            algorithms.clear();
            for (const std::string& v : granula_bench::split(value()))
                algorithms.push_back(granula::parse_line_algorithm(v));
        }
        else granula_bench::unknown_option(a);
    }
    if (!granula::cuda_available()) {
        std::fprintf(stderr, "no CUDA device\n");
        return 2;
    }
    std::vector<row> rows;

    // 640x640 orientation map over 180 angles.
    if (map) {
        const std::int64_t m = 640;
        granula::device_image<std::uint8_t> in[2] = {granula::upload<std::uint8_t>(random_u8(m, m, 1).view()),
                                                      granula::upload<std::uint8_t>(random_u8(m, m, 2).view())};
        granula::device_image<std::uint8_t> extremum[2] = {granula::device_image<std::uint8_t>(m, m),
                                                           granula::device_image<std::uint8_t>(m, m)};
        granula::device_image<std::int32_t> orientation[2] = {granula::device_image<std::int32_t>(m, m),
                                                               granula::device_image<std::int32_t>(m, m)};
        const auto angles = granula::evenly_spaced_angles(180);
        const double copy_ms = median_ms(reps, 1, timing, [&](int i) { copy_image(in[i % 2], extremum[i % 2]); });
        for (const auto algorithm : algorithms) {
            const double ms = median_ms(reps, 1, timing, [&](int i) {
                granula::device_line_outputs<std::uint8_t> out;
                out.extremum = extremum[i % 2].view();
                out.orientation = orientation[i % 2].view();
                granula::line_filter_angles<std::uint8_t>(in[i % 2].view(), angles, {41, {}, {}, algorithm}, out);
            });
            rows.push_back({"orientation 640x640 uint8 180 angles L=41", std::string(to_string(algorithm)), ms, copy_ms});
        }
    }

    // Single filters (openings unless --kind) of an n x n uint8 image.
    const std::string mode_suffix =
        mode.mode == granula::border_mode::ignore ? "" : " mode=" + std::string(to_string(mode.mode));
    {
        granula::device_image<std::uint8_t> in[2] = {granula::upload<std::uint8_t>(random_u8(n, n, 3).view()),
                                                      granula::upload<std::uint8_t>(random_u8(n, n, 4).view())};
        granula::device_image<std::uint8_t> out[2] = {granula::device_image<std::uint8_t>(n, n),
                                                      granula::device_image<std::uint8_t>(n, n)};
        const double copy_ms = median_ms(reps, 1, timing, [&](int i) { copy_image(in[i % 2], out[i % 2]); });
        for (const std::int64_t length : lengths)
            for (const double angle : angles)
                for (const auto algorithm : algorithms) {
                    const double ms = median_ms(reps, 1, timing, [&](int i) {
                        granula::line_filter<std::uint8_t>(in[i % 2].view(), out[i % 2].view(), angle,
                                                           {length, kind, mode, algorithm});
                    });
                    char name[128];
                    std::snprintf(name, sizeof name, "%s %lldx%lld uint8 %g deg L=%lld%s",
                                  std::string(to_string(kind)).c_str(), static_cast<long long>(n),
                                  static_cast<long long>(n), angle, static_cast<long long>(length),
                                  mode_suffix.c_str());
                    rows.push_back({name, std::string(to_string(algorithm)), ms, copy_ms});
                }
    }

    std::printf("# median of %d runs (CUDA events), %s; copy = device-to-device copy of the input\n", reps,
                timing == granula_bench::runs::each_alone ? "whole public call" : "queued back to back");
    std::printf("%-46s %-6s %10s %10s %8s\n", "case", "algo", "ms", "copy ms", "x copy");
    for (const row& r : rows)
        std::printf("%-46s %-6s %10.3f %10.4f %8.1f\n", r.case_name.c_str(), r.algorithm.c_str(), r.ms, r.copy_ms,
                    r.ms / r.copy_ms);
    if (!json.empty()) {
        FILE* f = std::fopen(json.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", json.c_str());
            return 2;
        }
        std::fprintf(f, "[\n");
        for (std::size_t i = 0; i < rows.size(); ++i)
            std::fprintf(f, "  {\"case\": \"%s\", \"algorithm\": \"%s\", \"ms\": %.5f, \"copy_ms\": %.5f}%s\n",
                         rows[i].case_name.c_str(), rows[i].algorithm.c_str(), rows[i].ms, rows[i].copy_ms,
                         i + 1 < rows.size() ? "," : "");
        std::fprintf(f, "]\n");
        std::fclose(f);
    }
    return 0;
}
