// The passes of the general path (element_plan.hpp) on the GPU: padding an image by its border
// rule, windows along periodic lines (sheared columns), and shifted min/max accumulation.
// Coalesced because neighbouring threads take neighbouring columns. `acc` and `src` of the
// accumulation are scratch images: rows 128-byte aligned and padded.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/border_index.hpp"
#include "core/cuda/check.cuh"
#include "morphology/cuda/line_pass.cuh"

namespace granula::cuda::detail {
namespace {

using granula::detail::check_launch;

constexpr int threads_x = 128;

template <class T, bool Max>
__device__ __forceinline__ T pick(T a, T b) {
    return Max ? scalar<T>::vmax(a, b) : scalar<T>::vmin(a, b);
}

unsigned grid_rows(i64 rows) { return static_cast<unsigned>(std::clamp<i64>(rows, 1, 65535)); }

template <class T>
__global__ void pad_kernel(const T* in, i64 in_stride, i64 width, i64 height, T* out, i64 out_stride, i64 out_width,
                           i64 out_height, i64 left, i64 top, border_mode mode, T pad) {
    const i64 x = static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x;
    if (x >= out_width) return;
    const i64 sx = granula::detail::border_index(x - left, width, mode);
    for (i64 y = blockIdx.y; y < out_height; y += gridDim.y) {
        const i64 sy = granula::detail::border_index(y - top, height, mode);
        out[y * out_stride + x] = sx < 0 || sy < 0 ? pad : in[sy * in_stride + sx];
    }
}

// Thread (virtual column c, block k of window starts, residue r): van Herk/Gil-Werman over the
// virtual rows of the sheared image (see the CPU's sheared()): suffixes of block k are stored
// in `out`, then completed with the prefixes of block k + 1.
template <class T, bool Max>
__global__ void sheared_kernel(const T* in, i64 in_stride, T* out, i64 out_stride, i64 width, i64 height, int dx,
                               int dy, i64 before, i64 L, i64 c_begin, i64 c_count, i64 blocks, i64 first_block, T pad) {
    const i64 lane = static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x;
    if (lane >= c_count) return;
    const i64 c = c_begin + lane;
    for (i64 task = blockIdx.y; task < blocks * dy; task += gridDim.y) {
        const i64 residue = task / blocks, k = first_block + task % blocks;
        const i64 rows = (height - residue + dy - 1) / dy;
        const auto value = [&](i64 i) -> T {
            const i64 x = c + i * dx;
            if (i < 0 || i >= rows || x < 0 || x >= width) return pad;
            return in[(residue + i * dy) * in_stride + x];
        };
        const auto output = [&](i64 t) -> T* {  // output of window start kL + t, or null
            const i64 i = k * L + t + before, x = c + i * dx;
            if (i < 0 || i >= rows || x < 0 || x >= width) return nullptr;
            return out + (residue + i * dy) * out_stride + x;
        };
        T acc = value(k * L + L - 1);
        if (T* o = output(L - 1)) *o = acc;
        for (i64 t = L - 2; t >= 0; --t) {
            acc = pick<T, Max>(acc, value(k * L + t));
            if (T* o = output(t)) *o = acc;
        }
        acc = identity_value<T, Max>();
        for (i64 t = 1; t < L; ++t) {
            acc = pick<T, Max>(acc, value((k + 1) * L + t - 1));
            if (T* o = output(t)) *o = pick<T, Max>(*o, acc);
        }
    }
}

constexpr int max_shifts_per_launch = 32;
struct shift_list {
    i64 x[max_shifts_per_launch];
    i64 y[max_shifts_per_launch];
    int count;
};

// Four bytes (two uint16, one float) per thread as one 32-bit word: `acc` rows are 128-byte
// aligned (scratch images), so its words load whole; a shifted `src` word is funnel-shifted out
// of the two aligned words around it, and min/max run on the packed lanes (__vminu4 ...).
template <class T>
constexpr int lanes = 4 / sizeof(T);

template <class T, bool Max>
__device__ __forceinline__ std::uint32_t pick_word(std::uint32_t a, std::uint32_t b) {
    if constexpr (sizeof(T) == 1)
        return Max ? __vmaxu4(a, b) : __vminu4(a, b);
    else if constexpr (sizeof(T) == 2)
        return Max ? __vmaxu2(a, b) : __vminu2(a, b);
    else
        return __float_as_uint(pick<float, Max>(__uint_as_float(a), __uint_as_float(b)));
}

template <class T>
__device__ __forceinline__ std::uint32_t splat_word(T v) {
    std::uint32_t w = 0;
    for (int p = 0; p < lanes<T>; ++p) {
        std::uint32_t bits = 0;
        memcpy(&bits, &v, sizeof(T));
        w |= bits << (8 * sizeof(T) * p);
    }
    return w;
}

template <class T, bool Max>
__global__ void accumulate_kernel(T* acc, i64 acc_stride, const T* src, i64 src_stride, i64 width, i64 height,
                                  shift_list shifts, bool initialise) {
    constexpr int P = lanes<T>;
    const i64 x0 = (static_cast<i64>(blockIdx.x) * threads_x + threadIdx.x) * P;
    if (x0 >= width) return;
    const bool whole = x0 + P <= width;
    for (i64 y = blockIdx.y; y < height; y += gridDim.y) {
        T* row = acc + y * acc_stride + x0;
        std::uint32_t a = splat_word<T>(identity_value<T, Max>());
        if (!initialise) {
            if (whole)
                a = *reinterpret_cast<const std::uint32_t*>(row);
            else
                for (int p = 0; x0 + p < width; ++p) memcpy(reinterpret_cast<T*>(&a) + p, row + p, sizeof(T));
        }
        for (int s = 0; s < shifts.count; ++s) {
            const i64 ys = y + shifts.y[s], xs = x0 + shifts.x[s];
            if (ys < 0 || ys >= height) continue;
            const T* source = src + ys * src_stride;
            std::uint32_t b;
            if (whole && xs >= 0 && xs + P <= width) {
                // The aligned words around [xs, xs + P): the second starts inside the row when
                // it is needed, and ends inside the row's padding.
                const i64 w0 = xs / P, offset = xs - w0 * P;
                const auto* words = reinterpret_cast<const std::uint32_t*>(source);
                const std::uint32_t lo = __ldg(words + w0);
                b = offset == 0 ? lo
                                : __funnelshift_r(lo, __ldg(words + w0 + 1), static_cast<unsigned>(8 * sizeof(T) * offset));
            } else {
                b = splat_word<T>(identity_value<T, Max>());
                for (int p = 0; p < P; ++p)
                    if (x0 + p < width && xs + p >= 0 && xs + p < width)
                        memcpy(reinterpret_cast<T*>(&b) + p, source + xs + p, sizeof(T));
            }
            a = pick_word<T, Max>(a, b);
        }
        if (whole)
            *reinterpret_cast<std::uint32_t*>(row) = a;
        else
            for (int p = 0; x0 + p < width; ++p) memcpy(row + p, reinterpret_cast<const T*>(&a) + p, sizeof(T));
    }
}

}  // namespace

template <class T>
void padded_copy(device_view<const T> in, device_view<T> out, long long left, long long top, border_mode mode, T pad,
                 cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>((out.width() + threads_x - 1) / threads_x), grid_rows(out.height()));
    pad_kernel<T><<<grid, threads_x, 0, stream>>>(in.data(), in.stride(), in.width(), in.height(), out.data(),
                                                  out.stride(), out.width(), out.height(), left, top, mode, pad);
    check_launch("pad_kernel");
}

