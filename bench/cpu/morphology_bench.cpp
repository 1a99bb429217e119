// CPU morphology throughput (Google Benchmark). Peers (OpenCV, scipy) are timed side by side
// in the same run by bench/compare.py; this binary isolates granula's own paths:
//   bench_cpu_morphology --benchmark_filter=...  [GRANULA_DISABLE_SIMD=1 for the scalar path]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>

#include "granula/granula.hpp"

namespace {

template <class T>
granula::host_image<T> random_image(std::int64_t w, std::int64_t h) {
    granula::host_image<T> img(w, h);
    std::mt19937 rng(1);
    std::uniform_int_distribution<int> d(0, 255);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(d(rng));
    return img;
}

// Args: {shape (0 = hline, 1 = vline, 2 = square), length, threads}.
template <class T>
void BM_erosion(benchmark::State& state) {
    const std::int64_t n = 4096;
    const auto img = random_image<T>(n, n);
    granula::host_image<T> out(n, n);
    const std::int64_t L = state.range(1);
    const auto se = state.range(0) == 0   ? granula::structuring_element::hline(L)
                    : state.range(0) == 1 ? granula::structuring_element::vline(L)
                                          : granula::structuring_element::square(L);
    granula::set_num_threads(static_cast<int>(state.range(2)));
    for (auto _ : state) {
        granula::erosion(img.view(), out.view(), se);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(state.iterations() * n * n * static_cast<std::int64_t>(sizeof(T)));
    state.SetLabel(se.to_string() + " " + granula::simd_target());
    granula::set_num_threads(0);
}

void shapes(benchmark::internal::Benchmark* b) {
    for (int threads : {1, 2})
        for (int shape : {0, 1})
            for (int L : {3, 15, 63, 255}) b->Args({shape, L, threads});
    for (int threads : {1, 2})
        for (int L : {15, 63, 255}) b->Args({2, L, threads});
}

BENCHMARK(BM_erosion<std::uint8_t>)->Apply(shapes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_erosion<std::uint16_t>)->Args({0, 255, 1})->Args({1, 255, 1})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_erosion<float>)->Apply(shapes)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

// An element by its spec (docs/semantics.md), or "random:N": a fixed N x N mask of density 1/2
// with its centre set (as bench/compare.py).
granula::structuring_element element_of(const std::string& spec) {
    if (spec.rfind("random:", 0) != 0) return granula::structuring_element::parse(spec);
    granula::footprint_mask m;
    m.width = m.height = std::stoll(spec.substr(7));
    m.origin_x = m.width / 2, m.origin_y = m.height / 2;
    std::mt19937_64 rng(64);
    for (std::int64_t k = 0; k < m.width * m.height; ++k) m.mask.push_back(static_cast<std::uint8_t>(rng() % 2));
    m.mask[static_cast<std::size_t>(m.origin_y * m.width + m.origin_x)] = 1;
    return granula::structuring_element::from_mask(m);
}

// The general path, 4096x4096 uint8, one thread.
void BM_erosion_element(benchmark::State& state, const char* spec) {
    const std::int64_t n = 4096;
    granula::host_image<std::uint8_t> img(n, n), out(n, n);
    std::mt19937_64 rng(1);
    for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) img.view()(y, x) = static_cast<std::uint8_t>(rng());
    const auto se = element_of(spec);
    granula::set_num_threads(1);
    for (auto _ : state) {
        granula::erosion(img.view(), out.view(), se);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * n * n);
    granula::set_num_threads(0);
}
BENCHMARK_CAPTURE(BM_erosion_element, line_255_30, "line:255:30")->Unit(benchmark::kMillisecond)->UseRealTime();
// Shorter than two periods (26 columns at 30 degrees): the line's runs alone, no periodic line.
BENCHMARK_CAPTURE(BM_erosion_element, line_31_30, "line:31:30")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_erosion_element, line_41_60, "line:41:60")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_erosion_element, line_255_45, "line:255:45")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_erosion_element, disk_31, "disk:31")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_erosion_element, disk_31_4, "disk:31:4")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_erosion_element, octagon_27_18, "octagon:27:18")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_erosion_element, random_64, "random:64")->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
