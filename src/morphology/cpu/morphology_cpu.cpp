// CPU grey morphology: an element is applied through its decomposition, each segment a 1-D
// min/max pass (morphology_kernels.cpp); compound operations combine those.
#include "morphology/cpu/morphology_cpu.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/border_index.hpp"
#include "core/parallel.hpp"
#include "core/recent_results.hpp"
#include "core/scratch_image.hpp"
#include "core/simd_dispatch.hpp"
#include "lines/cpu/lines_cpu.hpp"
#include "lines/diagonal_line_plan.hpp"
#include "morphology/cpu/morphology_kernels.hpp"
#include "morphology/cpu/stream_kernels.hpp"
#include "morphology/element_plan.hpp"
#include "morphology/shift_program.hpp"

namespace granula::cpu {
namespace {

// What a stage reads off the image in the modes with no source pixels there: the mode's
// constant, or the value that leaves a min (max) unchanged.
template <class T>
T pad_value(border mode, bool maximum) {
    return mode.mode == border_mode::constant ? static_cast<T>(mode.cval) : detail::neutral_value<T>(maximum);
}

template <class T>
detail::line_pass<T> make_pass(const line_segment& segment, bool maximum, border mode) {
    detail::line_pass<T> pass;
    // Erosion reads f(x + b) for b in [-origin, length - 1 - origin]; dilation reads f(x - b).
    const std::int64_t low = segment.origin, high = segment.length - 1 - segment.origin;
    pass.before = maximum ? high : low;
    pass.after = maximum ? low : high;
    pass.maximum = maximum;
    pass.mode = mode.mode;
    pass.pad = pad_value<T>(mode, maximum);
    return pass;
}

// One segment's pass. Steps are normalised to point down (or right), reversing the segment.
// A sheared segment may write a crop of in's frame: out(p) is the window at p + at.
template <class T>
void apply_segment(host_view<const T> in, host_view<T> out, line_segment segment, bool maximum, border mode,
                   detail::pixel_shift at = {}) {
    segment = detail::pointing_down(segment);
    const auto pass = make_pass<T>(segment, maximum, mode);
    if (segment.horizontal())
        GRANULA_SIMD_DISPATCH(horizontal_passes<T>, in, out, std::span<const detail::line_pass<T>>(&pass, 1));
    else if (segment.vertical())
        GRANULA_SIMD_DISPATCH(vertical_pass<T>, in, out, pass);
    else if (segment.dy >= 1)
        GRANULA_SIMD_DISPATCH(sheared_pass<T>, in, out, pass, segment.dx, segment.dy, at);
    else
        throw std::logic_error("granula bug: no pass for a periodic line of step (" + std::to_string(segment.dx) +
                               ", 0)");
}

// Separable elements (rectangles, axis-parallel lines) as a list of 1-D passes. Each pass extends
// its input by `mode` along its own direction only, so horizontal and vertical passes commute:
// an erosion or dilation runs its vertical passes first, and an opening or closing puts both
// stages' horizontal passes next to each other, where they run as one chain on each strip
// (two consecutive vertical passes, a vertical line's opening, as one streamed pair).
struct separable_step {
    line_segment segment;
    bool maximum = false;
};

std::vector<separable_step> separable_steps(const structuring_element& footprint, bool maximum, bool vertical_first) {
    std::vector<separable_step> steps;
    for (const auto& s : footprint.decomposition().front().segments) steps.push_back({s, maximum});
    std::stable_partition(steps.begin(), steps.end(),
                          [&](const separable_step& s) { return s.segment.horizontal() != vertical_first; });
    return steps;
}

// Runs the steps in order, consecutive ones of the same direction as one chain. Horizontal
// chains may run in place, vertical ones may not: those alternate between `out` and a scratch
// image, chosen from the last unit back so that the last writes `out`.
template <class T>
void run_separable(host_view<const T> in, host_view<T> out, const std::vector<separable_step>& steps, border mode) {
    if (steps.empty()) {
        copy<T>(in, out);
        return;
    }
    struct unit {
        std::size_t begin, end;  // steps [begin, end): a chain of one direction
        bool into_scratch = false;
    };
    std::vector<unit> units;
    for (std::size_t i = 0; i < steps.size();) {
        // A vertical chain is at most two passes (vertical_passes).
        const bool horizontal = steps[i].segment.horizontal();
        std::size_t j = i + 1;
        while (j < steps.size() && steps[j].segment.horizontal() == horizontal && (horizontal || j < i + 2)) ++j;
        units.push_back({i, j});
        i = j;
    }
    bool scratch_needed = false;
    for (std::size_t u = units.size() - 1; u > 0; --u) {
        // Unit u reads what unit u - 1 wrote: the other buffer when u is vertical.
        const bool vertical = !steps[units[u].begin].segment.horizontal();
        units[u - 1].into_scratch = vertical ? !units[u].into_scratch : units[u].into_scratch;
        scratch_needed |= units[u - 1].into_scratch;
    }
    std::optional<detail::scratch_like<T>> scratch;
    if (scratch_needed) scratch.emplace(out);
    host_view<const T> source = in;
    for (const unit& u : units) {
        const host_view<T> target = u.into_scratch ? scratch->view() : out;
        std::vector<detail::line_pass<T>> chain;
        for (std::size_t i = u.begin; i < u.end; ++i)
            chain.push_back(make_pass<T>(detail::pointing_down(steps[i].segment), steps[i].maximum, mode));
        const std::span<const detail::line_pass<T>> passes(chain);
        // The AVX-512 copy runs the horizontal chains of uint8 and float faster, uint16's slower
        // (Zen 5, 4096x4096 numpy arrays, opening by a line of 101: uint8 0 deg 1.41-1.46 ->
        // 1.22-1.25 ms on 2 threads, float 6.37 -> 5.75-5.85; uint16 4.8 -> 5.7 ms on one thread),
        // and the vertical ones faster since its windows run a vector wide (bench_cpu_lines 90
        // deg, uint8, 2 threads: 1.15-1.18 -> 1.03-1.06 ms; docs/benchmarks.md, 2026-12-01).
        if (steps[u.begin].segment.horizontal() && !std::is_same_v<T, std::uint16_t>)
            GRANULA_SIMD_DISPATCH_AVX512(horizontal_passes<T>, source, target, passes);
        else if (steps[u.begin].segment.horizontal())
            GRANULA_SIMD_DISPATCH(horizontal_passes<T>, source, target, passes);
        else
            GRANULA_SIMD_DISPATCH_AVX512(vertical_passes<T>, source, target, passes, &u != &units.back());
        source = target;
    }
}

template <class T>
void erode_or_dilate_separable(host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                               bool maximum, border mode) {
    run_separable<T>(in, out, separable_steps(footprint, maximum, true), mode);
}

// Opening (closing): the first stage's vertical then horizontal passes, the second stage's
// horizontal then vertical ones.
template <class T>
void open_or_close_separable(host_view<const T> in, host_view<T> out, const structuring_element& first,
                             const structuring_element& second, bool closing, border mode) {
    auto steps = separable_steps(first, closing, true);
    const auto then = separable_steps(second, !closing, false);
    steps.insert(steps.end(), then.begin(), then.end());
    run_separable<T>(in, out, steps, mode);
}

// The image extended by `mode` on each side: the padding makes every later pass exact with
// border ignore, whatever directions the element's terms mix.
template <class T>
host_image<T> padded_copy(host_view<const T> in, std::int64_t left, std::int64_t right, std::int64_t top,
                          std::int64_t bottom, border mode, T pad) {
    const std::int64_t width = in.width(), height = in.height();
    host_image<T> padded(width + left + right, height + top + bottom);
    host_view<T> p = padded.view();
    detail::parallel_for(p.height(), p.pixel_count(), [&](std::int64_t y) {
        T* row = p.row(y);
        const std::int64_t source_y = detail::border_index(y - top, height, mode.mode);
        if (source_y < 0) {
            std::fill_n(row, p.width(), pad);
            return;
        }
        const T* source = in.row(source_y);
        for (std::int64_t x = 0; x < left; ++x) {
            const std::int64_t sx = detail::border_index(x - left, width, mode.mode);
            row[x] = sx < 0 ? pad : source[sx];
        }
        std::copy_n(source, width, row + left);
        for (std::int64_t x = left + width; x < p.width(); ++x) {
            const std::int64_t sx = detail::border_index(x - left, width, mode.mode);
            row[x] = sx < 0 ? pad : source[sx];
        }
    });
    return padded;
}

// A vertical segment's pass over `in` extended by `mode`, written to the padded frame `frame`
// (in at (left, top)): the rows come from the pass's own border rule, and the columns left and
// right of the image, which the padded copy would map to image columns by `mode`, take the
// pass's result at those columns (a vertical window commutes with that mapping; columns of
// padding values stay padding values).
template <class T>
void vertical_into_frame(host_view<const T> in, host_view<T> frame, const line_segment& segment, bool maximum,
                         border mode, std::int64_t left, std::int64_t top, T pad) {
    const auto pass = make_pass<T>(detail::pointing_down(segment), maximum, mode);
    const std::int64_t width = in.width();
    GRANULA_SIMD_DISPATCH(vertical_pass<T>, in, frame.subview(left, 0, width, frame.height()), pass, top);
    // Each padding column's source column (or -1: padding values), the same on every row.
    std::vector<std::int64_t> columns, from;
    for (std::int64_t x = 0; x < frame.width(); ++x)
        if (x < left || x >= left + width)
            columns.push_back(x), from.push_back(detail::border_index(x - left, width, mode.mode));
    constexpr std::int64_t rows_per_task = 256;
    const std::int64_t tasks = (frame.height() + rows_per_task - 1) / rows_per_task;
    detail::parallel_for(tasks, frame.height() * static_cast<std::int64_t>(columns.size()), [&](std::int64_t task) {
        const std::int64_t y_end = std::min(frame.height(), (task + 1) * rows_per_task);
        for (std::int64_t y = task * rows_per_task; y < y_end; ++y) {
            T* row = frame.row(y);
            for (std::size_t c = 0; c < columns.size(); ++c) row[columns[c]] = from[c] < 0 ? pad : row[left + from[c]];
        }
    });
}

// Runs at least this long, read at one place only, are not grown in cache (see below).
constexpr std::int64_t long_run = 16;

// Any element, by the plan of element_plan.hpp. Each group is accumulated over the output
// grown by the reach of its remaining segments (only the output itself when it has none, and
// then straight into `out`), its remaining segments run there, and the groups are combined
// into `out`. The accumulation reads pixels off the image as neutral, which is border ignore;
// other modes, and passes run on the whole source, read a copy padded by the element's reach.
template <class T>
void erode_or_dilate_general(host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                             bool maximum, border mode) {
    const detail::element_plan plan = detail::plan_element(footprint, maximum);
    // Horizontal and vertical runs (and single pixels) go through fused, cache-blocked passes
    // that grow them a pixel at a time, sharing the growth between runs of many lengths
    // (disks). A long run read at a single place is cheaper as a van Herk/Gil-Werman pass
    // (octagon 27:18 on 4096x4096 uint8, one thread: 35 -> 20 ms).
    const auto grown_in_cache = [](const detail::element_plan::shifted_pass& pass) {
        if (!pass.first) return true;
        return (pass.first->horizontal() || pass.first->vertical()) &&
               (pass.first->length < long_run || pass.shifts.size() > 1);
    };
    const bool whole_passes = std::any_of(plan.groups.begin(), plan.groups.end(), [&](const auto& group) {
        return !std::all_of(group.passes.begin(), group.passes.end(), grown_in_cache);
    });
    const T pad = pad_value<T>(mode, maximum);
    // When the source is read only by one vertical pass (a periodic-line disk's first line),
    // that pass reads `in` through the border rule and writes the padded frame itself: no
    // padded copy of the source.
    const auto& only = plan.groups.front().passes.front();
    const bool pass_pads = plan.groups.size() == 1 && plan.groups.front().passes.size() == 1 && !grown_in_cache(only) &&
                           only.first->vertical();
    const bool framed = mode.mode != border_mode::ignore || whole_passes;
    host_image<T> padded;
    detail::pixel_shift origin{0, 0};  // where the output's pixel (0, 0) lies in the source
    if (framed) origin = {plan.left, plan.top};
    if (framed && !pass_pads) padded = padded_copy<T>(in, plan.left, plan.right, plan.top, plan.bottom, mode, pad);
    const host_view<const T> source = padded.empty() ? in : host_view<const T>(padded.view());
    const std::int64_t width = in.width(), height = in.height();
    const std::int64_t frame_width = width + (framed ? plan.left + plan.right : 0);
    const std::int64_t frame_height = height + (framed ? plan.top + plan.bottom : 0);
    const border inside{border_mode::ignore, 0.0};
    const auto image_of = [](host_image<T>& image, std::int64_t w, std::int64_t h) {
        if (image.width() != w || image.height() != h) image = host_image<T>(w, h);
        return image.view();
    };
    host_image<T> inner, scratch, first_pass;
    bool out_written = false;
    for (const auto& group : plan.groups) {
        const detail::reach r = detail::reach_of(group.rest, maximum);
        const host_view<T> acc =
            group.rest.empty() ? out : image_of(inner, width + r.left + r.right, height + r.top + r.bottom);
        bool acc_written = group.rest.empty() && out_written;
        // Source pixel of acc's pixel (0, 0), relative to which every shift is read.
        const detail::pixel_shift at{origin.x - r.left, origin.y - r.top};
        const auto moved = [&](std::vector<detail::pixel_shift> shifts) {
            for (auto& s : shifts) s.x += at.x, s.y += at.y;
            return shifts;
        };
        for (const bool vertical : {false, true}) {
            std::vector<detail::shifted_runs> runs;
            for (const auto& pass : group.passes) {
                if (!grown_in_cache(pass) || (pass.first ? pass.first->vertical() : false) != vertical) continue;
                const std::int64_t length = pass.first ? pass.first->length : 1;
                const std::int64_t run_origin = pass.first ? pass.first->origin : 0;
                detail::shifted_runs run{length, moved(pass.shifts)};
                // Where each run starts along it: erosion reads from shift - origin, dilation the
                // run reflected, from shift - (length - 1 - origin).
                for (auto& shift : run.shifts)
                    (vertical ? shift.y : shift.x) -= maximum ? length - 1 - run_origin : run_origin;
                runs.push_back(std::move(run));
            }
            std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.length < b.length; });
            GRANULA_SIMD_DISPATCH_AVX512(accumulate_runs<T>, acc, source, runs, vertical, maximum, !acc_written);
            acc_written |= !runs.empty();
        }
        // The remaining segments start from acc, or from the first pass's result itself when
        // that is the group's only term and covers acc (an octagon's or a periodic-line disk's
        // first line): no accumulation copy.
        host_view<const T> chain_start = acc;
        for (const auto& pass : group.passes) {
            if (grown_in_cache(pass)) continue;
            const host_view<T> pass_view = image_of(first_pass, frame_width, frame_height);
            if (pass_pads)
                vertical_into_frame<T>(in, pass_view, *pass.first, maximum, mode, plan.left, plan.top, pad);
            else
                apply_segment<T>(source, pass_view, *pass.first, maximum, inside);
            if (const auto s = moved(pass.shifts).front(); group.passes.size() == 1 && pass.shifts.size() == 1 &&
                                                           !group.rest.empty() && s.x >= 0 && s.y >= 0 &&
                                                           s.x + acc.width() <= pass_view.width() &&
                                                           s.y + acc.height() <= pass_view.height()) {
                chain_start = pass_view.subview(s.x, s.y, acc.width(), acc.height());
                break;
            }
            if (!acc_written) fill<T>(acc, detail::neutral_value<T>(maximum));
            acc_written = true;
            GRANULA_SIMD_DISPATCH(accumulate_shifted<T>, acc, host_view<const T>(pass_view), moved(pass.shifts),
                                  maximum);
        }
        // The last segment writes `out` directly when it can crop (a sheared one) and nothing
        // is there to combine with.
        const bool last_into_out = !group.rest.empty() && !out_written && !group.rest.back().horizontal() &&
                                   !group.rest.back().vertical();
        for (std::size_t i = 0; i < group.rest.size(); ++i) {
            const host_view<const T> from = i == 0 ? chain_start : host_view<const T>(inner.view());
            if (last_into_out && i + 1 == group.rest.size()) {
                apply_segment<T>(from, out, group.rest[i], maximum, inside, {r.left, r.top});
                break;
            }
            apply_segment<T>(from, image_of(scratch, acc.width(), acc.height()), group.rest[i], maximum, inside);
            std::swap(inner, scratch);
        }
        if (!group.rest.empty() && !last_into_out) {
            const host_view<const T> cropped = host_view<const T>(inner.view()).subview(r.left, r.top, width, height);
            if (out_written)
                GRANULA_SIMD_DISPATCH(accumulate_shifted<T>, out, cropped, std::vector<detail::pixel_shift>{{0, 0}},
                                      maximum);
            else
                copy<T>(cropped, out);
        }
        out_written = true;
    }
}

