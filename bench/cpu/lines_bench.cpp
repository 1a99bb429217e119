// CPU linear openings (Google Benchmark): the orientation map (640x640 uint8, 180 angles,
// λ = 41: extremum + orientation) and single openings of 4096x4096 uint8 at an angle, each
// algorithm and thread count, of a 3000x2000 uint8 image, and of uint16 and float32
// (automatic). OpenCV's morphologyEx(MORPH_OPEN) with the same footprint is timed side by side
// by bench/compare_lines.py.
//   bench_cpu_lines --benchmark_filter=...
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "granula/granula.hpp"

namespace {

template <class T = std::uint8_t>
granula::host_image<T> random_image(std::int64_t w, std::int64_t h) {
    granula::host_image<T> img(w, h);
    std::mt19937_64 rng(1);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(rng() % 65536);
    return img;
}

template <class T>
void orientation_640(benchmark::State& state, granula::line_algorithm algorithm, int threads) {
    const auto img = random_image<T>(640, 640);
    granula::host_image<T> extremum(640, 640);
    granula::host_image<std::int32_t> orientation(640, 640);
    const auto angles = granula::evenly_spaced_angles(180);
    granula::set_num_threads(threads);
    const granula::line_params params{41, granula::line_filter_kind::opening, {}, algorithm};
    for (auto _ : state) {
        granula::host_line_outputs<T> out;
        out.extremum = extremum.view();
        out.orientation = orientation.view();
        granula::line_filter_angles<T>(img.view(), angles, params, out);
        benchmark::DoNotOptimize(extremum.data());
    }
    state.SetItemsProcessed(state.iterations() * 640 * 640 * 180);
    granula::set_num_threads(0);
}

// Args: {algorithm (0 automatic, 1 fifo, 2 stack), threads}.
void BM_orientation_640(benchmark::State& state) {
    orientation_640<std::uint8_t>(state, static_cast<granula::line_algorithm>(state.range(0)),
                                  static_cast<int>(state.range(1)));
}
BENCHMARK(BM_orientation_640)->ArgsProduct({{0, 1, 2}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();

// The same map of other pixel types (automatic). Args: {threads}.
template <class T>
void BM_orientation_640_typed(benchmark::State& state) {
    orientation_640<T>(state, granula::line_algorithm::automatic, static_cast<int>(state.range(0)));
}
BENCHMARK_TEMPLATE(BM_orientation_640_typed, std::uint16_t)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_orientation_640_typed, float)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A filter (an opening unless `kind` says otherwise) of a w x h random image by line(length,
// angle) with the given algorithm and threads.
template <class T = std::uint8_t>
void time_line_filter(benchmark::State& state, std::int64_t w, std::int64_t h, std::int64_t length, double angle,
                      granula::line_algorithm algorithm, int threads,
                      granula::line_filter_kind kind = granula::line_filter_kind::opening) {
    const auto img = random_image<T>(w, h);
    granula::host_image<T> out(w, h);
    granula::set_num_threads(threads);
    const granula::line_params params{length, kind, {}, algorithm};
    for (auto _ : state) {
        granula::line_filter<T>(img.view(), out.view(), angle, params);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * w * h);
    granula::set_num_threads(0);
}

// Args: {length, angle in degrees, algorithm, threads}.
void BM_line_opening_4096(benchmark::State& state) {
    time_line_filter(state, 4096, 4096, state.range(0), static_cast<double>(state.range(1)),
                     static_cast<granula::line_algorithm>(state.range(2)), static_cast<int>(state.range(3)));
}
BENCHMARK(BM_line_opening_4096)
    ->ArgsProduct({{101}, {0, 30, 45, 60, 90, 120, 150}, {0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Lone erosions of the same image (scan-line mode, automatic): one stage, whose flat lines write
// the image through the same transposing tiles. Args: {length, angle in degrees, threads}.
void BM_line_erosion_4096(benchmark::State& state) {
    time_line_filter(state, 4096, 4096, state.range(0), static_cast<double>(state.range(1)),
                     granula::line_algorithm::automatic, static_cast<int>(state.range(2)),
                     granula::line_filter_kind::erosion);
}
BENCHMARK(BM_line_erosion_4096)
    ->ArgsProduct({{3, 101}, {30, 60, 150}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A smaller image, 2000 rows of 3000 columns (uint8, λ = 101, automatic): steep lines under
// 2048 rows once took narrow blocks, which read rows 3000 bytes apart without prefetching.
// Args: {angle in degrees, threads}.
void BM_line_opening_3000x2000(benchmark::State& state) {
    time_line_filter(state, 3000, 2000, 101, static_cast<double>(state.range(0)),
                     granula::line_algorithm::automatic, static_cast<int>(state.range(1)));
}
BENCHMARK(BM_line_opening_3000x2000)
    ->ArgsProduct({{30, 60, 120}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same openings (λ = 101, automatic) of other pixel types. Args: {angle in degrees, threads}.
template <class T>
void BM_line_opening_4096_typed(benchmark::State& state) {
    time_line_filter<T>(state, 4096, 4096, 101, static_cast<double>(state.range(0)),
                        granula::line_algorithm::automatic, static_cast<int>(state.range(1)));
}
BENCHMARK_TEMPLATE(BM_line_opening_4096_typed, std::uint16_t)
    ->ArgsProduct({{30, 60, 90, 120}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_line_opening_4096_typed, float)
    ->ArgsProduct({{30, 60, 90, 120}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
