// The per-axis filter plan: coefficients computed once in double on the host, then used by the
// CPU kernels and the CUDA kernels alike (so both run the same float recursion).
#pragma once

#include <cstdint>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/gaussian/gaussian.hpp"

namespace granula::detail {

enum class gaussian_kind : int { identity, fir, deriche, yvv };

// Deriche's filter (two sections), recursive6 (three) and recursive5 (two, then a first-order
// section: real_last) as parallel sections per direction, in "delta form":
//   u    = b0 x[k] + b1 x[k-1]                 (anticausal: c1 x[k+1] + c2 x[k+2])
//   d[k] = u - e1 y[k-1] + a2 d[k-1],  y[k] = y[k-1] + d[k]
// with e1 = 1 + a1 + a2 computed without cancellation. For sigma in the hundreds the poles lie
// within 1e-3 of 1, where rounding a1 to float would move the section's gain by percents; e1
// and a2 keep their relative precision, which is what keeps the filter exact up to sigma 1000.
// result = causal + anticausal + direct x[k].
// A first-order section (a real pole z) has b1 = c2 = a2 = 0 and e1 = 1 - z.
// Sections past `sections` are zero.
struct deriche_coeffs {
    static constexpr int max_sections = 3;
    int sections = 2;
    bool real_last = false;  // the last section is first order
    float b0[max_sections], b1[max_sections], c1[max_sections], c2[max_sections], e1[max_sections],
        a2[max_sections];
    float direct;
    float causal_gain[max_sections], anticausal_gain[max_sections];  // steady-state y of each section for input 1
};

// Young-van Vliet: w[k] = B x[k] + b1 w[k-1] + b2 w[k-2] + b3 w[k-3], then the same backwards
// over w. m maps the deviations (w[N-1-j] - u) of the last three causal outputs from the
// steady state u of the input beyond the end to the anticausal start state (v[N+i] - u)
// (Triggs & Sdika 2006), computed numerically from the filter itself. Both backends run it in
// double: this direct third-order form amplifies rounding by up to about 1/B (7e3 at sigma
// 30, 2e6 at sigma 200), so in float32 two orders of the same arithmetic differed by 1e-3 of
// the signal at sigma 90 and the 1995 filter was 29% off at sigma 200.
struct yvv_coeffs {
    double B, b1, b2, b3;
    double m[3][3];
};

struct axis_plan {
    gaussian_kind kind = gaussian_kind::identity;
    border_mode mode = border_mode::reflect;
    float cval = 0.0f;
    int order = 0;
    std::int64_t pad = 0;       // extension samples read beyond each end of a line
    std::vector<float> taps;    // fir, and yvv's two_way middle pixel: 2 radius + 1 correlation weights,
                                // taps[j + radius] for x[k + j]
    deriche_coeffs deriche{};
    yvv_coeffs yvv{};
    gaussian_split split = gaussian_split::one_way;  // yvv on the CUDA backend
};

// The fir radius: `radius` when >= 0, else truncate * sigma rounded half up (scipy's
// int(truncate * sigma + 0.5)). A double, so that validation can bound it before it is taken as
// an integer.
double fir_radius(double sigma, double truncate, std::int64_t radius);

// Taps of scipy's gaussian_filter1d kernel (correlation weights), radius r.
std::vector<double> gaussian_fir_taps(double sigma, int order, std::int64_t radius);

// `method` is resolved already (resolve_gaussian_method for the backend that runs the plan).
axis_plan make_axis_plan(gaussian_method method, double sigma, int order, border_mode mode, double cval,
                         double truncate, std::int64_t radius, gaussian_split split);

}  // namespace granula::detail
