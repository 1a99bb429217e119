// Openings along one scan line (include/granula/lines/lines.hpp), shared by the CPU and CUDA
// backends: the same code runs per line on both, so their results agree bit for bit.
//
// Values are mapped to keys in which every filter is an opening (erosion = min, then
// dilation = max): the value itself for an opening, its reverse for a closing. Float keys are
// the int32 whose order is the float order; NaN gets the lowest key and the NaN rule is applied
// afterwards (nan_mask): the two-stage operator is NaN exactly where a NaN lies within λ - 1
// samples of the extended line, and everywhere else no window around the sample holds a NaN.
// (The two-stage paths, the CPU's vectorised one and the CUDA two-pass one, get the same rule by
// raising NaN's key to the top between their stages.)
//
// The extended line: `before` samples of border extension, the line's n samples, `after`
// samples (before + after = λ - 1). Its standard opening (max over the λ-windows that contain
// a sample of the min over the window) equals the two-stage dilation(erosion) under ignore,
// nearest and reflect; under constant, samples whose second-stage window leaves the line also
// take cval (constant_border_fix).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/border_index.hpp"
#include "granula/core/border.hpp"

namespace granula::detail {

template <class T>
struct line_keys;

template <class T>
    requires std::is_unsigned_v<T>
struct line_keys<T> {
    using key = T;
    static constexpr key top = static_cast<T>(~T{0});
    GRANULA_HOST_DEVICE static key to_key(T v, bool closing) { return closing ? key(top - v) : v; }
    GRANULA_HOST_DEVICE static key number_key(T v, bool closing) { return to_key(v, closing); }
    GRANULA_HOST_DEVICE static T from_key(key k, bool closing) { return closing ? T(top - k) : k; }
    // A result's key as the reductions over angles order it: reversed for the other extremum
    // (line_plan::reduction_reversed). An involution.
    GRANULA_HOST_DEVICE static key reduction_key(key k, bool reversed) { return reversed ? key(top - k) : k; }
    GRANULA_HOST_DEVICE static key from_reduction_key(key k, bool reversed) { return reduction_key(k, reversed); }
};

template <>
struct line_keys<float> {
    using key = std::int32_t;
    static constexpr key top = 0x7fffffff;  // above every non-NaN float's key
    static constexpr key nan_key = -0x7fffffff - 1;
    GRANULA_HOST_DEVICE static key to_key(float v, bool closing) { return v != v ? nan_key : number_key(v, closing); }
    // to_key of a value known not to be NaN: no test, so that loops over NaN-free rows vectorise.
    GRANULA_HOST_DEVICE static key number_key(float v, bool closing) {
        std::int32_t bits;
#if defined(__CUDA_ARCH__)
        bits = __float_as_int(v);
#else
        std::memcpy(&bits, &v, 4);
#endif
        const std::int32_t ordered = bits ^ ((bits >> 31) & 0x7fffffff);
        return closing ? ~ordered : ordered;
    }
    // A result's key as the reductions over angles order it: NaN's (top after both stages,
    // nan_key after the first alone) the largest, the order of the others reversed for the other
    // extremum (line_plan::reduction_reversed), so that NaN wins either, as with numpy's max and
    // min over the stack.
    GRANULA_HOST_DEVICE static key reduction_key(key k, bool reversed) {
        if (k == nan_key) k = top;
        return reversed && k != top ? ~k : k;
    }
    // The result key back (NaN's: top).
    GRANULA_HOST_DEVICE static key from_reduction_key(key k, bool reversed) { return reversed && k != top ? ~k : k; }
    GRANULA_HOST_DEVICE static float from_key(key k, bool closing) {
        const std::int32_t ordered = closing ? ~k : k;
        const std::int32_t bits = ordered ^ ((ordered >> 31) & 0x7fffffff);
#if defined(__CUDA_ARCH__)
        return __int_as_float(bits);
#else
        float v;
        std::memcpy(&v, &bits, 4);
        return v;
#endif
    }
};

// Where the extended line's samples come from.
template <class K>
struct line_extension {
    std::int32_t length = 1;  // λ
    std::int32_t before = 0;  // extension samples before the line (after = length - 1 - before)
    border_mode mode = border_mode::ignore;
    K pad{};  // ignore: the top key; constant: cval's key
};

// λ // 2 samples before for an opening (the erosion window [i - λ/2, i + (λ-1)/2] comes first),
// (λ - 1) // 2 for a closing (its dilation window is that one reflected).
GRANULA_HOST_DEVICE inline std::int32_t line_arm_before(std::int32_t length, bool closing) {
    return closing ? (length - 1) / 2 : length / 2;
}

template <class K>
GRANULA_HOST_DEVICE inline line_extension<K> make_line_extension(std::int32_t length, std::int32_t before,
                                                                 border_mode mode, K pad) {
    return {length, before, mode, pad};
}

// Sample j of the extended line, j in [0, n + λ - 1); get(i) reads the line's sample i.
template <class K, class Get>
GRANULA_HOST_DEVICE inline K extended_sample(const Get& get, std::int32_t j, std::int32_t n, const line_extension<K>& e) {
    const std::int64_t i = border_index(j - e.before, n, e.mode);
    return i < 0 ? e.pad : get(static_cast<std::int32_t>(i));
}

// A circular buffer of capacity `mask + 1` (a power of two >= λ) used as a deque. Positions are
// stored as P: std::int32_t, or std::uint16_t where memory is scarce (the CUDA backend's shared
// memory): a queue's positions lie within 2λ of the sample being read, so 16 bits order them
// (modulo 2^16) while λ < line_queue_max_short_length.
inline constexpr std::int32_t line_queue_max_short_length = 16384;

template <class K, class P = std::int32_t>
struct line_queue {
    K* value;
    P* position;
    std::int32_t mask;
    std::int32_t head = 0, tail = 0;  // entries [head, tail)
    GRANULA_HOST_DEVICE bool empty() const { return head == tail; }
    GRANULA_HOST_DEVICE K front_value() const { return value[head & mask]; }
    // Whether the front entry's position is before x.
    GRANULA_HOST_DEVICE bool front_before(std::int32_t x) const {
        const P p = position[head & mask];
        if constexpr (sizeof(P) == sizeof(std::int32_t))
            return p < x;
        else
            return static_cast<std::int16_t>(static_cast<std::uint16_t>(p - static_cast<P>(x))) < 0;
    }
    GRANULA_HOST_DEVICE K back_value() const { return value[(tail - 1) & mask]; }
    GRANULA_HOST_DEVICE void push(K v, std::int32_t p) {
        value[tail & mask] = v;
        position[tail & mask] = static_cast<P>(p);
        ++tail;
    }
};

// Smallest power of two >= λ: the capacity each of open_fifo's two queues needs.
GRANULA_HOST_DEVICE inline std::int32_t line_queue_capacity(std::int32_t length) {
    std::int32_t c = 1;
    while (c < length) c *= 2;
    return c;
}

// The streaming algorithm (after Bartovský et al.): one scan over the extended line with two
// queues of at most λ entries: the erosion's candidates (increasing values), and the pending
// outputs' dilation candidates (decreasing values). Sample j is written when sample j + λ - 1
// has been read. put(i, key) receives every line sample i in [0, n) once, in order.
// `values` and `positions` hold 2 * line_queue_capacity(λ) entries each (P: see line_queue).
template <class K, class Get, class Put, class P>
GRANULA_HOST_DEVICE void open_fifo(const Get& get, std::int32_t n, const line_extension<K>& e, const Put& put,
                                   K* values, P* positions) {
    const std::int32_t L = e.length, m = n + L - 1, capacity = line_queue_capacity(L);
    line_queue<K, P> erosion{values, positions, capacity - 1};
    line_queue<K, P> dilation{values + capacity, positions + capacity, capacity - 1};
    const std::int32_t first_out = e.before, end_out = e.before + n;
    const auto emit = [&](std::int32_t j) {  // every window containing j has been eroded
        while (dilation.front_before(j - L + 1)) ++dilation.head;
        if (j >= first_out && j < end_out) put(j - first_out, dilation.front_value());
    };
    for (std::int32_t t = 0; t < m; ++t) {
        const K v = extended_sample(get, t, n, e);
        const std::int32_t s = t - L + 1;  // start of the window that ends at t
        while (!erosion.empty() && erosion.front_before(s)) ++erosion.head;
        while (!erosion.empty() && !(erosion.back_value() < v)) --erosion.tail;
        erosion.push(v, t);
        if (s < 0) continue;
        const K eroded = erosion.front_value();
        while (!dilation.empty() && dilation.front_before(s - L + 1)) ++dilation.head;
        while (!dilation.empty() && !(eroded < dilation.back_value())) --dilation.tail;
        dilation.push(eroded, s);
        emit(s);
    }
    for (std::int32_t j = m - L + 1; j < end_out; ++j) emit(j);  // no window starts after m - λ
}

// Sliding minimum: put(s, min of ext(s .. s + λ - 1)) for s in [first, end), in order, reading
// ext(j) once for j in [first, end + λ - 1), with the erosion queue of open_fifo (`values` and
// `positions` hold line_queue_capacity(λ) entries; P: see line_queue).
template <class K, class Ext, class Put, class P>
GRANULA_HOST_DEVICE void sliding_min(const Ext& ext, std::int32_t first, std::int32_t end, std::int32_t L,
                                     const Put& put, K* values, P* positions) {
    line_queue<K, P> erosion{values, positions, line_queue_capacity(L) - 1};
    for (std::int32_t t = first; t < end + L - 1; ++t) {
        const K v = ext(t);
        const std::int32_t s = t - L + 1;
        while (!erosion.empty() && erosion.front_before(s)) ++erosion.head;
        while (!erosion.empty() && !(erosion.back_value() < v)) --erosion.tail;
        erosion.push(v, t);
        if (s >= first) put(s, erosion.front_value());
    }
}

// The first stage alone (scan-line erosion, or dilation on reversed keys): put(i, min of the
// extended samples [i, i + λ - 1]) for every line sample i, in order. NaN keys are the lowest,
// so a NaN in the window gives NaN with no further rule.
template <class K, class Get, class Put, class P>
GRANULA_HOST_DEVICE void erode_line(const Get& get, std::int32_t n, const line_extension<K>& e, const Put& put,
                                    K* values, P* positions) {
    sliding_min([&](std::int32_t j) { return extended_sample(get, j, n, e); }, 0, n, e.length, put, values, positions);
}

// Morard et al.'s stack of cords: a cord is a run of samples at or above its level; when a
// lower sample closes it, its pending samples take its level if it reached λ samples ("passed"),
// else they fall to the cord below. The lowest unpassed cord has the longest run, so it is the
// one checked; once it passes, the cords below it are written out and dropped. The stack then
// holds at most one passed cord (its bottom) and fewer than λ unpassed ones, and the unwritten
// samples are always a suffix [written, t]. `levels` and `starts` hold
// line_stack_capacity(λ) entries, used circularly.
GRANULA_HOST_DEVICE inline std::int32_t line_stack_capacity(std::int32_t length) {
    return line_queue_capacity(length + 2);
}

template <class K, class Get, class Put>
GRANULA_HOST_DEVICE void open_stack(const Get& get, std::int32_t n, const line_extension<K>& e, const Put& put,
                                    K* levels, std::int32_t* starts) {
    const std::int32_t L = e.length, m = n + L - 1, mask = line_stack_capacity(L) - 1;
    const std::int32_t first_out = e.before, end_out = e.before + n;
    std::int32_t base = 0, top = 0, written = 0;  // cords [base, top), bottom first
    bool bottom_passed = false;
    const auto write = [&](std::int32_t end, K level) {  // samples [written, end) take `level`
        const std::int32_t lo = written > first_out ? written : first_out;
        const std::int32_t hi = end < end_out ? end : end_out;
        for (std::int32_t j = lo; j < hi; ++j) put(j - first_out, level);
        written = end;
    };
    for (std::int32_t t = 0; t < m && written < end_out; ++t) {
        const K v = extended_sample(get, t, n, e);
        std::int32_t start = t;
        while (top > base && v < levels[(top - 1) & mask]) {  // close the cords above v at t - 1
            --top;
            if (top == base && bottom_passed) write(t, levels[base & mask]);
            start = starts[top & mask];
        }
        if (top == base || levels[(top - 1) & mask] < v) {  // a new cord; after a passed bottom it is the bottom, passed
            levels[top & mask] = v;
            starts[top & mask] = start;
            ++top;
        }
        for (;;) {  // the lowest unpassed cord reaches λ samples
            const std::int32_t u = bottom_passed ? base + 1 : base;
            if (u >= top || t + 1 - starts[u & mask] < L) break;
            write(u + 1 < top ? starts[(u + 1) & mask] : t + 1, levels[u & mask]);
            base = u;
            bottom_passed = true;
        }
        if (bottom_passed && top == base + 1) write(t + 1, levels[base & mask]);
    }
    // The bottom cord spans the whole extended line (>= λ samples), so it has passed; the cords
    // above it are short and their samples take its level.
    if (written < end_out) write(end_out, levels[base & mask]);
}

// The NaN rule for float lines (see the top of this file), as a stream: query(j) tells whether
// the extended line has a NaN within λ - 1 samples of extended position j, for j increasing
// from `first` on. It reads each sample once, as far as j + λ - 1, so the CUDA kernels ask it
// while the outputs stream out. isnan_at(i) tells whether line sample i is NaN.
template <class K, class IsNan>
struct nan_window {
    IsNan isnan_at;
    std::int32_t n;
    line_extension<K> e;
    std::int64_t next, last;  // next extended sample to read; the last NaN read