// A shift program keeps about the element's height in rows of the image in its rings: beyond
// this many bytes they leave the cache, and the passes win (line:4001:30 on 4096x4096 uint8,
// rings of 9 MB: 44 ms against 22; line:1001:30, 2.4 MB: 6.6 against 11.5).
constexpr std::int64_t program_rows_bytes_max = std::int64_t{4} << 20;

template <class T>
bool program_rings_fit(const structuring_element& footprint, std::int64_t width) {
    return footprint.height() * width * static_cast<std::int64_t>(sizeof(T)) <= program_rows_bytes_max;
}

// An opening's or closing's two stages as one program keep both elements' rows: beyond this
// many bytes the stages run one after the other, each on its own path. Uint8 openings in mode
// ignore, one thread, fused against the stages apart: line:1001:45 on 4096x4096 29 ms against
// 8.4, line:501:45 14 against 8, line:1001:30 29.5 against 16; line:255:45 (1.5 MB) 8.6
// against 8.7, line:101:45 6.6 against 8.1.
constexpr std::int64_t fused_rows_bytes_max = std::int64_t{2} << 20;

// plan_line_program's result for the line, kept for the last 16 lines planned: planning takes
// 0.03-0.15 ms a line (line:101:30, line:101:44), about what an opening of a 256x256 image takes.
std::optional<detail::shift_program> line_plan(const structuring_element& footprint, bool maximum) {
    // Elements of several terms that are not lines go uncached: plan_line_program refuses them
    // within their first terms, cheaper than copying their decomposition as a key (a random
    // 64x64 mask's thousand runs).
    if (footprint.shape() != structuring_element::kind::line && footprint.decomposition().size() > 1)
        return detail::plan_line_program(footprint, maximum);
    using key = std::tuple<structuring_element::kind, std::vector<decomposition_term>, bool>;
    static detail::recent_results<key, std::optional<detail::shift_program>, 16> recent;
    return recent.get({footprint.shape(), footprint.decomposition(), maximum},
                      [&] { return detail::plan_line_program(footprint, maximum); });
}

