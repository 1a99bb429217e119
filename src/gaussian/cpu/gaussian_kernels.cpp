// CPU kernels of the Gaussian filters, vectorised across lines.
//
// Deriche (the recursive filter of choice) has a path of its own per axis, built around
// keeping the recursion's latency chain busy: NV independent lane vectors advance together at
// every step (one step is ~11 cycles of FMA/add latency but only ~4 cycles of issue per vector).
//  - vertical (along columns): bands of NV vectors of image columns, read straight from the
//    image rows; the causal sweep's result goes into the output rows, which the anticausal
//    sweep reads back while they are still in cache. No buffer, no transpose.
//  - horizontal (along rows): strips of NV vectors of rows; tiles of W x W pixels are
//    transposed in registers into "rows of lanes" (sample k of every row of the strip side by
//    side), the recursion runs over them, and the final tiles are transposed back.
// FIR reads the image directly (fir_vertical, fir_horizontal), or runs both axes in one pass
// (fir_both) through a staged band and "columns of lanes". Young-van Vliet runs one
// lane-parallel filter over a "rows of lanes" buffer (the line's border extension included):
// vertical gathers a band of columns row by row, horizontal transposes a strip of rows into
// the buffer and back.
// This file is compiled once per instruction set; GRANULA_SIMD_SCALAR marks the copy built
// with vectorisation off.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/border_index.hpp"
#include "core/cpu_prefetch.hpp"
#include "core/cpu_streaming_stores.hpp"
#include "core/parallel.hpp"
#include "gaussian/cpu/gaussian_kernels.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

using detail::axis_plan;
using detail::gaussian_kind;

constexpr std::int64_t block = 16;       // lanes per YvV block
constexpr std::int64_t band = 16;        // columns per vertical YvV work item (one cache line)
constexpr std::int64_t strip = block;    // rows per horizontal YvV work item
// Lane vectors advanced together per recursion step (measured at 4096x4096 on Zen 5, AVX-512):
// vertical 4 for two sections (3: 5% slower), 2 for three (4 spills the state: 0-6% slower),
// 4 for two and a first-order one (its smaller state fits: recursive5's vertical pass 4.35 ->
// 3.38 ms on 2 threads against 2 vectors, 3 vectors 3.62);
// horizontal 1 (2: 1.6x slower, register spills around the transposes; running the causal and
// anticausal sweeps interleaved instead, or the step with a one-FMA chain from d to d: no
// faster, the horizontal pass spends most of its time in the 16x16 transposes' shuffles).
constexpr int vertical_vectors(int sections, bool real_last) { return sections == 2 || real_last ? 4 : 2; }
constexpr int horizontal_vectors = 1;
// Rows the vertical Deriche pass prefetches ahead (8: two thirds of the gain; 64: less).
constexpr std::int64_t prefetch_rows = 24;

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

// Float results as pixels of type U: for integers clamped to U's range (NaN fails both tests
// and goes to 0), then rounded half to even by adding and taking away 1.5 * 2^23, exact below
// 2^22 (the build has no -ffast-math, which could fold it away). Selects and adds, not fmin,
// fmax and rint, so that store_lanes can do the same a register at a time.
constexpr float round_magic = 12582912.0f;
template <class U>
U store_as(float v) {
    if constexpr (std::is_same_v<U, float>) {
        return v;
    } else {
        const float hi = static_cast<float>(std::numeric_limits<U>::max());
        float c = v > 0.0f ? v : 0.0f;
        c = c < hi ? c : hi;
        return static_cast<U>((c + round_magic) - round_magic);
    }
}

// The recursions are written once over a lane type V: a GCC vector of one register's floats
// in the SIMD builds, a single float in the scalar build.
#if defined(GRANULA_SIMD_SCALAR)
using lanes = float;
constexpr std::int64_t lane_width = 1;
#elif defined(__AVX512F__)
typedef float lanes __attribute__((vector_size(16 * sizeof(float))));
constexpr std::int64_t lane_width = 16;
#elif defined(__AVX2__)
typedef float lanes __attribute__((vector_size(8 * sizeof(float))));
constexpr std::int64_t lane_width = 8;
#else
typedef float lanes __attribute__((vector_size(4 * sizeof(float))));
constexpr std::int64_t lane_width = 4;
#endif

// Unaligned vector loads and stores typed as float (not memcpy, which may alias anything and
// made GCC reload every captured loop bound after each store).
template <class V>
[[gnu::always_inline]] inline V vload(const float* p) {
    if constexpr (std::is_same_v<V, float>) {
        return *p;
    } else {
        typedef V unaligned __attribute__((aligned(alignof(float))));
        return *reinterpret_cast<const unaligned*>(p);
    }
}
template <class V>
[[gnu::always_inline]] inline void vstore(float* p, V v) {
    if constexpr (std::is_same_v<V, float>) {
        *p = v;
    } else {
        typedef V unaligned __attribute__((aligned(alignof(float))));
        *reinterpret_cast<unaligned*>(p) = v;
    }
}
template <class V>
V splat(float c) {
    return V{} + c;
}

// a * b + c, rounded once where the copy has FMA, whatever the compiler would contract.
[[gnu::always_inline]] inline lanes fmadd(lanes a, lanes b, lanes c) {
#if defined(GRANULA_SIMD_SCALAR)
    return a * b + c;
#elif defined(__AVX512F__)
    return (lanes)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__FMA__)
    return (lanes)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return a * b + c;
#endif
}

#if !defined(GRANULA_SIMD_SCALAR)
// One register's worth of pixels of type T, unaligned.
template <class T>
struct pixel_vector {
    typedef T type __attribute__((vector_size(lane_width * sizeof(T)), aligned(alignof(T))));
};
#endif

// One register of pixels converted to float, and back (rounded and clamped for integers).
template <class T>
[[gnu::always_inline]] inline lanes load_lanes(const T* p) {
    if constexpr (std::is_same_v<T, float>) {
        return vload<lanes>(p);
    } else {
        static_assert(sizeof(T) <= 2, "uint8 or uint16 pixels");
        // Widened by the instruction set's own conversions: GCC builds the vector lane by lane
        // from an array (or from __builtin_convertvector), and the vertical fir of uint8 pixels,
        // which widens every row of its window, took 14x the time of the horizontal one.
#if defined(__AVX512F__)
        const __m512i v = sizeof(T) == 1
                              ? _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))
                              : _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return (lanes)_mm512_cvtepi32_ps(v);
#elif defined(__AVX2__)
        const __m256i v = sizeof(T) == 1 ? _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))
                                         : _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return (lanes)_mm256_cvtepi32_ps(v);
#elif defined(__SSE2__) && !defined(GRANULA_SIMD_SCALAR)
        const __m128i zero = _mm_setzero_si128();
        __m128i v;
        if constexpr (sizeof(T) == 1) {
            std::int32_t four;
            std::memcpy(&four, p, sizeof(four));
            v = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(four), zero), zero);
        } else {
            v = _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), zero);
        }
        return (lanes)_mm_cvtepi32_ps(v);
#else
        float t[lane_width];
        for (std::int64_t i = 0; i < lane_width; ++i) t[i] = static_cast<float>(p[i]);
        return vload<lanes>(t);
