// GPU benchmark of granula's general (non-separable) structuring elements: erosion by lines at
// an angle, a disk and an octagon against a device-to-device copy of the same image, timed with
// CUDA events in the same run (issue 3's targets: 16384 x 16384 uint8).
//
// Method (GUIDE §5): warm-up, then the median of `--reps` runs queued back to back; every run
// reads a different input and writes a different output among `--buffers` image pairs, so the
// H200's L2 never holds the data a run is about to read.
//
//   bench_gpu_shapes [--size N] [--reps N] [--warmup N] [--buffers N] [--type uint8|uint16|float32]
//                    [--op erosion|dilation|opening|...] [--mode ignore|reflect|...] [--shapes line:63:45,disk:31,...]
//   A shape "as-mask:SPEC" is SPEC's footprint given as a plain mask (the generic mask path).
#include <cuda_runtime.h>

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
using granula_bench::fill_random;
using granula_bench::median_ms;
using granula_bench::option_value;
using granula_bench::split;
using granula_bench::unknown_option;
constexpr auto timing = granula_bench::runs::back_to_back;

struct options {
    std::int64_t size = 16384;
    int reps = 15, warmup = 2, buffers = 4;
    std::string type = "uint8", op = "erosion";
    granula::border_mode mode = granula::border_mode::ignore;
    std::vector<std::string> shapes = {"line:63:45",   "line:255:30", "line:1001:30", "line:1001:10", "line:1001:45",
                                       "line:63:100",  "disk:31",     "disk:31:4",    "octagon:20:10"};
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&] { return option_value(i, argc, argv); };
        if (a == "--size") o.size = std::atoll(value().c_str());
        else if (a == "--reps") o.reps = std::max(1, std::atoi(value().c_str()));
        else if (a == "--warmup") o.warmup = std::max(0, std::atoi(value().c_str()));
        else if (a == "--buffers") o.buffers = std::max(1, std::atoi(value().c_str()));
        else if (a == "--type") o.type = value();
        else if (a == "--op") o.op = value();
        else if (a == "--mode") o.mode = granula::parse_border_mode(value());
        else if (a == "--shapes") o.shapes = split(value());
        else unknown_option(a);
    }
    return o;
}

template <class T>
void bench(const options& o) {
    using namespace granula;
    const std::int64_t w = o.size, h = o.size;
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
    const double copy_ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
        check(cudaMemcpyAsync(pick_out(i).data(), pick_in(i).data(), static_cast<std::size_t>(w * h) * sizeof(T),
                              cudaMemcpyDeviceToDevice),
              "cudaMemcpyAsync");
    });
    const morphology_op op = parse_morphology_op(o.op);
    std::printf("%s %lldx%lld %s mode %s, median of %d runs over %d buffers\n", o.type.c_str(),
                static_cast<long long>(w), static_cast<long long>(h), o.op.c_str(), std::string(to_string(o.mode)).c_str(), o.reps,
                o.buffers);
    std::printf("%-16s %10s %12s %8s\n", "element", "copy ms", "granula ms", "x copy");
    for (const auto& spec : o.shapes) {
        // "as-mask:SPEC": SPEC's footprint as a plain mask, through the generic mask path.
        const std::string_view mask_prefix = "as-mask:";
        const auto se = spec.rfind(mask_prefix, 0) == 0
                            ? structuring_element::from_mask(structuring_element::parse(spec.substr(mask_prefix.size())).footprint())
                            : structuring_element::parse(spec);
        const double ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
            morphology<T>(op, pick_in(i), pick_out(i), se, {o.mode, 0.0});
        });
        check(cudaGetLastError(), "erosion");
        std::printf("%-16s %10.4f %12.4f %8.1f\n", spec.c_str(), copy_ms, ms, ms / copy_ms);
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    if (!granula::cuda_available()) {
        std::printf("no CUDA device: nothing to benchmark\n");
        return 0;
    }
    if (o.type == "uint8")
        bench<std::uint8_t>(o);
    else if (o.type == "uint16")
        bench<std::uint16_t>(o);
    else
        bench<float>(o);
    return 0;
}