template <class T>
void sheared_pass(device_view<const T> in, device_view<T> out, const pass_params<T>& p, int dx, int dy,
                  cudaStream_t stream) {
    const i64 width = in.width(), height = in.height(), max_rows = (height + dy - 1) / dy;
    const i64 before = std::min<i64>(p.before, 2 * max_rows), after = std::min<i64>(p.after, 2 * max_rows);
    const i64 L = before + after + 1;
    const i64 drift = (max_rows - 1) * (dx < 0 ? -dx : dx);
    const i64 c_begin = dx > 0 ? -drift : 0, c_end = dx < 0 ? width + drift : width;
    // Window starts run from -before to max_rows - 1 - before.
    const i64 first_block = floor_div(-before, L), last_block = floor_div(max_rows - 1 - before, L);
    const i64 blocks = last_block - first_block + 1;
    const dim3 grid(static_cast<unsigned>((c_end - c_begin + threads_x - 1) / threads_x), grid_rows(blocks * dy));
    const auto launch = [&](auto kernel) {
        kernel<<<grid, threads_x, 0, stream>>>(in.data(), in.stride(), out.data(), out.stride(), width, height, dx, dy,
                                               before, L, c_begin, c_end - c_begin, blocks, first_block, p.pad);
    };
    if (p.maximum)
        launch(sheared_kernel<T, true>);
    else
        launch(sheared_kernel<T, false>);
    check_launch("sheared_kernel");
}

template <class T>
void accumulate_shifted(device_view<T> acc, device_view<const T> src, const std::vector<granula::detail::pixel_shift>& shifts,
                        bool maximum, bool initialise, cudaStream_t stream) {
    const i64 words = (acc.width() + lanes<T> - 1) / lanes<T>;
    const dim3 grid(static_cast<unsigned>((words + threads_x - 1) / threads_x), grid_rows(acc.height()));
    for (std::size_t first = 0; first < shifts.size(); first += max_shifts_per_launch) {
        shift_list list{};
        list.count = static_cast<int>(std::min<std::size_t>(max_shifts_per_launch, shifts.size() - first));
        for (int s = 0; s < list.count; ++s) list.x[s] = shifts[first + s].x, list.y[s] = shifts[first + s].y;
        if (maximum)
            accumulate_kernel<T, true><<<grid, threads_x, 0, stream>>>(acc.data(), acc.stride(), src.data(), src.stride(),
                                                                       acc.width(), acc.height(), list,
                                                                       initialise && first == 0);
        else
            accumulate_kernel<T, false><<<grid, threads_x, 0, stream>>>(acc.data(), acc.stride(), src.data(),
                                                                        src.stride(), acc.width(), acc.height(), list,
                                                                        initialise && first == 0);
        check_launch("accumulate_kernel");
    }
}

#define GRANULA_INSTANTIATE(type, name)                                                                          \
    template void padded_copy<type>(device_view<const type>, device_view<type>, long long, long long, border_mode, \
                                    type, cudaStream_t);                                                        \
    template void sheared_pass<type>(device_view<const type>, device_view<type>, const pass_params<type>&, int, int, \
                                     cudaStream_t);                                                             \
    template void accumulate_shifted<type>(device_view<type>, device_view<const type>,                          \
                                           const std::vector<granula::detail::pixel_shift>&, bool, bool, cudaStream_t);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::cuda::detail