// The shift program of a line swept along a periodic line (lines of one segment too, the
// diagonals and horizontal lines, when `single_segments`), when its rings fit; none otherwise.
template <class T>
std::optional<detail::shift_program> line_program(const structuring_element& footprint, bool maximum,
                                                  std::int64_t width, bool single_segments) {
    const auto& terms = footprint.decomposition();
    if (!single_segments && terms.size() == 1 && terms[0].segments.size() == 1) return std::nullopt;
    if (!program_rings_fit<T>(footprint, width)) return std::nullopt;
    return line_plan(footprint, maximum);
}

// The length of a line of one horizontal segment, 0 for other elements. Such a line's shift
// program reads every stage in one row (rings of a row, in L1, no transposed strips) at a
// load and a min per vector per read, with more stages the longer the line, where the
// separable pass's van Herk windows cost the same at every length but transpose each strip
// twice: the program wins for short lines.
std::int64_t horizontal_line_length(const structuring_element& footprint) {
    const auto& terms = footprint.decomposition();
    const bool line = terms.size() == 1 && terms[0].segments.size() == 1 && terms[0].segments[0].horizontal();
    return line ? terms[0].segments[0].length : 0;
}

// Erosion or dilation by a horizontal line, 4096x4096, one thread, program against the
// separable pass (bench_cpu_morphology, Zen 3): uint8 15: 2.4-2.8 against 3.9-5.8 ms, 63:
// 3.3-3.7 against 5.2-7.4, 255: 4.0-4.3 against 5.9-7.3; float 15: 12.5-13.4 against 16-17,
// 63: 13-17 against 19, 255: 20-23 against 19-20.
constexpr std::int64_t program_line_bytes_max = 256;

