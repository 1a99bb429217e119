// Test images for labelling, shared by the CPU and CUDA tests: YACCLAB-style random images
// (density x granularity: g x g blocks, each foreground with probability density), multi-valued
// random images, and the structured cases (all ones, all zeros, chessboards, nested rings); and
// the comparison of two sets of region statistics.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "granula/core/image.hpp"
#include "granula/labeling/labeling.hpp"

namespace granula::test_support {

// Every field but the intensity ones, exactly.
inline void expect_same_statistics(const region_statistics& got, const region_statistics& want) {
    EXPECT_EQ(got.area, want.area);
    EXPECT_EQ(got.min_row, want.min_row);
    EXPECT_EQ(got.min_col, want.min_col);
    EXPECT_EQ(got.max_row, want.max_row);
    EXPECT_EQ(got.max_col, want.max_col);
    EXPECT_EQ(got.centroid_row, want.centroid_row);
    EXPECT_EQ(got.centroid_col, want.centroid_col);
    EXPECT_EQ(got.value, want.value);
}

// Foreground pixels take a value in [1, levels] (levels 1: binary 0/1).
template <class T>
host_image<T> random_blocks(std::mt19937_64& rng, std::int64_t w, std::int64_t h, double density, int granularity,
                            int levels = 1) {
    host_image<T> img(w, h);
    std::bernoulli_distribution on(density);
    std::uniform_int_distribution<int> value(1, levels);
    for (std::int64_t by = 0; by < h; by += granularity)
        for (std::int64_t bx = 0; bx < w; bx += granularity) {
            const T v = on(rng) ? static_cast<T>(value(rng)) : T{0};
            for (std::int64_t y = by; y < std::min(h, by + granularity); ++y)
                for (std::int64_t x = bx; x < std::min(w, bx + granularity); ++x) img.view()(y, x) = v;
        }
    return img;
}

template <class T>
host_image<T> chessboard(std::int64_t w, std::int64_t h, int cell) {
    host_image<T> img(w, h);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(((y / cell) + (x / cell)) % 2);
    return img;
}

// Nested one-pixel-wide square rings one pixel apart, each joined to the next by a one-pixel
// bridge: long thin 4-connected paths that turn at every ring.
template <class T>
host_image<T> rings(std::int64_t w, std::int64_t h) {
    host_image<T> img(w, h);
    fill<T>(img.view(), T{0});
    std::int64_t top = 0, left = 0, bottom = h - 1, right = w - 1;
    while (top <= bottom && left <= right) {
        for (std::int64_t x = left; x <= right; ++x) img.view()(top, x) = 1;
        for (std::int64_t y = top; y <= bottom; ++y) img.view()(y, right) = 1;
        if (top + 2 <= bottom)
            for (std::int64_t x = left; x <= right; ++x) img.view()(bottom, x) = 1;
        if (left + 2 <= right)
            for (std::int64_t y = top + 2; y <= bottom; ++y) img.view()(y, left) = 1;
        if (left + 2 <= right && top + 2 <= bottom) img.view()(top + 2, left + 1) = 1;
        top += 2, left += 2, bottom -= 2, right -= 2;
    }
    return img;
}

}  // namespace granula::test_support
