// CPU kernels of the Gaussian filters, vectorised across lines.
//
// Both passes run one lane-parallel filter over "rows of lanes": a buffer whose row k holds
// sample k of L lines side by side (the line's border extension included), so each step of a
// recursion is one contiguous vector operation across lines and no step has a branch.
//  - vertical (along columns): the lanes are a band of image columns, gathered row by row;
//    no transpose.
//  - horizontal (along rows): a strip of image rows is transposed into the buffer and back.
// The recursions keep their state in fixed-size lane arrays (registers); lane blocks are
// `block` wide. This file is compiled once per instruction set; GRANULA_SIMD_SCALAR marks the
// copy built with vectorisation off.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "core/border_index.hpp"
#include "core/parallel.hpp"
#include "gaussian/cpu/gaussian_kernels.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

using detail::axis_plan;
using detail::gaussian_kind;

constexpr std::int64_t block = 16;       // lanes per recursion block (two AVX2 vectors)
constexpr std::int64_t band = 16;        // columns per vertical work item (one cache line of floats)
constexpr std::int64_t strip = block;    // rows per horizontal work item

// Flush denormals to zero while a work item runs: decaying recursions over dark regions
// otherwise produce denormals, which cost ~100 cycles each on x86.
class flush_denormals {
public:
#if defined(__SSE2__)
    flush_denormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }
    ~flush_denormals() { _mm_setcsr(saved_); }

private:
    unsigned saved_;
#endif
};

template <class U>
U store_as(float v) {
    if constexpr (std::is_same_v<U, float>) {
        return v;
    } else {
        // Round half to even, clamp; NaN -> 0 (fmax returns the number).
        const float hi = static_cast<float>(std::numeric_limits<U>::max());
        return static_cast<U>(std::fmin(std::fmax(std::rint(v), 0.0f), hi));
    }
}

// The recursions are written once over a lane type V: a GCC vector of `block` floats in the
// SIMD builds (its state lives in registers), a single float in the scalar build, which loops
// over the block's lanes.
#if defined(GRANULA_SIMD_SCALAR)
using lanes = float;
constexpr std::int64_t lane_width = 1;
#else
// 8 floats: one AVX2 register. A 16-float type made GCC split it through the stack (measured:
// spills dominated the loop).
typedef float lanes __attribute__((vector_size(8 * sizeof(float))));
constexpr std::int64_t lane_width = 8;
#endif

template <class V>
V vload(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof(V));
    return v;
}
template <class V>
void vstore(float* p, V v) {
    std::memcpy(p, &v, sizeof(V));
}

// x: nt rows of L lanes (row k = position k - pad); y: n rows of L lanes.
template <class V>
void deriche_lanes(const detail::deriche_coeffs& c, const float* x, float* y, std::int64_t nt, std::int64_t n,
                   std::int64_t pad, std::int64_t L) {
    V xp = vload<V>(x);
    V y0 = c.causal_gain[0] * xp, y1 = c.causal_gain[1] * xp, d0 = xp * 0.0f, d1 = d0;
    auto causal = [&](std::int64_t k) {
        const V xk = vload<V>(x + k * L);
        d0 = (c.b0[0] * xk + c.b1[0] * xp) - c.e1[0] * y0 + c.a2[0] * d0;
        d1 = (c.b0[1] * xk + c.b1[1] * xp) - c.e1[1] * y1 + c.a2[1] * d1;
        y0 += d0, y1 += d1;
        xp = xk;
    };
    for (std::int64_t k = 0; k < pad; ++k) causal(k);
    for (std::int64_t k = pad; k < pad + n; ++k) {
        causal(k);
        vstore(y + (k - pad) * L, y0 + y1);
    }
    for (std::int64_t k = pad + n; k < nt; ++k) causal(k);

    V x1 = vload<V>(x + (nt - 1) * L), x2 = x1;
    y0 = c.anticausal_gain[0] * x1, y1 = c.anticausal_gain[1] * x1, d0 = x1 * 0.0f, d1 = d0;
    auto anticausal = [&](std::int64_t k) {
        const V xk = vload<V>(x + k * L);
        d0 = (c.c1[0] * x1 + c.c2[0] * x2) - c.e1[0] * y0 + c.a2[0] * d0;
        d1 = (c.c1[1] * x1 + c.c2[1] * x2) - c.e1[1] * y1 + c.a2[1] * d1;
        y0 += d0, y1 += d1;
        x2 = x1, x1 = xk;
        return xk;
    };
    for (std::int64_t k = nt - 1; k >= pad + n; --k) anticausal(k);
    for (std::int64_t k = pad + n - 1; k >= pad; --k) {
        const V xk = anticausal(k);
        float* dst = y + (k - pad) * L;
        vstore(dst, vload<V>(dst) + (y0 + y1) + c.direct * xk);
    }
}