// An opening's program runs both stages' reads: by a horizontal line of 15 (4096x4096, one
// thread, line_opening from Python, Zen 3) uint8 3.3 against 4.9 ms, float 17 against 25; at
// 31 and 63 alike, at 101 and 255 uint8 6.0 and 6.6 against 5.2 and 5.6, float slower too.
constexpr std::int64_t program_opening_length_max = 16;

// Elements other than lines as the program of their rows' runs (plan_runs_program), while it
// costs at most these many reads (program_cost); each stage's rows take the pixel's bytes in the
// rings, so the limits fall with them. 4096x4096 erosions, one thread, Zen 3 build VM, the
// program against the path taken before, ms (a C++ driver, the two alternated):
//  - elements made of runs alone, read by the mask path otherwise. uint8: disk:1 1.4 / 6.0,
//    disk:3 3.4 / 8.3, disk:10 8.2 / 30, disk:31 (cost 126) 27 / 38, disk:50 (197) 60 / 67,
//    diamond:5 5.1 / 12.9, ellipse:41x21 15 / 23, random 5x5, 16x16 and 20x20 masks 3.5 /
//    15.4, 20 / 24 and 21 / 26; but ellipse:101x51 (215) 72 / 48 and a random 32x32 mask (287)
//    87 / 66, which the mask path's pair images read less often. uint16: the 20x20 mask (127)
//    60 / 56, disk:31 62 / 76. float32: disk:10 (46) 46 / 97, disk:20 (86) 141 / 146, the
//    16x16 mask (87) 119 / 102.
//  - octagons and periodic-line disks, whose passes otherwise cost the same at every size.
//    uint8: octagon:5:5 5.9 / 25, octagon:15:15 (95) 16 / 24, disk:10:4 6.4 / 34, disk:20:4
//    12 / 21; octagon:27:18 (120) 23 / 23, disk:31:4 (115) 24 / 20. uint16: octagon:15:15 39 /
//    45. float32: disk:10:4 (44) 41 / 129, octagon:10:10 (58) 88 / 83, octagon:15:15 147 / 86.
//  - rectangles and vertical lines against their 1-D passes, which the program reads row by
//    row. uint8: square:3 1.6 / 3.3, square:5 2.5 / 4.6, square:9 (21) 3.3 / 5.8, rect:15x3 2.7
//    / 4.3, vline:3 0.87 / 1.67, vline:9 2.1 / 2.0; square:11 (26) 3.8-4.1 / 3.9-4.3, vline:11
//    2.6 / 2.0, rect:3x15 4.0 / 3.7. float32: vline:7 9.3 / 10.1, vline:9 11.4 / 9.9.
struct runs_program_limits {
    std::int64_t runs_only, with_passes, separable, separable_rows;
};
template <class T>
constexpr runs_program_limits runs_program_limits_of = sizeof(T) == 1   ? runs_program_limits{150, 96, 24, 9}
                                                       : sizeof(T) == 2 ? runs_program_limits{120, 96, 24, 9}
                                                                        : runs_program_limits{64, 48, 24, 7};

