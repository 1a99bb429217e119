// Non-temporal stores shared by the CPU kernel sources: for results written once, whole, and
// not read back soon, a store past the cache skips reading each line into the cache first.
// Included by sources compiled once per instruction set (cmake/GranulaSimd.cmake), inside
// their granula::GRANULA_SIMD_NAMESPACE; GRANULA_SIMD_SCALAR marks the copy built with
// vectorisation off.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "granula/core/image.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
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

// A vector register's block of a result written once and not read back soon, stored past the
// cache where dst is aligned to the block's size (the caller's to check): reading its lines
// into the cache first is wasted memory traffic. Ordered by stream_fence() as store_line.
template <class B>
inline void store_through(void* dst, const B& v) {
#if defined(__AVX512F__) && !defined(GRANULA_SIMD_SCALAR)
    if constexpr (sizeof(B) == 64) {
        __m512i w;
        std::memcpy(&w, &v, 64);
        _mm512_stream_si512(static_cast<__m512i*>(dst), w);
        return;
    }
#endif
#if defined(__AVX__) && !defined(GRANULA_SIMD_SCALAR)
    if constexpr (sizeof(B) == 32) {
        __m256i w;
        std::memcpy(&w, &v, 32);
        _mm256_stream_si256(static_cast<__m256i*>(dst), w);
        return;
    }
#endif
    std::memcpy(dst, &v, sizeof(B));
}

// The elements from p to the next 64-byte line (0 when p starts one); meaningful where p is
// aligned to its element, which callers check.
template <class T>
inline std::int64_t elements_to_line(const T* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    return static_cast<std::int64_t>((64 - address % 64) % 64 / sizeof(T));
}

// Writes n elements of a row written once, whole, and not read back soon: its whole 64-byte
// lines by store_line, the partial lines at either end by plain stores. A row need not start
// on a line: numpy's arrays start 16 bytes into one, and a line-by-line loop from the row's
// start then streamed nothing (a vertical opening into such an array took twice as long).
template <class T>
inline void store_row(T* dst, const T* src, std::int64_t n) {
    constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
    const std::int64_t to_line = reinterpret_cast<std::uintptr_t>(dst) % sizeof(T) == 0 ? elements_to_line(dst) : n;
    const std::int64_t head = to_line < n ? to_line : n;
    std::memcpy(dst, src, static_cast<std::size_t>(head) * sizeof(T));
    std::int64_t i = head;
    for (; i + line <= n; i += line) store_line(dst + i, src + i);
    std::memcpy(dst + i, src + i, static_cast<std::size_t>(n - i) * sizeof(T));
}

// Where the row stride keeps lines aligned from row to row, the columns of `out` before its
// first 64-byte line (0 otherwise). numpy's large arrays start 16 bytes into a line.
// line_aligned_chunks cuts the columns into chunks of at most B, cuts[i] .. cuts[i + 1], the
// first cut short so the others start on a line: chunks cut from the row's start split a line
// between two chunks in every row, and stream none of their stores.
template <class U>
std::int64_t columns_before_line(host_view<U> out) {
    const bool keeps = (out.stride() * std::int64_t(sizeof(U))) % 64 == 0 &&
                       reinterpret_cast<std::uintptr_t>(out.row(0)) % sizeof(U) == 0;
    return keeps ? std::min(elements_to_line(out.row(0)), out.width()) : 0;
}
template <class U>
std::vector<std::int64_t> line_aligned_chunks(host_view<U> out, std::int64_t B) {
    std::int64_t x = columns_before_line(out) % B;
    std::vector<std::int64_t> cuts{0};
    for (x = x == 0 ? B : x; x < out.width(); x += B) cuts.push_back(x);
    cuts.push_back(out.width());
    return cuts;
}

inline void stream_fence() {
#if defined(__SSE2__) && !defined(GRANULA_SIMD_SCALAR)
    _mm_sfence();
#endif
}

}  // namespace
}  // namespace granula::GRANULA_SIMD_NAMESPACE
