#include "gaussian/cpu/gaussian_cpu.hpp"

#include <type_traits>

#include "core/simd_dispatch.hpp"
#include "gaussian/cpu/gaussian_kernels.hpp"

namespace granula::cpu {

using detail::gaussian_kind;

// Lets a two-argument template name pass through GRANULA_SIMD_DISPATCH as one macro argument.
#define GRANULA_COMMA ,

// Both axes fir run as one pass (gaussian_fir_both) from this sum of the two radii on; below it
// the two passes are faster: the fused pass's staging and transposes cost more than the image
// traffic it saves when the kernels are short. Measured at 4096x4096 float32 (Zen 3 build VM,
// docs/benchmarks.md): sigma 1 (radii 4 + 4) two passes 11-13 ms against 14 on 2 threads,
// sigma 1.5 (6 + 6) level, sigma 2 (8 + 8) 23-26 ms against 20-21.
constexpr std::int64_t fir_fused_min_radii = 14;

// rows_axis filters along axis 0 (each column is a line), cols_axis along axis 1.
template <class T, class U>
void gaussian(host_view<const T> in, host_view<U> out, const detail::axis_plan& rows_axis,
              const detail::axis_plan& cols_axis) {
    if (cols_axis.kind == gaussian_kind::identity) {
        GRANULA_SIMD_DISPATCH_AVX512(gaussian_vertical_pass<T GRANULA_COMMA U>, in, out, rows_axis);
        return;
    }
    if (rows_axis.kind == gaussian_kind::identity) {
        GRANULA_SIMD_DISPATCH_AVX512(gaussian_horizontal_pass<T GRANULA_COMMA U>, in, out, cols_axis);
        return;
    }
    if (rows_axis.kind == gaussian_kind::fir && cols_axis.kind == gaussian_kind::fir &&
        static_cast<std::int64_t>(rows_axis.taps.size() / 2 + cols_axis.taps.size() / 2) >= fir_fused_min_radii) {
        GRANULA_SIMD_DISPATCH_AVX512(gaussian_fir_both<T GRANULA_COMMA U>, in, out, rows_axis, cols_axis);
        return;
    }
    if constexpr (std::is_same_v<U, float>) {
        // Each pass reads all of a work item's lines before writing them, so the row pass can
        // run in place on the column pass's result: no temporary image (whose first touch cost
        // ~30 ms of page faults at 4096x4096, measured).
        GRANULA_SIMD_DISPATCH_AVX512(gaussian_vertical_pass<T GRANULA_COMMA float>, in, out, rows_axis);
        GRANULA_SIMD_DISPATCH_AVX512(gaussian_horizontal_pass<float GRANULA_COMMA float>, host_view<const float>(out), out,
                              cols_axis);
        return;
    }
    host_image<float> between(in.width(), in.height());
    GRANULA_SIMD_DISPATCH_AVX512(gaussian_vertical_pass<T GRANULA_COMMA float>, in, between.view(), rows_axis);
    GRANULA_SIMD_DISPATCH_AVX512(gaussian_horizontal_pass<float GRANULA_COMMA U>, host_view<const float>(between.view()),
                          out, cols_axis);
}

#undef GRANULA_COMMA

template void gaussian<std::uint8_t, std::uint8_t>(host_view<const std::uint8_t>, host_view<std::uint8_t>,
                                                   const detail::axis_plan&, const detail::axis_plan&);
template void gaussian<std::uint8_t, float>(host_view<const std::uint8_t>, host_view<float>,
                                            const detail::axis_plan&, const detail::axis_plan&);
template void gaussian<std::uint16_t, std::uint16_t>(host_view<const std::uint16_t>, host_view<std::uint16_t>,
                                                     const detail::axis_plan&, const detail::axis_plan&);
template void gaussian<std::uint16_t, float>(host_view<const std::uint16_t>, host_view<float>,
                                             const detail::axis_plan&, const detail::axis_plan&);
template void gaussian<float, float>(host_view<const float>, host_view<float>, const detail::axis_plan&,
                                     const detail::axis_plan&);

}  // namespace granula::cpu