constexpr std::int64_t runs_program_width_max = 256;

// uint8 images of at least this many pixels take runs programs with shared pairs
// (plan_runs_program), whose planning they win back. 4096x4096 erosions, one thread, Zen 3,
// without / with, ms (the two alternated in one process): disk:31:4 18.2-20.8 / 15.0-15.4 (a
// program now, 78 < 96), octagon:27:18 20.3-21.0 / 16.0-16.5 (likewise), disk:31 26.3-26.8 /
// 23.1-23.3, disk:20 14.2-14.8 / 12.9-13.1, diamond:20 15.6 / 13.7, disk:20:4 12.1 / 10.3,
// ellipse:41x21 15.5-16.4 / 16.5-17.3; at 512x512 the planning made disk:31 0.51 -> 0.65 ms and
// ellipse:41x21 0.38 -> 0.56. Wider pixels keep programs without pairs: their limits above
// were measured so, and more stages take more of the rings.
constexpr std::int64_t runs_pairs_pixels_min = std::int64_t{1} << 22;

// plan_runs_program's result for the footprint, kept for the last 16 planned: it takes 0.1-1.7 ms
// with pairs, and even without them half an erosion of a 128x128 image by the element (two
// threads, Sapphire Rapids: disk:31 0.14 -> 0.08 ms, ellipse:41x21 0.13 -> 0.06; at 512x512
// 0.25 -> 0.15, octagon:15:15 0.20 -> 0.15).
detail::shift_program runs_plan(const footprint_mask& footprint, bool maximum, bool pairs) {
    static detail::recent_results<std::tuple<footprint_mask, bool, bool>, detail::shift_program, 16> recent;
    return recent.get({footprint, maximum, pairs}, [&] { return detail::plan_runs_program(footprint, maximum, pairs); });
}

// The program of an element other than a line (horizontal lines too: line_program and the
// separable passes, by the rules below) by its rows' runs, when it costs less than the element's
// other paths (above) and its rings fit (as a line's); none otherwise.
template <class T>
std::optional<detail::shift_program> runs_program(const structuring_element& footprint, bool maximum,
                                                  std::int64_t width, std::int64_t height) {
    // Wider elements keep their passes: planning is quadratic in the longest run (a rectangle
    // 4096 wide took 44 ms to plan, one 256 wide 0.2 ms).
    if (footprint.shape() == structuring_element::kind::line || horizontal_line_length(footprint) > 0 ||
        footprint.width() > runs_program_width_max)
        return std::nullopt;
    if (!program_rings_fit<T>(footprint, width)) return std::nullopt;
    constexpr runs_program_limits limits = runs_program_limits_of<T>;
    if (footprint.separable() && footprint.height() > limits.separable_rows) return std::nullopt;
    const auto& terms = footprint.decomposition();
    const bool runs_only = std::all_of(terms.begin(), terms.end(), [](const decomposition_term& t) {
        return std::all_of(t.segments.begin(), t.segments.end(),
                           [](const line_segment& s) { return s.horizontal() || s.vertical(); });
    });
    const std::int64_t cost_max = footprint.separable() ? limits.separable
                                  : runs_only           ? limits.runs_only
                                                        : limits.with_passes;
    const bool pairs = sizeof(T) == 1 && !footprint.separable() && width * height >= runs_pairs_pixels_min;
    detail::shift_program program = runs_plan(footprint.footprint(), maximum, pairs);
    if (detail::program_cost(program) > cost_max) return std::nullopt;
    return program;
}

