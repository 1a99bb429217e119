// Scratch images for a chain of CPU passes that ends in a caller's output.
#pragma once

#include <cstdint>

#include "granula/core/image.hpp"

namespace granula::detail {

// An image of like's size whose packed rows start at the same place in a 64-byte cache line as
// like's first row (numpy's large arrays start 16 bytes into one). A pass between it and `like`
// then finds both images' columns on one grid of cache lines: the vertical passes stream strips
// cut at the output's lines, whose loads crossed a line at every vector where the input started
// on one (4096x4096 uint8, one thread: vline:15 erosion from an image on a line into one 16
// bytes into a line 4.4 ms, 3.5 with both 16 bytes in; an opening by square:15 between numpy-
// placed images 9.7-9.9 ms with its scratch on a line, 9.0-9.3 placed so).
// `like` is not empty (the operations validate their images first).
template <class T>
class scratch_like {
public:
    explicit scratch_like(host_view<const T> like) {
        const auto address = reinterpret_cast<std::uintptr_t>(like.data());
        const std::int64_t lead = address % sizeof(T) == 0 ? static_cast<std::int64_t>(address % 64 / sizeof(T)) : 0;
        const std::int64_t width = like.width(), height = like.height();
        memory_ = host_image<T>(width, height + (lead + width - 1) / width);  // room for the lead
        view_ = host_view<T>(memory_.data() + lead, width, height, width);
    }
    host_view<T> view() const { return view_; }

private:
    host_image<T> memory_;
    host_view<T> view_;
};

}  // namespace granula::detail
