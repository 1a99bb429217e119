// GPU benchmark of binary morphology on bit-packed images, timed with CUDA
// events in one run against its two yardsticks (issue 7): a device-to-device
// copy of the packed image, and granula's own uint8 erosion of the unpacked
// image. Packing and unpacking are timed apart.
//
// Method (GUIDE §5): warm-up, median of many runs, every run on a different
// input/output pair among `--buffers`, so the L2 does not hold what a run
// reads. Bandwidth counts one read and one write of the packed image.
//
//   bench_gpu_binary [--size N] [--reps N] [--warmup N] [--buffers N]
//   [--no-uint8]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "cuda_timing.hpp"
#include "granula/granula.hpp"

namespace {

using granula_bench::check;
using granula_bench::median_ms;
// Runs queued back to back: the device time of each call.
constexpr auto timing = granula_bench::runs::back_to_back;

struct options {
    std::int64_t size = 16384;
    int reps = 30;
    int warmup = 3;
    int buffers = 4;
    bool uint8 = true;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&] { return std::atoll(granula_bench::option_value(i, argc, argv).c_str()); };
        if (a == "--size")
            o.size = value();
        else if (a == "--reps")
            o.reps = static_cast<int>(std::max(1LL, value()));
        else if (a == "--warmup")
            o.warmup = static_cast<int>(std::max(0LL, value()));
        else if (a == "--buffers")
            o.buffers = static_cast<int>(std::max(1LL, value()));
        else if (a == "--no-uint8")
            o.uint8 = false;
        else
            granula_bench::unknown_option(a);
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace granula;
    const options o = parse(argc, argv);
    if (!cuda_available()) {
        std::printf("no CUDA device: nothing to benchmark\n");
        return 0;
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device: %s, %d SMs, L2 %.0f MB; %s\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
                build_info().c_str());
    const std::int64_t n = o.size;
    std::printf(
        "%lldx%lld, 97%% ones, median of %d runs after %d warm-ups, "
        "inputs rotated over %d buffers\n",
        static_cast<long long>(n), static_cast<long long>(n), o.reps, o.warmup, o.buffers);

