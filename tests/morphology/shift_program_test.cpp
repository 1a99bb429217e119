// The runs program of an element and the program of a line (plan_runs_program and
// plan_line_program, src/morphology/shift_program.hpp), planned on the host: the last stage,
// expanded through the stages it reads, reads the source at exactly the element's pixels
// (reflected for dilation), every stage reads only earlier ones, and the growth chain and a
// line's pieces are cheaper than reading every pixel. Elements of every shape, random masks
// with random origins among them, lines at many angles and lengths.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "granula/morphology/structuring_element.hpp"
#include "morphology/shift_program.hpp"
#include "support/morphology_cases.hpp"

namespace granula::detail {
namespace {

using offset = std::pair<std::int64_t, std::int64_t>;  // (dx, dy)

// The source offsets that stage `stage` (0: the source) reads at (dx, dy), by expanding its reads.
void source_reads(const shift_program& program, int stage, std::int64_t dx, std::int64_t dy, std::set<offset>& out) {
    if (stage == 0) {
        out.insert({dx, dy});
        return;
    }
    for (const shift_read& r : program.stages[static_cast<std::size_t>(stage - 1)].reads)
        source_reads(program, r.stage, dx + r.dx, dy + r.dy, out);
}

::testing::AssertionResult program_reads_the_footprint(const shift_program& program, const structuring_element& se,
                                                       bool maximum, const char* what) {
    const footprint_mask m = se.footprint();
    for (std::size_t k = 0; k < program.stages.size(); ++k) {
        if (program.stages[k].maximum != maximum) return ::testing::AssertionFailure() << "stage " << k << "'s operator";
        for (const shift_read& r : program.stages[k].reads)
            if (r.stage < 0 || r.stage > static_cast<int>(k))
                return ::testing::AssertionFailure() << "stage " << k + 1 << " reads stage " << r.stage;
    }
    std::set<offset> want, got;
    for (std::int64_t y = 0; y < m.height; ++y)
        for (std::int64_t x = 0; x < m.width; ++x)
            if (m.at(y, x)) {
                const std::int64_t dx = x - m.origin_x, dy = y - m.origin_y;
                want.insert(maximum ? offset{-dx, -dy} : offset{dx, dy});
            }
    source_reads(program, static_cast<int>(program.stages.size()), 0, 0, got);
    if (got != want)
        return ::testing::AssertionFailure() << se.to_string() << (maximum ? " dilation" : " erosion") << what
                                             << " reads " << got.size() << " offsets, the footprint has " << want.size();
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult reads_exactly_the_footprint(const structuring_element& se, bool maximum,
                                                       bool pairs = false) {
    return program_reads_the_footprint(plan_runs_program(se.footprint(), maximum, pairs), se, maximum,
                                       pairs ? " with pairs" : "");
}

TEST(RunsProgram, ReadsExactlyTheFootprint) {
    std::mt19937_64 rng(41);
    std::vector<structuring_element> elements = {
        structuring_element::square(1), structuring_element::square(3),   structuring_element::rectangle(8, 5),
        structuring_element::vline(9),  structuring_element::disk(1),     structuring_element::disk(10),
        structuring_element::disk(31),  structuring_element::disk(12, 4), structuring_element::diamond(7),
        structuring_element::octagon(5, 3), structuring_element::ellipse(41, 21)};
    for (int i = 0; i < 40; ++i) elements.push_back(test_support::random_mask_element(rng, 1 + i % 13, 1 + i % 7));
    for (const auto& se : elements)
        for (const bool maximum : {false, true})
            for (const bool pairs : {false, true}) EXPECT_TRUE(reads_exactly_the_footprint(se, maximum, pairs));
}

// Elements of one run a row share pairs of reads down their rows: cheaper, with more stages;
// others (a random mask) are planned as without.
TEST(RunsProgram, SharesPairsDownElementsOfOneRunARow) {
    const auto cost = [](const structuring_element& se, bool pairs) {
        return program_cost(plan_runs_program(se.footprint(), false, pairs));
    };
    EXPECT_EQ(cost(structuring_element::disk(31, 4), false), 115);
    EXPECT_EQ(cost(structuring_element::disk(31, 4), true), 78);
    EXPECT_EQ(cost(structuring_element::disk(31), true), 114);
    EXPECT_EQ(cost(structuring_element::octagon(27, 18), true), 85);
    for (const auto& se : {structuring_element::disk(50), structuring_element::diamond(20),
                           structuring_element::ellipse(101, 51), structuring_element::disk(50, 8)})
        for (const bool maximum : {false, true}) EXPECT_TRUE(reads_exactly_the_footprint(se, maximum, true));
    std::mt19937_64 rng(56);
    const auto mask = test_support::random_mask_element(rng, 12, 9);
    EXPECT_EQ(cost(mask, true), cost(mask, false));
}

// Long runs are grown, not read pixel by pixel: a square of 9 costs 21 (runs of 9 grown 1, 3,
// 9, then nine reads), against 81 reads and a stage; a disk of radius 10 costs 46 against 317.
TEST(RunsProgram, GrowsLongRuns) {
    const auto cost = [](const structuring_element& se) { return program_cost(plan_runs_program(se.footprint(), false)); };
    EXPECT_EQ(cost(structuring_element::square(9)), 21);
    EXPECT_EQ(cost(structuring_element::disk(10)), 46);
    EXPECT_EQ(cost(structuring_element::disk(1)), 5 + stage_reads);  // the cross: five reads, no growth
}

// A line's program (plan_line_program) reads exactly its footprint, at every angle and length,
// whether its base is planned as pieces or by shared pairs.
TEST(LineProgram, ReadsExactlyTheFootprint) {
    int planned = 0;
    for (const std::int64_t length : {2, 3, 5, 17, 41, 63, 101, 255})
        for (const double angle : {0.0, 1.0, 10.0, 30.0, 44.0, 45.0, 46.0, 60.0, 89.0, 120.0, 135.0, 150.0, 179.0}) {
            const auto se = structuring_element::line(length, angle);
            for (const bool maximum : {false, true}) {
                const auto program = plan_line_program(se, maximum);
                if (!program) continue;
                ++planned;
                EXPECT_TRUE(program_reads_the_footprint(*program, se, maximum, ", line program"));
            }
        }
    EXPECT_GT(planned, 150);
}

// A line's base as pieces of one shape (line:101:30's 25 pixels: 6 single pixels, 11 from two
// of them, 25 from three) costs less than by shared pairs (28 for line:101:30, 29 for 60°).
TEST(LineProgram, PlansTheBaseAsPieces) {
    EXPECT_EQ(program_cost(*plan_line_program(structuring_element::line(101, 30), false)), 26);
    EXPECT_EQ(program_cost(*plan_line_program(structuring_element::line(101, 60), true)), 26);
}

}  // namespace
}  // namespace granula::detail
