// CPU labelling throughput (Google Benchmark) on YACCLAB-style random images (g x g blocks, each
// foreground with probability density), 4096x4096 uint8. Peers (OpenCV, scipy) are timed side
// by side in the same run by bench/compare_labeling.py; this binary isolates granula's paths:
//   bench_cpu_labeling --benchmark_filter=...
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "granula/granula.hpp"

namespace {

granula::host_image<std::uint8_t> random_blocks(std::int64_t n, double density, std::int64_t g) {
    granula::host_image<std::uint8_t> img(n, n);
    std::mt19937_64 rng(1);
    std::bernoulli_distribution on(density);
    for (std::int64_t by = 0; by < n; by += g)
        for (std::int64_t bx = 0; bx < n; bx += g) {
            const std::uint8_t v = on(rng) ? 1 : 0;
            for (std::int64_t y = by; y < std::min(n, by + g); ++y)
                for (std::int64_t x = bx; x < std::min(n, bx + g); ++x) img.view()(y, x) = v;
        }
    return img;
}

// Args: {density in percent, granularity, threads, statistics (0/1), connectivity}.
void BM_label(benchmark::State& state) {
    const std::int64_t n = 4096;
    const auto img = random_blocks(n, state.range(0) / 100.0, state.range(1));
    granula::host_image<std::int32_t> out(n, n);
    granula::set_num_threads(static_cast<int>(state.range(2)));
    granula::region_statistics stats;
    std::int64_t count = 0;
    for (auto _ : state) {
        count = granula::label<std::uint8_t>(img.view(), out.view(), static_cast<int>(state.range(4)), 0,
                                             state.range(3) ? &stats : nullptr);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["components"] = static_cast<double>(count);
    state.SetItemsProcessed(state.iterations() * n * n);
    granula::set_num_threads(0);
}

void categories(benchmark::internal::Benchmark* b) {
    for (int threads : {1, 2})
        for (int g : {1, 4, 16})
            for (int d : {10, 50, 90}) b->Args({d, g, threads, 0, 2});
    for (int threads : {1, 2}) {
        b->Args({50, 1, threads, 1, 2});
        b->Args({50, 1, threads, 0, 1});
        b->Args({100, 1, threads, 0, 2});
    }
}

BENCHMARK(BM_label)->Apply(categories)->Unit(benchmark::kMillisecond)->UseRealTime();

// Bit-packed input (issue 7): label() of the bit image, against unpacking it to uint8 and
// labelling that (the way without a bit-image path). Args: {density in percent, granularity,
// threads, 1 = unpack first}.
void BM_label_bits(benchmark::State& state) {
    const std::int64_t n = 4096;
    const auto img = random_blocks(n, state.range(0) / 100.0, state.range(1));
    const granula::host_bit_image bits = granula::pack<std::uint8_t>(img.view());
    granula::host_image<std::uint8_t> unpacked(n, n);
    granula::host_image<std::int32_t> out(n, n);
    granula::set_num_threads(static_cast<int>(state.range(2)));
    for (auto _ : state) {
        if (state.range(3)) {
            granula::unpack<std::uint8_t>(bits.view(), unpacked.view());
            granula::label<std::uint8_t>(unpacked.view(), out.view(), 2);
        } else {
            granula::label(bits.view(), out.view(), 2);
        }
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * n * n);
    granula::set_num_threads(0);
}
BENCHMARK(BM_label_bits)
    ->ArgsProduct({{10, 50, 90}, {1, 4, 16}, {1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
