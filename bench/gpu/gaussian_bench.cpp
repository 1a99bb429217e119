// GPU benchmark of granula's CUDA Gaussian (order 0) against a device-to-device copy of the
// same image, timed with CUDA events in the same run (GUIDE §5): warm-up, median of many runs,
// inputs and outputs rotated over several image pairs so the 60 MB L2 of an H200 never holds
// the data a run reads. "ms" waits for each call before the next (host work included),
// "queued ms" queues them back to back (device time). CuPy's gaussian_filter is timed beside
// it by bench/compare_gaussian.py --gpu.
//
//   bench_gpu_gaussian [--size N] [--sigmas 1,3,5,10,20,50] [--methods auto,deriche,fir]
//                      [--axes both|0|1] [--type float32|uint8] [--reps N] [--buffers N]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cuda_timing.hpp"
#include "granula/granula.hpp"

namespace {

using granula_bench::median_ms;
using granula_bench::split;
// Each run waits for the previous: the time of a whole call, host work included.
constexpr auto timing = granula_bench::runs::each_alone;
constexpr auto queued = granula_bench::runs::back_to_back;

template <class T>
void bench(std::int64_t n, const std::vector<std::string>& sigmas, const std::vector<std::string>& methods,
           const std::string& axes, int reps, int buffers) {
    using namespace granula;
    std::vector<device_image<T>> in;
    std::vector<device_image<float>> out;
    std::vector<device_image<T>> copies;
    host_image<T> host(n, n);
    for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) host.view()(y, x) = static_cast<T>((x * 7 + y * 13) % 251);
    for (int i = 0; i < buffers; ++i) {
        in.push_back(upload<T>(host_view<const T>(host.view())));
        out.emplace_back(n, n);
        copies.emplace_back(n, n);
    }
    const double px = double(n) * double(n), bytes = px * (sizeof(T) + sizeof(float));
    const double copy = median_ms(reps, 3, timing, [&](int run) {
        const int i = run % buffers;
        granula::copy<T>(device_view<const T>(in[i].view()), copies[i].view());
    });
    std::printf("copy %lldx%lld %s (granula::copy): %.3f ms, %.0f GB/s (read+write)\n", (long long)n, (long long)n,
                std::string(pixel_traits<T>::name).c_str(), copy, 2 * px * sizeof(T) / copy / 1e6);
    std::printf("axes %s\n| method | sigma | ms | Gpx/s | queued ms | GB/s (in+out once) | copy ms |\n"
                "|---|---|---|---|---|---|---|\n",
                axes.c_str());
    for (const auto& m : methods)
        for (const auto& s : sigmas) {
            const double sigma = std::stod(s);
            gaussian_params p = gaussian_params::isotropic(sigma);
            if (axes == "0") p.sigma[1] = 0;
            if (axes == "1") p.sigma[0] = 0;
            p.method = parse_gaussian_method(m);
            auto run = [&](int r) {
                const int i = r % buffers;
                gaussian<T, float>(device_view<const T>(in[i].view()), out[i].view(), p);
            };
            const double ms = median_ms(reps, 3, timing, run);
            const double device_ms = median_ms(reps, 3, queued, run);
            const std::string name = m == "auto" ? "auto (" + std::string(to_string(resolve_gaussian_method(
                                                                   p.method, sigma, device::cuda))) + ")"
                                                 : m;
            std::printf("| %s | %s | %.3f | %.1f | %.3f | %.0f | %.3f |\n", name.c_str(), s.c_str(), ms, px / ms / 1e6,
                        device_ms, bytes / ms / 1e6, copy);
        }
}

}  // namespace

int main(int argc, char** argv) {
    std::int64_t n = 8192;
    int reps = 30, buffers = 3;
    std::string type = "float32", axes = "both";
    auto sigmas = split("1,3,5,10,20,50,200");
    auto methods = split("auto,deriche");
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--size") n = std::stoll(v);
        else if (a == "--sigmas") sigmas = split(v);
        else if (a == "--methods") methods = split(v);
        else if (a == "--type") type = v;
        else if (a == "--axes") axes = v;
        else if (a == "--reps") reps = std::stoi(v);
        else if (a == "--buffers") buffers = std::stoi(v);
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    try {
        if (type == "uint8") bench<std::uint8_t>(n, sigmas, methods, axes, reps, buffers);
        else bench<float>(n, sigmas, methods, axes, reps, buffers);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
