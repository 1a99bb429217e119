// Random test images shared by the CPU and CUDA tests of a capability.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>

#include "granula/core/image.hpp"

namespace granula::test_support {

// 0/1 pixels, 1 with probability `density`.
inline host_image<std::uint8_t> random_binary(std::mt19937_64& rng, std::int64_t w, std::int64_t h, double density) {
    host_image<std::uint8_t> img(w, h);
    std::bernoulli_distribution one(density);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = one(rng) ? 1 : 0;
    return img;
}

// Values spread over [0, 10) for floats, over the whole range for integers.
template <class T>
host_image<T> random_uniform_image(std::mt19937_64& rng, std::int64_t w, std::int64_t h) {
    host_image<T> img(w, h);
    std::uniform_real_distribution<double> d(0, std::is_floating_point_v<T> ? 10.0 : double(std::numeric_limits<T>::max()));
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(d(rng));
    return img;
}

}  // namespace granula::test_support
