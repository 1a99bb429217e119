// Levels of the runs kernel (element_passes.cu) past its doubling levels, planned on the host.
//
// After the doubling levels, every lookup of the top level reads the min over the same pattern
// from its anchor. A line at an angle has many such anchors along a staircase (line:255:30 at
// slope 15/26: 22 runs of 2 pixels, one per row pair), and each costs every output pixel a
// lookup. A pair level j + 1 = min of level j at p and at p + step (step pointing forward in
// row-major order, so the kernel builds it in place like a doubling level) reads the pattern
// B_{j+1} = B_j u (B_j + step) with one lookup, so anchors u and u + step become one lookup.
// The plan is greedy: each step is taken among the differences of near anchors when it saves
// more lookups than a level costs to build (build_cost, in lookups); the lookups kept at each
// level cover the anchors exactly, with overlaps (min is idempotent), and no pattern reads
// outside the anchors.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace granula::cuda::detail {

struct tile_point {
    int x = 0, y = 0;
    friend bool operator==(tile_point a, tile_point b) { return a.x == b.x && a.y == b.y; }
    friend bool operator<(tile_point a, tile_point b) { return a.y != b.y ? a.y < b.y : a.x < b.x; }
    friend tile_point operator+(tile_point a, tile_point b) { return {a.x + b.x, a.y + b.y}; }
    friend tile_point operator-(tile_point a, tile_point b) { return {a.x - b.x, a.y - b.y}; }
};

struct pair_levels {
    std::vector<tile_point> steps;                 // the step of each added level
    std::vector<std::vector<tile_point>> lookups;  // per level, from the top doubling level: anchors
};

// Bounds of the search: at most this many anchors (one bit each in the search's masks), at most
// this many added levels, candidate steps among each anchor's next few neighbours in row-major
// order.
constexpr std::size_t pair_levels_max_anchors = 64;
constexpr std::size_t pair_levels_max_levels = 4;
constexpr std::size_t pair_levels_neighbours = 3;
constexpr std::size_t pair_levels_max_candidates = 16;

namespace pair_levels_impl {

// An anchor of the current level and the anchors its pattern reads (bit i: anchor i).
struct lookup {
    tile_point at;
    std::uint64_t reads = 0;
};

// Greedy cover of the anchors `need` by lookups of `valid` (the one reading the most anchors not
// read yet, the first of those). Every lookup of a level reads as many anchors, so while some
// reads only new ones they are taken in order, in one sweep.
struct picks {
    std::vector<tile_point> at;
    std::uint64_t reads = 0;
};
inline picks cover(std::uint64_t need, const std::vector<lookup>& valid) {
    picks picked;
    const int full = valid.empty() ? 0 : std::popcount(valid[0].reads);
    for (const auto& l : valid)
        if (std::popcount(l.reads & need) == full) picked.at.push_back(l.at), picked.reads |= l.reads, need &= ~l.reads;
    while (need != 0) {
        std::size_t best = 0;
        int best_gain = 0;
        for (std::size_t i = 0; i < valid.size(); ++i) {
            const int gain = std::popcount(valid[i].reads & need);
            if (gain > best_gain) best = i, best_gain = gain;
        }
        if (best_gain == 0) throw std::logic_error("granula bug: pair levels cannot cover an anchor");
        picked.at.push_back(valid[best].at);
        picked.reads |= valid[best].reads;
        need &= ~valid[best].reads;
    }
    return picked;
}

}  // namespace pair_levels_impl

// anchors: at most pair_levels_max_anchors (more: one lookup each, no levels).
inline pair_levels plan_pair_levels(std::vector<tile_point> anchors, int build_cost) {
    using namespace pair_levels_impl;
    std::sort(anchors.begin(), anchors.end());
    anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
    pair_levels plan;
    if (anchors.size() > pair_levels_max_anchors) {
        plan.lookups.push_back(anchors);
        return plan;
    }
    std::vector<lookup> valid;  // where the current level's pattern lies on the anchors, sorted
    for (std::size_t i = 0; i < anchors.size(); ++i) valid.push_back({anchors[i], std::uint64_t{1} << i});
    std::uint64_t need = anchors.empty() ? 0 : ~std::uint64_t{0} >> (64 - anchors.size());  // not read yet
    for (;;) {
        std::vector<tile_point> here = cover(need, valid).at;
        // Candidate steps: differences to the next few anchors, the most frequent first.
        std::vector<std::pair<int, tile_point>> counts;
        for (std::size_t i = 0; i < valid.size(); ++i)
            for (std::size_t d = 1; d <= pair_levels_neighbours && i + d < valid.size(); ++d) {
                const tile_point v = valid[i + d].at - valid[i].at;
                auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.second == v; });
                if (c == counts.end()) counts.push_back({1, v});
                else ++c->first;
            }
        std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        if (counts.size() > pair_levels_max_candidates) counts.resize(pair_levels_max_candidates);
        std::size_t best_cost = here.size();
        tile_point best_step{};
        std::vector<tile_point> best_now;
        std::vector<lookup> best_valid;
        std::uint64_t best_need = 0;
        if (plan.steps.size() < pair_levels_max_levels)
            for (const auto& [count, v] : counts) {
                std::vector<lookup> next_valid;
                std::uint64_t next_reads = 0;
                for (const auto& l : valid) {
                    const auto it = std::lower_bound(valid.begin(), valid.end(), l.at + v,
                                                     [](const lookup& a, tile_point p) { return a.at < p; });
                    if (it != valid.end() && it->at == l.at + v) {
                        next_valid.push_back({l.at, l.reads | it->reads});
                        next_reads |= next_valid.back().reads;
                    }
                }
                if (next_valid.size() < 2) continue;
                // Anchors the next level cannot read are looked up at this one.
                picks now = cover(need & ~next_reads, valid);
                const std::uint64_t next_need = need & ~now.reads;
                const std::size_t cost =
                    now.at.size() + cover(next_need, next_valid).at.size() + static_cast<std::size_t>(build_cost);
                if (cost < best_cost) {
                    best_cost = cost, best_step = v, best_need = next_need;
                    best_now = std::move(now.at), best_valid = std::move(next_valid);
                }
            }
        if (best_valid.empty()) {
            plan.lookups.push_back(std::move(here));
            return plan;
        }
        plan.lookups.push_back(std::move(best_now));
        plan.steps.push_back(best_step);
        valid = std::move(best_valid);
        need = best_need;
    }
}

}  // namespace granula::cuda::detail