// Young-van Vliet: causal into w (nt rows of L lanes), anticausal with Triggs-Sdika's start.
template <class V>
void yvv_lanes(const detail::yvv_coeffs& c, const float* x, float* y, float* w, std::int64_t nt, std::int64_t n,
               std::int64_t pad, std::int64_t L) {
    V w1 = vload<V>(x), w2 = w1, w3 = w1;
    for (std::int64_t k = 0; k < nt; ++k) {
        const V v = c.B * vload<V>(x + k * L) + c.b1 * w1 + c.b2 * w2 + c.b3 * w3;
        w3 = w2, w2 = w1, w1 = v;
        vstore(w + k * L, v);
    }
    const V u = vload<V>(x + (nt - 1) * L);
    const V e0 = vload<V>(w + (nt - 1) * L) - u, e1 = vload<V>(w + (nt - 2) * L) - u,
            e2 = vload<V>(w + (nt - 3) * L) - u;
    V v1 = u + c.m[0][0] * e0 + c.m[0][1] * e1 + c.m[0][2] * e2;
    V v2 = u + c.m[1][0] * e0 + c.m[1][1] * e1 + c.m[1][2] * e2;
    V v3 = u + c.m[2][0] * e0 + c.m[2][1] * e1 + c.m[2][2] * e2;
    for (std::int64_t k = nt - 1; k >= pad; --k) {
        const V v = c.B * vload<V>(w + k * L) + c.b1 * v1 + c.b2 * v2 + c.b3 * v3;
        v3 = v2, v2 = v1, v1 = v;
        if (k < pad + n) vstore(y + (k - pad) * L, v);
    }
}

// Correlation with symmetric (orders 0, 2) or antisymmetric (order 1) taps over all L lanes.
void fir_rows(const std::vector<float>& taps, bool odd, const float* x, float* y, std::int64_t n, std::int64_t L) {
    const auto r = static_cast<std::int64_t>(taps.size() / 2);
    for (std::int64_t i = 0; i < n; ++i) {
        float* yi = y + i * L;
        const float* xc = x + (i + r) * L;
        const float t0 = taps[static_cast<std::size_t>(r)];
        for (std::int64_t l = 0; l < L; ++l) yi[l] = t0 * xc[l];
        for (std::int64_t j = 1; j <= r; ++j) {
            const float t = taps[static_cast<std::size_t>(r + j)];
            const float* a = xc + j * L;
            const float* b = xc - j * L;
            if (odd)
                for (std::int64_t l = 0; l < L; ++l) yi[l] += t * (a[l] - b[l]);
            else
                for (std::int64_t l = 0; l < L; ++l) yi[l] += t * (a[l] + b[l]);
        }
    }
}

// Filters the nt x L buffer x into the n x L buffer y.
void filter_lanes(const axis_plan& p, const float* x, float* y, std::vector<float>& scratch, std::int64_t n,
                  std::int64_t L) {
    const std::int64_t nt = n + 2 * p.pad;
    switch (p.kind) {
    case gaussian_kind::fir: fir_rows(p.taps, p.order == 1, x, y, n, L); break;
    case gaussian_kind::deriche:
        for (std::int64_t b = 0; b < L; b += lane_width) deriche_lanes<lanes>(p.deriche, x + b, y + b, nt, n, p.pad, L);
        break;
    case gaussian_kind::yvv:
        scratch.resize(static_cast<std::size_t>(nt * L));
        for (std::int64_t b = 0; b < L; b += lane_width)
            yvv_lanes<lanes>(p.yvv, x + b, y + b, scratch.data() + b, nt, n, p.pad, L);
        break;
    case gaussian_kind::identity: std::memcpy(y, x, static_cast<std::size_t>(n * L) * sizeof(float)); break;
    }
}

struct buffers {
    std::vector<float> x, y, scratch;
};
buffers& thread_buffers() {
    thread_local buffers b;
    return b;
}

// Source index of position `pos` along an axis of length n, or -1 for cval.
std::int64_t source(std::int64_t pos, std::int64_t n, border_mode mode) { return detail::border_index(pos, n, mode); }

}  // namespace

template <class T, class U>
void gaussian_vertical_pass(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    const std::int64_t w = in.width(), h = in.height();
    const std::int64_t pad = p.kind == gaussian_kind::identity ? 0 : p.pad;
    const std::int64_t nt = h + 2 * pad;
    const std::int64_t bands = (w + band - 1) / band;
    detail::parallel_for(bands, w * h, [&](std::int64_t bi) {
        flush_denormals ftz;
        buffers& buf = thread_buffers();
        const std::int64_t x0 = bi * band, bw = std::min(band, w - x0);
        const std::int64_t L = (bw + block - 1) / block * block;
        buf.x.assign(static_cast<std::size_t>(nt * L), 0.0f);
        buf.y.resize(static_cast<std::size_t>(h * L));
        for (std::int64_t k = 0; k < nt; ++k) {
            float* xk = buf.x.data() + k * L;
            const std::int64_t src = source(k - pad, h, p.mode);
            if (src < 0) {
                std::fill_n(xk, bw, p.cval);
            } else {
                const T* row = in.row(src) + x0;
                for (std::int64_t l = 0; l < bw; ++l) xk[l] = static_cast<float>(row[l]);
            }
        }
        filter_lanes(p, buf.x.data(), buf.y.data(), buf.scratch, h, L);
        for (std::int64_t i = 0; i < h; ++i) {
            const float* yi = buf.y.data() + i * L;
            U* row = out.row(i) + x0;
            for (std::int64_t l = 0; l < bw; ++l) row[l] = store_as<U>(yi[l]);
        }
    });
}

template <class T, class U>
void gaussian_horizontal_pass(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    const std::int64_t w = in.width(), h = in.height();
    const std::int64_t pad = p.kind == gaussian_kind::identity ? 0 : p.pad;
    const std::int64_t nt = w + 2 * pad;
    const std::int64_t strips = (h + strip - 1) / strip;
    constexpr std::int64_t L = strip;
    detail::parallel_for(strips, w * h, [&](std::int64_t si) {
        flush_denormals ftz;
        buffers& buf = thread_buffers();
        const std::int64_t y0 = si * strip, sh = std::min(strip, h - y0);
        buf.x.assign(static_cast<std::size_t>(nt * L), 0.0f);
        buf.y.resize(static_cast<std::size_t>(w * L));
        float* x = buf.x.data();
        for (std::int64_t l = 0; l < sh; ++l) {
            const T* row = in.row(y0 + l);
            for (std::int64_t k = 0; k < pad; ++k) {
                const std::int64_t lo = source(k - pad, w, p.mode), hi = source(w + k, w, p.mode);
                x[k * L + l] = lo < 0 ? p.cval : static_cast<float>(row[lo]);
                x[(pad + w + k) * L + l] = hi < 0 ? p.cval : static_cast<float>(row[hi]);
            }
        }
        // Transpose the strip's interior in tiles of `block` columns.
        for (std::int64_t c0 = 0; c0 < w; c0 += block) {
            const std::int64_t cw = std::min(block, w - c0);
            for (std::int64_t l = 0; l < sh; ++l) {
                const T* src = in.row(y0 + l) + c0;
                float* dst = x + (pad + c0) * L + l;
                for (std::int64_t c = 0; c < cw; ++c) dst[c * L] = static_cast<float>(src[c]);
            }
        }
        filter_lanes(p, x, buf.y.data(), buf.scratch, w, L);
        const float* y = buf.y.data();
        for (std::int64_t c0 = 0; c0 < w; c0 += block) {
            const std::int64_t cw = std::min(block, w - c0);
            for (std::int64_t l = 0; l < sh; ++l) {
                U* dst = out.row(y0 + l) + c0;
                const float* src = y + c0 * L + l;
                for (std::int64_t c = 0; c < cw; ++c) dst[c] = store_as<U>(src[c * L]);
            }
        }
    });
}

#define GRANULA_INSTANTIATE_PAIR(T, U)                                                                      \
    template void gaussian_vertical_pass<T, U>(host_view<const T>, host_view<U>, const axis_plan&);         \
    template void gaussian_horizontal_pass<T, U>(host_view<const T>, host_view<U>, const axis_plan&);
GRANULA_INSTANTIATE_PAIR(std::uint8_t, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint8_t, float)
GRANULA_INSTANTIATE_PAIR(float, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, float)
GRANULA_INSTANTIATE_PAIR(float, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(float, float)
#undef GRANULA_INSTANTIATE_PAIR

}  // namespace granula::GRANULA_SIMD_NAMESPACE
