// CUDA Young-van Vliet: the seed paper's schemes (Lee et al. 2014), kept to reproduce its
// measurements. The lines of an axis are taken 32 per block, threadIdx.x the line, so the
// scratch line w[k * lines + line] is read and written coalesced along either axis. The
// recursion runs in double, as on the CPU (gaussian_plan.hpp says why).
//   one_way        one thread per line runs the CPU's sequential recursion: causal from the
//                  padded line's first sample, anticausal from Triggs-Sdika's start.
//   two_way_exact  two threads per line (threadIdx.y), split at the middle m. The right half
//                  runs the causal recursion from a zero state while the left runs it from the
//                  border, then adds the zero-input response of the left's last three outputs;
//                  the anticausal recursion is handed over the same way, right to left. By
//                  linearity this is the sequential result up to rounding.
//   two_way        the paper's Algorithm 1: the left half runs causal then anticausal, the
//                  right half anticausal then causal, each first recursion from its own end;
//                  the middle pixel is the sampled Gaussian and starts both second recursions
//                  in place of the other half's outputs. That substitution is the paper's error.
// The line ends are the CPU's (the padded extension of the border mode), so the split is the
// only difference between the schemes.
#include "gaussian/cuda/yvv_cuda.hpp"

#include <cstdint>

#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"
#include "gaussian/cuda/line_access.cuh"

