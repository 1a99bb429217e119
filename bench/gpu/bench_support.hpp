// Command-line and input helpers shared by the benchmarks in bench/gpu.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "granula/core/image.hpp"

namespace granula_bench {

// The items of a comma-separated list, empty ones left out.
inline std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> parts;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) parts.push_back(item);
    return parts;
}

// The value after option argv[i] (i moves past it); a missing value ends the benchmark.
inline std::string option_value(int& i, int argc, char** argv) {
    if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", argv[i]);
        std::exit(2);
    }
    return argv[++i];
}

[[noreturn]] inline void unknown_option(const std::string& name) {
    std::fprintf(stderr, "unknown argument %s\n", name.c_str());
    std::exit(2);
}

// Reproducible pseudo-random pixels (xorshift): integers over the whole range, floats in [0, 1).
template <class T>
void fill_random(granula::host_image<T>& img, std::uint64_t seed) {
    std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (std::int64_t y = 0; y < img.height(); ++y) {
        T* row = img.view().row(y);
        for (std::int64_t x = 0; x < img.width(); ++x) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            if constexpr (std::is_floating_point_v<T>)
                row[x] = static_cast<float>(s >> 40) * (1.0f / 16777216.0f);
            else
                row[x] = static_cast<T>(s >> 32);
        }
    }
}

}  // namespace granula_bench
