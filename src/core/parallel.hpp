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

// One thread's part of the rows that parallel_rows splits: from begin() on, up to an end that
// another thread may move down while this one works, by taking the part's second half.
class row_part {
public:
    explicit row_part(std::int64_t begin, std::int64_t end, void* shared_slot = nullptr)
        : begin_(begin), end_(end), reserved_(begin), slot_(shared_slot) {}
    std::int64_t begin() const { return begin_; }
    // The end when the part was handed out: it only moves down from here.
    std::int64_t first_end() const { return end_; }
    // Whether row y is still this part's. Ask for every row in order, each before making it,
    // until one is refused or first_end() is reached: no other thread makes a row not refused.
    bool owns(std::int64_t y) { return y < reserved_ || (slot_ ? reserve(y) : y < end_); }

private:
    bool reserve(std::int64_t y);  // parallel.cpp
    std::int64_t begin_, end_, reserved_;
    void* slot_;
};

// Splits rows [0, rows) among the calling thread and up to threads - 1 pool threads as they
// arrive (parallel.cpp): the first to come takes them all; each thread that arrives, or finishes
// its part, takes the second half of the largest part left, while that half has min_rows rows.
void run_rows(std::int64_t rows, std::int64_t min_rows, int threads, void (*call)(void*, row_part&), void* context);

// Calls body(part) for parts of [0, rows) that together make each row once, spread over
// num_threads() threads when the operation covers at least parallel_min_pixels pixels. For
// work that pays per part (a warm-up of min_rows rows or so): where parallel_for's fixed items
// would leave a thread that wakes late the last item's whole time, here it takes half of what is
// left when it comes. body must not throw.
template <class Body>
void parallel_rows(std::int64_t rows, std::int64_t min_rows, std::int64_t pixels, Body&& body) {
#if defined(GRANULA_HAVE_THREADS)
    const int threads = num_threads();
    if (threads > 1 && rows >= 2 * min_rows && pixels >= parallel_min_pixels) {
        using body_type = std::remove_reference_t<Body>;
        run_rows(
            rows, min_rows, threads,
            [](void* context, row_part& part) { (*static_cast<body_type*>(context))(part); },
            const_cast<void*>(static_cast<const void*>(&body)));
        return;
    }
#endif
    static_cast<void>(min_rows);
    static_cast<void>(pixels);
    row_part whole(0, rows);
    body(whole);
}

}  // namespace granula::detail