// Openings and closings by shorter diagonals keep their shift program, which reads and writes the
// image once. uint8 openings by line(L, 45), program against scan lines, two threads, ms: at
// 4096x4096 L = 9 1.6-1.9 / 1.8, L = 21 2.2-2.4 / 1.7, L = 31 2.3-2.6 / 1.7; at 2048x2048 L = 9
// 0.33 / 0.49, L = 21 0.54 / 0.49, L = 31 0.60 / 0.48; at 1024x1024 L = 9 0.07-0.14 / 0.14-0.25, L =
// 21 0.13-0.14 / 0.14-0.23, L = 31 0.15-0.16 / 0.14-0.18, L = 41 0.16-0.18 / 0.14-0.15. Top-hats
// longer still: their program's last stage takes the difference, where the scan-line opening
// needs a subtraction pass after it (4096x4096, two threads, white top-hat, program against scan
// lines: uint8 L = 101 3.2-3.4 / 3.6-3.7 ms, L = 151 4.1 / 3.7, L = 255 5.3-5.5 / 3.7-3.8; uint16 L
// = 41 6.8 / 7.6, L = 101 9.7 / 7.5; float32 L = 151 50.1 / 18.0; docs/benchmarks.md, stop 76).
constexpr std::int64_t diagonal_opening_length_min = 31;
template <class T>
constexpr std::int64_t diagonal_tophat_length_min = sizeof(T) == 1 ? 151 : 101;

// The plan of `op` by a diagonal line on the linear filters' scan-line path down the rows
// (lines/diagonal_line_plan.hpp), under border ignore or constant, where it beats the sheared
// pass and the shift programs; none elsewhere. 4096x4096, two threads, ms: uint8 erosion by
// line(L, 45) 2.5-4.9 -> 1.4-2.1 for L = 3 to 1001, opening 5.1-6.0 -> 2.1-2.2 at L = 255, 8.4-9.2
// -> 2.6-3.2 at L = 1001; uint16 erosion by line(255, 45) 8.6-9.5 -> 3.3-4.5, opening 16.3-19.9 ->
// 4.1-5.1; float32 erosion 18.4-24.8 -> 7.2-8.2 for L = 3 to 255, opening 16.9-17.4 -> 9.4-9.6 at
// L = 63, 44.0-45.3 -> 9.9-10.1 at L = 255 (docs/benchmarks.md, stop 76).
// `two_stage_length_min`: the shortest line an opening or closing takes the plan for.
template <class T>
std::optional<detail::line_plan> diagonal_plan(morphology_op op, const structuring_element& erosion_element,
                                               const structuring_element& dilation_element, border mode,
                                               host_view<const T> in,
                                               std::int64_t two_stage_length_min = diagonal_opening_length_min) {
    auto plan =
        detail::diagonal_line_plan(op, erosion_element, dilation_element, mode, in.width(), in.height(), true);
    if (plan && !plan->first_stage_only && plan->length < two_stage_length_min) return std::nullopt;
    return plan;
}

template <class T>
void filter_diagonal(host_view<const T> in, host_view<T> out, const detail::line_plan& plan) {
    const host_view<T> filtered[] = {out};
    host_line_outputs<T> outputs;
    outputs.filtered = filtered;
    line_filter_angles<T>(in, plan, outputs);
}

// The shift program of an erosion (dilation) by `footprint`, where it takes one; none where it
// takes other paths.
template <class T>
std::optional<detail::shift_program> erode_or_dilate_program(const structuring_element& footprint, bool maximum,
                                                             border mode, std::int64_t width, std::int64_t height) {
    // In every mode: the program extends each source row by the mode at its margin columns only
    // (4096x4096 uint8, one thread, modes reflect and nearest: hline:3 1.0-1.7 ms against 2.6-3.0
    // for the separable pass, hline:15 1.7-2.8 against 3.7-5.0, hline:255 5.0-7.1 against 7.2-13).
    const std::int64_t length = horizontal_line_length(footprint);
    const bool short_line = length > 0 && length * static_cast<std::int64_t>(sizeof(T)) <= program_line_bytes_max;
    // A line at an angle other than the axes and diagonals: a shift program over rows in cache
    // (line:255:30 on 4096x4096 uint8, one thread: 10.1 -> 5.1 ms CPU time); a short horizontal
    // line too. A line of one diagonal segment keeps its single sheared pass (4.2 ms against
    // 4.4 for the program at 255 pixels) in the modes that pass handles; in the others the
    // program extends the rows, where the general path would pad a copy of the image.
    const bool pass_borders = detail::pads_with_one_value(mode.mode);
    std::optional<detail::shift_program> program;
    if (short_line || !footprint.separable())
        program = line_program<T>(footprint, maximum, width, short_line || !pass_borders);
    if (!program) program = runs_program<T>(footprint, maximum, width, height);
    return program;
}

// `program`: erode_or_dilate_program's for these arguments.
template <class T>
void erode_or_dilate(host_view<const T> in, host_view<T> out, const structuring_element& footprint, bool maximum,
                     border mode, const std::optional<detail::shift_program>& program) {
    const auto& terms = footprint.decomposition();
    const bool pass_borders = detail::pads_with_one_value(mode.mode);
    if (program) {
        const T pad = pad_value<T>(mode, maximum);
        GRANULA_SIMD_DISPATCH_AVX512(run_shift_program<T>, in, out, *program, mode.mode, pad, pad);
    } else if (footprint.separable()) {
        erode_or_dilate_separable<T>(in, out, footprint, maximum, mode);
    } else if (terms.size() == 1 && terms[0].offset_x == 0 && terms[0].offset_y == 0 &&
               terms[0].segments.size() == 1 && pass_borders) {
        // One segment (a line at 45 or 135 degrees): the scan lines down the rows where it is that
        // line, else one sheared pass; both handle these modes at the border.
        const auto op = maximum ? morphology_op::dilation : morphology_op::erosion;
        if (const auto plan = diagonal_plan<T>(op, footprint, footprint, mode, in))
            filter_diagonal<T>(in, out, *plan);
        else
            apply_segment<T>(in, out, terms[0].segments[0], maximum, mode);
    } else {
        erode_or_dilate_general<T>(in, out, footprint, maximum, mode);
    }
}