    // A random image with 97% ones, so erosions by large squares leave something.
    host_image<std::uint8_t> pixels(n, n);
    std::uint64_t s = 88172645463325252ull;
    for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            pixels.view()(y, x) = (s % 100) < 97 ? 1 : 0;
        }
    const host_bit_image packed = pack<std::uint8_t>(pixels.view());
    std::vector<device_bit_image> in, out;
    for (int b = 0; b < o.buffers; ++b) {
        in.push_back(upload(packed.view()));
        out.emplace_back(n, n);
    }
    check(cudaDeviceSynchronize(), "upload");
    auto pick_in = [&](int i) { return const_device_bit_view(in[i % o.buffers].view()); };
    auto pick_out = [&](int i) { return out[(i + 1) % o.buffers].view(); };
    const double bytes = 2.0 * static_cast<double>(in[0].stride()) * n * sizeof(bit_word);

    const double copy_ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
        check(cudaMemcpyAsync(pick_out(i).data(), pick_in(i).data(), static_cast<std::size_t>(bytes / 2),
                              cudaMemcpyDeviceToDevice),
              "cudaMemcpyAsync");
    });
    std::printf("\n%-44s %10s %9s %9s\n", "operation (packed)", "ms", "x copy", "GB/s");
    std::printf("%-44s %10.4f %9.2f %9.0f\n", "copy (cudaMemcpyAsync)", copy_ms, 1.0, bytes / copy_ms / 1e6);

    struct run_case {
        const char* what;
        binary_op op;
        structuring_element se;
        border_mode mode;
    };
    const run_case cases[] = {
        {"binary_erosion", binary_op::erosion, structuring_element::square(63), border_mode::ignore},
        {"binary_erosion", binary_op::erosion, structuring_element::square(63), border_mode::reflect},
        {"binary_erosion", binary_op::erosion, structuring_element::hline(63), border_mode::ignore},
        {"binary_erosion", binary_op::erosion, structuring_element::vline(63), border_mode::ignore},
        {"binary_erosion", binary_op::erosion, structuring_element::square(3), border_mode::ignore},
        {"binary_erosion", binary_op::erosion, structuring_element::square(255), border_mode::ignore},
        {"binary_dilation", binary_op::dilation, structuring_element::square(63), border_mode::ignore},
        {"binary_opening", binary_op::opening, structuring_element::square(15), border_mode::ignore},
    };
    double square63_ms = 0;
    for (const auto& c : cases) {
        const double ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
            binary_morphology(c.op, pick_in(i), pick_out(i), c.se, {c.mode, 0});
        });
        if (c.op == binary_op::erosion && c.se.to_string() == "rect:63x63" && c.mode == border_mode::ignore)
            square63_ms = ms;
        const std::string name = std::string(c.what) + " " + c.se.to_string() + " " + std::string(to_string(c.mode));
        std::printf("%-44s %10.4f %9.2f %9.0f\n", name.c_str(), ms, ms / copy_ms, bytes / ms / 1e6);
    }

    if (o.uint8) {
        // The yardstick on unpacked pixels: granula's grey uint8 erosion, and
        // packing itself.
        const int buffers = std::min(o.buffers, 2);  // 2 x 2 x 268 MB at 16384^2
        std::vector<device_image<std::uint8_t>> pin, pout;
        for (int b = 0; b < buffers; ++b) {
            pin.push_back(upload<std::uint8_t>(pixels.view()));
            pout.emplace_back(n, n);
        }
        check(cudaDeviceSynchronize(), "upload");
        const double grey_ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
            erosion(device_view<const std::uint8_t>(pin[i % buffers].view()), pout[(i + 1) % buffers].view(),
                    structuring_element::square(63));
        });
        const double pack_ms =
            median_ms(o.reps, o.warmup, timing,
                      [&](int i) { pack<std::uint8_t>(pin[i % buffers].view(), out[(i + 1) % o.buffers].view()); });
        const double unpack_ms =
            median_ms(o.reps, o.warmup, timing,
                      [&](int i) { unpack<std::uint8_t>(pick_in(i), pout[(i + 1) % buffers].view()); });
        // Binary morphology of the uint8 pixels themselves: the call (the grey operation made
        // 0/1); the grey operation alone; the same through bits (pack, operate, unpack), which
        // the call did before stop 45.
        device_bit_image packed_pixels(n, n), packed_result(n, n);
        std::printf("\n%-44s %10s %10s %12s\n", "uint8 pixels, ignore", "call ms", "grey ms", "via bits ms");
        const std::pair<binary_op, const char*> pixel_cases[] = {
            {binary_op::erosion, "rect:3x3"},   {binary_op::erosion, "rect:63x63"}, {binary_op::erosion, "disk:7"},
            {binary_op::erosion, "line:31:30"}, {binary_op::erosion, "disk:31"},    {binary_op::opening, "rect:15x15"},
            {binary_op::opening, "disk:7"}};
        for (const auto& [op, spec] : pixel_cases) {
            const auto se = structuring_element::parse(spec);
            const auto src = [&](int i) { return device_view<const std::uint8_t>(pin[i % buffers].view()); };
            const auto dst = [&](int i) { return pout[(i + 1) % buffers].view(); };
            const double call_ms = median_ms(o.reps, o.warmup, timing,
                                             [&](int i) { binary_morphology<std::uint8_t>(op, src(i), dst(i), se); });
            const morphology_op grey = op == binary_op::erosion ? morphology_op::erosion : morphology_op::opening;
            const double grey_alone_ms = median_ms(o.reps, o.warmup, timing,
                                                   [&](int i) { morphology<std::uint8_t>(grey, src(i), dst(i), se); });
            const double bits_ms = median_ms(o.reps, o.warmup, timing, [&](int i) {
                pack<std::uint8_t>(src(i), packed_pixels.view());
                binary_morphology(op, packed_pixels.view(), packed_result.view(), se);
                unpack<std::uint8_t>(packed_result.view(), dst(i));
            });
            const std::string name = std::string(to_string(op)) + " " + spec;
            std::printf("%-44s %10.4f %10.4f %12.4f\n", name.c_str(), call_ms, grey_alone_ms, bits_ms);
        }
        std::printf("\n%-44s %10.4f\n", "uint8 erosion rect:63x63 ignore (grey path)", grey_ms);
        std::printf("%-44s %10.4f\n", "pack uint8 -> bits", pack_ms);
        std::printf("%-44s %10.4f\n", "unpack bits -> uint8", unpack_ms);
        std::printf(
            "\nbinary erosion 63x63: %.2fx the packed copy (target <= 3), "
            "%.1fx faster than uint8 (target >= 10)\n",
            square63_ms / copy_ms, grey_ms / square63_ms);
    }
    return 0;
}
