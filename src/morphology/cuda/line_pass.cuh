// One-dimensional min/max passes along rows (horizontal) and columns (vertical) on the GPU,
// and the small helpers the compound operations need. Internal to the CUDA backend.
#pragma once

#include <cuda_runtime.h>

#include <bit>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"
#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "morphology/cuda/words.cuh"
#include "morphology/element_plan.hpp"

namespace granula::cuda::detail {

// out(x) = min (or max) of the border-extended input over [x - before, x + after] along the
// pass direction; outside pixels come from `mode`, or are `pad` when the mode has no source
// index (ignore: the operation's identity; constant: cval). Arms must already be clipped
// (clip_arm). `in` and `out` must not overlap. Asynchronous on `stream`.
template <class T>
struct pass_params {
    long long before = 0;
    long long after = 0;
    bool maximum = false;
    border_mode mode = border_mode::ignore;
    T pad{};
};

template <class T>
void horizontal_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, cudaStream_t stream);
template <class T>
void vertical_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, cudaStream_t stream);

// An opening (first.maximum false) or closing in one kernel when both passes run along the same
// axis (vertical: columns) and the mode is ignore or constant (fused_opening.cuh): out = second
// pass of the first pass of `in`, exactly. False, with nothing launched, where it does not apply.
template <class T>
bool fused_line_pair(device_view<const T> in, device_view<T> out, bool vertical, const pass_params<T>& first,
                     const pass_params<T>& second, cudaStream_t stream);

// The general path's passes (element_passes.cu; element_plan.hpp says how they combine):
// `out` = `in` extended by `mode` (pad where the mode has no source), `in` at (left, top);
// windows along the periodic paths of step (dx, dy), dy >= 1, pixels off the image `p.pad`, the
// result of in(x, y) written to out(x - out_x0, y - out_y0) where that lies inside `out`;
// acc(p) = min (max) of acc(p) and src(p + s) over the shifts s with p + s inside (acc taken as
// the identity when `initialise`).
template <class T>
void padded_copy(device_view<const T> in, device_view<T> out, long long left, long long top, border_mode mode, T pad,
                 cudaStream_t stream);
template <class T>
void sheared_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, int dx, int dy,
                  cudaStream_t stream, long long out_x0 = 0, long long out_y0 = 0);
template <class T>
void accumulate_shifted(device_view<T> acc, device_view<const T> src,
                        const std::vector<granula::detail::pixel_shift>& shifts, bool maximum, bool initialise,
                        cudaStream_t stream);

// A run of `length` pixels along x (or y when `vertical`) from (x, y) + (this.x, this.y).
struct run_term {
    long long x = 0, y = 0, length = 1;
    bool vertical = false;
};
// The runs kernel's launches for a set of terms, with their lookup tables (element_passes.cu),
// planned on the host once per call and run by runs_pass.
struct runs_launches;
using runs_plan = std::shared_ptr<const runs_launches>;
// Null when some launch's reach does not fit the kernel's shared-memory tiles.
template <class T>
runs_plan plan_runs(const std::vector<run_term>& terms);
// out(x, y) = min (max) over the planned terms of the run from (x + org_x, y + org_y) + term of
// `in` extended by `mode` (`pad` where the mode has no source), and of prior(x, y) when prior
// has data (it may be `out` itself). `in` must not overlap `out`.
template <class T>
void runs_pass(device_view<const T> in, border_mode mode, T pad, device_view<T> out, long long org_x, long long org_y,
               device_view<const T> prior, const runs_launches& plan, bool maximum, cudaStream_t stream);
// out = min (max) of out and src.
template <class T>
void combine(device_view<T> out, device_view<const T> src, bool maximum, cudaStream_t stream);

// out = a - b, saturating at 0 for unsigned types; out may be a or b.
template <class T>
void subtract(device_view<const T> a, device_view<const T> b, device_view<T> out, cudaStream_t stream);

// True when a view's rows start on 4-byte boundaries, so kernels may move whole 32-bit words.
template <class T>
bool word_aligned(const void* data, std::int64_t stride) {
    return reinterpret_cast<std::uintptr_t>(data) % 4 == 0 && (stride * static_cast<std::int64_t>(sizeof(T))) % 4 == 0;
}

// True when a view's rows start on 16-byte boundaries (stride in bytes), for 16-byte vectors.
inline bool aligned16(const void* data, std::int64_t stride_bytes) {
    return reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && stride_bytes % 16 == 0;
}