template <class T>
void erode_or_dilate(host_view<const T> in, host_view<T> out, const structuring_element& footprint, bool maximum,
                     border mode) {
    erode_or_dilate<T>(in, out, footprint, maximum, mode,
                       erode_or_dilate_program<T>(footprint, maximum, mode, in.width(), in.height()));
}

// The programs of an opening's (closing's) two stages, where they take them, and whether they
// run as one program (fused: the mode pads with one value and both stages' rows fit together).
struct opening_programs {
    std::optional<detail::shift_program> first, second;
    bool one_program = false;
};
template <class T>
opening_programs opening_programs_of(const structuring_element& first, const structuring_element& second,
                                     bool closing, border mode, std::int64_t width, std::int64_t height) {
    const auto short_line = [](const structuring_element& e) {
        const std::int64_t length = horizontal_line_length(e);
        return length > 0 && length <= program_opening_length_max;
    };
    // Lines off the axes (the diagonals too), short horizontal lines and small elements
    // (runs_program): both stages as one shift program, the image read and written once,
    // no intermediate image (opening by line(101, 45) on 4096x4096 uint8, one thread:
    // 7.5 -> 5.8 ms CPU time).
    const bool lines = !(first.separable() && second.separable()) || (short_line(first) && short_line(second));
    const auto program_of = [&](const structuring_element& e, bool maximum) {
        auto program = lines ? line_program<T>(e, maximum, width, true) : std::nullopt;
        return program ? program : runs_program<T>(e, maximum, width, height);
    };
    opening_programs p{program_of(first, closing), program_of(second, !closing)};
    const bool fits =
        (first.height() + second.height()) * width * static_cast<std::int64_t>(sizeof(T)) <= fused_rows_bytes_max;
    p.one_program = p.first && p.second && fits && detail::pads_with_one_value(mode.mode);
    return p;
}

// An opening (closing): `first` then `second`, whose programs `p` are opening_programs_of's.
template <class T>
void open_or_close(host_view<const T> in, host_view<T> out, const structuring_element& first,
                   const structuring_element& second, bool closing, border mode, const opening_programs& p) {
    if (p.one_program) {
        GRANULA_SIMD_DISPATCH_AVX512(run_shift_program<T>, in, out, detail::fused(*p.first, *p.second), mode.mode,
                                     pad_value<T>(mode, closing), pad_value<T>(mode, !closing));
        return;
    }
    // The other modes extend each stage's input by its own pixels, which one program cannot:
    // the two programs (those erode_or_dilate picks in these modes) run one after the other.
    // 2048x2048, one thread, mode reflect, against the separable passes: uint8 square:3 0.78
    // ms against 1.1-2.8, float32 square:5 5.7 against 18.
    if (p.first && p.second && !detail::pads_with_one_value(mode.mode)) {
        const detail::scratch_like<T> tmp(out);
        const T pad_first = pad_value<T>(mode, closing), pad_second = pad_value<T>(mode, !closing);
        GRANULA_SIMD_DISPATCH_AVX512(run_shift_program<T>, in, tmp.view(), *p.first, mode.mode, pad_first,
                                     pad_first);
        GRANULA_SIMD_DISPATCH_AVX512(run_shift_program<T>, host_view<const T>(tmp.view()), out, *p.second,
                                     mode.mode, pad_second, pad_second);
        return;
    }
    if (first.separable() && second.separable() && !(p.first && p.second)) {
        // Both stages' horizontal passes as one chain on transposed strips.
        open_or_close_separable<T>(in, out, first, second, closing, mode);
        return;
    }
    // Other elements, and programs too tall to fuse, run their stages apart, each on its own
    // path (a diagonal's sheared pass, say).
    const detail::scratch_like<T> tmp(out);
    erode_or_dilate<T>(in, tmp.view(), first, closing, mode);
    erode_or_dilate<T>(tmp.view(), out, second, !closing, mode);
}

// A gradient as one program, where both stages take programs whose rows fit together: the
// dilation's and the erosion's side by side, both reading the source, and a last stage taking
// their difference, so that the image is read and written once (no eroded image, no
// subtraction pass). 4096x4096, one thread, against the stages apart (toggled call by call in
// one process, medians of 7-9, ms): uint8 disk:3 6.0 / 6.9, square:5 4.7 / 5.2, line:101:30 9.2
// / 10.4, line:255:30 11.5 / 12.1, mode reflect disk:3 5.6 / 6.8; float32 square:5 23 / 29;
// two threads uint8 disk:3 3.1 / 4.5. The joined rings cost the larger programs what the
// passes save: disk:15 (cost 63) 19.5 / 19.0, disk:25 (92) 27.5 / 27.5, disk:31:4 (78) 26.6 /
// 24.9, disk:31 (114) 40.1 / 38.6; disk:10 (46) 12.5 / 13.2.
constexpr std::int64_t gradient_program_cost_max = 48;
// `planned_erosion` and `planned_dilation`: erode_or_dilate_program's for the two elements.
template <class T>
std::optional<detail::shift_program> gradient_program(const structuring_element& erosion_element,
                                                      const std::optional<detail::shift_program>& planned_erosion,
                                                      const structuring_element& dilation_element,
                                                      const std::optional<detail::shift_program>& planned_dilation,
                                                      border mode, std::int64_t width) {
    if (!planned_erosion || !planned_dilation || detail::program_cost(*planned_erosion) > gradient_program_cost_max ||
        detail::program_cost(*planned_dilation) > gradient_program_cost_max ||
        (erosion_element.height() + dilation_element.height()) * width * static_cast<std::int64_t>(sizeof(T)) >
            fused_rows_bytes_max)
        return std::nullopt;
    detail::shift_program erosion = *planned_erosion;
    const int erosion_end = static_cast<int>(erosion.stages.size());
    // The source's rows take the erosion's pad off the image (run with pad_value(mode, false));
    // in mode ignore the dilation's differs, so the dilation reads a copy of the source clipped
    // to the image, which takes its pad (the clip pad, pad_value(mode, true)) there.
    int dilation_source = 0;
    if (mode.mode == border_mode::ignore) {
        detail::shift_stage copy{{{0, 0, 0}}, true, true};
        erosion.stages.push_back(std::move(copy));
        dilation_source = static_cast<int>(erosion.stages.size());
    }
    detail::shift_program both = detail::side_by_side(std::move(erosion), *planned_dilation, dilation_source);
    const int dilation_end = static_cast<int>(both.stages.size());
    return detail::with_difference(std::move(both), dilation_end, erosion_end);
}

