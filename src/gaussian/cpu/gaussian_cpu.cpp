#include "gaussian/cpu/gaussian_cpu.hpp"

#include <type_traits>

#include "core/simd_dispatch.hpp"
#include "gaussian/cpu/gaussian_kernels.hpp"

namespace granula::cpu {

using detail::gaussian_kind;

// Lets a two-argument template name pass through GRANULA_SIMD_DISPATCH as one macro argument.
#define GRANULA_COMMA ,

// Both axes fir run as one pass: from this sum of the two radii on through staged bands and
// transposes (gaussian_fir_both), below it a row at a time (gaussian_fir_by_rows), whose time a
// pixel grows faster with the radius on 4096-wide images than on narrower ones (sigma 2, float32:
// 1.72 ns against 0.74 at 1080x1920; perhaps its 2r + 1 source rows, 16 KiB apart, meeting in
// one set of the L1 cache). 4096x4096, 2 threads, ms (AMD EPYC build VM, AVX2; docs/benchmarks.md,
// stop 44), uint8 / float32:
//   sigma 1 (4 + 4): by rows 12.1 / 9.0, staged 15.5 / 14.4, the two passes before 14.0 / 12.4;
//   sigma 1.5 (6 + 6): 18.6 / 17.8, 16.8 / 15.5, 20.2 / 21.4;
//   sigma 2 (8 + 8): 25.4 / 28.8, 18.4 / 17.0.
// At 1080x1920 by rows is the faster at sigma 1.5 and 2 too (uint8 1.78 against 2.08 ms at 1.5).
constexpr std::int64_t fir_staged_min_radii = 14;

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
    if (rows_axis.kind == gaussian_kind::fir && cols_axis.kind == gaussian_kind::fir) {
        if (static_cast<std::int64_t>(rows_axis.taps.size() / 2 + cols_axis.taps.size() / 2) >= fir_staged_min_radii)
            GRANULA_SIMD_DISPATCH_AVX512(gaussian_fir_both<T GRANULA_COMMA U>, in, out, rows_axis, cols_axis);
        else
            GRANULA_SIMD_DISPATCH_AVX512(gaussian_fir_by_rows<T GRANULA_COMMA U>, in, out, rows_axis, cols_axis);
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
