// Non-temporal stores shared by the CPU kernel sources: for results written once, whole, and
// not read back soon, a store past the cache skips reading each line into the cache first.
// Included by sources compiled once per instruction set (cmake/GranulaSimd.cmake), inside
// their granula::GRANULA_SIMD_NAMESPACE; GRANULA_SIMD_SCALAR marks the copy built with
// vectorisation off.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

// Writes one 64-byte cache line that is written once, whole, and not read back soon (a
// transpose's output, a result row): when it is aligned, a non-temporal store skips reading it
// into the cache first. Stores past the cache are weakly ordered: stream_fence() orders them
// before what a task does next: every task that used store_line ends with it.
template <class T>
inline void store_line(T* dst, const T* src) {
#if defined(__SSE2__) && !defined(GRANULA_SIMD_SCALAR)
    if (reinterpret_cast<std::uintptr_t>(dst) % 64 == 0) {
        for (int k = 0; k < 4; ++k)
            _mm_stream_si128(reinterpret_cast<__m128i*>(dst) + k,
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(src) + k));
        return;
    }
#endif
    std::memcpy(dst, src, 64);
}

// Writes n elements of a row written once, whole, and not read back soon: its whole 64-byte
// lines by store_line, the partial lines at either end by plain stores. A row need not start
// on a line: numpy's arrays start 16 bytes into one, and a line-by-line loop from the row's
// start then streamed nothing (a vertical opening into such an array took twice as long).
template <class T>
inline void store_row(T* dst, const T* src, std::int64_t n) {
    constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
    const auto address = reinterpret_cast<std::uintptr_t>(dst);
    const std::int64_t to_line =
        address % sizeof(T) == 0 ? static_cast<std::int64_t>((64 - address % 64) % 64 / sizeof(T)) : n;
    const std::int64_t head = to_line < n ? to_line : n;
    std::memcpy(dst, src, static_cast<std::size_t>(head) * sizeof(T));
    std::int64_t i = head;
    for (; i + line <= n; i += line) store_line(dst + i, src + i);
    std::memcpy(dst + i, src + i, static_cast<std::size_t>(n - i) * sizeof(T));
}

inline void stream_fence() {
#if defined(__SSE2__) && !defined(GRANULA_SIMD_SCALAR)
    _mm_sfence();
#endif
}

}  // namespace
}  // namespace granula::GRANULA_SIMD_NAMESPACE
