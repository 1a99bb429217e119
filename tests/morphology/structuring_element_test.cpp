#include <gtest/gtest.h>

#include "granula/morphology/structuring_element.hpp"
#include "granula/core/error.hpp"

namespace granula {
namespace {

TEST(StructuringElement, FootprintAndOriginFollowTheGuide) {
    const auto even = structuring_element::rectangle(4, 3).footprint();
    EXPECT_EQ(even.width, 4);
    EXPECT_EQ(even.height, 3);
    EXPECT_EQ(even.origin_x, 2);  // floor(n / 2), as OpenCV, SciPy and DIPlib
    EXPECT_EQ(even.origin_y, 1);
    EXPECT_EQ(even.mask.size(), 12u);
    for (auto m : even.mask) EXPECT_EQ(m, 1);
}

TEST(StructuringElement, DecompositionIsTheMinkowskiSum) {
    const auto parts = structuring_element::rectangle(5, 8).decomposition();
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_TRUE(parts[0].horizontal());
    EXPECT_EQ(parts[0].length, 5);
    EXPECT_EQ(parts[0].origin, 2);
    EXPECT_TRUE(parts[1].vertical());
    EXPECT_EQ(parts[1].length, 8);
    EXPECT_EQ(parts[1].origin, 4);
    EXPECT_TRUE(structuring_element::square(1).decomposition().empty());
    EXPECT_EQ(structuring_element::hline(9).decomposition().size(), 1u);
}

TEST(StructuringElement, ParsesTheCliSyntax) {
    EXPECT_EQ(structuring_element::parse("hline:15").to_string(), "hline:15");
    EXPECT_EQ(structuring_element::parse("vline:1").to_string(), "hline:1");  // 1x1 spells as hline:1
    EXPECT_EQ(structuring_element::parse("rect:7x3").to_string(), "rect:7x3");
    EXPECT_EQ(structuring_element::parse("square:5").width(), 5);
    for (const char* bad : {"", "hline", "hline:", "hline:0", "hline:-3", "hline:3x", "rect:3", "rect:3x0",
                            "rect:x3", "disk:3", "square:1.5", "hline:99999999999999999999"})
        EXPECT_THROW(structuring_element::parse(bad), invalid_argument) << bad;
}

}  // namespace
}  // namespace granula
