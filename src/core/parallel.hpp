// parallel_for over [0, n) on the CPU backend's threads (built with GRANULA_WITH_THREADS).
#pragma once

#include <cstdint>
#include <type_traits>

#include "granula/core/config.hpp"

namespace granula::detail {

// Below this many pixels an operation runs on the calling thread: waking a second thread
// costs more than the work (measured on the 2-core build machine: a 384x191 closing took
// 0.2 ms on one thread and 0.7 to 16 ms on two).
constexpr std::int64_t parallel_min_pixels = std::int64_t{1} << 18;

// Runs call(context, i) for every i in [0, n) on the calling thread and up to threads - 1 pool
// threads (parallel.cpp), each taking the next item when it is free. The caller never waits
// for a pool thread that has not started: it runs every item nobody has taken, then waits
// only for the items in progress.
void run_parallel(std::int64_t n, int threads, void (*call)(void*, std::int64_t), void* context);

// Calls body(i) for every i in [0, n), spread over num_threads() threads when the operation
// covers at least parallel_min_pixels pixels. Work items should be coarse (a strip of rows, a
// band of columns): each costs an atomic hand-off. body must not throw.
template <class Body>
void parallel_for(std::int64_t n, std::int64_t pixels, Body&& body) {
#if defined(GRANULA_HAVE_THREADS)
    const int threads = num_threads();
    if (threads > 1 && n > 1 && pixels >= parallel_min_pixels) {
        using body_type = std::remove_reference_t<Body>;
        run_parallel(
            n, threads, [](void* context, std::int64_t i) { (*static_cast<body_type*>(context))(i); },
            const_cast<void*>(static_cast<const void*>(&body)));
        return;
    }
#endif
    static_cast<void>(pixels);
    for (std::int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace granula::detail
