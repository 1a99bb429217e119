// How a non-separable element is applied, worked out once for both backends.
//
// erosion(f)(x) = min over the terms t of min over b in t of f(x + b) (dilation: max of
// f(x - b), i.e. every offset negated). The image is padded by the element's reach (the border
// rule materialised; the CPU skips that for border ignore, reading pixels off the image as
// neutral), every pass then runs with border ignore, and the result is cropped.
// Terms that share all segments but the first form a group: the first segment's pass (shared
// by every term of the group with the same first segment) is accumulated, shifted by each
// term's offset, and the group's remaining segments run once on that. The groups' results are
// combined by min (max).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "granula/morphology/structuring_element.hpp"

namespace granula::detail {

struct pixel_shift {
    std::int64_t x = 0;
    std::int64_t y = 0;
    friend bool operator==(const pixel_shift&, const pixel_shift&) = default;
};

// Horizontal runs of one length, read at several shifts (the CPU's fused run accumulation).
struct shifted_runs {
    std::int64_t length = 1;
    std::vector<pixel_shift> shifts;  // where each run starts, relative to the output pixel
    friend bool operator==(const shifted_runs&, const shifted_runs&) = default;
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

// How far from a pixel a chain of passes reads, on each side: the sum of the segments' boxes
// (and an offset), which covers every partial sum, in any order.
struct reach {
    std::int64_t left = 0, right = 0, top = 0, bottom = 0;
};
inline reach reach_of(const std::vector<line_segment>& segments, bool maximum, pixel_shift offset = {}) {
    reach r;
    const auto add = [&](std::int64_t x0, std::int64_t x1, std::int64_t y0, std::int64_t y1) {
        r.left += std::max<std::int64_t>(0, -x0), r.right += std::max<std::int64_t>(0, x1);
        r.top += std::max<std::int64_t>(0, -y0), r.bottom += std::max<std::int64_t>(0, y1);
    };
    add(offset.x, offset.x, offset.y, offset.y);
    for (const auto& s : segments) {
        const offset_box b = s.box();
        if (maximum)  // dilation reads the offsets negated
            add(-b.x1, -b.x0, -b.y1, -b.y0);
        else
            add(b.x0, b.x1, b.y0, b.y1);
    }
    return r;
}

inline element_plan plan_element(const structuring_element& se, bool maximum) {
    const std::int64_t sign = maximum ? -1 : 1;
    const auto& terms = se.decomposition();
    element_plan plan;
    // The padding covers every term's reach.
    for (const auto& t : terms) {
        const reach r = reach_of(t.segments, maximum, {sign * t.offset_x, sign * t.offset_y});
        plan.left = std::max(plan.left, r.left), plan.right = std::max(plan.right, r.right);
        plan.top = std::max(plan.top, r.top), plan.bottom = std::max(plan.bottom, r.bottom);
    }
    const auto rest_of = [](const decomposition_term& t) {
        return std::vector<line_segment>(t.segments.begin() + (t.segments.empty() ? 0 : 1), t.segments.end());
    };
    // The rests of the terms of two or more segments, once each (a mask's ~1000 runs have none:
    // no search over every pair of terms).
    std::vector<std::vector<line_segment>> longer_rests;
    for (const auto& u : terms) {
        if (u.segments.size() < 2) continue;
        if (auto rest = rest_of(u); std::find(longer_rests.begin(), longer_rests.end(), rest) == longer_rests.end())
            longer_rests.push_back(std::move(rest));
    }
    for (const auto& t : terms) {
        std::vector<line_segment> rest = rest_of(t);
        std::optional<line_segment> first;
        if (!t.segments.empty()) first = t.segments.front();
        // A term of one segment that is another term's rest joins its group as a shifted pixel
        // (a line's single pixels swept along its periodic line, with the runs of two or more).
        if (t.segments.size() == 1 &&
            std::find(longer_rests.begin(), longer_rests.end(), t.segments) != longer_rests.end()) {
            rest = t.segments;
            first.reset();
        }
        auto g = std::find_if(plan.groups.begin(), plan.groups.end(), [&](const auto& g) { return g.rest == rest; });
        if (g == plan.groups.end()) g = plan.groups.insert(plan.groups.end(), {rest, {}});
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
