// How a non-separable element is applied, worked out once for both backends.
//
// erosion(f)(x) = min over the terms t of min over b in t of f(x + b) (dilation: max of
// f(x - b), i.e. every offset negated). The image is padded by the element's reach (the border
// rule materialised), every pass then runs with border ignore, and the result is cropped.
// Terms that share all segments but the first form a group: the first segment's pass (shared
// by every term of the group with the same first segment) is accumulated, shifted by each
// term's offset, and the group's remaining segments run once on that. The groups' results are
// combined by min (max).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "granula/morphology/structuring_element.hpp"

namespace granula::detail {

struct pixel_shift {
    std::int64_t x = 0;
    std::int64_t y = 0;
};

// Horizontal runs of one length, read at several shifts (the CPU's fused run accumulation).
struct shifted_runs {
    std::int64_t length = 1;
    std::vector<pixel_shift> shifts;  // where each run starts, relative to the output pixel
};

struct element_plan {
    std::int64_t left = 0, right = 0, top = 0, bottom = 0;  // padding on each side
    struct shifted_pass {
        std::optional<line_segment> first;  // none: the padded image itself
        std::vector<pixel_shift> shifts;    // read the pass's result at x + shift
    };
    struct group {
        std::vector<line_segment> rest;
        std::vector<shifted_pass> passes;
    };
    std::vector<group> groups;
};

inline element_plan plan_element(const structuring_element& se, bool maximum) {
    const std::int64_t sign = maximum ? -1 : 1;
    const auto& terms = se.decomposition();
    element_plan plan;
    // The padding covers every partial sum of a term's pieces (offset, segments), in any order.
    for (const auto& t : terms) {
        std::int64_t left = 0, right = 0, up = 0, down = 0;
        const auto add = [&](std::int64_t x0, std::int64_t x1, std::int64_t y0, std::int64_t y1) {
            left += std::max<std::int64_t>(0, -x0), right += std::max<std::int64_t>(0, x1);
            up += std::max<std::int64_t>(0, -y0), down += std::max<std::int64_t>(0, y1);
        };
        add(sign * t.offset_x, sign * t.offset_x, sign * t.offset_y, sign * t.offset_y);
        for (const auto& s : t.segments) {
            const offset_box b = s.box();
            if (maximum)  // dilation reads the offsets negated
                add(-b.x1, -b.x0, -b.y1, -b.y0);
            else
                add(b.x0, b.x1, b.y0, b.y1);
        }
        plan.left = std::max(plan.left, left), plan.right = std::max(plan.right, right);
        plan.top = std::max(plan.top, up), plan.bottom = std::max(plan.bottom, down);
    }
    for (const auto& t : terms) {
        const std::vector<line_segment> rest(t.segments.begin() + (t.segments.empty() ? 0 : 1), t.segments.end());
        auto g = std::find_if(plan.groups.begin(), plan.groups.end(), [&](const auto& g) { return g.rest == rest; });
        if (g == plan.groups.end()) g = plan.groups.insert(plan.groups.end(), {rest, {}});
        std::optional<line_segment> first;
        if (!t.segments.empty()) first = t.segments.front();
        auto p = std::find_if(g->passes.begin(), g->passes.end(), [&](const auto& p) { return p.first == first; });
        if (p == g->passes.end()) p = g->passes.insert(g->passes.end(), {first, {}});
        p->shifts.push_back({sign * t.offset_x, sign * t.offset_y});
    }
    return plan;
}

// The same segment with its step pointing down (or right): the passes walk that way.
inline line_segment pointing_down(line_segment s) {
    if (s.dy < 0 || (s.dy == 0 && s.dx < 0)) {
        s.dx = -s.dx, s.dy = -s.dy;
        s.origin = s.length - 1 - s.origin;
    }
    return s;
}

}  // namespace granula::detail