#endif
    }
}
template <class U>
[[gnu::always_inline]] inline void store_lanes(U* p, lanes v) {
    if constexpr (std::is_same_v<U, float>) {
        vstore(p, v);
    } else {
#if defined(GRANULA_SIMD_SCALAR)
        *p = store_as<U>(v);
#else
        // store_as a register at a time. Lane by lane (with fmin, fmax and rint then) a uint8
        // result took 3.2x a float32 one (2000x3000, sigma 5).
        const lanes hi = splat<lanes>(static_cast<float>(std::numeric_limits<U>::max()));
        const lanes zero{}, magic = splat<lanes>(round_magic);
        lanes c = v > zero ? v : zero;
        c = c < hi ? c : hi;
        c = (c + magic) - magic;
        // Narrowed by the instruction set's own saturating packs (exact: c holds integers in U's
        // range): from GCC's vector conversions the AVX2 copy gathered the bytes lane by lane
        // through general registers, and a uint8 sigma 1 fir took 1.6x the float32 one.
#if defined(__AVX512F__)
        const __m512i i = _mm512_cvttps_epi32((__m512)c);
        if constexpr (sizeof(U) == 1)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtusepi32_epi8(i));
        else
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtusepi32_epi16(i));
#elif defined(__AVX2__)
        const __m256i i = _mm256_cvttps_epi32((__m256)c);
        const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
        if constexpr (sizeof(U) == 1)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words, words));
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), words);
#else
        using ints = typename pixel_vector<std::int32_t>::type;
        using narrow = typename pixel_vector<U>::type;
        *reinterpret_cast<narrow*>(p) = __builtin_convertvector(__builtin_convertvector(c, ints), narrow);
#endif
#endif
    }
}

// The first n (< lane_width) pixels of a register; the other lanes load as 0 and are not stored.
template <class T>
[[gnu::always_inline]] inline lanes load_lanes_partial(const T* p, std::int64_t n) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>) return (lanes)_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
#endif
    float t[lane_width] = {};
    for (std::int64_t i = 0; i < n; ++i) t[i] = static_cast<float>(p[i]);
    return vload<lanes>(t);
}
template <class U>
[[gnu::always_inline]] inline void store_lanes_partial(U* p, lanes v, std::int64_t n) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<U, float>) {
        _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), (__m512)v);
        return;
    }
#endif
    float t[lane_width];
    vstore(t, v);
    for (std::int64_t i = 0; i < n; ++i) p[i] = store_as<U>(t[i]);
}

// In-register transpose of lane_width registers (r[i] = row i on entry, column i on return).
[[gnu::always_inline]] inline void transpose(lanes* r) {
#if defined(GRANULA_SIMD_SCALAR)
    static_cast<void>(r);
#elif defined(__AVX512F__)
    __m512 a[16], b[16];
    for (int i = 0; i < 16; ++i) a[i] = (__m512)r[i];
    for (int i = 0; i < 16; i += 2) {
        b[i] = _mm512_unpacklo_ps(a[i], a[i + 1]);
        b[i + 1] = _mm512_unpackhi_ps(a[i], a[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        const __m512d b0 = _mm512_castps_pd(b[i]), b1 = _mm512_castps_pd(b[i + 1]);
        const __m512d b2 = _mm512_castps_pd(b[i + 2]), b3 = _mm512_castps_pd(b[i + 3]);
        a[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(b0, b2));
        a[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(b0, b2));
        a[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b1, b3));
        a[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b1, b3));
    }
    for (int i = 0; i < 4; ++i) {
        b[i] = _mm512_shuffle_f32x4(a[i], a[i + 4], 0x88);
        b[i + 4] = _mm512_shuffle_f32x4(a[i], a[i + 4], 0xdd);
        b[i + 8] = _mm512_shuffle_f32x4(a[i + 8], a[i + 12], 0x88);
        b[i + 12] = _mm512_shuffle_f32x4(a[i + 8], a[i + 12], 0xdd);
    }
    for (int i = 0; i < 8; ++i) {
        r[i] = (lanes)_mm512_shuffle_f32x4(b[i], b[i + 8], 0x88);
        r[i + 8] = (lanes)_mm512_shuffle_f32x4(b[i], b[i + 8], 0xdd);
    }
#elif defined(__AVX2__)
    __m256 a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
        a[i] = _mm256_unpacklo_ps((__m256)r[i], (__m256)r[i + 1]);
        a[i + 1] = _mm256_unpackhi_ps((__m256)r[i], (__m256)r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        b[i] = _mm256_shuffle_ps(a[i], a[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        b[i + 1] = _mm256_shuffle_ps(a[i], a[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        b[i + 2] = _mm256_shuffle_ps(a[i + 1], a[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        b[i + 3] = _mm256_shuffle_ps(a[i + 1], a[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; ++i) {
        r[i] = (lanes)_mm256_permute2f128_ps(b[i], b[i + 4], 0x20);
        r[i + 4] = (lanes)_mm256_permute2f128_ps(b[i], b[i + 4], 0x31);
    }
#elif defined(__SSE2__)
    __m128 a0 = (__m128)r[0], a1 = (__m128)r[1], a2 = (__m128)r[2], a3 = (__m128)r[3];
    _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
    r[0] = (lanes)a0, r[1] = (lanes)a1, r[2] = (lanes)a2, r[3] = (lanes)a3;
#else
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) std::swap(r[i][j], r[j][i]);
#endif
}

struct buffers {
    std::vector<float> x, y;
    std::vector<double> yvv;
};
buffers& thread_buffers() {
    thread_local buffers b;
    return b;
}

// Source index of position `pos` along an axis of length n, or -1 for cval.
std::int64_t source(std::int64_t pos, std::int64_t n, border_mode mode) { return detail::border_index(pos, n, mode); }

// Where the pad samples before a line of n and the pad after it come from (-1: cval): entry k
// for sample k - pad, entry pad + k for sample n + k.
std::vector<std::int64_t> extension_sources(std::int64_t pad, std::int64_t n, border_mode mode) {
    std::vector<std::int64_t> ext(static_cast<std::size_t>(2 * pad));
    for (std::int64_t k = 0; k < pad; ++k) {
        ext[static_cast<std::size_t>(k)] = source(k - pad, n, mode);
        ext[static_cast<std::size_t>(pad + k)] = source(n + k, n, mode);
    }
    return ext;
}


// Streaming (non-temporal) stores of final float results: plain stores would first read every
// output line from DRAM. Where the copy has no such stores, plain stores.
template <class U>
bool streamable(host_view<U> out, std::int64_t x0) {
#if defined(__AVX512F__)
    return std::is_same_v<U, float> && reinterpret_cast<std::uintptr_t>(out.row(0) + x0) % 64 == 0 &&
           (out.stride() * std::int64_t(sizeof(U))) % 64 == 0;
#else
    static_cast<void>(out), static_cast<void>(x0);
    return false;
#endif
}
template <class U>
[[gnu::always_inline]] inline void stream_lanes(U* p, lanes v) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<U, float>) _mm512_stream_ps(p, (__m512)v);
#else
    store_lanes(p, v);
#endif
}

// S sections (gaussian_plan.hpp: 2 for deriche, 3 for recursive6 and recursive5) over NV lane
// vectors at once. With RealLast the last section is first order (recursive5's real pole): its
// step leaves out the b1/c2 tap and the a2 term, which are 0.
template <int S, int NV, bool RealLast>
struct deriche_sweep {
    using V = lanes;
    V g[S], p[S], q[S], e[S], a[S];  // steady-state gains, input taps, feedback
    V y[S][NV], d[S][NV], xa[NV], xb[NV];

    // causal: taps b0, b1 on x[k], x[k-1]; anticausal: c1, c2 on x[k+1], x[k+2].
    deriche_sweep(const detail::deriche_coeffs& c, bool causal) {
        for (int s = 0; s < S; ++s) {
            g[s] = splat<V>(causal ? c.causal_gain[s] : c.anticausal_gain[s]);
            p[s] = splat<V>(causal ? c.b0[s] : c.c1[s]);
            q[s] = splat<V>(causal ? c.b1[s] : c.c2[s]);
            e[s] = splat<V>(c.e1[s]);
            a[s] = splat<V>(c.a2[s]);
        }
    }
    // Steady state of a constant input x (the first sample of the sweep).
    [[gnu::always_inline]] void start(const float* x) {
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) {
            const V v = vload<V>(x + j * lane_width);
#pragma GCC unroll 4
            for (int s = 0; s < S; ++s) y[s][j] = g[s] * v, d[s][j] = v * 0.0f;
            xa[j] = v, xb[j] = v;
        }
    }
    // The sweep's output (the sum of the sections' y) for vector j.
    [[gnu::always_inline]] V out(int j) const {
        V r = y[0][j] + y[1][j];
#pragma GCC unroll 4
        for (int s = 2; s < S; ++s) r += y[s][j];
        return r;
    }
    // One section's step on input term u.
    [[gnu::always_inline]] void step(int s, int j, V u) {
        d[s][j] = (first_order(s) ? u : a[s] * d[s][j] + u) - e[s] * y[s][j];
        y[s][j] += d[s][j];
    }
    static constexpr bool first_order(int s) { return RealLast && s == S - 1; }
    // Section s's input term from the samples one and two steps back along the sweep.
    [[gnu::always_inline]] V input(int s, V x1, V x2) const { return first_order(s) ? p[s] * x1 : p[s] * x1 + q[s] * x2; }
    // Causal step on x[k] (xa holds x[k-1]); out() is then the output at k.
    [[gnu::always_inline]] void causal(const float* x) {
        V v[NV];
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) v[j] = vload<V>(x + j * lane_width);
        causal_values(v);
    }
    [[gnu::always_inline]] void causal_values(const V* v) {
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) {
#pragma GCC unroll 4
            for (int s = 0; s < S; ++s) step(s, j, input(s, v[j], xa[j]));
            xa[j] = v[j];
        }
    }
    // Anticausal step at k (xa, xb hold x[k+1], x[k+2]); then loads x[k] into xa.
    [[gnu::always_inline]] void anticausal(const float* x) {
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) {
#pragma GCC unroll 4
            for (int s = 0; s < S; ++s) step(s, j, input(s, xa[j], xb[j]));
            xb[j] = xa[j], xa[j] = vload<V>(x + j * lane_width);
        }
    }
};

// Vertical Deriche: bands of B = NV lane vectors of columns. The band is gathered row by row
// into xs (extension included) as the causal sweep reaches it, the causal result goes to ys,
// and the anticausal sweep reads both back and writes the output rows. Both buffers are
// contiguous: the image rows of a band are a power-of-two stride apart, so re-reading them
// would map onto a few cache sets and come back from DRAM. Reading 256-byte pieces 16 KiB
// apart bound the pass (that access pattern alone, as a plain copy, takes 7.7 ms at 4096x4096
// on one thread, a row copy 2.7 ms; measured) until the rows were prefetched ahead: deriche
// 9 -> 6.5 ms, recursive6 12 -> 9 ms on one thread at sigma 5 (measured). Tried and
// slower: bands of rows with the anticausal sweep by superposition (long runs, but the
// correction pass cost 7-8 ms), and two or four bands per gathered row.
// One band: columns [x0, x0 + bw) with bw <= B = NV lane vectors; rows[k] is the source row
// of position k (-1: cval).
template <int S, int NV, bool RealLast, class T, class U>
void deriche_vertical_band(host_view<const T> in, host_view<U> out, const axis_plan& p,
                           const std::vector<std::int64_t>& rows, std::int64_t x0, std::int64_t bw) {
    constexpr std::int64_t W = lane_width, B = NV * W;
    const std::int64_t h = in.height(), pad = p.pad, nt = h + 2 * pad;
    const detail::deriche_coeffs& c = p.deriche;
    flush_denormals ftz;
    buffers& buf = thread_buffers();
    const bool stream = bw == B && streamable(out, x0);
    buf.x.resize(static_cast<std::size_t>(nt * B));
    buf.y.resize(static_cast<std::size_t>(h * B));
    float* xs = buf.x.data();
    float* ys = buf.y.data();
    const T* const base = in.row(0) + x0;  // locals: the sweeps leave few registers
    const std::int64_t stride = in.stride();
    // full: the band is B columns wide (all but the last band), no partial vectors; with_direct:
    // the filter has a centre term (derivatives; skipping it for order 0: 3% of the pass).
    auto run = [&](auto full, auto with_direct) __attribute__((always_inline)) {
        constexpr bool F = decltype(full)::value, D = decltype(with_direct)::value;
        // Row k of the band into xs and v (the causal sweep takes it from registers).
        auto gather = [&](std::int64_t k, lanes (&v)[NV]) __attribute__((always_inline)) {
            float* xk = xs + k * B;
            const std::int64_t src = rows[static_cast<std::size_t>(k)];
            if (src < 0) {
#pragma GCC unroll 8
                for (int g = 0; g < NV; ++g) v[g] = splat<lanes>(p.cval), vstore(xk + g * W, v[g]);
                return;
            }
            const T* row = base + src * stride;
#pragma GCC unroll 8
            for (int g = 0; g < NV; ++g) {
                const std::int64_t n = F ? W : std::clamp<std::int64_t>(bw - g * W, 0, W);
                v[g] = n == W ? load_lanes(row + g * W) : load_lanes_partial(row + g * W, n);
                vstore(xk + g * W, v[g]);
            }
        };
        // The rows prefetch_rows ahead: the band's pieces of them are 16 KiB apart, which the
        // hardware prefetchers do not follow.
        auto prefetch = [&](std::int64_t k) __attribute__((always_inline)) {
            const std::int64_t src = k < nt ? rows[static_cast<std::size_t>(k)] : -1;
            if (src < 0) return;
            detail::prefetch_span(base + src * stride, B * std::int64_t(sizeof(T)));
        };

        deriche_sweep<S, NV, RealLast> s(c, true);
        lanes v[NV];
        gather(0, v);
        s.start(xs);
        for (std::int64_t k = 0; k < pad + h; ++k) {
            if (k > 0) gather(k, v);
            prefetch(k + prefetch_rows);
            s.causal_values(v);
            if (k >= pad) {
#pragma GCC unroll 8
                for (int g = 0; g < NV; ++g) vstore(ys + (k - pad) * B + g * W, s.out(g));
            }
        }
        for (std::int64_t k = pad + h; k < nt; ++k) gather(k, v);

        deriche_sweep<S, NV, RealLast> a(c, false);
        const lanes direct = splat<lanes>(c.direct);
        a.start(xs + (nt - 1) * B);
        for (std::int64_t k = nt - 1; k >= pad + h; --k) a.anticausal(xs + k * B);
        for (std::int64_t i = h - 1; i >= 0; --i) {
            a.anticausal(xs + (pad + i) * B);  // xa is now x at i
            float* y = ys + i * B;
            U* row = out.row(i) + x0;
            // Plain stores read their lines first (rows not 64-byte aligned, or integer
            // output): fetched ahead like the input's, or each row waits for them.
            if (!stream && i >= prefetch_rows)
                detail::prefetch_span<1>(out.row(i - prefetch_rows) + x0, bw * std::int64_t(sizeof(U)));
            lanes r[NV];
#pragma GCC unroll 8
            for (int g = 0; g < NV; ++g) {
                r[g] = vload<lanes>(y + g * W) + a.out(g);
                if constexpr (D) r[g] += direct * a.xa[g];
            }
            if (F && stream) {
#pragma GCC unroll 8
                for (int g = 0; g < NV; ++g) stream_lanes(row + g * W, r[g]);
            } else {
#pragma GCC unroll 8
                for (int g = 0; g < NV; ++g) {
                    const std::int64_t n = F ? W : std::clamp<std::int64_t>(bw - g * W, 0, W);
                    if (n == W)
                        store_lanes(row + g * W, r[g]);
                    else
                        store_lanes_partial(row + g * W, r[g], n);
                }
            }
        }
    };
    if (bw == B && c.direct == 0)
        run(std::true_type{}, std::false_type{});
    else if (bw == B)
        run(std::true_type{}, std::true_type{});
    else
        run(std::false_type{}, std::true_type{});
    if (stream) stream_fence();
}

template <int S, int NV, bool RealLast, class T, class U>
void deriche_vertical(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    const std::int64_t w = in.width(), h = in.height(), pad = p.pad, nt = h + 2 * pad;
    // Source row of every position (-1: cval), looked up once: a call inside the sweeps would
    // spill the recursion state (vector registers are caller-saved).
    std::vector<std::int64_t> rows(static_cast<std::size_t>(nt));
    for (std::int64_t k = 0; k < nt; ++k) rows[static_cast<std::size_t>(k)] = source(k - pad, h, p.mode);
    const std::vector<std::int64_t> cols = line_aligned_chunks(out, NV * lane_width);
    const auto chunks = static_cast<std::int64_t>(cols.size()) - 1;
    detail::parallel_for(chunks, w * h, [&](std::int64_t item) {
        // The last chunk (partial where the width is not a multiple of the band) goes first,
        // right after the first (partial where the rows start inside a cache line): taken last,
        // a partial chunk left the other thread idle. A chunk of one vector or less (numpy's
        // rows start 16 bytes into a line: 12 float columns before the first line) runs a band
        // of one vector, not NV with NV - 1 of them empty.
        const std::int64_t bi = item == 0 ? chunks - 1 : item - 1;
        const std::int64_t x0 = cols[static_cast<std::size_t>(bi)], bw = cols[static_cast<std::size_t>(bi + 1)] - x0;
        if (bw <= lane_width)
            deriche_vertical_band<S, 1, RealLast>(in, out, p, rows, x0, bw);
        else
            deriche_vertical_band<S, NV, RealLast>(in, out, p, rows, x0, bw);
    });
}

// Horizontal Deriche: strips of R = NV * lane_width rows. xs holds the strip as rows of R
// lanes (position k = column k - pad, extension included): tiles of lane_width columns are
// transposed in as the causal sweep reaches them (the ones the left extension reads, before
// it); the columns before the first tile (cut so tiles are 64-byte aligned in the output) and
// after the last one are gathered; the extension's rows are copies of the rows of xs they
// mirror (gathering them pixel by pixel cost 10% of the pass at sigma 20, measured). ys holds
// the causal result, then the final one, transposed out tile by tile.
template <int S, int NV, bool RealLast, class T, class U>
void deriche_horizontal(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    constexpr std::int64_t W = lane_width, R = NV * W;
    const std::int64_t w = in.width(), h = in.height(), pad = p.pad, nt = w + 2 * pad;
    const std::int64_t head = w > W ? columns_before_line(out) % W : 0;  // columns [0, head) are gathered
    const std::int64_t tiles = (w - head) / W, tail = head + tiles * W;  // and [tail, w)
    const detail::deriche_coeffs& c = p.deriche;
    // Source columns of the extension (-1: cval), looked up once, and the tiles [0, early)
    // that hold the left extension's sources.
    const std::vector<std::int64_t> ext = extension_sources(pad, w, p.mode);
    std::int64_t early = 0;
    for (std::int64_t k = 0; k < pad; ++k) {
        const std::int64_t col = ext[static_cast<std::size_t>(k)];
        if (col >= head && col < tail) early = std::max(early, (col - head) / W + 1);
    }
    detail::parallel_for((h + R - 1) / R, w * h, [&](std::int64_t si) {
        flush_denormals ftz;
        buffers& buf = thread_buffers();
        const std::int64_t y0 = si * R, sh = std::min(R, h - y0);
        const T* src[R];
        U* dst[R];
        for (std::int64_t l = 0; l < R; ++l) {  // lanes past the image repeat its last row
            src[l] = in.row(y0 + std::min(l, sh - 1));
            dst[l] = out.row(y0 + std::min(l, sh - 1));
        }
        buf.x.resize(static_cast<std::size_t>(nt * R));
        buf.y.resize(static_cast<std::size_t>(w * R));
        float* xs = buf.x.data();
        float* ys = buf.y.data();
        for (std::int64_t l = 0; l < R; ++l) {
            for (std::int64_t k = 0; k < head; ++k) xs[(pad + k) * R + l] = static_cast<float>(src[l][k]);
            for (std::int64_t k = tail; k < w; ++k) xs[(pad + k) * R + l] = static_cast<float>(src[l][k]);
        }
        // Tile t into xs, and into r (r[i][g]: vector g of column head + t W + i).
        auto transpose_in = [&](std::int64_t t, lanes (&r)[W][NV]) __attribute__((always_inline)) {
            const std::int64_t x0 = head + t * W;
            for (int g = 0; g < NV; ++g) {
                lanes c[W];
                for (std::int64_t i = 0; i < W; ++i) c[i] = load_lanes(src[g * W + i] + x0);
                transpose(c);
                for (std::int64_t i = 0; i < W; ++i) vstore(xs + (pad + x0 + i) * R + g * W, c[i]), r[i][g] = c[i];
            }
        };
        // Extension rows [k0, k1) from the rows of xs they mirror (all of them there by now).
        auto extend = [&](std::int64_t k0, std::int64_t k1) {
            for (std::int64_t k = k0; k < k1; ++k) {
                const std::int64_t col = ext[static_cast<std::size_t>(k < pad ? k : k - w)];
                if (col < 0)
                    std::fill_n(xs + k * R, R, p.cval);
                else
                    std::memcpy(xs + k * R, xs + (pad + col) * R, R * sizeof(float));
            }
        };
        for (std::int64_t t = 0; t < early; ++t) {
            lanes r[W][NV];
            transpose_in(t, r);
        }
        extend(0, pad);

        deriche_sweep<S, NV, RealLast> s(c, true);
        auto causal = [&](std::int64_t k) __attribute__((always_inline)) {  // k inside the line
            s.causal(xs + k * R);
#pragma GCC unroll 8
            for (int g = 0; g < NV; ++g) vstore(ys + (k - pad) * R + g * W, s.out(g));
        };
        s.start(xs);
        for (std::int64_t k = 0; k < pad; ++k) s.causal(xs + k * R);
        for (std::int64_t k = pad; k < pad + head; ++k) causal(k);
        for (std::int64_t t = 0; t < tiles; ++t) {
            const std::int64_t x0 = head + t * W;
            if (t < early) {
                for (std::int64_t k = pad + x0; k < pad + x0 + W; ++k) causal(k);
                continue;
            }
            lanes r[W][NV];  // the sweep takes the tile from registers
            transpose_in(t, r);
#pragma GCC unroll 16
            for (std::int64_t i = 0; i < W; ++i) {
                s.causal_values(r[i]);
#pragma GCC unroll 8
                for (int g = 0; g < NV; ++g) vstore(ys + (x0 + i) * R + g * W, s.out(g));
            }
        }
        for (std::int64_t k = pad + tail; k < pad + w; ++k) causal(k);
        extend(pad + w, nt);

        deriche_sweep<S, NV, RealLast> a(c, false);
        const lanes direct = splat<lanes>(c.direct);
        auto anticausal = [&](std::int64_t k) __attribute__((always_inline)) {  // k inside the line
            a.anticausal(xs + k * R);
            float* y = ys + (k - pad) * R;
#pragma GCC unroll 8
            for (int g = 0; g < NV; ++g)
                vstore(y + g * W, vload<lanes>(y + g * W) + a.out(g) + direct * a.xa[g]);
        };
        a.start(xs + (nt - 1) * R);
        for (std::int64_t k = nt - 1; k >= pad + w; --k) a.anticausal(xs + k * R);
        for (std::int64_t k = pad + w - 1; k >= pad + tail; --k) anticausal(k);
        for (std::int64_t t = tiles - 1; t >= 0; --t) {
            const std::int64_t x0 = head + t * W;
            // The tile's results stay in registers from the sweep to the transpose.
            lanes r[NV][W];
#pragma GCC unroll 16
            for (std::int64_t i = W - 1; i >= 0; --i) {
                const std::int64_t k = pad + x0 + i;
                a.anticausal(xs + k * R);
                const float* y = ys + (k - pad) * R;
#pragma GCC unroll 8
                for (int g = 0; g < NV; ++g) r[g][i] = vload<lanes>(y + g * W) + a.out(g) + direct * a.xa[g];
            }
            for (int g = 0; g < NV; ++g) {
                transpose(r[g]);
                for (std::int64_t i = 0; i < W && g * W + i < sh; ++i) store_lanes(dst[g * W + i] + x0, r[g][i]);
            }
        }
        for (std::int64_t k = pad + head - 1; k >= pad; --k) anticausal(k);
        for (std::int64_t l = 0; l < sh; ++l) {
            for (std::int64_t k = 0; k < head; ++k) dst[l][k] = store_as<U>(ys[k * R + l]);
            for (std::int64_t k = tail; k < w; ++k) dst[l][k] = store_as<U>(ys[k * R + l]);
        }
    });
}

// Young-van Vliet in double (see yvv_coeffs), over the L lanes of the nt x L buffer x into the
// n x L buffer y. w holds rows -3 .. nt + 2: the causal result, the start states on both sides,
// and the anticausal result written over the causal one row by row.
void yvv_lanes(const detail::yvv_coeffs& c, const float* x, float* y, std::vector<double>& buffer, std::int64_t nt,
               std::int64_t n, std::int64_t pad, std::int64_t L) {
    buffer.resize(static_cast<std::size_t>((nt + 6) * L));
    double* const w = buffer.data() + 3 * L;
    for (std::int64_t k = -3; k < 0; ++k)
        for (std::int64_t l = 0; l < L; ++l) w[k * L + l] = x[l];  // the steady state of the first sample
    for (std::int64_t k = 0; k < nt; ++k)
        for (std::int64_t l = 0; l < L; ++l)
            w[k * L + l] = c.B * x[k * L + l] + c.b1 * w[(k - 1) * L + l] + c.b2 * w[(k - 2) * L + l] +
                           c.b3 * w[(k - 3) * L + l];
    for (std::int64_t l = 0; l < L; ++l) {
        const double u = x[(nt - 1) * L + l];
        const double e[3] = {w[(nt - 1) * L + l] - u, w[(nt - 2) * L + l] - u, w[(nt - 3) * L + l] - u};
        for (int i = 0; i < 3; ++i)
            w[(nt + i) * L + l] = u + c.m[i][0] * e[0] + c.m[i][1] * e[1] + c.m[i][2] * e[2];
    }
    for (std::int64_t k = nt - 1; k >= pad; --k)
        for (std::int64_t l = 0; l < L; ++l) {
            const double v = c.B * w[k * L + l] + c.b1 * w[(k + 1) * L + l] + c.b2 * w[(k + 2) * L + l] +
                             c.b3 * w[(k + 3) * L + l];
            w[k * L + l] = v;
            if (k < pad + n) y[(k - pad) * L + l] = static_cast<float>(v);
        }
}

// FIR: correlation with symmetric (orders 0, 2) or antisymmetric (order 1) taps, taps[r + j]
// weighting the sample j pixels ahead, straight from the image: blocks of fir_vectors lane
// vectors of output pixels accumulate in registers, t_0 x_i first, then each tap pair
// t_j (x_{i+j} +- x_{i-j}), j = 1 .. r (as the compiler contracts it: fmadd measured no faster
// in this load-bound loop, 4096x4096 axis 0 on 2 threads). Vertical: the 2r + 1 source rows of a band
// of output rows stay in L2, so the image is read and written once. Horizontal (fir_rows): one
// row at a time, copied with its border extension into a float buffer that the taps read at
// offsets.
constexpr int fir_vectors = 4;
constexpr std::int64_t fir_rows_per_task = 32;

// out[l] for l < n from the 2r + 1 sources src[0 .. 2r] (src[r + k]: the samples k away from
// the centre, of type S; null: cval, outside the image).
template <class S, class U>
void fir_line(const std::vector<float>& taps, bool odd, float cval, const S* const* src, U* out, std::int64_t n) {
    const auto r = static_cast<std::int64_t>(taps.size() / 2);
    const float t0 = taps[static_cast<std::size_t>(r)];
    const auto sample = [&](const S* p, std::int64_t l) { return p ? load_lanes(p + l) : splat<lanes>(cval); };
    constexpr std::int64_t step = fir_vectors * lane_width;
    std::int64_t l0 = 0;
    for (; l0 + step <= n; l0 += step) {
        lanes acc[fir_vectors];
        for (int g = 0; g < fir_vectors; ++g) acc[g] = t0 * load_lanes(src[r] + l0 + g * lane_width);
        for (std::int64_t j = 1; j <= r; ++j) {
            const lanes t = splat<lanes>(taps[static_cast<std::size_t>(r + j)]);
            const S *a = src[r + j], *b = src[r - j];
            for (int g = 0; g < fir_vectors; ++g) {
                const lanes va = sample(a, l0 + g * lane_width), vb = sample(b, l0 + g * lane_width);
                acc[g] += t * (odd ? va - vb : va + vb);
            }
        }
        for (int g = 0; g < fir_vectors; ++g) store_lanes(out + l0 + g * lane_width, acc[g]);
    }
    // The rest a vector at a time, the last one partial: pixel by pixel, the 56 columns a row
    // that 3000 leaves cost the vertical pass of a 2000x3000 float32 image (sigma 5) 1.5x its
    // time at 2000x3008.
    for (; l0 < n; l0 += lane_width) {
        const std::int64_t m = std::min(lane_width, n - l0);
        const auto part = [&](const S* p) {
            return !p ? splat<lanes>(cval) : m == lane_width ? load_lanes(p + l0) : load_lanes_partial(p + l0, m);
        };
        lanes acc = t0 * part(src[r]);
        for (std::int64_t j = 1; j <= r; ++j) {
            const lanes t = splat<lanes>(taps[static_cast<std::size_t>(r + j)]);
            const lanes va = part(src[r + j]), vb = part(src[r - j]);
            acc += t * (odd ? va - vb : va + vb);
        }
        if (m == lane_width)
            store_lanes(out + l0, acc);
        else
            store_lanes_partial(out + l0, acc, m);
    }
}

// The 2r + 1 rows of output row y's vertical window (null: cval, outside the image).
template <class T>
void window_sources(host_view<const T> in, std::int64_t y, std::int64_t r, border_mode mode,
                    std::vector<const T*>& src) {
    for (std::int64_t k = -r; k <= r; ++k) {
        const std::int64_t row = source(y + k, in.height(), mode);
        src[static_cast<std::size_t>(r + k)] = row < 0 ? nullptr : in.row(row);
    }
}

template <class T, class U>
void fir_vertical(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    const std::int64_t w = in.width(), h = in.height(), r = static_cast<std::int64_t>(p.taps.size() / 2);
    detail::parallel_for((h + fir_rows_per_task - 1) / fir_rows_per_task, w * h, [&](std::int64_t task) {
        flush_denormals ftz;
        std::vector<const T*> src(static_cast<std::size_t>(2 * r + 1));
        const std::int64_t y1 = std::min(h, (task + 1) * fir_rows_per_task);
        for (std::int64_t y = task * fir_rows_per_task; y < y1; ++y) {
            window_sources(in, y, r, p.mode, src);
            fir_line<T, U>(p.taps, p.order == 1, p.cval, src.data(), out.row(y), w);
        }
    });
}

// Horizontal taps t[0 .. r] along the float line c (its extension at c[-r .. -1] and c[w ..]
// readable up to the next multiple of lane_width past w + r) into out[0 .. w).
template <bool Odd, int NV, class U>
[[gnu::always_inline]] inline void fir_row_block(const float* t, std::int64_t r, const float* c, U* out,
                                                 std::int64_t n) {
    constexpr std::int64_t W = lane_width;
    lanes acc[NV];
    const lanes t0 = splat<lanes>(t[0]);
#pragma GCC unroll 8
    for (int g = 0; g < NV; ++g) acc[g] = t0 * vload<lanes>(c + g * W);
    for (std::int64_t j = 1; j <= r; ++j) {
        const lanes tj = splat<lanes>(t[j]);
#pragma GCC unroll 8
        for (int g = 0; g < NV; ++g) {
            const lanes a = vload<lanes>(c + g * W + j), b = vload<lanes>(c + g * W - j);
            acc[g] = fmadd(tj, Odd ? a - b : a + b, acc[g]);
        }
    }
#pragma GCC unroll 8
    for (int g = 0; g < NV; ++g) {
        if (n >= (g + 1) * W)
            store_lanes(out + g * W, acc[g]);
        else if (n > g * W)
            store_lanes_partial(out + g * W, acc[g], n - g * W);
    }
}

template <bool Odd, class U>
void fir_row(const float* t, std::int64_t r, const float* c, U* out, std::int64_t w) {
    constexpr int NV = 4;
    std::int64_t x = 0;
    for (; x + NV * lane_width <= w; x += NV * lane_width) fir_row_block<Odd, NV>(t, r, c + x, out + x, NV * lane_width);
    for (; x < w; x += lane_width) fir_row_block<Odd, 1>(t, r, c + x, out + x, w - x);
}

// The horizontal fir of rows of width w: a row is copied as floats into a line buffer, extended
// here by the mode, and filtered into the output.
template <class U>
class fir_rows {
public:
    fir_rows(const axis_plan& p, std::int64_t w)
        : w_(w), r_(static_cast<std::int64_t>(p.taps.size() / 2)), cval_(p.cval),
          taps_(p.taps.begin() + r_, p.taps.end()), ext_(extension_sources(r_, w, p.mode)),
          row_(p.order == 1 ? fir_row<true, U> : fir_row<false, U>) {}
    std::int64_t radius() const { return r_; }
    // Floats a line buffer takes (its row at line + radius()).
    std::int64_t line_floats() const { return (w_ + lane_width - 1) / lane_width * lane_width + 2 * r_ + lane_width; }
    // c[0 .. w) holds the row: extends it and writes the filtered row to out.
    void operator()(float* c, U* out) const {
        for (std::int64_t k = 0; k < r_; ++k) {
            const std::int64_t lo = ext_[static_cast<std::size_t>(k)], hi = ext_[static_cast<std::size_t>(r_ + k)];
            c[k - r_] = lo < 0 ? cval_ : c[lo];
            c[w_ + k] = hi < 0 ? cval_ : c[hi];
        }
        row_(taps_.data(), r_, c, out, w_);
    }

private:
    std::int64_t w_, r_;
    float cval_;
    std::vector<float> taps_;          // taps_[j]: the columns j away
    std::vector<std::int64_t> ext_;  // sources of the extension, -1: cval
    void (*row_)(const float*, std::int64_t, const float*, U*, std::int64_t);
};

template <class T, class U>
void fir_horizontal(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    const std::int64_t w = in.width(), h = in.height();
    const fir_rows<U> rows(p, w);
    detail::parallel_for((h + fir_rows_per_task - 1) / fir_rows_per_task, w * h, [&](std::int64_t task) {
        flush_denormals ftz;
        std::vector<float>& line = thread_buffers().x;
        line.resize(static_cast<std::size_t>(rows.line_floats()));
        float* const centre = line.data() + rows.radius();
        const std::int64_t y1 = std::min(h, (task + 1) * fir_rows_per_task);
        for (std::int64_t y = task * fir_rows_per_task; y < y1; ++y) {
            const T* row = in.row(y);
            for (std::int64_t x = 0; x < w; ++x) centre[x] = static_cast<float>(row[x]);
            rows(centre, out.row(y));
        }
    });
}

// Both axes fir in one pass (issue 5): the image is read once and the result written once, where
// the two passes above each take the whole image through memory. A work item is a band of
// fir_band_rows output rows:
//  1. its source rows (the band and rv rows either side) are staged fir_chunk columns at a time
//     as floats into a contiguous buffer (the image rows' 16 KiB stride would map a chunk's
//     2 rv + 2 rows onto one L1 set; the copy also converts the pixel type and holds the border
//     rows and cval);
//  2. the vertical taps run over the staged rows two output rows at a time (fir_pair), and the
//     results are transposed in registers into "columns of lanes" (column x of all the band's
//     rows side by side);
//  3. the extension columns are copied in by the mode, and the horizontal taps run over the
//     columns with the same kernel (along rows, the taps' windows are unaligned loads, two per
//     tap pair: twice the loads, half of them split over two cache lines); the results are
//     transposed back into the output rows.
constexpr std::int64_t fir_band_rows = 64;
constexpr std::int64_t fir_chunk = 128;
constexpr std::int64_t fir_vertical_block = 3 * lane_width;  // one fir_pair_block<3>

// Taps t[0 .. r] (t[j] weights the samples j away, splatted) for outputs i and i + 1 of lines
// that run across "rows" `stride` floats apart, n floats (a multiple of lane_width) of each: s is
// output i's centre sample. Each vector loaded feeds both outputs' pair sums, x[i+j] +- x[i-j]
// and x[i+1+j] +- x[i+1-j], so a tap pair costs one load per output vector.
template <bool Odd, int NV>
[[gnu::always_inline]] inline void fir_pair_block(const lanes* t, std::int64_t r, const float* s, std::int64_t stride,
                                                  float* o0, float* o1) {
    constexpr std::int64_t W = lane_width;
    lanes acc0[NV], acc1[NV], up[NV], dn[NV];
#pragma GCC unroll 8
    for (int g = 0; g < NV; ++g) {
        dn[g] = vload<lanes>(s + g * W), up[g] = vload<lanes>(s + stride + g * W);
        acc0[g] = t[0] * dn[g], acc1[g] = t[0] * up[g];
    }
    for (std::int64_t j = 1; j <= r; ++j) {
        const float *a = s + (1 + j) * stride, *b = s - j * stride;
#pragma GCC unroll 8
        for (int g = 0; g < NV; ++g) {
            const lanes va = vload<lanes>(a + g * W), vb = vload<lanes>(b + g * W);
            acc0[g] = fmadd(t[j], Odd ? up[g] - vb : up[g] + vb, acc0[g]);
            acc1[g] = fmadd(t[j], Odd ? va - dn[g] : va + dn[g], acc1[g]);
            up[g] = va, dn[g] = vb;
        }
    }
#pragma GCC unroll 8
    for (int g = 0; g < NV; ++g) vstore(o0 + g * W, acc0[g]), vstore(o1 + g * W, acc1[g]);
}

template <bool Odd>
void fir_pair(const lanes* t, std::int64_t r, const float* s, std::int64_t stride, float* o0, float* o1,
              std::int64_t n) {
    // 3 vectors: 6 accumulators and 6 carried loads fill AVX2's 16 registers without spilling (4 spill).
    constexpr std::int64_t V3 = 3 * lane_width;
    std::int64_t c = 0;
    for (; c + V3 <= n; c += V3) fir_pair_block<Odd, 3>(t, r, s + c, stride, o0 + c, o1 + c);
    if (n - c == 2 * lane_width)
        fir_pair_block<Odd, 2>(t, r, s + c, stride, o0 + c, o1 + c);
    else if (n > c)
        fir_pair_block<Odd, 1>(t, r, s + c, stride, o0 + c, o1 + c);
}

std::vector<lanes> splat_taps(const axis_plan& p) {
    const auto r = static_cast<std::int64_t>(p.taps.size() / 2);
    std::vector<lanes> t(static_cast<std::size_t>(r + 1));
    for (std::int64_t j = 0; j <= r; ++j) t[static_cast<std::size_t>(j)] = splat<lanes>(p.taps[static_cast<std::size_t>(r + j)]);
    return t;
}

template <class T, class U>
void fir_both(host_view<const T> in, host_view<U> out, const axis_plan& pv, const axis_plan& ph) {
    constexpr std::int64_t W = lane_width, C = fir_chunk;
    constexpr std::int64_t R = W < 2 ? 2 : W;  // rows (and columns) per transposed block; fir_pair makes 2
    const std::int64_t w = in.width(), h = in.height();
    const auto rv = static_cast<std::int64_t>(pv.taps.size() / 2), rc = static_cast<std::int64_t>(ph.taps.size() / 2);
    const std::vector<lanes> tv = splat_taps(pv), th = splat_taps(ph);
    const std::vector<std::int64_t> ext = extension_sources(rc, w, ph.mode);  // of the extension columns
    const auto pair_v = pv.order == 1 ? fir_pair<true> : fir_pair<false>;
    const auto pair_h = ph.order == 1 ? fir_pair<true> : fir_pair<false>;
    // Columns of lanes: the interior at rc .. rc + w, room for the last block's reads past it.
    const std::int64_t columns = (w + R - 1) / R * R + 2 * rc + R;
    detail::parallel_for((h + fir_band_rows - 1) / fir_band_rows, w * h, [&](std::int64_t item) {
        flush_denormals ftz;
        buffers& buf = thread_buffers();
        const std::int64_t y0 = item * fir_band_rows, nb = std::min(fir_band_rows, h - y0);
        const std::int64_t nr = (nb + R - 1) / R * R, staged = nr + 2 * rv;  // rows past nb: computed, not stored
        buf.x.resize(static_cast<std::size_t>(staged * C + std::max(R * C, R * nr)));
        buf.y.resize(static_cast<std::size_t>(columns * nr));
        float* const stage = buf.x.data();
        float* const tile = stage + staged * C;  // R rows of a chunk, or R columns of the output
        float* const lt = buf.y.data();          // column p's nr rows at lt + p * nr
        for (std::int64_t x0 = 0; x0 < w; x0 += C) {
            const std::int64_t cw = std::min(C, w - x0), cwr = (cw + W - 1) / W * W;
            for (std::int64_t k = 0; k < staged; ++k) {
                float* d = stage + k * C;
                const std::int64_t row = source(y0 - rv + k, h, pv.mode);
                if (row < 0) {
                    std::fill_n(d, cwr, pv.cval);
                    continue;
                }
                const T* s = in.row(row) + x0;
                for (std::int64_t l = 0; l < cw; ++l) d[l] = static_cast<float>(s[l]);
                std::fill(d + cw, d + cwr, 0.0f);  // lanes past the width: results land past the interior
                // The row's next piece into L2 while this chunk is filtered: pieces of rows 16 KiB
                // apart, which the hardware prefetchers do not follow.
                if (x0 + C < w) detail::prefetch_span<0, 2>(s + C, C * std::int64_t(sizeof(T)));
            }
            // Blocks of fir_vertical_block columns down all the band's rows: their staged pieces
            // stay in L1, and so do the lines of their columns of lanes being filled.
            for (std::int64_t b0 = 0; b0 < cwr; b0 += fir_vertical_block) {
                const std::int64_t bw = std::min(fir_vertical_block, cwr - b0);
                for (std::int64_t i = 0; i < nr; i += R) {
                    for (std::int64_t k = 0; k < R; k += 2)
                        pair_v(tv.data(), rv, stage + (i + k + rv) * C + b0, C, tile + k * C, tile + (k + 1) * C, bw);
                    for (std::int64_t q = 0; q < R; q += W)
                        for (std::int64_t c0 = 0; c0 < bw; c0 += W) {
                            lanes v[W];
                            for (std::int64_t l = 0; l < W; ++l) v[l] = vload<lanes>(tile + (q + l) * C + c0);
                            transpose(v);
                            for (std::int64_t c = 0; c < W; ++c)
                                vstore(lt + (rc + x0 + b0 + c0 + c) * nr + i + q, v[c]);
                        }
                }
            }
        }
        for (std::int64_t k = 0; k < 2 * rc; ++k) {
            float* d = lt + (k < rc ? k : w + k) * nr;
            const std::int64_t src = ext[static_cast<std::size_t>(k)];
            if (src < 0)
                std::fill_n(d, nr, ph.cval);
            else
                std::memcpy(d, lt + (rc + src) * nr, static_cast<std::size_t>(nr) * sizeof(float));
        }
        float* const ot = tile;  // R output columns of the band's rows
        for (std::int64_t x = 0; x < w; x += R) {
            for (std::int64_t k = 0; k < R; k += 2)
                pair_h(th.data(), rc, lt + (rc + x + k) * nr, nr, ot + k * nr, ot + (k + 1) * nr, nr);
            for (std::int64_t q = 0; q < R && x + q < w; q += W) {
                const std::int64_t n = std::min(W, w - x - q);
                for (std::int64_t i = 0; i < nb; i += W) {
                    lanes v[W];
                    for (std::int64_t l = 0; l < W; ++l) v[l] = vload<lanes>(ot + (q + l) * nr + i);
                    transpose(v);
                    for (std::int64_t l = 0; l < W && i + l < nb; ++l) {
                        U* o = out.row(y0 + i + l) + x + q;
                        if (n == W)
                            store_lanes(o, v[l]);
                        else
                            store_lanes_partial(o, v[l], n);
                    }
                }
            }
        }
    });
}

// Both axes fir a row at a time: an output row's vertical taps run over its 2r + 1 source rows
// into a float line buffer, which the horizontal taps (fir_rows) then filter into the row. The
// arithmetic is the two passes' (their intermediate is float too), but the image is read once,
// its rows from the cache after their first use, and the result written once.
template <class T, class U>
void fir_by_rows(host_view<const T> in, host_view<U> out, const axis_plan& pv, const axis_plan& ph) {
    const std::int64_t w = in.width(), h = in.height(), r = static_cast<std::int64_t>(pv.taps.size() / 2);
    const fir_rows<U> rows(ph, w);
    detail::parallel_for((h + fir_rows_per_task - 1) / fir_rows_per_task, 2 * w * h, [&](std::int64_t task) {
        flush_denormals ftz;
        std::vector<float>& line = thread_buffers().x;
        line.resize(static_cast<std::size_t>(rows.line_floats()));
        float* const centre = line.data() + rows.radius();
        std::vector<const T*> src(static_cast<std::size_t>(2 * r + 1));
        const std::int64_t y1 = std::min(h, (task + 1) * fir_rows_per_task);
        for (std::int64_t y = task * fir_rows_per_task; y < y1; ++y) {
            window_sources(in, y, r, pv.mode, src);
            fir_line<T, float>(pv.taps, pv.order == 1, pv.cval, src.data(), centre, w);
            rows(centre, out.row(y));
        }
    });
}

// Filters the nt x L buffer x into the n x L buffer y.
void filter_lanes(const axis_plan& p, const float* x, float* y, std::vector<double>& yvv_buffer, std::int64_t n,
                  std::int64_t L) {
    const std::int64_t nt = n + 2 * p.pad;
    switch (p.kind) {
    case gaussian_kind::fir:      // never here: fir_vertical and fir_horizontal
    case gaussian_kind::deriche:  // never here: deriche_vertical and deriche_horizontal
        break;
    case gaussian_kind::yvv:
        yvv_lanes(p.yvv, x, y, yvv_buffer, nt, n, p.pad, L);
        break;
    case gaussian_kind::identity: std::memcpy(y, x, static_cast<std::size_t>(n * L) * sizeof(float)); break;
    }
}

}  // namespace

template <class T, class U>
void gaussian_vertical_pass(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    if (p.kind == gaussian_kind::deriche) {
        if (p.deriche.sections == 3 && p.deriche.real_last)
            deriche_vertical<3, vertical_vectors(3, true), true>(in, out, p);
        else if (p.deriche.sections == 3)
            deriche_vertical<3, vertical_vectors(3, false), false>(in, out, p);
        else
            deriche_vertical<2, vertical_vectors(2, false), false>(in, out, p);
        return;
    }
    if (p.kind == gaussian_kind::fir) return fir_vertical(in, out, p);
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
        filter_lanes(p, buf.x.data(), buf.y.data(), buf.yvv, h, L);
        for (std::int64_t i = 0; i < h; ++i) {
            const float* yi = buf.y.data() + i * L;
            U* row = out.row(i) + x0;
            std::int64_t l = 0;
            for (; l + lane_width <= bw; l += lane_width) store_lanes(row + l, vload<lanes>(yi + l));
            for (; l < bw; ++l) row[l] = store_as<U>(yi[l]);
        }
    });
}

template <class T, class U>
void gaussian_horizontal_pass(host_view<const T> in, host_view<U> out, const axis_plan& p) {
    if (p.kind == gaussian_kind::deriche) {
        if (p.deriche.sections == 3 && p.deriche.real_last)
            deriche_horizontal<3, horizontal_vectors, true>(in, out, p);
        else if (p.deriche.sections == 3)
            deriche_horizontal<3, horizontal_vectors, false>(in, out, p);
        else
            deriche_horizontal<2, horizontal_vectors, false>(in, out, p);
        return;
    }
    if (p.kind == gaussian_kind::fir) return fir_horizontal(in, out, p);
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
        filter_lanes(p, x, buf.y.data(), buf.yvv, w, L);
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

template <class T, class U>
void gaussian_fir_both(host_view<const T> in, host_view<U> out, const axis_plan& rows_axis, const axis_plan& cols_axis) {
    fir_both(in, out, rows_axis, cols_axis);
}

template <class T, class U>
void gaussian_fir_by_rows(host_view<const T> in, host_view<U> out, const axis_plan& rows_axis,
                          const axis_plan& cols_axis) {
    fir_by_rows(in, out, rows_axis, cols_axis);
}

#define GRANULA_INSTANTIATE_PAIR(T, U)                                                                      \
    template void gaussian_vertical_pass<T, U>(host_view<const T>, host_view<U>, const axis_plan&);         \
    template void gaussian_horizontal_pass<T, U>(host_view<const T>, host_view<U>, const axis_plan&);       \
    template void gaussian_fir_both<T, U>(host_view<const T>, host_view<U>, const axis_plan&, const axis_plan&);    \
    template void gaussian_fir_by_rows<T, U>(host_view<const T>, host_view<U>, const axis_plan&, const axis_plan&);
GRANULA_INSTANTIATE_PAIR(std::uint8_t, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint8_t, float)
GRANULA_INSTANTIATE_PAIR(float, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, float)
GRANULA_INSTANTIATE_PAIR(float, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(float, float)
#undef GRANULA_INSTANTIATE_PAIR

}  // namespace granula::GRANULA_SIMD_NAMESPACE
