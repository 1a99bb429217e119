// parallel_for over [0, n) on the CPU backend's threads (OpenMP when built with it).
#pragma once

#include <cstdint>

#include "granula/core/config.hpp"

namespace granula::detail {

// Below this many pixels an operation runs on the calling thread: waking a second thread
// costs more than the work (measured on the 2-core build machine: a 384x191 closing took
// 0.2 ms on one thread and 0.7 to 16 ms on two).
constexpr std::int64_t parallel_min_pixels = std::int64_t{1} << 18;

// Calls body(i) for every i in [0, n), spread over num_threads() threads when the operation
// covers at least parallel_min_pixels pixels. Work items should be coarse (a strip of rows, a
// band of columns): each costs a dynamic-schedule hand-off. body must not throw.
template <class Body>
void parallel_for(std::int64_t n, std::int64_t pixels, Body&& body) {
#if defined(GRANULA_HAVE_OPENMP)
    const int threads = num_threads();
    if (threads > 1 && n > 1 && pixels >= parallel_min_pixels) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (std::int64_t i = 0; i < n; ++i) body(i);
        return;
    }
#endif
    static_cast<void>(pixels);
    for (std::int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace granula::detail