namespace granula::cuda {
namespace {

using granula::detail::check_cuda;
using granula::detail::check_launch;
using granula::detail::stream_buffer;
using granula::detail::yvv_coeffs;

constexpr const char* scratch_what = "cudaMallocAsync (Gaussian yvv temporary)";
constexpr int lines_per_block = 32;

// The recursion's last three outputs, newest first.
struct yvv_state {
    double v1, v2, v3;
};

__device__ __forceinline__ double advance(const yvv_coeffs& c, double x, yvv_state& s) {
    const double v = c.B * x + c.b1 * s.v1 + c.b2 * s.v2 + c.b3 * s.v3;
    s.v3 = s.v2, s.v2 = s.v1, s.v1 = v;
    return v;
}

// One step of the zero-input response: what a state handed across the split adds to a half
// that ran from a zero state.
__device__ __forceinline__ double decay(const yvv_coeffs& c, yvv_state& s) {
    const double v = c.b1 * s.v1 + c.b2 * s.v2 + c.b3 * s.v3;
    s.v3 = s.v2, s.v2 = s.v1, s.v1 = v;
    return v;
}

// Triggs-Sdika: the anticausal start from the causal outputs' last three deviations from the
// steady state u of the input beyond the end.
__device__ __forceinline__ yvv_state anticausal_start(const yvv_coeffs& c, double u, double w0, double w1,
                                                      double w2) {
    const double e0 = w0 - u, e1 = w1 - u, e2 = w2 - u;
    return {u + c.m[0][0] * e0 + c.m[0][1] * e1 + c.m[0][2] * e2, u + c.m[1][0] * e0 + c.m[1][1] * e1 + c.m[1][2] * e2,
            u + c.m[2][0] * e0 + c.m[2][1] * e1 + c.m[2][2] * e2};
}

template <class T, class U>
struct yvv_lines {
    const T* in;
    std::int64_t in_step, in_line_step;  // between samples of a line, between lines
    U* out;
    std::int64_t out_step, out_line_step;
    std::int64_t lines;
    line_shape g;  // total = n + 2 pad
    double* w;     // the first recursion's results (two_way_exact: also the handed-over states)
};

template <class T, class U, gaussian_split Split>
__global__ void __launch_bounds__(2 * lines_per_block)
    yvv_kernel(yvv_lines<T, U> a, yvv_coeffs c, const float* __restrict__ taps, std::int64_t radius) {
    const std::int64_t line = static_cast<std::int64_t>(blockIdx.x) * lines_per_block + threadIdx.x;
    const bool active = line < a.lines;  // every thread reaches the barriers
    const bool left = threadIdx.y == 0;
    const std::int64_t n = a.g.n, pad = a.g.pad, nt = a.g.total, lines = a.lines, mid = pad + n / 2;
    const T* src = a.in + (active ? line : 0) * a.in_line_step;
    U* dst = a.out + (active ? line : 0) * a.out_line_step;
    double* w = a.w + (active ? line : 0);
    auto x = [&](std::int64_t k) { return static_cast<double>(load(src, a.in_step, k, a.g)); };
    auto put = [&](std::int64_t k, double v) {
        if (k >= pad && k < pad + n) dst[(k - pad) * a.out_step] = store_as<U>(static_cast<float>(v));
    };
    if constexpr (Split == gaussian_split::one_way) {
        if (!active) return;
        yvv_state s{x(0), x(0), x(0)};
        for (std::int64_t k = 0; k < nt; ++k) w[k * lines] = advance(c, x(k), s);
        s = anticausal_start(c, x(nt - 1), w[(nt - 1) * lines], w[(nt - 2) * lines], w[(nt - 3) * lines]);
        for (std::int64_t k = nt - 1; k >= pad; --k) put(k, advance(c, w[k * lines], s));
    } else if constexpr (Split == gaussian_split::two_way_exact) {
        // pad >= 3, so both halves hold at least the three samples a state is made of.
        if (active) {
            yvv_state s = left ? yvv_state{x(0), x(0), x(0)} : yvv_state{0, 0, 0};
            for (std::int64_t k = left ? 0 : mid; k < (left ? mid : nt); ++k) w[k * lines] = advance(c, x(k), s);
        }
        __syncthreads();
        if (active && !left) {
            yvv_state s{w[(mid - 1) * lines], w[(mid - 2) * lines], w[(mid - 3) * lines]};
            for (std::int64_t k = mid; k < nt; ++k) w[k * lines] += decay(c, s);
        }
        __syncthreads();
        if (active && !left) {
            yvv_state s = anticausal_start(c, x(nt - 1), w[(nt - 1) * lines], w[(nt - 2) * lines], w[(nt - 3) * lines]);
            for (std::int64_t k = nt - 1; k >= mid; --k) {
                const double v = advance(c, w[k * lines], s);
                put(k, v);
                if (k < mid + 3) w[k * lines] = v;  // the state the left half takes over
            }
        } else if (active) {
            yvv_state s{0, 0, 0};
            for (std::int64_t k = mid - 1; k >= pad; --k) w[k * lines] = advance(c, w[k * lines], s);
        }
        __syncthreads();
        if (active && left) {
            yvv_state s{w[mid * lines], w[(mid + 1) * lines], w[(mid + 2) * lines]};
            for (std::int64_t k = mid - 1; k >= pad; --k) put(k, w[k * lines] + decay(c, s));
        }
    } else {
        __shared__ double middle[lines_per_block];
        if (active && left) {
            yvv_state s{x(0), x(0), x(0)};
            for (std::int64_t k = 0; k < mid; ++k) w[k * lines] = advance(c, x(k), s);
        } else if (active) {
            const line_shape around{n, radius, n + 2 * radius, a.g.mode, a.g.cval};
            double sum = 0;
            for (std::int64_t j = -radius; j <= radius; ++j)
                sum += taps[j + radius] * static_cast<double>(load(src, a.in_step, n / 2 + j + radius, around));
            middle[threadIdx.x] = sum;
            yvv_state s{x(nt - 1), x(nt - 1), x(nt - 1)};
            for (std::int64_t k = nt - 1; k > mid; --k) w[k * lines] = advance(c, x(k), s);
        }
        __syncthreads();
        if (!active) return;
        const double p = middle[threadIdx.x];
        yvv_state s{p, p, p};
        if (left) {
            for (std::int64_t k = mid - 1; k >= pad; --k) put(k, advance(c, w[k * lines], s));
        } else {
            put(mid, p);
            for (std::int64_t k = mid + 1; k < pad + n; ++k) put(k, advance(c, w[k * lines], s));
        }
    }
}

}  // namespace

template <class T, class U>
void yvv_pass(device_view<const T> in, device_view<U> out, const detail::axis_plan& plan, int axis, cudaStream_t s) {
    const bool columns = axis == 0;
    const std::int64_t n = columns ? in.height() : in.width(), lines = columns ? in.width() : in.height();
    const line_shape g{n, plan.pad, n + 2 * plan.pad, plan.mode, plan.cval};
    stream_buffer scratch(static_cast<std::size_t>(lines * g.total) * sizeof(double), s, scratch_what);
    const yvv_lines<T, U> a{in.data(),   columns ? in.stride() : 1,  columns ? 1 : in.stride(),
                            out.data(),  columns ? out.stride() : 1, columns ? 1 : out.stride(),
                            lines,       g,                          scratch.as<double>()};
    const auto grid = static_cast<unsigned>((lines + lines_per_block - 1) / lines_per_block);
    switch (plan.split) {
    case gaussian_split::one_way:
        yvv_kernel<T, U, gaussian_split::one_way><<<grid, dim3(lines_per_block, 1), 0, s>>>(a, plan.yvv, nullptr, 0);
        break;
    case gaussian_split::two_way_exact:
        yvv_kernel<T, U, gaussian_split::two_way_exact>
            <<<grid, dim3(lines_per_block, 2), 0, s>>>(a, plan.yvv, nullptr, 0);
        break;
    case gaussian_split::two_way: {
        stream_buffer taps(plan.taps.size() * sizeof(float), s, scratch_what);
        check_cuda(cudaMemcpyAsync(taps.as<float>(), plan.taps.data(), plan.taps.size() * sizeof(float),
                                   cudaMemcpyHostToDevice, s),
                   "cudaMemcpyAsync (yvv middle-pixel taps)");
        const auto radius = static_cast<std::int64_t>(plan.taps.size() / 2);
        yvv_kernel<T, U, gaussian_split::two_way>
            <<<grid, dim3(lines_per_block, 2), 0, s>>>(a, plan.yvv, taps.as<float>(), radius);
        break;
    }
    }
    check_launch("Gaussian yvv");
}

#define GRANULA_INSTANTIATE_PAIR(T, U)                                                                       \
    template void yvv_pass<T, U>(device_view<const T>, device_view<U>, const detail::axis_plan&, int, \
                                 cudaStream_t);
GRANULA_INSTANTIATE_PAIR(std::uint8_t, float)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, float)
GRANULA_INSTANTIATE_PAIR(float, float)
GRANULA_INSTANTIATE_PAIR(float, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(float, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(std::uint8_t, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, std::uint16_t)
#undef GRANULA_INSTANTIATE_PAIR

}  // namespace granula::cuda
