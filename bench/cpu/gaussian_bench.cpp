// CPU Gaussian throughput (Google Benchmark): each method and axis on its own, 4096x4096
// float32. Peers (cv2.GaussianBlur, scipy.ndimage.gaussian_filter) are timed side by side in the
// same run by bench/compare_gaussian.py; this binary isolates granula's own passes:
//   bench_cpu_gaussian [--benchmark_filter=...]   [GRANULA_DISABLE_SIMD=1 for the scalar path]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

#include "granula/granula.hpp"

namespace {

// Args: {method (0 fir, 1 deriche, 2 yvv1995, 3 recursive6), sigma, axes (0 rows only, 1 columns only, 2 both), threads}.
void BM_gaussian(benchmark::State& state) {
    const std::int64_t n = 4096;
    granula::host_image<float> img(n, n), out(n, n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(0, 1);
    for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) img.view()(y, x) = d(rng);
    const granula::gaussian_method methods[] = {granula::gaussian_method::fir, granula::gaussian_method::deriche,
                                                granula::gaussian_method::yvv1995,
                                                granula::gaussian_method::recursive6};
    granula::gaussian_params p;
    p.method = methods[state.range(0)];
    const auto sigma = static_cast<double>(state.range(1));
    p.sigma = {state.range(2) == 1 ? 0.0 : sigma, state.range(2) == 0 ? 0.0 : sigma};
    granula::set_num_threads(static_cast<int>(state.range(3)));
    for (auto _ : state) {
        granula::gaussian<float, float>(granula::host_view<const float>(img.view()), out.view(), p);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * n * n);
    state.SetLabel(std::string(granula::to_string(p.method)) + " " + granula::simd_target());
    granula::set_num_threads(0);
}

BENCHMARK(BM_gaussian)
    ->ArgsProduct({{0, 1, 2, 3}, {2, 5, 20}, {0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
