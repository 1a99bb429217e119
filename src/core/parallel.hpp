// parallel_for over [0, n) on the CPU backend's threads (OpenMP when built with it).
#pragma once

#include <cstdint>

#include "granula/core/config.hpp"

namespace granula::detail {

// Calls body(i) for every i in [0, n), spread over num_threads() threads. Work items should
// be coarse (a strip of rows, a band of columns): each costs a dynamic-schedule hand-off.
template <class Body>
void parallel_for(std::int64_t n, Body&& body) {
#if defined(GRANULA_HAVE_OPENMP)
    const int threads = num_threads();
    if (threads > 1 && n > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (std::int64_t i = 0; i < n; ++i) body(i);
        return;
    }
#endif
    for (std::int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace granula::detail
