// Gaussian smoothing and Gaussian derivatives with scipy.ndimage.gaussian_filter's meaning
// (GUIDE §1 "Gaussian"): sigma in pixels and derivative order per axis, axis 0 = rows (y),
// axis 1 = columns (x); borders named as scipy's modes (reflect, constant, nearest, mirror, wrap).
//
// The result along an axis is the convolution with the normalised sampled Gaussian
//   g(k) = exp(-k^2 / 2 sigma^2) / sum_j exp(-j^2 / 2 sigma^2)
// times scipy's derivative polynomial (order 1: -k/sigma^2, order 2: k^2/sigma^4 - 1/sigma^2).
// Methods:
//   fir      that kernel truncated at radius = round(truncate * sigma) (or `radius`): exact to
//            float rounding; cost grows with sigma.
//   deriche  Deriche's 4th-order recursive filter (orders 0..2), normalised (unit DC gain; unit
//            response to x and x^2/2 for the derivatives), run as second-order sections; cost
//            does not depend on sigma. Relative l2 error of the impulse response <= 1e-3 for
//            sigma in [1, 200] (docs/gaussian.md has the measured table).
//   recursive6  the same kind of filter of 6th order (three sections per direction, orders 0..2,
//            coefficients fitted by scripts/gaussian_fit6.py): relative l2 error of the impulse
//            response about 4e-6 for order 0 (below cv2.GaussianBlur's truncated kernel), 3e-5
//            for order 1, 2e-4 for order 2, sigma 1 to 1000 (docs/gaussian.md). CPU only for
//            now: the CUDA backend throws unsupported.
//   recursive5  5th order: two second-order sections and one first-order section (a real
//            pole) per direction, fitted by the same script: relative l2 error of the impulse
//            response about 4e-5 for order 0 (10x recursive6's, 10x below deriche's; on real
//            images still below cv2.GaussianBlur's), 2.4e-4 for order 1, 1.4e-3 for order 2,
//            sigma 1 to 1000. About 1.1x faster than recursive6 on the CPU, where the
//            vertical pass then advances 4 lane vectors per step without spilling its state.
//            CPU only for now, like recursive6.
//   yvv1995, yvv2002  Young-van Vliet's 3rd-order filter with the 1995 or 2002 coefficients and
//            Triggs-Sdika's right-border initialisation (order 0 only): the filter of the
//            seed paper (Lee 2014), kept so its results can be reproduced; 2-12% off.
//   automatic  fir below sigma gaussian_fir_max_sigma, recursive5 from there on on the CPU; on the
//            GPU fir below gaussian_fir_max_sigma_cuda, deriche from there on.
// Recursive methods start at each border with the state the mode's extension gives: exactly
// for constant and nearest; for reflect, mirror and wrap the CPU runs the recursion over the
// extension until the filter's response has decayed below float precision, and the CUDA
// deriche path sums the periodic extension's contributions from the line's own states (the
// same result to float rounding, at a cost that does not grow with sigma).
//
// sigma 0 on an axis leaves that axis untouched (its order is then ignored, as in scipy).
// An axis of length 1 is filtered like any other (the modes define the outside pixels), so
// order 0 returns the input there and orders 1 and 2 return 0 under reflect/nearest/mirror/wrap.
// Output: float32, or the input's pixel type (rounded to nearest, ties to even, and clamped to
// the type's range; NaN becomes 0). Float NaN input: every output whose computation reads a NaN
// is NaN (within the radius for fir, the whole line for the recursive methods).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "granula/core/border.hpp"
#include "granula/core/device.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {

enum class gaussian_method { automatic, fir, deriche, recursive6, recursive5, yvv1995, yvv2002 };

std::string_view to_string(gaussian_method method);
// Parses "auto", "fir", "deriche", "recursive6", "recursive5", "yvv" (= yvv1995, the seed paper's), "yvv1995", "yvv2002";
// throws invalid_argument listing the names.
gaussian_method parse_gaussian_method(std::string_view name);

// How the CUDA backend runs the yvv methods along a line: the seed paper's (Lee et al. 2014)
// schemes, kept so its measurements can be reproduced (the other methods run block-parallel).
//   one_way        one thread per line: the sequential recursion.
//   two_way        the paper's split: each half of a line runs its first recursion from its own
//                  end, the middle pixel is the sampled Gaussian (radius from truncate) and
//                  starts both halves' second recursion. Approximate: this is the paper's loss.
//   two_way_exact  two threads per line that hand the recursion's state across the middle
//                  instead: the sequential recursion's result up to float rounding.
// The CPU always runs the sequential recursion: it takes one_way and two_way_exact (the same
// result) and throws unsupported for two_way.
enum class gaussian_split { one_way, two_way, two_way_exact };

