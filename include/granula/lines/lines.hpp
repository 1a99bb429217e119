// Linear openings and closings along digital lines at any angle, one angle or many at once,
// and the reductions over angles they are used for (Karas et al. 2015; GUIDE §1 "Lines",
// "Linear openings and analyses").
//
// Scan lines. For an angle θ (degrees, counter-clockwise from +x as seen on screen, modulo 180)
// the image is partitioned into parallel digital lines, every pixel on exactly one:
//   - |sin θ| > |cos θ| (steep): line c holds the pixels (c + s(y), y), s(y) = floor(y·k + 1/2),
//     k = -cot θ, one pixel per row;
//   - otherwise (flat): line c holds the pixels (x, c + s(x)), s(x) = floor(x·k + 1/2),
//     k = -tan θ, one pixel per column.
//   k is rounded to a multiple of 2^-32 (exact, 0 or ±1, at 0°, 45°, 90° and 135°) and s is
//   computed in integers, so every backend reads the same pixels.
// Each line's pixels inside the image are one 1-D signal. Along it, the opening by a segment
// of λ samples is dilation(erosion) with the window [i - λ/2, i + (λ-1)/2] for the erosion and
// its reflection for the dilation (origin at λ // 2, as everywhere in granula), the signal
// extended at both ends by the border mode: ignore (neutral value), constant (cval), nearest,
// reflect. This is the seed paper's operator: O(1) per pixel at every angle, translation
// invariant only at 0°, 45°, 90° and 135°, where it equals opening() by line(λ, θ).
//
// Algorithms along a scan line, each equal to the two-stage dilation(erosion) bit for bit:
//   fifo   streaming, after Bartovský et al.: one scan, queues bounded by λ, every output
//          written a fixed λ - 1 samples behind the read;
//   stack  Morard et al.'s ordered stack of cords (runs at or above a level), bounded by λ + 1
//          entries here because cords that have reached λ samples are written out at once;
//   automatic  under border ignore or constant, the two stages by van Herk/Gil-Werman, branch-free
//          and vectorised across lines (CPU: SIMD lanes; GPU: warps, four uint8 lines per
//          thread), several times faster than both above; fifo otherwise (docs/benchmarks.md).
//          line_filter() on the axes and diagonals (nearest and reflect: the axes only) runs
//          morphology() by line(λ, θ) instead: the same image, faster still; except uint8 and
//          uint16 diagonals under ignore and constant at 135 degrees, and at 45 for odd λ
//          (λ >= 2 on the GPU), which run down the rows as steep lines, faster than both.
// Erosion and dilation kinds are the first stage alone (the windows above).
//
// Reductions over a set of angles (never storing one image per angle unless asked):
//   extremum     by default sup over angles of the openings or erosions (inf of the closings or
//                dilations), Eq. 3: what the filter keeps; `reduction` asks for either one
//                (the inf of openings keeps what is at least λ long at every angle);
//   orientation  the index into `angles` of the angle that attains it (arg max for the sup,
//                arg min for the inf), ties to the smallest angle value;
//   spectrum     per angle, the sum of the filtered image (σ(α), Eq. 6), in double: exact for
//                integer pixels; for float32 the backends and algorithms add in different orders
//                (agreeing to 1e-12 relative in the tests), each the same on every run.
// Float NaN: a NaN within λ - 1 samples along a scan line makes the result NaN (as the
// two-stage operator with numpy's minimum/maximum); a NaN at any angle makes the extremum NaN
// (numpy's max and min over the stack), and its angle the orientation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {

// Openings and closings; erosion and dilation are their first stage alone (scan-line mode of
// erosion() and dilation(): the windows of the opening's erosion, and their reflection).
enum class line_filter_kind { opening, closing, erosion, dilation };
enum class line_algorithm { automatic, fifo, stack };

std::string_view to_string(line_filter_kind kind);
std::string_view to_string(line_algorithm algorithm);
// Parse "opening"/"closing"/"erosion"/"dilation" and "auto"/"fifo"/"stack"; throw
// invalid_argument listing the names.
line_filter_kind parse_line_filter_kind(std::string_view name);
line_algorithm parse_line_algorithm(std::string_view name);

struct line_params {
    std::int64_t length = 1;  // λ: samples along the scan line, >= 1 and at most the image's
                              // extent along the dominant axis of every angle used
    line_filter_kind kind = line_filter_kind::opening;
    border mode = {};  // ignore, constant, nearest or reflect
    line_algorithm algorithm = line_algorithm::automatic;
};

// Which extremum over the angles `extremum` and `orientation` take.
enum class angle_reduction {
    automatic,  // Eq. 3's: the supremum of openings and erosions, the infimum of closings and dilations
    supremum,   // the largest value at each pixel ("max")
    infimum,    // the smallest ("min")
};
// "auto", "max" and "min" (the CLI's and Python's names).
std::string_view to_string(angle_reduction reduction);
angle_reduction parse_angle_reduction(std::string_view name);

