// GPU benchmark of granula's CUDA morphology: erosion by horizontal and vertical lines against
// a device-to-device copy of the same image, timed with CUDA events in the same run.
//
// Method (GUIDE §5): warm-up, then the median of many timed runs; every run reads a different
// input and writes a different output among `--buffers` image pairs, so the 60 MB L2 of an H200
// never holds the data a run is about to read. Effective bandwidth counts the bytes the
// operation must move (one read and one write of the image), as for the copy.
//
//   bench_gpu_morphology [--quick] [--reps N] [--warmup N] [--buffers N] [--mode ignore|reflect|...]
//                        [--types uint8,float32,uint16] [--lengths 3,15,63,255,1001]
//                        [--u8-size N] [--f32-size N] [--json FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cuda_timing.hpp"
#include "granula/granula.hpp"

namespace {

using granula_bench::check;
using granula_bench::fill_random;
using granula_bench::median_ms;
using granula_bench::option_value;
using granula_bench::split;
using granula_bench::unknown_option;
// Runs queued back to back: the device time of each call.
constexpr auto timing = granula_bench::runs::back_to_back;

struct options {
    int reps = 30;
    int warmup = 3;
    int buffers = 4;
    std::int64_t u8_size = 16384;
    std::int64_t f32_size = 8192;
    std::vector<std::string> types = {"uint8", "float32"};
    std::vector<std::int64_t> lengths = {3, 15, 63, 255, 1001};
    granula::border_mode mode = granula::border_mode::ignore;
    bool extras = true;
    std::string json;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&] { return option_value(i, argc, argv); };
        if (a == "--quick") {
            o.reps = 7;
            o.u8_size = 8192;
            o.f32_size = 4096;
            o.extras = false;
        } else if (a == "--reps") {
            o.reps = std::max(1, std::atoi(value().c_str()));
        } else if (a == "--warmup") {
            o.warmup = std::max(0, std::atoi(value().c_str()));
        } else if (a == "--buffers") {
            o.buffers = std::max(1, std::atoi(value().c_str()));
        } else if (a == "--u8-size") {
            o.u8_size = std::atoll(value().c_str());
        } else if (a == "--f32-size") {
            o.f32_size = std::atoll(value().c_str());
        } else if (a == "--types") {
            o.types = split(value());
        } else if (a == "--lengths") {
            o.lengths.clear();
            for (const auto& s : split(value())) o.lengths.push_back(std::atoll(s.c_str()));
        } else if (a == "--mode") {
            o.mode = granula::parse_border_mode(value());
        } else if (a == "--no-extras") {
            o.extras = false;
        } else if (a == "--json") {
            o.json = value();
        } else {
            unknown_option(a);
        }
    }
    return o;
}

struct result {
    std::string type, what, mode;
    std::int64_t width, height, length;
    double ms, copy_ms, gbps;
};