std::string_view to_string(gaussian_split split);
// Parses "one_way", "two_way", "two_way_exact"; throws invalid_argument listing the names.
gaussian_split parse_gaussian_split(std::string_view name);

// automatic uses fir for sigma below this on the CPU and below gaussian_fir_max_sigma_cuda on
// the GPU. CPU (Zen 3 build VM, 4096x4096 float32, both axes in one fir pass): fir level with
// recursive6 at sigma 2.5 (22-24 ms on 2 threads), slower from 3 (26-30 against 23-24 ms), on
// one thread slower from 3 as well (docs/benchmarks.md, "both axes fir in one pass"). On the
// GPU fir stays faster than the recursion up to a larger sigma (H200, 8192x8192 float32,
// truncate 4, both passes by bulk copy: fir 0.501 ms at sigma 8 against deriche's 0.588, 0.589
// against 0.591 at 10, 0.643 against 0.587 at 11; docs/benchmarks.md "Issue 5: fir rows by bulk
// copy").
inline constexpr double gaussian_fir_max_sigma = 3.0;
inline constexpr double gaussian_fir_max_sigma_cuda = 10.0;

// The largest sigma, and the largest fir radius, taken: the recursive filters run a reflect,
// mirror or wrap border out to about 8 sigma on each side of a line, and the fir kernel holds
// 2 radius + 1 taps; beyond these the buffers grow past memory (sigma 1e7 on a 50x60 image was
// killed for memory). Float rounding in the recursions grows with sigma too: the automatic
// method's largest error, relative to the image's maximum, is 4e-6 at sigma 1000, 3e-4 at 1e4
// and 4e-4 at 1e5 (docs/gaussian.md).
inline constexpr double gaussian_max_sigma = 1e5;
inline constexpr std::int64_t gaussian_max_radius = 1'000'000;

struct gaussian_params {
    std::array<double, 2> sigma{0.0, 0.0};  // per axis (rows, columns); >= 0
    std::array<int, 2> order{0, 0};         // derivative order per axis: 0, 1 or 2
    std::array<border_mode, 2> mode{border_mode::reflect, border_mode::reflect};
    double cval = 0.0;                      // outside value for border_mode::constant
    double truncate = 4.0;                  // fir radius = round(truncate * sigma)
    std::array<std::int64_t, 2> radius{-1, -1};  // fir radius per axis; -1: from truncate
    gaussian_method method = gaussian_method::automatic;
    gaussian_split split = gaussian_split::one_way;  // anything else needs a yvv method

    // Same sigma (and order) on both axes.
    static gaussian_params isotropic(double sigma, int order = 0) {
        gaussian_params p;
        p.sigma = {sigma, sigma};
        p.order = {order, order};
        return p;
    }
};

// The method `method` resolves to for one axis on `where` (automatic -> fir, or recursive5 on
// the CPU and deriche on the GPU).
gaussian_method resolve_gaussian_method(gaussian_method method, double sigma, device where = device::cpu);

// out = Gaussian of in. U is float or T (other pairs do not compile). Sizes must
// match; in and out may overlap. Throws invalid_argument for negative or non-finite sigma,
// order outside 0..2 (outside 0 for yvv), the ignore mode, a negative radius other than -1,
// truncate <= 0 or non-finite, a cval a float cannot hold, or a split other than one_way with
// a method other than yvv; unsupported for the two_way split on the CPU (and for recursive6 and
// recursive5 on the GPU).
template <pixel T, pixel U>
    requires(std::is_same_v<U, float> || std::is_same_v<U, T>)
void gaussian(host_view<const T> in, host_view<U> out, const gaussian_params& params);
// The same on the GPU, asynchronous on `s` (temporary buffers are freed after a synchronise).
template <pixel T, pixel U>
    requires(std::is_same_v<U, float> || std::is_same_v<U, T>)
void gaussian(device_view<const T> in, device_view<U> out, const gaussian_params& params, stream s = {});

// Convenience: a new float32 host image.
template <pixel T>
host_image<float> gaussian(host_view<const T> in, const gaussian_params& params) {
    host_image<float> out(in.width(), in.height());
    gaussian<T, float>(in, out.view(), params);
    return out;
}

}  // namespace granula
