// Reading a line of a device image through a border mode, and storing a float result as the
// output's pixel type: shared by the CUDA Gaussian kernels.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/border_index.hpp"
#include "granula/core/border.hpp"

namespace granula::cuda {

// A line of n pixels `step` elements apart, extended by `pad` samples of the border mode on
// the left and up to total - n - pad on the right. load(k) reads padded position k, clamped
// to [0, total) (the recursions' start states continue the first and last samples).
struct line_shape {
    std::int64_t n, pad, total;
    border_mode mode;
    float cval;
};

template <class T>
__device__ __forceinline__ float load(const T* line, std::int64_t step, std::int64_t k, const line_shape& g) {
    k = k < 0 ? 0 : (k >= g.total ? g.total - 1 : k);
    std::int64_t pos = k - g.pad;
    if (pos < 0 || pos >= g.n) {
        // One reflection (the common case: the extension is shorter than the line) costs no
        // 64-bit division.
        if (g.mode == border_mode::reflect && pos >= -g.n && pos < 2 * g.n)
            pos = pos < 0 ? -1 - pos : 2 * g.n - 1 - pos;
        else if (g.mode == border_mode::mirror && pos > -g.n && pos < 2 * g.n - 1)
            pos = pos < 0 ? -pos : 2 * g.n - 2 - pos;
        else
            pos = granula::detail::border_index(pos, g.n, g.mode);
        if (pos < 0) return g.cval;
    }
    return static_cast<float>(line[pos * step]);
}

template <class U>
__device__ __forceinline__ U store_as(float v) {
    if constexpr (std::is_same_v<U, float>) {
        return v;
    } else {
        const float hi = static_cast<float>(std::numeric_limits<U>::max());
        return static_cast<U>(fminf(fmaxf(rintf(v), 0.0f), hi));
    }
}

}  // namespace granula::cuda