// Outputs of a many-angle computation; leave a field empty (default) to skip it. Views must
// have the input's size; `filtered`, when given, holds one image per angle.
template <class Space, class T>
struct line_angle_outputs {
    image_view<T, Space> extremum;
    image_view<std::int32_t, Space> orientation;
    angle_reduction reduction = angle_reduction::automatic;  // of extremum and orientation
    std::span<double> spectrum;  // host memory, one value per angle
    std::span<const image_view<T, Space>> filtered;
};
template <class T>
using host_line_outputs = line_angle_outputs<host_memory, T>;
template <class T>
using device_line_outputs = line_angle_outputs<device_memory, T>;

// One angle: out = the opening or closing of `in` along the scan lines of `angle`.
// in and out must have the same size and must not overlap.
template <pixel T>
void line_filter(host_view<const T> in, host_view<T> out, double angle, const line_params& params);
template <pixel T>
void line_filter(device_view<const T> in, device_view<T> out, double angle, const line_params& params,
                 stream s = {});

// Many angles at once (their order is kept; duplicates allowed, ties go to the smallest value).
template <pixel T>
void line_filter_angles(host_view<const T> in, std::span<const double> angles, const line_params& params,
                        const host_line_outputs<T>& out);
template <pixel T>
void line_filter_angles(device_view<const T> in, std::span<const double> angles, const line_params& params,
                        const device_line_outputs<T>& out, stream s = {});

// The most angles one call takes (and lengths a granulometry takes): each angle holds its scan
// lines' tables, and 1e9 angles of a 50x60 image had taken over 6 GB when they were stopped.
inline constexpr std::int64_t max_line_angles = 1'000'000;

// n angles evenly spaced over [0°, 180°): 0, 180/n, 2·180/n, ...; 1 <= n <= max_line_angles.
std::vector<double> evenly_spaced_angles(std::int64_t n);
// first, first + step, ... up to last (inclusive, within step/1000); step > 0, first <= last.
std::vector<double> angle_range(double first, double last, double step);

// Granulometry by linear openings (or closings): for each length, the sum over the image of the
// extremum over `angles` of the filtered image (an opening or closing again, so the sums
// decrease (increase) with the length). The pattern spectrum is the difference of neighbours.
template <pixel T>
std::vector<double> line_granulometry(host_view<const T> in, std::span<const std::int64_t> lengths,
                                      std::span<const double> angles, const line_params& params);
template <pixel T>
std::vector<double> line_granulometry(device_view<const T> in, std::span<const std::int64_t> lengths,
                                      std::span<const double> angles, const line_params& params, stream s = {});

// Rotation of a scanned page: the angle in [first, last] (degrees, counter-clockwise) whose
// scan lines best follow the page's lines, and how it was found. The score is computed for every
// angle first - 3, first - 3 + step, ... up to last + 3 (so that a peak at an end of the range
// keeps both flanks); the result is the centroid of the best peak above its half height
// (sub-step), clamped to [first, last]; 0 (clamped) when the scores are all equal.
// λ = length, or when length is 0, 0.6 x the page's extent along the middle of the range (its
// width for -10..10 degrees, its height for 80..100), at most what every angle's scan lines hold.
// Pixels are read as grey values, dark print on a light page; NaN is an invalid_argument.
// A page whose extent is at least 2048 pixels is first reduced by k = extent / 1024 (whole), each
// k x k block to its minimum (its darkest pixel), and λ by k: angles do not change with scale.
enum class deskew_method {
    closing_spectrum,  // the paper's: arg min of the spectrum of closings by line(λ, α): dark
                       // lines on a light page (staves, rules) survive only when aligned
    text_lines,        // arg max of Σ opening_λ^α(closing_{λ/16}^α(d)), d = the print's darkness
                       // (the page's closing by a line of λ/8 across the middle of the range,
                       // vertical for -10..10 degrees, minus the page): the
                       // closing joins each text line's characters into a band that a long
                       // line fits only when aligned (works for text pages and staves)
};
// "closing" and "text" (the CLI's and Python's names).
std::string_view to_string(deskew_method method);
deskew_method parse_deskew_method(std::string_view name);

struct deskew_params {
    double first = -10.0, last = 10.0, step = 0.1;
    std::int64_t length = 0;  // λ; 0 chooses from the image (0.6 x its width for -10..10)
    deskew_method method = deskew_method::text_lines;
};
struct deskew_result {
    double angle = 0.0;              // the page's rotation: rotating it by -angle straightens it
    std::vector<double> angles;      // the angles scored (the range and 3 degrees either side)
    std::vector<double> spectrum;    // the score of each
};
template <pixel T>
deskew_result detect_rotation(host_view<const T> page, const deskew_params& params);

}  // namespace granula
