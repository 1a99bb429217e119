// CPU binary morphology on bit-packed images (Google Benchmark): 4096x4096 (2 MB of bits: in L3)
// and 1024x1024 (128 KB: in L2), 97% ones, the output allocated once (bench/compare_binary.py
// times the Python call beside OpenCV).
//   bench_cpu_binary --benchmark_filter=...
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

#include "granula/granula.hpp"

namespace {

granula::host_bit_image random_bits(std::int64_t w, std::int64_t h) {
    granula::host_image<std::uint8_t> img(w, h);
    std::mt19937_64 rng(1);
    std::bernoulli_distribution one(0.97);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = one(rng);
    return granula::pack<std::uint8_t>(img.view());
}

// Args: {footprint width, footprint height, border mode, threads, image size}.
void BM_binary_erosion(benchmark::State& state) {
    const std::int64_t n = state.range(4);
    const auto in = random_bits(n, n);
    granula::host_bit_image out(n, n);
    const auto footprint = granula::structuring_element::rectangle(state.range(0), state.range(1));
    const granula::border mode{static_cast<granula::border_mode>(state.range(2))};
    granula::set_num_threads(static_cast<int>(state.range(3)));
    for (auto _ : state) {
        granula::binary_morphology(granula::binary_op::erosion, in.view(), out.view(), footprint, mode);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * n * n);
    granula::set_num_threads(0);
}
constexpr int ignore = static_cast<int>(granula::border_mode::ignore);
BENCHMARK(BM_binary_erosion)
    ->ArgsProduct({{63}, {63}, {ignore}, {1, 2}, {4096}})
    ->Args({63, 1, ignore, 1, 4096})
    ->Args({1, 63, ignore, 1, 4096})
    ->Args({3, 3, ignore, 1, 4096})
    ->Args({63, 63, static_cast<int>(granula::border_mode::reflect), 1, 4096})
    ->Args({63, 63, ignore, 1, 1024})
    ->Args({63, 1, ignore, 1, 1024})
    ->Args({1, 63, ignore, 1, 1024})
    ->Args({3, 3, ignore, 1, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
