// Grey morphology by a diagonal line as a linear filter along scan lines, for the backends'
// morphology (morphology_cpu.cpp, morphology_cuda.cu): a diagonal's scan lines, taken down the
// rows, are its footprint lines, so with the footprint's arms (mirrored at 45 degrees, where the
// rows run against the footprint's order) the scan-line filter gives the footprint's image, and
// both backends' scan-line paths beat their sheared passes (docs/benchmarks.md, stops 49 and 76).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "granula/core/border.hpp"
#include "granula/morphology/morphology.hpp"
#include "granula/morphology/structuring_element.hpp"
#include "lines/line_plan.hpp"
#include "lines/scan_line_filter.hpp"
#include "lines/scan_lines.hpp"

namespace granula::detail {

// The plan of `op` (erosion, dilation, opening or closing) by a line at 45 or 135 degrees, both
// elements that line (erosions use the first, dilations the second), under border ignore or
// constant, over a width x height image; none otherwise. `for_cpu`: the shift table on the host.
inline std::optional<line_plan> diagonal_line_plan(morphology_op op, const structuring_element& erosion_element,
                                                   const structuring_element& dilation_element, border mode,
                                                   std::int64_t width, std::int64_t height, bool for_cpu) {
    if (mode.mode != border_mode::ignore && mode.mode != border_mode::constant) return std::nullopt;
    if (op != morphology_op::erosion && op != morphology_op::dilation && op != morphology_op::opening &&
        op != morphology_op::closing)
        return std::nullopt;
    const bool erodes = op != morphology_op::dilation, dilates = op != morphology_op::erosion;
    const structuring_element& element = erodes ? erosion_element : dilation_element;
    const std::int64_t length = element.width();
    if (length < 2 || length > std::numeric_limits<std::int32_t>::max() || element.height() != length)
        return std::nullopt;
    // A diagonal line is one segment: anything else (a disk, a square) is turned away here, before
    // the two lines are built to compare with, which every morphology call would otherwise pay.
    const auto& terms = element.decomposition();
    if (terms.size() != 1 || terms.front().segments.size() != 1) return std::nullopt;
    const auto is_line = [&](const structuring_element& e, double angle) {
        return e.decomposition() == structuring_element::line(length, angle).decomposition();
    };
    double angle = -1;
    for (const double a : {45.0, 135.0})
        if ((!erodes || is_line(erosion_element, a)) && (!dilates || is_line(dilation_element, a))) angle = a;
    if (angle < 0) return std::nullopt;
    line_plan plan;
    plan.length = static_cast<std::int32_t>(length);
    plan.closing = op == morphology_op::closing || op == morphology_op::dilation;
    plan.first_stage_only = op == morphology_op::erosion || op == morphology_op::dilation;
    plan.before = line_arm_before(plan.length, plan.closing);
    if (angle == 45.0) plan.before = plan.length - 1 - plan.before;
    plan.mode = mode;
    plan.angles.push_back({make_scan_lines(angle, width, height, for_cpu, true), 0});
    return plan;
}

}  // namespace granula::detail
