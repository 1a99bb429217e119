// Front of the linear filters: validates arguments, orders the angles, builds each angle's scan
// lines, resolves overlap and picks the backend. No pixel loops here.
#include "granula/lines/lines.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "core/enum_names.hpp"
#include "granula/core/device.hpp"
#include "granula/core/pixel_type.hpp"
#include "granula/core/error.hpp"
#include "granula/morphology/morphology.hpp"
#include "lines/cpu/lines_cpu.hpp"
#include "lines/line_plan.hpp"
#include "lines/scan_line_filter.hpp"
#include "lines/scan_lines.hpp"
#if defined(GRANULA_HAVE_CUDA)
#include "lines/cuda/lines_cuda.hpp"
#endif

namespace granula {
namespace {

constexpr std::array<std::pair<line_filter_kind, std::string_view>, 4> kind_names{{
    {line_filter_kind::opening, "opening"},
    {line_filter_kind::closing, "closing"},
    {line_filter_kind::erosion, "erosion"},
    {line_filter_kind::dilation, "dilation"},
}};

constexpr std::array<std::pair<line_algorithm, std::string_view>, 3> algorithm_names{{
    {line_algorithm::automatic, "auto"},
    {line_algorithm::fifo, "fifo"},
    {line_algorithm::stack, "stack"},
}};

constexpr std::array<std::pair<angle_reduction, std::string_view>, 3> reduction_names{{
    {angle_reduction::automatic, "auto"},
    {angle_reduction::supremum, "max"},
    {angle_reduction::infimum, "min"},
}};

std::string size_text(std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

template <class T, class Space>
void validate_input(const image_view<const T, Space>& in, std::span<const double> angles, const line_params& p) {
    if (in.empty())
        throw invalid_argument("input image is empty (" + size_text(in.width(), in.height()) +
                               "); linear filters need at least 1x1 pixels");
    if (angles.empty()) throw invalid_argument("the set of angles is empty; give at least one angle");
    if (static_cast<std::int64_t>(angles.size()) > max_line_angles)
        throw invalid_argument(std::to_string(angles.size()) + " angles are too many; a call takes at most " +
                               std::to_string(max_line_angles));
    if (p.length < 1)
        throw invalid_argument("line length " + std::to_string(p.length) + " is invalid; it must be >= 1");
    for (const double angle : angles) {
        if (!std::isfinite(angle))
            throw invalid_argument("angle " + std::to_string(angle) + " is not a finite number of degrees");
        const std::int64_t extent = detail::scan_line_extent(angle, in.width(), in.height());
        if (p.length > extent)
            throw invalid_argument("line length " + std::to_string(p.length) + " does not fit the " +
                                   size_text(in.width(), in.height()) + " image at " + std::to_string(angle) +
                                   " degrees: its scan lines are at most " + std::to_string(extent) +
                                   " pixels long");
    }
    const border_mode m = p.mode.mode;
    if (m != border_mode::ignore && m != border_mode::constant && m != border_mode::nearest &&
        m != border_mode::reflect)
        throw invalid_argument("border mode '" + std::string(to_string(m)) +
                               "' is not available for linear filters; allowed: ignore, constant, nearest, reflect");
    if (m == border_mode::constant) {
        const double lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        const bool ok = std::numeric_limits<T>::is_integer ? p.mode.cval >= lo && p.mode.cval <= hi
                                                           : !std::isnan(p.mode.cval) &&
                                                                 (std::isinf(p.mode.cval) || std::abs(p.mode.cval) <= hi);
        if (!ok)
            throw invalid_argument("cval " + std::to_string(p.mode.cval) + " is not representable as " +
                                   std::string(pixel_traits<T>::name) + " (NaN is not allowed)");
    }
}

template <class T, class Space, class U>
void check_same_size(const image_view<const T, Space>& in, const image_view<U, Space>& out, const char* what) {
    if (out.width() != in.width() || out.height() != in.height())
        throw invalid_argument(std::string(what) + " is " + size_text(out.width(), out.height()) +
                               " but the input is " + size_text(in.width(), in.height()) + "; they must match");
}

template <class T, class Space, class U>
void check_output_size(const image_view<const T, Space>& in, const image_view<U, Space>& out, const char* what) {
    if (out.empty()) return;
    check_same_size(in, out, what);
    if (overlaps(in, out)) throw invalid_argument(std::string(what) + " overlaps the input; give separate memory");
}

template <class T, class Space>
void validate_outputs(const image_view<const T, Space>& in, std::size_t angle_count,
                      const line_angle_outputs<Space, T>& out) {
    check_output_size(in, out.extremum, "the extremum image");
    check_output_size(in, out.orientation, "the orientation image");
    if (!out.spectrum.empty() && out.spectrum.size() != angle_count)
        throw invalid_argument("the spectrum has " + std::to_string(out.spectrum.size()) + " entries for " +
                               std::to_string(angle_count) + " angles; they must match");
    if (!out.filtered.empty()) {
        if (out.filtered.size() != angle_count)
            throw invalid_argument("there are " + std::to_string(out.filtered.size()) + " filtered images for " +
                                   std::to_string(angle_count) + " angles; give one per angle");
        for (const auto& f : out.filtered) check_output_size(in, f, "a filtered image");
    }
}

// A diagonal is taken down the rows (make_scan_lines) where its windows stay the same: at 135
// degrees, and at 45 for odd λ. Its lanes then need no transposes (CPU, 4096x4096, opening by
// line(101), one thread, 46 degrees against 44: uint8 3.5 against 6.4 ms, uint16 8.0 against
// 11.6, float32 26.5 against 34.9; docs/benchmarks.md, 2026-12-01).
bool diagonal_down_rows(double angle, std::int64_t length) {
    const double a = detail::angle_modulo_180(angle);
    return a == 135.0 || (a == 45.0 && length % 2 == 1);
}

// Nearest and reflect extend a line by samples that every window reaching past its end holds
// already: the first stage's arms differ by at most one, so a window [i - before, i + after]
// (0 <= i) holds the line's samples [0, i + after], among them the mirror images [0, before - i
// - 1] that reflect puts before the line, and sample 0, nearest's; likewise at the end. The
// second stage reads only the first stage's results on the line. So both give ignore's image,
// which the fast paths compute (CPU vectorised, CUDA passes, and morphology's on the axes and
// diagonals); fifo and stack, asked for by name, still extend the lines, and the tests hold the
// two to each other. 2048x2048 uint8 opening by line(41, 30), CPU, one thread: 84 -> 2.2 ms;
// 8000x8000 at 0 degrees, CUDA morphology, one H100: 0.163-0.167 -> 0.082-0.083 ms (stop 68).
line_params with_equivalent_border(line_params p) {
    if (p.algorithm == line_algorithm::automatic &&
        (p.mode.mode == border_mode::nearest || p.mode.mode == border_mode::reflect))
        p.mode = border{border_mode::ignore, 0.0};
    return p;
}

// for_cpu: each angle's shift table on the host (CUDA builds its tables on the device).
detail::line_plan make_plan(std::int64_t width, std::int64_t height, std::span<const double> angles,
                            const line_params& p, bool for_cpu) {
    detail::line_plan plan;
    plan.length = static_cast<std::int32_t>(p.length);
    plan.closing = p.kind == line_filter_kind::closing || p.kind == line_filter_kind::dilation;
    plan.first_stage_only = p.kind == line_filter_kind::erosion || p.kind == line_filter_kind::dilation;
    plan.before = detail::line_arm_before(plan.length, plan.closing);
    plan.mode = with_equivalent_border(p).mode;
    plan.algorithm = p.algorithm;
    std::vector<std::int64_t> order(angles.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return angles[a] < angles[b]; });
    for (const std::int64_t i : order)
        plan.angles.push_back({detail::make_scan_lines(angles[i], width, height, for_cpu,
                                                       diagonal_down_rows(angles[i], p.length)),
                               i});
    return plan;
}

// Keys order every filter as an opening (closings' values reversed), so Eq. 3's extremum is the
// largest key and the other one the smallest.
bool reduction_reversed(const detail::line_plan& plan, angle_reduction reduction) {
    switch (reduction) {
        case angle_reduction::automatic: return false;
        case angle_reduction::supremum: return plan.closing;
        case angle_reduction::infimum: return !plan.closing;
    }
    throw invalid_argument("unknown reduction over angles");
}

// On the axes and diagonals the scan lines are the footprint lines of line(λ, θ) (lines.hpp), so
// morphology's passes compute the same image, 2-3x faster than the scan-line path on the axes on
// both backends (docs/benchmarks.md); morphology runs the diagonals on the scan-line path down
// the rows itself where that pays (lines/diagonal_line_plan.hpp; CUDA for uint8 and uint16), at
// 45 degrees with the arm mirrored, so even lengths take it too. `p` has its border
// as with_equivalent_border gives it (nearest and reflect as ignore); fifo and stack are asked
// for by name and keep theirs.
std::optional<morphology_op> footprint_equivalent(double angle, const line_params& p) {
    if (p.algorithm != line_algorithm::automatic) return std::nullopt;
    const double a = detail::angle_modulo_180(angle);
    if (!(a == 0.0 || a == 90.0 || a == 45.0 || a == 135.0)) return std::nullopt;
    switch (p.kind) {
        case line_filter_kind::opening: return morphology_op::opening;
        case line_filter_kind::closing: return morphology_op::closing;
        case line_filter_kind::erosion: return morphology_op::erosion;
        case line_filter_kind::dilation: return morphology_op::dilation;
    }
    return std::nullopt;
}

}  // namespace

std::string_view to_string(line_filter_kind kind) { return detail::name_of(kind_names, kind); }

std::string_view to_string(line_algorithm algorithm) { return detail::name_of(algorithm_names, algorithm); }

std::string_view to_string(angle_reduction reduction) { return detail::name_of(reduction_names, reduction); }

angle_reduction parse_angle_reduction(std::string_view name) {
    return detail::value_named(reduction_names, name, "reduction over angles");
}

line_filter_kind parse_line_filter_kind(std::string_view name) {
    return detail::value_named(kind_names, name, "linear filter");
}

line_algorithm parse_line_algorithm(std::string_view name) {
    return detail::value_named(algorithm_names, name, "line algorithm");
}

std::vector<double> evenly_spaced_angles(std::int64_t n) {
    if (n < 1 || n > max_line_angles)
        throw invalid_argument("number of angles " + std::to_string(n) + " is invalid; it must be in 1.." +
                               std::to_string(max_line_angles));
    std::vector<double> angles(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) angles[i] = 180.0 * static_cast<double>(i) / static_cast<double>(n);
    return angles;
}

std::vector<double> angle_range(double first, double last, double step) {
    if (!(std::isfinite(first) && std::isfinite(last) && std::isfinite(step)))
        throw invalid_argument("angle range " + std::to_string(first) + ":" + std::to_string(last) + " step " +
                               std::to_string(step) + " must be finite numbers");
    if (!(step > 0)) throw invalid_argument("angle step " + std::to_string(step) + " is invalid; it must be > 0");
    if (first > last)
        throw invalid_argument("angle range " + std::to_string(first) + ":" + std::to_string(last) +
                               " is empty; the first angle must not exceed the last");
    const double count = std::floor((last - first) / step + 1e-3) + 1;
    if (count > static_cast<double>(max_line_angles))
        throw invalid_argument("angle range " + std::to_string(first) + ":" + std::to_string(last) + " step " +
                               std::to_string(step) + " has more than " + std::to_string(max_line_angles) + " angles");
    std::vector<double> angles(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < angles.size(); ++i) angles[i] = first + static_cast<double>(i) * step;
    return angles;
}

template <pixel T>
void line_filter_angles(host_view<const T> in, std::span<const double> angles, const line_params& params,
                        const host_line_outputs<T>& out) {
    validate_input(in, angles, params);
    validate_outputs(in, angles.size(), out);
    detail::line_plan plan = make_plan(in.width(), in.height(), angles, params, true);
    plan.reduction_reversed = reduction_reversed(plan, out.reduction);
    cpu::line_filter_angles<T>(in, plan, out);
}

template <pixel T>
void line_filter_angles(device_view<const T> in, std::span<const double> angles, const line_params& params,
                        const device_line_outputs<T>& out, stream s) {
    validate_input(in, angles, params);
    validate_outputs(in, angles.size(), out);
    resolve_device(device::cuda);  // throws when there is no CUDA backend or device
#if defined(GRANULA_HAVE_CUDA)
    detail::line_plan plan = make_plan(in.width(), in.height(), angles, params, false);
    plan.reduction_reversed = reduction_reversed(plan, out.reduction);
    cuda::line_filter_angles<T>(in, plan, out, s);
#else
    static_cast<void>(s);
#endif
}

template <pixel T>
void line_filter(host_view<const T> in, host_view<T> out, double angle, const line_params& params) {
    const double angles[] = {angle};
    const line_params equivalent = with_equivalent_border(params);
    if (const auto op = footprint_equivalent(angle, equivalent)) {
        validate_input(in, angles, params);
        check_same_size(in, out, "a filtered image");  // morphology() handles overlap itself
        morphology<T>(*op, in, out, structuring_element::line(params.length, angle), equivalent.mode);
        return;
    }
    if (overlaps(in, out)) {
        const host_image<T> copy_of_input = clone<T>(in);
        line_filter<T>(copy_of_input.view(), out, angle, params);
        return;
    }
    const host_view<T> filtered[] = {out};
    host_line_outputs<T> outputs;
    outputs.filtered = filtered;
    line_filter_angles<T>(in, angles, params, outputs);
}

template <pixel T>
void line_filter(device_view<const T> in, device_view<T> out, double angle, const line_params& params, stream s) {
    const double angles[] = {angle};
    const line_params equivalent = with_equivalent_border(params);
    if (const auto op = footprint_equivalent(angle, equivalent)) {
        validate_input(in, angles, params);
        check_same_size(in, out, "a filtered image");  // morphology() handles overlap itself
        morphology<T>(*op, in, out, structuring_element::line(params.length, angle), equivalent.mode, s);
        return;
    }
    if (overlaps(in, out)) {
        device_image<T> copy_of_input(in.width(), in.height());
        copy<T>(in, copy_of_input.view(), s);
        line_filter<T>(copy_of_input.view(), out, angle, params, s);
        s.synchronize();  // copy_of_input is freed on return
        return;
    }
    const device_view<T> filtered[] = {out};
    device_line_outputs<T> outputs;
    outputs.filtered = filtered;
    line_filter_angles<T>(in, angles, params, outputs, s);
}

namespace {

void validate_lengths(std::span<const std::int64_t> lengths) {
    if (lengths.empty()) throw invalid_argument("the set of lengths is empty; give at least one length");
    if (static_cast<std::int64_t>(lengths.size()) > max_line_angles)
        throw invalid_argument(std::to_string(lengths.size()) + " lengths are too many; a granulometry takes at most " +
                               std::to_string(max_line_angles));
}

template <class T>
double sum_of(host_view<const T> image) {
    double total = 0;
    for (std::int64_t y = 0; y < image.height(); ++y) {
        double row = 0;
        for (std::int64_t x = 0; x < image.width(); ++x) row += static_cast<double>(image.row(y)[x]);
        total += row;
    }
    return total;
}

}  // namespace

template <pixel T>
std::vector<double> line_granulometry(host_view<const T> in, std::span<const std::int64_t> lengths,
                                      std::span<const double> angles, const line_params& params) {
    validate_lengths(lengths);
    std::vector<double> sums;
    host_image<T> extremum(in.width(), in.height());
    for (const std::int64_t length : lengths) {
        line_params p = params;
        p.length = length;
        host_line_outputs<T> out;
        out.extremum = extremum.view();
        line_filter_angles<T>(in, angles, p, out);
        sums.push_back(sum_of<T>(extremum.view()));
    }
    return sums;
}

template <pixel T>
std::vector<double> line_granulometry(device_view<const T> in, std::span<const std::int64_t> lengths,
                                      std::span<const double> angles, const line_params& params, stream s) {
    validate_lengths(lengths);
    std::vector<double> sums;
    device_image<T> extremum(in.width(), in.height());
    host_image<T> on_host(in.width(), in.height());
    for (const std::int64_t length : lengths) {
        line_params p = params;
        p.length = length;
        device_line_outputs<T> out;
        out.extremum = extremum.view();
        line_filter_angles<T>(in, angles, p, out, s);
        copy<T>(extremum.view(), on_host.view(), s);
        s.synchronize();
        sums.push_back(sum_of<T>(on_host.view()));
    }
    return sums;
}

#define GRANULA_INSTANTIATE(T, name)                                                                                  \
    template void line_filter<T>(host_view<const T>, host_view<T>, double, const line_params&);                  \
    template void line_filter<T>(device_view<const T>, device_view<T>, double, const line_params&, stream);      \
    template void line_filter_angles<T>(host_view<const T>, std::span<const double>, const line_params&,         \
                                        const host_line_outputs<T>&);                                            \
    template void line_filter_angles<T>(device_view<const T>, std::span<const double>, const line_params&,       \
                                        const device_line_outputs<T>&, stream);                                  \
    template std::vector<double> line_granulometry<T>(host_view<const T>, std::span<const std::int64_t>,         \
                                                      std::span<const double>, const line_params&);              \
    template std::vector<double> line_granulometry<T>(device_view<const T>, std::span<const std::int64_t>,       \
                                                      std::span<const double>, const line_params&, stream);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula
