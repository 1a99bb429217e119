// The runs kernel's pair levels (src/morphology/cuda/pair_levels.hpp), planned on the host: the
// lookups of every level read exactly the anchors (none outside, every one), steps point
// forward in row-major order (the kernel builds levels in place), and a plan never costs more
// lookups than the anchors. Anchors come from lines at many angles and lengths (the pixels of
// their period's runs, as the CUDA general path sweeps them) and from random sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "granula/morphology/structuring_element.hpp"
#include "morphology/cuda/pair_levels.hpp"

namespace granula::cuda::detail {
namespace {

// Which anchors the plan's lookups read; fails on a read outside them or a backward step.
::testing::AssertionResult reads_exactly(const std::vector<tile_point>& anchors, const pair_levels& plan) {
    if (plan.lookups.size() != plan.steps.size() + 1) return ::testing::AssertionFailure() << "levels and steps";
    const std::set<tile_point> want(anchors.begin(), anchors.end());
    std::set<tile_point> read;
    std::vector<tile_point> pattern{{0, 0}};
    for (std::size_t k = 0; k < plan.lookups.size(); ++k) {
        if (k > 0) {
            const tile_point v = plan.steps[k - 1];
            if (!(tile_point{0, 0} < v)) return ::testing::AssertionFailure() << "step " << k << " points back";
            const std::size_t n = pattern.size();
            for (std::size_t i = 0; i < n; ++i) pattern.push_back(pattern[i] + v);
        }
        for (const tile_point u : plan.lookups[k])
            for (const tile_point b : pattern) {
                if (!want.count(u + b))
                    return ::testing::AssertionFailure() << "level " << k << " reads (" << (u + b).x << ", " << (u + b).y
                                                         << "), not an anchor";
                read.insert(u + b);
            }
    }
    if (read != want) return ::testing::AssertionFailure() << read.size() << " of " << want.size() << " anchors read";
    return ::testing::AssertionSuccess();
}

std::size_t lookups_of(const pair_levels& plan) {
    std::size_t n = 0;
    for (const auto& l : plan.lookups) n += l.size();
    return n;
}

// The pixels of a line's period runs (morphology_cuda.cu's run_groups): the anchors of level 0,
// as element_passes.cu's make_run_table takes them when they fit the search.
std::vector<tile_point> period_pixels(const structuring_element& line) {
    std::vector<tile_point> pixels;
    for (const auto& t : line.decomposition()) {
        const bool run = !t.segments.empty() && (t.segments[0].horizontal() || t.segments[0].vertical());
        const std::int64_t length = run ? t.segments[0].length : 1;
        for (std::int64_t k = 0; k < length; ++k)
            pixels.push_back(run && t.segments[0].vertical() ? tile_point{static_cast<int>(t.offset_x), static_cast<int>(t.offset_y + k)}
                                                             : tile_point{static_cast<int>(t.offset_x + k), static_cast<int>(t.offset_y)});
    }
    return pixels;
}

TEST(PairLevels, LinesAtAnglesReadExactlyTheirAnchors) {
    std::size_t before = 0, after = 0;
    for (const std::int64_t L : {2, 3, 5, 17, 30, 63, 101, 255, 300, 1001})
        for (double angle = 0.0; angle < 180.0; angle += 2.5)
            for (const int cost : {0, 2, 4, 100}) {
                const auto anchors = period_pixels(structuring_element::line(L, angle));
                const pair_levels plan = plan_pair_levels(anchors, cost);
                ASSERT_TRUE(reads_exactly(anchors, plan)) << "line " << L << " at " << angle << ", cost " << cost;
                std::set<tile_point> distinct(anchors.begin(), anchors.end());
                EXPECT_LE(lookups_of(plan) + static_cast<std::size_t>(cost) * plan.steps.size(), distinct.size());
                EXPECT_LE(plan.steps.size(), pair_levels_max_levels);
                if (cost == 4 && distinct.size() <= pair_levels_max_anchors) before += distinct.size(), after += lookups_of(plan);
            }
    // The reason for the levels: lines at angles read far fewer lookups (cost 4, the lines whose
    // period fits the search: 11764 pixels, 4429 lookups when written).
    EXPECT_LT(after * 2, before) << before << " -> " << after;
}

TEST(PairLevels, LineAt30DegreesPairsItsStaircase) {
    // line:359:30 (slope 15/26): 47 pixels in 21 runs of 2 and 5 single pixels, one run or pixel
    // per row.
    const auto anchors = period_pixels(structuring_element::line(359, 30));
    ASSERT_EQ(anchors.size(), 47u);
    const pair_levels plan = plan_pair_levels(anchors, 4);
    EXPECT_TRUE(reads_exactly(anchors, plan));
    EXPECT_GE(plan.steps.size(), 2u);
    EXPECT_LE(lookups_of(plan), 12u);
}

TEST(PairLevels, RandomSetsReadExactlyTheirAnchors) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 400; ++trial) {
        const int w = 1 + static_cast<int>(rng() % 40), h = 1 + static_cast<int>(rng() % 40);
        const std::size_t n = 1 + rng() % (trial % 4 == 0 ? 100 : 40);  // some past the anchor bound
        std::vector<tile_point> anchors;
        for (std::size_t i = 0; i < n; ++i)
            anchors.push_back({static_cast<int>(rng() % static_cast<unsigned>(w)), static_cast<int>(rng() % static_cast<unsigned>(h))});
        const int cost = static_cast<int>(rng() % 4);
        const pair_levels plan = plan_pair_levels(anchors, cost);
        ASSERT_TRUE(reads_exactly(anchors, plan)) << "trial " << trial;
        std::set<tile_point> distinct(anchors.begin(), anchors.end());
        if (distinct.size() > pair_levels_max_anchors) {
            EXPECT_TRUE(plan.steps.empty());
        }
        EXPECT_LE(lookups_of(plan), distinct.size());
    }
}

TEST(PairLevels, EmptyAndSingleAnchors) {
    EXPECT_EQ(lookups_of(plan_pair_levels({}, 0)), 0u);
    const pair_levels one = plan_pair_levels({{3, -2}, {3, -2}}, 0);
    EXPECT_TRUE(one.steps.empty());
    EXPECT_EQ(lookups_of(one), 1u);
}

}  // namespace
}  // namespace granula::cuda::detail