// out = a - b, saturating at zero for unsigned types.
template <class T>
void subtract(host_view<const T> a, host_view<const T> b, host_view<T> out) {
    detail::parallel_for(a.height(), a.pixel_count(), [&](std::int64_t y) {
        const T *pa = a.row(y), *pb = b.row(y);
        T* po = out.row(y);
        // The width a local, and no dependence between pixels (out may be a or b, pixel for
        // pixel): with a.width() read in the loop, which a uint8 store may alias, GCC kept the
        // loop scalar, and a uint8 white top-hat by square:3 took 10x its opening.
        const std::int64_t width = a.width();
#pragma GCC ivdep
        for (std::int64_t x = 0; x < width; ++x) {
            if constexpr (std::is_floating_point_v<T>)
                po[x] = pa[x] - pb[x];
            else
                po[x] = pa[x] > pb[x] ? static_cast<T>(pa[x] - pb[x]) : T{0};
        }
    });
}

}  // namespace

template <class T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& erosion_element,
                const structuring_element& dilation_element, border mode) {
    switch (op) {
    case morphology_op::erosion: erode_or_dilate<T>(in, out, erosion_element, false, mode); return;
    case morphology_op::dilation: erode_or_dilate<T>(in, out, dilation_element, true, mode); return;
    case morphology_op::opening:
    case morphology_op::closing: {
        if (const auto plan = diagonal_plan<T>(op, erosion_element, dilation_element, mode, in)) {
            filter_diagonal<T>(in, out, *plan);
            return;
        }
        const bool closing = op == morphology_op::closing;
        const auto& first = closing ? dilation_element : erosion_element;
        const auto& second = closing ? erosion_element : dilation_element;
        open_or_close<T>(in, out, first, second, closing, mode,
                         opening_programs_of<T>(first, second, closing, mode, in.width(), in.height()));
        return;
    }
    case morphology_op::white_tophat:
    case morphology_op::black_tophat: {
        const bool white = op == morphology_op::white_tophat;
        const auto& first = white ? erosion_element : dilation_element;
        const auto& second = white ? dilation_element : erosion_element;
        const auto plan = diagonal_plan<T>(white ? morphology_op::opening : morphology_op::closing, erosion_element,
                                           dilation_element, mode, in, diagonal_tophat_length_min<T>);
        const opening_programs p =
            plan ? opening_programs{} : opening_programs_of<T>(first, second, !white, mode, in.width(), in.height());
        if (p.one_program) {
            // The opening's program and a last stage taking the difference with the source (stage
            // 0): no opened image, no subtraction pass. 4096x4096 uint8, one thread, against the
            // opening and the pass (toggled call by call in one process, medians of 7, ms): white
            // disk:3 5.8 / 6.8, disk:15 17.2 / 18.5, disk:31 39.7 / 41.6, line:255:30 11.7 / 12.7;
            // two threads black disk:7 5.2 / 6.6, line:101:30 4.6 / 6.0.
            detail::shift_program program = detail::fused(*p.first, *p.second);
            const int end = static_cast<int>(program.stages.size());
            program = detail::with_difference(std::move(program), white ? 0 : end, white ? end : 0);
            GRANULA_SIMD_DISPATCH_AVX512(run_shift_program<T>, in, out, program, mode.mode, pad_value<T>(mode, !white),
                                         pad_value<T>(mode, white));
            return;
        }
        const detail::scratch_like<T> filtered(out);
        if (plan)
            filter_diagonal<T>(in, filtered.view(), *plan);
        else
            open_or_close<T>(in, filtered.view(), first, second, !white, mode, p);
        if (white)
            subtract<T>(in, filtered.view(), out);
        else
            subtract<T>(filtered.view(), in, out);
        return;
    }
    case morphology_op::gradient: {
        // Each stage planned once, for the joined program or for its own path.
        const auto erosion = erode_or_dilate_program<T>(erosion_element, false, mode, in.width(), in.height());
        const auto dilation = erode_or_dilate_program<T>(dilation_element, true, mode, in.width(), in.height());
        if (const auto program =
                gradient_program<T>(erosion_element, erosion, dilation_element, dilation, mode, in.width())) {
            GRANULA_SIMD_DISPATCH_AVX512(run_shift_program<T>, in, out, *program, mode.mode, pad_value<T>(mode, false),
                                         pad_value<T>(mode, true));
            return;
        }
        const detail::scratch_like<T> eroded(out);
        erode_or_dilate<T>(in, eroded.view(), erosion_element, false, mode, erosion);
        erode_or_dilate<T>(in, out, dilation_element, true, mode, dilation);
        subtract<T>(out, eroded.view(), out);
        return;
    }
    }
}

#define GRANULA_INSTANTIATE(type, name)                                                                             \
    template void morphology<type>(morphology_op, host_view<const type>, host_view<type>, const structuring_element&, \
                                   const structuring_element&, border);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::cpu
