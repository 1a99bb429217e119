// Which run lengths to grow, shared by the CPU's two planners of run minima: the mask path's
// growth plan (morphology_kernels.cpp) and the runs program (shift_program.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace granula::detail {

// The lengths 1 = g_0 < g_1 < ... < g_k to grow, each from the one before (g_{i+1} at most
// max_factor g_i, at step_cost(g_i, g_{i+1})), of least total cost, a run of length l being read
// from the longest g_i <= l at ceil(l / g_i) places; count[l] is the number of runs of length l
// (count.size() = the longest + 1). By dynamic programming over the lengths: cost[t] is the
// steps growing t plus the reads of the runs shorter than t, from[t] the length grown before t.
template <class StepCost>
std::vector<std::int64_t> cheapest_growth(const std::vector<std::int64_t>& count, std::int64_t max_factor,
                                          StepCost step_cost) {
    const auto longest = static_cast<std::int64_t>(count.size()) - 1;
    const auto reads = [&](std::int64_t length, std::int64_t grown) {
        return count[static_cast<std::size_t>(length)] * ((length + grown - 1) / grown);
    };
    constexpr std::int64_t unreached = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> cost(count.size(), unreached), from(count.size(), 0);
    cost[1] = 0;
    for (std::int64_t g = 1; g < longest; ++g) {
        std::int64_t shorter = 0;  // reads of the runs in [g, t) from g
        for (std::int64_t t = g + 1; t <= std::min(max_factor * g, longest); ++t) {
            shorter += reads(t - 1, g);
            const std::int64_t c = cost[static_cast<std::size_t>(g)] + step_cost(g, t) + shorter;
            if (c < cost[static_cast<std::size_t>(t)]) cost[static_cast<std::size_t>(t)] = c, from[static_cast<std::size_t>(t)] = g;
        }
    }
    std::int64_t last = 1, best = unreached;
    for (std::int64_t t = 1; t <= longest; ++t) {
        std::int64_t total = cost[static_cast<std::size_t>(t)];
        for (std::int64_t l = t; l <= longest; ++l) total += reads(l, t);
        if (total < best) best = total, last = t;
    }
    std::vector<std::int64_t> chain;
    for (std::int64_t t = last; t >= 1; t = from[static_cast<std::size_t>(t)]) chain.insert(chain.begin(), t);  // from[1] = 0 ends it
    return chain;
}

}  // namespace granula::detail
