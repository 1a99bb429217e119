// Software prefetches of a piece of a row, shared by the CPU kernel sources: passes that walk
// down bands of columns read pieces of rows a stride apart, which the hardware prefetchers do
// not follow.
#pragma once

#include <cstdint>

namespace granula::detail {

// Prefetches every 64-byte line that [p, p + bytes) touches. A piece that does not start on a
// line touches one line more than bytes / 64, which a loop over p + 64 k leaves out: the
// vertical Gaussian of a 2000x3000 float32 image (rows 16 bytes off a line, one in every four)
// took 2.5x its time at 2000x3008 until that line was prefetched too.
// Write: 1 for lines about to be written (fetched for ownership); Locality as __builtin_prefetch.
template <int Write = 0, int Locality = 3>
inline void prefetch_span(const void* p, std::int64_t bytes) {
    if (bytes <= 0) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(p), end = begin + static_cast<std::uintptr_t>(bytes);
    for (std::uintptr_t line = begin & ~std::uintptr_t{63}; line < end; line += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(line), Write, Locality);
}

}  // namespace granula::detail
