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

// True when padded positions k_lo .. k_hi all lie in one reflection of the line (reflect or
// mirror, left or right extension, no clamp): position k is then image index base - k, so a
// window there reads the line backwards without the border logic per sample.
__device__ __forceinline__ bool mirrored(std::int64_t k_lo, std::int64_t k_hi, const line_shape& g,
                                         std::int64_t& base) {
    if (k_lo < 0 || k_hi >= g.total) return false;
    const std::int64_t lo = k_lo - g.pad, hi = k_hi - g.pad, n = g.n;
    const bool reflect = g.mode == border_mode::reflect;  // d c b a | a b c d: one sample more than mirror
    if (!reflect && g.mode != border_mode::mirror) return false;
    if (hi < 0 && lo >= (reflect ? -n : 1 - n)) {
        base = g.pad - (reflect ? 1 : 0);
        return true;
    }
    if (lo >= n && hi <= (reflect ? 2 * n - 1 : 2 * n - 2)) {
        base = g.pad + 2 * n - (reflect ? 1 : 2);
        return true;
    }
    return false;
}

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