    GRANULA_HOST_DEVICE nan_window(const IsNan& isnan, std::int32_t samples, const line_extension<K>& ext,
                                   std::int64_t first)
        : isnan_at(isnan), n(samples), e(ext), next(first - (ext.length - 1) > 0 ? first - (ext.length - 1) : 0),
          last(-2 * static_cast<std::int64_t>(ext.length)) {}

    GRANULA_HOST_DEVICE bool query(std::int64_t j) {
        // Extension samples copy line samples (nearest, reflect) or are numbers (ignore, constant).
        const std::int64_t L = e.length, m = n + L - 1;
        for (; next < m && next <= j + L - 1; ++next) {
            const std::int64_t i = border_index(next - e.before, n, e.mode);
            if (i >= 0 && isnan_at(static_cast<std::int32_t>(i))) last = next;
        }
        return j - last <= L - 1;
    }
};

// The NaN rule applied after the opening of a whole line that holds a NaN: set_nan(i) makes
// output i NaN.
template <class K, class IsNan, class SetNan>
GRANULA_HOST_DEVICE void nan_mask(const IsNan& isnan_at, std::int32_t n, const line_extension<K>& e,
                                  const SetNan& set_nan) {
    nan_window<K, IsNan> window(isnan_at, n, e, e.before);
    for (std::int32_t i = 0; i < n; ++i)
        if (window.query(e.before + i)) set_nan(i);
}

// Under border_mode::constant the second stage also sees cval outside the line: outputs whose
// second-stage window leaves the line take max(key, pad).
template <class K>
GRANULA_HOST_DEVICE inline K constant_border_fix(K key, std::int32_t i, std::int32_t n, const line_extension<K>& e) {
    const std::int32_t after = e.length - 1 - e.before;
    const bool near_border = i < after || i > n - 1 - e.before;
    return e.mode == border_mode::constant && near_border && key < e.pad ? e.pad : key;
}

}  // namespace granula::detail
