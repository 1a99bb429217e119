// CUDA grey morphology: an element is applied through its decomposition, each segment a 1-D
// min/max pass (horizontal_pass.cu, vertical_pass.cu, element_passes.cu), or for a diagonal line
// the linear filters' scan-line passes (diagonal_on_scan_lines); compound operations combine
// those, as the CPU backend does (src/morphology/cpu/morphology_cpu.cpp). Every launch and copy
// is on the caller's stream; temporaries are allocated and freed in stream order, so nothing
// here waits for the device.
#include "morphology/cuda/morphology_cuda.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

#include "core/border_index.hpp"
#include "core/cuda/check.cuh"
#include "lines/cuda/lines_cuda.hpp"
#include "lines/diagonal_line_plan.hpp"
#include "morphology/cuda/line_pass.cuh"
#include "morphology/cuda/pair_levels.hpp"
#include "morphology/cuda/tuning.hpp"
#include "morphology/cuda/words.cuh"

namespace granula::cuda {
namespace detail {

using granula::detail::check_cuda;
using granula::detail::check_launch;

// ---- out = a - b ----------------------------------------------------------------------------------
namespace {

constexpr int elementwise_threads = tuning_policy::elementwise_block_threads;

template <class V>
__device__ __forceinline__ typename V::mem difference(typename V::mem a, typename V::mem b) {
    using T = typename V::elem;
    if constexpr (std::is_floating_point_v<T>)
        return a - b;
    else if constexpr (V::P == 4)
        return __vsubus4(a, b);
    else if constexpr (V::P == 2)
        return __vsubus2(a, b);
    else
        return a > b ? static_cast<T>(a - b) : T{0};
}

template <class V>
__global__ void __launch_bounds__(elementwise_threads)
    subtract_kernel(const typename V::elem* a, i64 a_stride, const typename V::elem* b, i64 b_stride,
                    typename V::elem* out, i64 out_stride, i64 width, i64 height, i64 n_words) {
    const i64 w = static_cast<i64>(blockIdx.x) * elementwise_threads + threadIdx.x;
    if (w >= n_words) return;
    for (i64 y = blockIdx.y; y < height; y += gridDim.y) {
        const auto va = load_mem<V>(a + y * a_stride, w, width);
        const auto vb = load_mem<V>(b + y * b_stride, w, width);
        store_mem<V>(out + y * out_stride, w, width, difference<V>(va, vb));
    }
}

template <class V>
void launch_subtract(device_view<const typename V::elem> a, device_view<const typename V::elem> b,
                     device_view<typename V::elem> out, cudaStream_t stream) {
    const i64 n_words = (a.width() + V::P - 1) / V::P;
    const dim3 grid(static_cast<unsigned>((n_words + elementwise_threads - 1) / elementwise_threads),
                    static_cast<unsigned>(std::min<i64>(a.height(), 65535)));
    subtract_kernel<V><<<grid, elementwise_threads, 0, stream>>>(a.data(), a.stride(), b.data(), b.stride(), out.data(),
                                                                 out.stride(), a.width(), a.height(), n_words);
    check_launch("subtract_kernel");
}

}  // namespace

template <class T>
void subtract(device_view<const T> a, device_view<const T> b, device_view<T> out, cudaStream_t stream) {
    if constexpr (sizeof(T) < 4) {
        if (!word_aligned<T>(a.data(), a.stride()) || !word_aligned<T>(b.data(), b.stride()) ||
            !word_aligned<T>(out.data(), out.stride())) {
            launch_subtract<scalar<T>>(a, b, out, stream);
            return;
        }
    }
    launch_subtract<packed<T>>(a, b, out, stream);
}

}  // namespace detail

// ---- composition ------------------------------------------------------------------------------------
namespace {

using detail::pass_params;
using detail::scratch_image;

template <class T>
void copy_view(device_view<const T> in, device_view<T> out, cudaStream_t stream) {
    granula::detail::check_cuda(cudaMemcpy2DAsync(out.data(), out.stride() * sizeof(T), in.data(),
                                                  in.stride() * sizeof(T), in.width() * sizeof(T), in.height(),
                                                  cudaMemcpyDeviceToDevice, stream),
                                "cudaMemcpy2DAsync");
}

// The pass of a segment (pointing down): its arms, extremum and border rule.
template <class T>
pass_params<T> segment_params(const line_segment& segment, bool maximum, border mode) {
    pass_params<T> p;
    // Erosion reads f(x + b) for b in [-origin, length - 1 - origin]; dilation reads f(x - b).
    const long long low = segment.origin, high = segment.length - 1 - segment.origin;
    p.before = maximum ? high : low;
    p.after = maximum ? low : high;
    p.maximum = maximum;
    p.mode = mode.mode;
    p.pad = mode.mode == border_mode::constant ? static_cast<T>(mode.cval)
            : maximum                          ? detail::identity_value<T, true>()
                                               : detail::identity_value<T, false>();
    return p;
}

// Sheared segments may write a crop of their result: in(x, y)'s to out(x - out_x0, y - out_y0).
template <class T>
void apply_segment(device_view<const T> in, device_view<T> out, line_segment segment, bool maximum, border mode,
                   cudaStream_t stream, long long out_x0 = 0, long long out_y0 = 0) {
    segment = granula::detail::pointing_down(segment);
    const pass_params<T> p = segment_params<T>(segment, maximum, mode);
    const bool cropped = out_x0 != 0 || out_y0 != 0 || out.width() != in.width() || out.height() != in.height();
    if (cropped && (segment.horizontal() || segment.vertical() || segment.dy < 1))
        throw std::logic_error("granula bug: a cropped result from a pass that is not sheared");
    if (segment.horizontal())
        detail::horizontal_pass<T>(in, out, p, stream);
    else if (segment.vertical())
        detail::vertical_pass<T>(in, out, p, stream);
    else if (segment.dy >= 1)
        detail::sheared_pass<T>(in, out, p, segment.dx, segment.dy, stream, out_x0, out_y0);
    else
        throw std::logic_error("granula bug: no pass for a periodic line of step (" + std::to_string(segment.dx) +
                               ", 0)");
}

// Separable elements: the element's segments in sequence, each pass extending its input by
// `mode` (exact, as a horizontal pass never mixes rows nor a vertical one columns).
template <class T>
void erode_or_dilate_separable(device_view<const T> in, device_view<T> out, const structuring_element& footprint,
                               bool maximum, border mode, cudaStream_t stream) {
    const auto& segments = footprint.decomposition().front().segments;
    if (segments.empty()) {
        copy_view<T>(in, out, stream);
        return;
    }
    // Passes ping-pong between `out` and a scratch image; the first reads `in`, the last
    // lands in `out`.
    scratch_image<T> scratch;
    if (segments.size() > 1) scratch = scratch_image<T>(in.width(), in.height(), stream);
    device_view<T> targets[2] = {out, scratch.view()};
    std::size_t target = (segments.size() - 1) % 2;
    device_view<const T> source = in;
    for (const auto& segment : segments) {
        apply_segment<T>(source, targets[target], segment, maximum, mode, stream);
        source = targets[target];
        target ^= 1;
    }
}

// The element as run groups: each group's terms (horizontal or vertical runs, or single
// pixels, read at shifts) are combined in one shared-memory pass (runs_pass), then the group's
// further segments `rest` run over that. A pass whose first segment is a periodic line or a
// diagonal becomes single pixels whose rest starts with that segment (an octagon's diagonals,
// say).
struct run_group {
    std::vector<line_segment> rest;
    std::vector<detail::run_term> terms;
    detail::runs_plan runs;  // the terms' launches (erode_or_dilate_fused plans them once per call)
};

std::vector<run_group> run_groups(const granula::detail::element_plan& plan, bool maximum) {
    std::vector<run_group> groups;
    const auto group_for = [&](const std::vector<line_segment>& rest) -> run_group& {
        for (auto& g : groups)
            if (g.rest == rest) return g;
        groups.push_back({rest, {}, {}});
        return groups.back();
    };
    for (const auto& group : plan.groups)
        for (const auto& pass : group.passes) {
            long long length = 1, start = 0;
            bool vertical = false;
            std::vector<line_segment> rest = group.rest;
            if (pass.first) {
                const line_segment s = granula::detail::pointing_down(*pass.first);
                if (s.horizontal() || s.vertical()) {
                    vertical = s.vertical();
                    length = s.length;
                    // Erosion reads x + [-origin, length - 1 - origin]; dilation the offsets negated.
                    start = maximum ? -(s.length - 1 - s.origin) : -s.origin;
                } else {
                    rest.insert(rest.begin(), *pass.first);
                }
            }
            auto& g = group_for(rest);
            for (const auto& shift : pass.shifts)
                g.terms.push_back({shift.x + (vertical ? 0 : start), shift.y + (vertical ? start : 0), length, vertical});
        }
    return groups;
}

// A line at an angle whose runs, read at every repeat of its period, hold at most 64 pixels
// (lines up to about L = 64) and span at most `max_folded_rows` rows becomes runs alone: one runs
// pass (the period then a pair level of that pass), with no sheared pass over a padded
// intermediate after it. Unchanged when those runs would not fit the runs kernel's tiles. The
// runs kernel stages and builds its levels over the element's rows beside each 64-row tile, so
// tall folds lose. 16384^2 uint8 erosion, one H100 (stop 57, ms, two passes -> folded): line:25:10
// 1.056 -> 0.760, line:31:30 1.072 -> 0.842, line:41:20 1.029 -> 0.865, line:63:30 (37 rows)
// 1.037 -> 0.992, line:47:70 (47 rows) 1.120 either way, but line:63:60 and line:63:120 (63
// rows) 1.028 -> 1.169; one H200 (stop 53, at most 3 repeats then): line:41:80 (41 rows) 1.138
// -> 1.002.
template <class T>
void fold_short_periodic_line(run_group& g, bool maximum) {
    if (g.rest.size() != 1) return;
    const line_segment& s = g.rest[0];
    if (s.horizontal() || s.vertical()) return;
    // Only while the pair levels can plan over every pixel (more anchors than that: one lookup
    // each, dearer than the sheared pass saved).
    long long pixels = 0;
    for (const auto& t : g.terms) pixels += t.length * s.length;
    if (pixels > static_cast<long long>(detail::pair_levels_max_anchors)) return;
    // The pass over the periodic line reads x + (k - origin) * (dx, dy), k in [0, length), or
    // those offsets negated for a dilation.
    const long long sign = maximum ? -1 : 1;
    std::vector<detail::run_term> terms;
    for (long long k = 0; k < s.length; ++k)
        for (const auto& t : g.terms)
            terms.push_back({t.x + sign * (k - s.origin) * s.dx, t.y + sign * (k - s.origin) * s.dy, t.length,
                             t.vertical});
    long long top = terms[0].y, bottom = top;
    for (const auto& t : terms)
        top = std::min(top, t.y), bottom = std::max(bottom, t.y + (t.vertical ? t.length - 1 : 0));
    if (bottom - top + 1 > detail::tuning_policy::max_folded_rows) return;
    detail::runs_plan runs = detail::plan_runs<T>(terms);
    if (!runs) return;
    g.terms = std::move(terms);
    g.rest.clear();
    g.runs = std::move(runs);
}

// The general path without padded copies where it can: each run group's runs and shifted
// accumulation in one shared-memory pass that reads the input through its border rule
// (runs_pass); groups with further segments run them over a padded intermediate, and the pass
// over the groups without folds those results in. A single periodic line or diagonal under
// ignore or constant borders is one sheared pass. False when the element needs the general
// plan below.
template <class T>
bool erode_or_dilate_fused(device_view<const T> in, device_view<T> out, const granula::detail::element_plan& plan,
                           bool maximum, border mode, T pad, cudaStream_t stream) {
    const bool padless = granula::detail::pads_with_one_value(mode.mode);
    if (plan.groups.size() == 1 && plan.groups[0].rest.empty() && plan.groups[0].passes.size() == 1) {
        const auto& pass = plan.groups[0].passes[0];
        if (padless && pass.first && pass.shifts.size() == 1 && pass.shifts[0].x == 0 && pass.shifts[0].y == 0 &&
            !pass.first->horizontal() && !pass.first->vertical()) {
            apply_segment<T>(in, out, *pass.first, maximum, mode, stream);
            return true;
        }
    }
    std::vector<run_group> groups = run_groups(plan, maximum);
    if (groups.size() == 1) fold_short_periodic_line<T>(groups[0], maximum);
    const detail::runs_launches* direct = nullptr;
    for (auto& g : groups) {
        if (!g.runs) g.runs = detail::plan_runs<T>(g.terms);
        if (!g.runs) return false;
        if (g.rest.empty()) direct = g.runs.get();
    }
    const long long width = in.width() + plan.left + plan.right, height = in.height() + plan.top + plan.bottom;
    const border inside{border_mode::ignore, 0.0};
    // One group whose last segment is sheared (a line at an angle: its period's runs, then the
    // periodic line): that pass writes the crop straight into `out`, no padded result nor copy.
    if (groups.size() == 1 && direct == nullptr) {
        const line_segment last = granula::detail::pointing_down(groups[0].rest.back());
        if (!last.horizontal() && !last.vertical() && last.dy >= 1) {
            scratch_image<T> a(width, height, stream), b;
            detail::runs_pass<T>(in, mode.mode, pad, a.view(), -plan.left, -plan.top, {}, *groups[0].runs, maximum,
                                 stream);
            for (std::size_t i = 0; i + 1 < groups[0].rest.size(); ++i) {
                if (b.view().data() == nullptr) b = scratch_image<T>(width, height, stream);
                apply_segment<T>(a.view(), b.view(), groups[0].rest[i], maximum, inside, stream);
                std::swap(a, b);
            }
            apply_segment<T>(a.view(), out, groups[0].rest.back(), maximum, inside, stream, plan.left, plan.top);
            return true;
        }
    }
    std::vector<scratch_image<T>> results;  // each group's result, padded
    for (const auto& g : groups) {
        if (g.rest.empty()) continue;
        scratch_image<T> a(width, height, stream), b(width, height, stream);
        detail::runs_pass<T>(in, mode.mode, pad, a.view(), -plan.left, -plan.top, {}, *g.runs, maximum, stream);
        for (const auto& segment : g.rest) {
            apply_segment<T>(a.view(), b.view(), segment, maximum, inside, stream);
            std::swap(a, b);
        }
        results.push_back(std::move(a));
    }
    const auto cropped = [&](const scratch_image<T>& r) {
        return device_view<const T>(r.view().subview(plan.left, plan.top, in.width(), in.height()));
    };
    std::size_t folded = 0;
    if (direct != nullptr) {
        detail::runs_pass<T>(in, mode.mode, pad, out, 0, 0, results.empty() ? device_view<const T>{} : cropped(results[0]),
                             *direct, maximum, stream);
        folded = results.empty() ? 0 : 1;
    } else {
        copy_view<T>(cropped(results[0]), out, stream);
        folded = 1;
    }
    for (; folded < results.size(); ++folded) detail::combine<T>(out, cropped(results[folded]), maximum, stream);
    return true;
}

// Any element, by the plan of element_plan.hpp (as the CPU's erode_or_dilate_general).
template <class T>
void erode_or_dilate_general(device_view<const T> in, device_view<T> out, const structuring_element& footprint,
                             bool maximum, border mode, cudaStream_t stream) {
    const granula::detail::element_plan plan = granula::detail::plan_element(footprint, maximum);
    const T neutral = maximum ? detail::identity_value<T, true>() : detail::identity_value<T, false>();
    const T pad = mode.mode == border_mode::constant ? static_cast<T>(mode.cval) : neutral;
    if (erode_or_dilate_fused<T>(in, out, plan, maximum, mode, pad, stream)) return;
    const long long width = in.width() + plan.left + plan.right, height = in.height() + plan.top + plan.bottom;
    scratch_image<T> padded(width, height, stream), result(width, height, stream), inner, first_pass, spare;
    detail::padded_copy<T>(in, padded.view(), plan.left, plan.top, mode.mode, pad, stream);
    const border inside{border_mode::ignore, 0.0};
    bool have_result = false;
    for (const auto& group : plan.groups) {
        // The first group accumulates straight into `result`.
        if (have_result && inner.view().data() == nullptr) inner = scratch_image<T>(width, height, stream);
        scratch_image<T>* target = have_result ? &inner : &result;
        bool initialise = true;
        for (const auto& pass : group.passes) {
            device_view<const T> source = padded.view();
            if (pass.first) {
                if (first_pass.view().data() == nullptr) first_pass = scratch_image<T>(width, height, stream);
                apply_segment<T>(padded.view(), first_pass.view(), *pass.first, maximum, inside, stream);
                source = first_pass.view();
            }
            detail::accumulate_shifted<T>(target->view(), source, pass.shifts, maximum, initialise, stream);
            initialise = false;
        }
        for (const auto& segment : group.rest) {
            if (spare.view().data() == nullptr) spare = scratch_image<T>(width, height, stream);
            apply_segment<T>(target->view(), spare.view(), segment, maximum, inside, stream);
            std::swap(*target, spare);
        }
        if (have_result)
            detail::accumulate_shifted<T>(result.view(), inner.view(), {{0, 0}}, maximum, false, stream);
        have_result = true;
    }
    const auto cropped = result.view().subview(plan.left, plan.top, in.width(), in.height());
    copy_view<T>(cropped, out, stream);
}

template <class T>
void erode_or_dilate(device_view<const T> in, device_view<T> out, const structuring_element& footprint,
                     bool maximum, border mode, cudaStream_t stream) {
    if (footprint.separable())
        erode_or_dilate_separable<T>(in, out, footprint, maximum, mode, stream);
    else
        erode_or_dilate_general<T>(in, out, footprint, maximum, mode, stream);
}

// An opening (first_max false) or closing by one vertical or one horizontal line in one kernel
// (fused_opening.cuh); false when the elements or the border mode need the two passes.
template <class T>
bool fused_opening_or_closing(device_view<const T> in, device_view<T> out, const structuring_element& first,
                              const structuring_element& second, bool first_max, border mode, cudaStream_t stream) {
    if (!first.separable() || !second.separable()) return false;
    const auto& s1 = first.decomposition().front().segments;
    const auto& s2 = second.decomposition().front().segments;
    if (s1.size() != 1 || s2.size() != 1) return false;
    const line_segment a = granula::detail::pointing_down(s1[0]), b = granula::detail::pointing_down(s2[0]);
    const bool vertical = a.vertical() && b.vertical();
    if (!vertical && !(a.horizontal() && b.horizontal())) return false;
    return detail::fused_line_pair<T>(in, out, vertical, segment_params<T>(a, first_max, mode),
                                      segment_params<T>(b, !first_max, mode), stream);
}

// A diagonal line's erosion, dilation, opening or closing, uint8 or uint16 under border ignore or
// constant, on the linear filters' scan-line passes (lines/cuda/scan_line_passes.cuh) down the
// rows (lines/diagonal_line_plan.hpp), which beat the sheared pass (one H200, 16384² uint8
// erosion by line(63, 45) 0.445 -> 0.289 ms, line(1001, 45) 0.760 -> 0.495; 8000² opening by
// line(41, 45) 0.309 -> 0.129; docs/benchmarks.md, stop 49). False where this does not apply.
template <class T>
bool diagonal_on_scan_lines(morphology_op op, device_view<const T> in, device_view<T> out,
                            const structuring_element& erosion_element, const structuring_element& dilation_element,
                            border mode, cudaStream_t stream) {
    if constexpr (!std::is_same_v<T, std::uint8_t> && !std::is_same_v<T, std::uint16_t>) {
        return false;
    } else {
        const auto plan = granula::detail::diagonal_line_plan(op, erosion_element, dilation_element, mode, in.width(),
                                                              in.height(), false);
        if (!plan) return false;
        const device_view<T> filtered[] = {out};
        device_line_outputs<T> outputs;
        outputs.filtered = filtered;
        cuda::line_filter_angles<T>(in, *plan, outputs, granula::stream(stream));
        return true;
    }
}

template <class T>
void run(morphology_op op, device_view<const T> in, device_view<T> out, const structuring_element& erosion_element,
         const structuring_element& dilation_element, border mode, cudaStream_t stream) {
    const auto on_scan_lines = [&](morphology_op o, device_view<const T> from, device_view<T> to) {
        return diagonal_on_scan_lines<T>(o, from, to, erosion_element, dilation_element, mode, stream);
    };
    const auto erode = [&](device_view<const T> from, device_view<T> to) {
        if (!on_scan_lines(morphology_op::erosion, from, to))
            erode_or_dilate<T>(from, to, erosion_element, false, mode, stream);
    };
    const auto dilate = [&](device_view<const T> from, device_view<T> to) {
        if (!on_scan_lines(morphology_op::dilation, from, to))
            erode_or_dilate<T>(from, to, dilation_element, true, mode, stream);
    };
    switch (op) {
    case morphology_op::erosion: erode(in, out); return;
    case morphology_op::dilation: dilate(in, out); return;
    case morphology_op::opening: {
        if (on_scan_lines(op, in, out)) return;
        if (fused_opening_or_closing<T>(in, out, erosion_element, dilation_element, false, mode, stream)) return;
        scratch_image<T> tmp(in.width(), in.height(), stream);
        erode(in, tmp.view());
        dilate(tmp.view(), out);
        return;
    }
    case morphology_op::closing: {
        if (on_scan_lines(op, in, out)) return;
        if (fused_opening_or_closing<T>(in, out, dilation_element, erosion_element, true, mode, stream)) return;
        scratch_image<T> tmp(in.width(), in.height(), stream);
        dilate(in, tmp.view());
        erode(tmp.view(), out);
        return;
    }
    case morphology_op::white_tophat:
    case morphology_op::black_tophat: {
        const bool white = op == morphology_op::white_tophat;
        scratch_image<T> filtered(in.width(), in.height(), stream);
        run<T>(white ? morphology_op::opening : morphology_op::closing, in, filtered.view(), erosion_element,
               dilation_element, mode, stream);
        if (white)
            detail::subtract<T>(in, filtered.view(), out, stream);
        else
            detail::subtract<T>(filtered.view(), in, out, stream);
        return;
    }
    case morphology_op::gradient: {
        scratch_image<T> eroded(in.width(), in.height(), stream);
        erode(in, eroded.view());
        dilate(in, out);
        detail::subtract<T>(out, eroded.view(), out, stream);
        return;
    }
    }
}

}  // namespace

template <class T>
void morphology(morphology_op op, device_view<const T> in, device_view<T> out,
                const structuring_element& erosion_element, const structuring_element& dilation_element, border mode,
                stream s) {
    if (in.empty()) return;
    run<T>(op, in, out, erosion_element, dilation_element, mode, granula::detail::to_cuda(s.native_handle()));
}

#define GRANULA_INSTANTIATE(type, name)                                                                  \
    template void morphology<type>(morphology_op, device_view<const type>, device_view<type>,            \
                                   const structuring_element&, const structuring_element&, border, stream); \
    template void detail::subtract<type>(device_view<const type>, device_view<const type>, device_view<type>, \
                                         cudaStream_t);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::cuda
