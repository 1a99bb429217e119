// CPU Gaussian throughput (Google Benchmark): each method and axis on its own, 4096x4096
// float32; and a width whose rows are not 64-byte aligned (3000 columns). Peers
// (cv2.GaussianBlur, scipy.ndimage.gaussian_filter) are timed side by side in the same run by
// bench/compare_gaussian.py; this binary isolates granula's own passes:
//   bench_cpu_gaussian [--benchmark_filter=...]   [GRANULA_DISABLE_SIMD=1 for the scalar path]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "granula/granula.hpp"

namespace {

// Args: {method (0 fir, 1 deriche, 2 yvv1995, 3 recursive6, 4 recursive5), sigma, axes (0 rows only, 1 columns only, 2 both), threads}.
void BM_gaussian(benchmark::State& state) {
    const std::int64_t n = 4096;
    granula::host_image<float> img(n, n), out(n, n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(0, 1);
    for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) img.view()(y, x) = d(rng);
    const granula::gaussian_method methods[] = {granula::gaussian_method::fir, granula::gaussian_method::deriche,
                                                granula::gaussian_method::yvv1995,
                                                granula::gaussian_method::recursive6,
                                                granula::gaussian_method::recursive5};
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
    ->ArgsProduct({{0, 1, 2, 3, 4}, {1, 2, 5, 20}, {0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// 2000 rows of 3000 columns, sigma 5, both axes: rows 12000 bytes apart, so three in four start
// inside a cache line, and 3000 is no whole number of vectors. Args: {method (0 fir, 4
// recursive5, as above), pixel type (0 float32, 1 uint8; the output the same type), threads}.
void BM_gaussian_3000x2000(benchmark::State& state) {
    const std::int64_t w = 3000, h = 2000;
    granula::gaussian_params p;
    p.method = state.range(0) == 0 ? granula::gaussian_method::fir : granula::gaussian_method::recursive5;
    p.sigma = {5.0, 5.0};
    granula::set_num_threads(static_cast<int>(state.range(2)));
    std::mt19937 rng(1);
    const auto run = [&]<class T>(T) {
        granula::host_image<T> img(w, h), out(w, h);
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(rng() % 256);
        for (auto _ : state) {
            granula::gaussian<T, T>(granula::host_view<const T>(img.view()), out.view(), p);
            benchmark::DoNotOptimize(out.data());
        }
    };
    if (state.range(1) == 0)
        run(float{});
    else
        run(std::uint8_t{});
    state.SetItemsProcessed(state.iterations() * w * h);
    granula::set_num_threads(0);
}
BENCHMARK(BM_gaussian_3000x2000)->ArgsProduct({{0, 4}, {0, 1}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();

// The memory floor of the passes' access patterns: a plain copy of the 4096x4096 float image
// (huge pages) in the order a pass walks it. Args: {piece (floats of a row per band: 16 is the
// AVX2 vertical pass's band, 4096 whole rows), in place (0: into another image, as the vertical
// pass writes; 1: over the input, as the horizontal pass runs), threads (bands dealt in turn)}.
// Each band's rows are read top to bottom, the rows 24 ahead prefetched for reading and, out of
// place, for writing (what the vertical pass does; the hardware prefetchers do not follow the
// 16 KiB stride).
void BM_band_copy(benchmark::State& state) {
    const std::int64_t n = 4096, piece = state.range(0), ahead = 24;
    const bool in_place = state.range(1) != 0;
    const int threads = static_cast<int>(state.range(2));
    granula::host_image<float> a(n, n), b(n, n);
    for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) a.view()(y, x) = static_cast<float>(x + y), b.view()(y, x) = 0.0f;
    const granula::host_view<float> src = a.view(), dst = in_place ? a.view() : b.view();
    auto work = [&](int t) {
        for (std::int64_t x0 = t * piece; x0 < n; x0 += piece * threads)
            for (std::int64_t y = 0; y < n; ++y) {
                if (y + ahead < n)
                    for (std::int64_t o = 0; o < piece; o += 16) {
                        __builtin_prefetch(src.row(y + ahead) + x0 + o);
                        if (!in_place) __builtin_prefetch(dst.row(y + ahead) + x0 + o);
                    }
                const float* from = src.row(y) + x0;
                float* to = dst.row(y) + x0;
                for (std::int64_t o = 0; o < piece; ++o) to[o] = from[o] + 0.0f;  // not a memcpy: that skips in place
            }
    };
    for (auto _ : state) {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
        work(0);
        for (auto& t : pool) t.join();
        benchmark::DoNotOptimize(dst.row(0));
    }
    state.SetItemsProcessed(state.iterations() * n * n);
}
BENCHMARK(BM_band_copy)
    ->ArgsProduct({{16, 64, 4096}, {0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