// Calls f(std::integral_constant<int, v>{}) with the v in [Lo, Hi] that equals `value` (Hi for
// anything else), so that kernels get a run-time choice as a compile-time constant.
template <int Lo, int Hi, class F>
void with_constant(int value, F&& f) {
    static_assert(Lo <= Hi);
    const bool found = [&]<int... i>(std::integer_sequence<int, i...>) {
        return ((value == Lo + i && (f(std::integral_constant<int, Lo + i>{}), true)) || ...);
    }(std::make_integer_sequence<int, Hi - Lo + 1>{});
    if (!found) f(std::integral_constant<int, Hi>{});
}

// Calls f(std::integral_constant<int, C>{}) with the chunk length C in {1, 2, 4, ..., MaxChunk}
// that equals `chunk` (MaxChunk for anything larger), so kernels get it as a compile-time
// constant. MaxChunk is 32 or 64: only the passes that opt in instantiate 64-row kernels.
template <int MaxChunk = 32, class F>
void with_chunk_length(int chunk, F&& f) {
    static_assert(MaxChunk == 32 || MaxChunk == 64);
    constexpr int max_log2 = std::bit_width(static_cast<unsigned>(MaxChunk)) - 1;
    const auto c = static_cast<unsigned>(chunk);
    const int log2 = std::has_single_bit(c) ? std::bit_width(c) - 1 : max_log2;
    with_constant<0, max_log2>(log2, [&](auto k) { f(std::integral_constant<int, 1 << decltype(k)::value>{}); });
}

// A temporary image in a stream_buffer; rows padded to 128 bytes like device_image.
template <class T>
class scratch_image {
public:
    scratch_image() = default;
    scratch_image(std::int64_t width, std::int64_t height, cudaStream_t stream)
        : width_(width), height_(height), stride_(((width * std::int64_t(sizeof(T)) + 127) / 128) * 128 / std::int64_t(sizeof(T))),
          buffer_(static_cast<std::size_t>(stride_ * height) * sizeof(T), stream, "cudaMallocAsync (temporary image)") {}
    device_view<T> view() const { return {buffer_.as<T>(), width_, height_, stride_}; }

private:
    std::int64_t width_ = 0, height_ = 0, stride_ = 0;
    granula::detail::stream_buffer buffer_;
};

template <class T>
__global__ void fill_kernel(T* p, long long count, T value) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) p[i] = value;
}

// Fills `count` elements from `p` with `value` (a pass's row of padding), asynchronously.
template <class T>
void fill_row(T* p, long long count, T value, cudaStream_t stream) {
    fill_kernel<T><<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(p, count, value);
    granula::detail::check_launch("fill_kernel");
}

// W(ca) of the two-level vHGW as a kernel reads it: the min of `count` consecutive rows of
// `rows` from row ca - ca_min.
template <class T>
struct window_rows {
    device_view<const T> rows;
    int count = 1;
};

// W(ca) for word w as a kernel reads it: row `index` of the window rows (base W, stride in
// pixels, aligned to words) and, where count is 2, the min (max) with the next one.
template <class V, bool Max>
__device__ __forceinline__ typename V::word window_word(const typename V::elem* W, long long stride, int count,
                                                        long long index, long long w) {
    const auto* row = reinterpret_cast<const typename V::mem*>(W + index * stride);
    const typename V::word v = V::unpack(load_ro(row + w));
    return count == 2 ? word_op<V, Max>::apply(v, V::unpack(load_ro(row + stride / V::P + w))) : v;
}

// The middle term of the two-level vHGW, W(ca): the min (max) of m - 1 consecutive chunk
// minima, down the columns of `chunk_minima`. Where m - 1 <= max_count (the rows a kernel is
// willing to combine) those are the chunk minima themselves, count m - 1; otherwise a vertical
// pass (arms 0 and m - 2, border ignore) into `storage`, count 1. Combining two rows in the
// kernel saves that pass (8 us and a 2-us fill at 8000^2 on one H200; the 90-degree opening by
// a line of 101: 0.18 -> 0.165 ms).
template <class T, bool Max>
window_rows<T> chunk_window(device_view<const T> chunk_minima, long long m, scratch_image<T>& storage,
                            cudaStream_t stream, int max_count = 1) {
    if (m - 1 <= max_count) return {chunk_minima, static_cast<int>(m - 1)};
    storage = scratch_image<T>(chunk_minima.width(), chunk_minima.height(), stream);
    pass_params<T> coarse;
    coarse.before = 0;
    coarse.after = m - 2;
    coarse.maximum = Max;
    coarse.mode = border_mode::ignore;
    coarse.pad = identity_value<T, Max>();
    vertical_pass<T>(chunk_minima, storage.view(), coarse, stream);
    return {storage.view(), 1};
}

}  // namespace granula::cuda::detail