template <class T>
void bench_type(const options& o, const char* type_name, std::int64_t size, std::vector<result>& results) {
    using namespace granula;
    const std::int64_t w = size, h = size;
    const double bytes = 2.0 * static_cast<double>(w) * h * sizeof(T);  // one read + one write
    host_image<T> host(w, h);
    fill_random(host, 12345);
    std::vector<device_image<T>> in, out;
    for (int b = 0; b < o.buffers; ++b) {
        in.push_back(upload<T>(host.view()));
        out.emplace_back(w, h);
    }
    check(cudaDeviceSynchronize(), "upload");
    auto pick_in = [&](int i) { return device_view<const T>(in[i % o.buffers].view()); };
    auto pick_out = [&](int i) { return out[(i + 1) % o.buffers].view(); };

    // The copy floor: the faster of a plain cudaMemcpyAsync of the whole (contiguous) buffer and
    // granula's 2-D copy (cudaMemcpy2DAsync), which the runtime may run more slowly.
    const double copy2d_ms = median_ms(o.reps, o.warmup, timing, [&](int i) { copy<T>(pick_in(i), pick_out(i)); });
    double copy_ms = copy2d_ms;
    if (in[0].stride() == w) {
        const double copy1d_ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
            check(cudaMemcpyAsync(pick_out(i).data(), pick_in(i).data(), static_cast<std::size_t>(w * h) * sizeof(T),
                                  cudaMemcpyDeviceToDevice),
                  "cudaMemcpyAsync");
        });
        copy_ms = std::min(copy_ms, copy1d_ms);
        results.push_back({type_name, "copy (cudaMemcpyAsync)", "-", w, h, 0, copy1d_ms, copy_ms, bytes / copy1d_ms / 1e6});
    }
    results.push_back({type_name, "copy 2-D (granula::copy)", "-", w, h, 0, copy2d_ms, copy_ms, bytes / copy2d_ms / 1e6});

    const border mode{o.mode, 0.0};
    for (const bool horizontal : {true, false})
        for (const std::int64_t L : o.lengths) {
            const auto se = horizontal ? structuring_element::hline(L) : structuring_element::vline(L);
            const double ms =
                median_ms(o.reps, o.warmup, timing, [&](int i) { erosion(pick_in(i), pick_out(i), se, mode); });
            results.push_back({type_name, std::string("erosion ") + (horizontal ? "hline" : "vline"),
                               std::string(to_string(o.mode)), w, h, L, ms, copy_ms, bytes / ms / 1e6});
        }
    if (o.extras) {
        struct extra {
            const char* what;
            morphology_op op;
            structuring_element se;
            border_mode mode;
        };
        const extra extras[] = {
            {"dilation hline", morphology_op::dilation, structuring_element::hline(63), border_mode::ignore},
            {"erosion vline", morphology_op::erosion, structuring_element::vline(63), border_mode::reflect},
            {"erosion rect", morphology_op::erosion, structuring_element::rectangle(63, 63), border_mode::ignore},
            {"opening rect", morphology_op::opening, structuring_element::rectangle(15, 15), border_mode::ignore},
            {"white_tophat rect", morphology_op::white_tophat, structuring_element::rectangle(63, 63),
             border_mode::ignore},
        };
        for (const auto& e : extras) {
            const double ms = median_ms(o.reps, o.warmup, timing,
                                        [&](int i) { morphology<T>(e.op, pick_in(i), pick_out(i), e.se, {e.mode, 0}); });
            results.push_back({type_name, std::string(e.what) + " " + e.se.to_string(), std::string(to_string(e.mode)),
                               w, h, e.se.width() * e.se.height() > 1 ? std::max(e.se.width(), e.se.height()) : 1, ms,
                               copy_ms, bytes / ms / 1e6});
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    if (!granula::cuda_available()) {
        std::printf("no CUDA device: nothing to benchmark\n");
        return 0;
    }
    cudaDeviceProp prop{};
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    std::printf("device: %s, %d SMs, L2 %.0f MB; %s\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
                granula::build_info().c_str());
    std::printf("median of %d runs after %d warm-ups, inputs rotated over %d buffers\n", o.reps, o.warmup, o.buffers);

    std::vector<result> results;
    for (const auto& t : o.types) {
        if (t == "uint8")
            bench_type<std::uint8_t>(o, "uint8", o.u8_size, results);
        else if (t == "uint16")
            bench_type<std::uint16_t>(o, "uint16", o.u8_size / 2, results);
        else if (t == "float32")
            bench_type<float>(o, "float32", o.f32_size, results);
        else
            std::fprintf(stderr, "unknown type %s (uint8, uint16, float32)\n", t.c_str());
    }

    std::printf("\n%-8s %-12s %-34s %-8s %6s %10s %9s %9s\n", "type", "size", "operation", "mode", "L", "ms",
                "x copy", "GB/s");
    for (const auto& r : results) {
        const std::string size = std::to_string(r.width) + "x" + std::to_string(r.height);
        std::printf("%-8s %-12s %-34s %-8s %6lld %10.4f %9.2f %9.0f\n", r.type.c_str(), size.c_str(), r.what.c_str(),
                    r.mode.c_str(), static_cast<long long>(r.length), r.ms, r.ms / r.copy_ms, r.gbps);
    }
    if (!o.json.empty()) {
        std::ofstream f(o.json);
        f << "[\n";
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto& r = results[i];
            f << "  {\"type\": \"" << r.type << "\", \"operation\": \"" << r.what << "\", \"mode\": \"" << r.mode
              << "\", \"width\": " << r.width << ", \"height\": " << r.height << ", \"length\": " << r.length
              << ", \"ms\": " << r.ms << ", \"copy_ms\": " << r.copy_ms << ", \"gbps\": " << r.gbps << "}"
              << (i + 1 < results.size() ? ",\n" : "\n");
        }
        f << "]\n";
    }
    return 0;
}
