// CUDA Gaussian filters.
//
// Recursive filters run block-parallel with carried state (Nehab et al. 2011): every line is
// cut into chunks of `chunk` samples and one thread handles one chunk of one line, so a
// 8192-pixel line keeps ~260 threads busy instead of one. Three kernels per axis:
//   1. states:  each chunk runs the causal and the anticausal recursion from a zero state and
//               keeps its final states (the contribution of its own samples);
//   2. fixup:   one thread per line walks the chunks, state_c = T state_{c-1} + own_c, with T
//               the chunk's state-transition matrix (zero input), from the border's start state;
//   3. output:  each chunk reruns both recursions from its true start states and writes.
// Input is read twice and the result written once; the result equals the sequential
// recursion up to float rounding. Along columns the threads of a warp take adjacent columns
// (coalesced); along rows a block stages a tile of 32 rows in shared memory and each thread
// walks one row's chunk there. Chunks of the border extension run one direction only (the left
// extension feeds only the causal walk, the right only the anticausal one), and those within
// one reflection of the line read it backwards without the border logic per sample (H200,
// 8192^2 float32, sigma 200: 1.04 -> 0.91 ms both axes). Running each axis in bands of lines
// that fit the L2, so that the output pass rereads from L2, was 2-5x slower: the per-band
// kernels are too small to hide their latency (docs/benchmarks.md).
//
// fir runs both axes in one kernel (fir_2d): a block stages a 64 x 64 output tile and its halo
// in shared memory, filters down the columns, then along the rows (scipy's order, so constant
// borders give scipy's result), and writes the tile once: one read and one write of the image.
// Each thread computes 8 outputs along the filter direction from a window of inputs held in
// registers, 4 taps per step, so every shared-memory load feeds several FMAs. Taps too many
// for the tile's shared memory fall back to fir_pass, one thread per output pixel and axis.
#include "gaussian/cuda/gaussian_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/border_index.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"
#include "gaussian/cuda/line_access.cuh"
#include "gaussian/cuda/yvv_cuda.hpp"

namespace granula::cuda {
namespace {

using granula::detail::axis_plan;
using granula::detail::check_cuda;
using granula::detail::check_launch;
using granula::detail::stream_buffer;

constexpr const char* scratch_what = "cudaMallocAsync (Gaussian temporary)";
using granula::detail::deriche_coeffs;
using granula::detail::gaussian_kind;

// Tuning (H200): a chunk of 32 samples keeps a thread's samples in registers; 64 columns x 4
// chunks per block along columns, 32 rows x 8 chunks (a 32 x 256 tile) along rows.
constexpr int chunk = 32;
constexpr int v_cols = 64, v_chunks = 4;
constexpr int h_rows = 32, h_chunks = 8;
constexpr int h_tile = h_chunks * chunk;  // samples per tile row
constexpr int h_halo = 3;                 // one sample before the tile, two after
constexpr int h_stride = h_tile + h_halo; // odd: the 32 rows of a warp fall in 32 banks


// One chunk of padded positions k0 .. k0 + chunk - 1 and its neighbours x[k0 - 1], x[k0 + chunk],
// x[k0 + chunk + 1]; chunks inside the image (all but a few per line) skip the border logic.
template <class T>
__device__ __forceinline__ void load_chunk(const T* line, std::int64_t step, std::int64_t k0, const line_shape& g,
                                           float (&xs)[chunk], float& before, float& after1, float& after2) {
    if (k0 - 1 >= g.pad && k0 + chunk + 1 < g.pad + g.n) {
        const T* p = line + (k0 - g.pad) * step;
#pragma unroll
        for (int i = 0; i < chunk; ++i) xs[i] = static_cast<float>(p[i * step]);
        before = static_cast<float>(p[-step]);
        after1 = static_cast<float>(p[chunk * step]);
        after2 = static_cast<float>(p[(chunk + 1) * step]);
        return;
    }
    std::int64_t base;
    if (mirrored(k0 - 1, k0 + chunk + 1, g, base)) {
        const T* p = line + (base - k0) * step;  // padded position k0 + i at p[-i step]
#pragma unroll
        for (int i = 0; i < chunk; ++i) xs[i] = static_cast<float>(p[-i * step]);
        before = static_cast<float>(p[step]);
        after1 = static_cast<float>(p[-chunk * step]);
        after2 = static_cast<float>(p[-(chunk + 1) * step]);
        return;
    }
#pragma unroll
    for (int i = 0; i < chunk; ++i) xs[i] = load(line, step, k0 + i, g);
    before = load(line, step, k0 - 1, g);
    after1 = load(line, step, k0 + chunk, g);
    after2 = load(line, step, k0 + chunk + 1, g);
}

// ---- Deriche: the recursion steps (the CPU kernel's arithmetic) -----------------------------------
struct state {
    float y0, d0, y1, d1;
};

struct deriche_params {
    deriche_coeffs c;
    float t[2][4];  // per section, the chunk's transition matrix on (y, d): t00 t01 t10 t11
};

__device__ __forceinline__ void causal_step(const deriche_coeffs& c, float x, float& xp, state& s) {
    const float u0 = c.b0[0] * x + c.b1[0] * xp;
    const float u1 = c.b0[1] * x + c.b1[1] * xp;
    s.d0 = u0 - c.e1[0] * s.y0 + c.a2[0] * s.d0;
    s.d1 = u1 - c.e1[1] * s.y1 + c.a2[1] * s.d1;
    s.y0 += s.d0, s.y1 += s.d1;
    xp = x;
}

__device__ __forceinline__ void anticausal_step(const deriche_coeffs& c, float x, float& x1, float& x2, state& s) {
    const float u0 = c.c1[0] * x1 + c.c2[0] * x2;
    const float u1 = c.c1[1] * x1 + c.c2[1] * x2;
    s.d0 = u0 - c.e1[0] * s.y0 + c.a2[0] * s.d0;
    s.d1 = u1 - c.e1[1] * s.y1 + c.a2[1] * s.d1;
    s.y0 += s.d0, s.y1 += s.d1;
    x2 = x1, x1 = x;
}

__device__ __forceinline__ state transition(const deriche_params& p, state s, state own) {
    state r;
    r.y0 = p.t[0][0] * s.y0 + p.t[0][1] * s.d0 + own.y0;
    r.d0 = p.t[0][2] * s.y0 + p.t[0][3] * s.d0 + own.d0;
    r.y1 = p.t[1][0] * s.y1 + p.t[1][1] * s.d1 + own.y1;
    r.d1 = p.t[1][2] * s.y1 + p.t[1][3] * s.d1 + own.d1;
    return r;
}

// Pass 1 of one chunk: xs are its samples, before = x[k0 - 1], after1/2 = x[k0 + chunk], +1.
// Chunk ci's causal state feeds the output chunks after it, its anticausal state those before
// it: a chunk of the right extension needs the anticausal one only, of the left the causal one
// (output chunks first .. end - 1; at sigma 200 the extensions are 30% of a line's chunks).
__device__ __forceinline__ void chunk_states(const deriche_coeffs& c, const float (&xs)[chunk], float before,
                                             float after1, float after2, bool want_causal, bool want_anticausal,
                                             state& causal, state& anticausal) {
    causal = {0, 0, 0, 0};
    if (want_causal) {
        float xp = before;
#pragma unroll
        for (int i = 0; i < chunk; ++i) causal_step(c, xs[i], xp, causal);
    }
    anticausal = {0, 0, 0, 0};
    if (want_anticausal) {
        float x1 = after1, x2 = after2;
#pragma unroll
        for (int i = chunk - 1; i >= 0; --i) anticausal_step(c, xs[i], x1, x2, anticausal);
    }
}

// Pass 3 of one chunk: ys receives causal + anticausal + direct x.
__device__ __forceinline__ void chunk_output(const deriche_coeffs& c, const float (&xs)[chunk], float before,
                                             float after1, float after2, state causal, state anticausal,
                                             float (&ys)[chunk]) {
    float xp = before;
#pragma unroll
    for (int i = 0; i < chunk; ++i) {
        causal_step(c, xs[i], xp, causal);
        ys[i] = causal.y0 + causal.y1;
    }
    float x1 = after1, x2 = after2;
#pragma unroll
    for (int i = chunk - 1; i >= 0; --i) {
        anticausal_step(c, xs[i], x1, x2, anticausal);
        ys[i] += (anticausal.y0 + anticausal.y1) + c.direct * xs[i];
    }
}

// ---- along columns: thread = (column, chunk) ------------------------------------------------------
template <class T>
__global__ void __launch_bounds__(v_cols* v_chunks)
    columns_states(const T* in, std::int64_t stride, std::int64_t width, line_shape g, std::int64_t chunks,
                   std::int64_t first, std::int64_t end, deriche_coeffs c, state* causal_out, state* anticausal_out) {
    const std::int64_t x = blockIdx.x * std::int64_t{v_cols} + threadIdx.x;
    const std::int64_t ci = blockIdx.y * std::int64_t{v_chunks} + threadIdx.y;
    if (x >= width || ci >= chunks) return;
    const T* line = in + x;
    const std::int64_t k0 = ci * chunk;
    float xs[chunk], before, after1, after2;
    load_chunk(line, stride, k0, g, xs, before, after1, after2);
    state a, b;
    chunk_states(c, xs, before, after1, after2, ci < end, ci >= first, a, b);
    if (ci < end) causal_out[ci * width + x] = a;
    if (ci >= first) anticausal_out[ci * width + x] = b;
}

// One thread per line and direction (blockIdx.y: 0 causal, 1 anticausal); first/last are the
// line's first and last padded samples. The causal walk ends at the last output chunk (end - 1),
// the anticausal one at the first (first). The chunks' own states are read in batches ahead of
// the dependent walk, so each thread keeps `fixup_batch` loads in flight (measured on the
// H200: the one-at-a-time walk was latency-bound, the fixup then cost as much as a pass).
constexpr int fixup_batch = 16;
__device__ __forceinline__ void fixup_line(const deriche_params& p, std::int64_t line, std::int64_t lines,
                                           std::int64_t chunks, std::int64_t first_chunk, std::int64_t end_chunk,
                                           float first, float last, state* causal, state* anticausal) {
    const deriche_coeffs& c = p.c;
    const bool forward = blockIdx.y == 0;
    const std::int64_t walk = forward ? end_chunk : chunks - first_chunk;
    state* states = forward ? causal : anticausal;
    const float edge = forward ? first : last;
    state s = forward ? state{c.causal_gain[0] * edge, 0.0f, c.causal_gain[1] * edge, 0.0f}
                      : state{c.anticausal_gain[0] * edge, 0.0f, c.anticausal_gain[1] * edge, 0.0f};
    for (std::int64_t b = 0; b < walk; b += fixup_batch) {
        state own[fixup_batch];
#pragma unroll
        for (int j = 0; j < fixup_batch; ++j) {
            const std::int64_t ci = forward ? b + j : chunks - 1 - (b + j);
            if (b + j < walk) own[j] = states[ci * lines + line];
        }
#pragma unroll
        for (int j = 0; j < fixup_batch; ++j) {
            const std::int64_t ci = forward ? b + j : chunks - 1 - (b + j);
            if (b + j < walk) {
                states[ci * lines + line] = s;  // the state at the chunk's entry
                s = transition(p, s, own[j]);
            }
        }
    }
}

template <class T>
__global__ void columns_fixup(const T* in, std::int64_t stride, std::int64_t width, line_shape g,
                              std::int64_t chunks, std::int64_t first, std::int64_t end, deriche_params p,
                              state* causal, state* anticausal) {
    const std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
    if (x >= width) return;
    fixup_line(p, x, width, chunks, first, end, load(in + x, stride, 0, g), load(in + x, stride, g.total - 1, g),
               causal, anticausal);
}

template <class T, class U>
__global__ void __launch_bounds__(v_cols* v_chunks)
    columns_output(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width,
                   line_shape g, std::int64_t first, std::int64_t end, deriche_coeffs c, const state* causal,
                   const state* anticausal) {
    const std::int64_t x = blockIdx.x * std::int64_t{v_cols} + threadIdx.x;
    const std::int64_t ci = first + blockIdx.y * std::int64_t{v_chunks} + threadIdx.y;
    if (x >= width || ci >= end) return;
    const T* line = in + x;
    const std::int64_t k0 = ci * chunk;
    float xs[chunk], ys[chunk], before, after1, after2;
    load_chunk(line, stride, k0, g, xs, before, after1, after2);
    chunk_output(c, xs, before, after1, after2, causal[ci * width + x], anticausal[ci * width + x], ys);
#pragma unroll
    for (int i = 0; i < chunk; ++i) {
        const std::int64_t y = k0 + i - g.pad;
        if (y >= 0 && y < g.n) out[y * out_stride + x] = store_as<U>(ys[i]);
    }
}

// ---- along rows: a block stages 32 rows x (8 chunks + halo) in shared memory ------------------------
// Tile column j holds padded position tile_k0 - 1 + j.
template <class T>
__device__ __forceinline__ void load_tile(float (&tile)[h_rows][h_stride], const T* in, std::int64_t stride,
                                          std::int64_t height, const line_shape& g, std::int64_t y0,
                                          std::int64_t tile_k0) {
    // Thread t loads column t of all 32 rows, and the first 96 threads one halo sample each
    // (row t / 3, column h_tile + t % 3), every load issued before the first store: one row at
    // a time the loads waited on each other and the row pass ran at a third of the column
    // pass's speed; the halo in a second round trip still held up the whole block.
    static_assert(h_rows * h_halo <= h_tile);
    const int t = threadIdx.y * h_rows + threadIdx.x;  // 0 .. h_tile - 1
    const bool inside = tile_k0 - 1 >= g.pad && tile_k0 - 1 + h_stride <= g.pad + g.n;
    std::int64_t base = 0;
    const bool backwards = !inside && mirrored(tile_k0 - 1, tile_k0 - 2 + h_stride, g, base);
    auto fetch = [&](int r, int j) {
        const T* row = in + (y0 + r) * stride;
        const std::int64_t k = tile_k0 - 1 + j;
        return y0 + r >= height ? 0.0f
               : inside         ? static_cast<float>(row[k - g.pad])
               : backwards      ? static_cast<float>(row[base - k])
                                : load(row, 1, k, g);
    };
    float v[h_rows];
#pragma unroll
    for (int r = 0; r < h_rows; ++r) v[r] = fetch(r, t);
    const bool halo = t < h_rows * h_halo;
    const int halo_row = t / h_halo, halo_col = h_tile + t % h_halo;
    const float halo_value = halo ? fetch(halo_row, halo_col) : 0.0f;
#pragma unroll
    for (int r = 0; r < h_rows; ++r) tile[r][t] = v[r];
    if (halo) tile[halo_row][halo_col] = halo_value;
}

template <class T>
__global__ void __launch_bounds__(h_rows* h_chunks)
    rows_states(const T* in, std::int64_t stride, std::int64_t height, line_shape g, std::int64_t chunks,
                std::int64_t first, std::int64_t end, deriche_coeffs c, state* causal_out, state* anticausal_out) {
    __shared__ float tile[h_rows][h_stride];
    const std::int64_t y0 = blockIdx.y * std::int64_t{h_rows}, tile_k0 = blockIdx.x * std::int64_t{h_tile};
    load_tile(tile, in, stride, height, g, y0, tile_k0);
    __syncthreads();
    const int r = threadIdx.x, local = threadIdx.y;
    const std::int64_t y = y0 + r, ci = blockIdx.x * std::int64_t{h_chunks} + local;
    if (y >= height || ci >= chunks) return;
    const float* row = &tile[r][1 + local * chunk];
    float xs[chunk];
#pragma unroll
    for (int i = 0; i < chunk; ++i) xs[i] = row[i];
    state a, b;
    chunk_states(c, xs, row[-1], row[chunk], row[chunk + 1], ci < end, ci >= first, a, b);
    if (ci < end) causal_out[ci * height + y] = a;
    if (ci >= first) anticausal_out[ci * height + y] = b;
}

template <class T>
__global__ void rows_fixup(const T* in, std::int64_t stride, std::int64_t height, line_shape g, std::int64_t chunks,
                           std::int64_t first, std::int64_t end, deriche_params p, state* causal, state* anticausal) {
    const std::int64_t y = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
    if (y >= height) return;
    const T* row = in + y * stride;
    fixup_line(p, y, height, chunks, first, end, load(row, 1, 0, g), load(row, 1, g.total - 1, g), causal, anticausal);
}

template <class T, class U>
__global__ void __launch_bounds__(h_rows* h_chunks, 3)  // 3 blocks per SM: 85 registers at most
    rows_output(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t height,
                line_shape g, std::int64_t first, std::int64_t end, deriche_coeffs c, const state* causal,
                const state* anticausal) {
    __shared__ float tile[h_rows][h_stride];
    const std::int64_t c0 = first + blockIdx.x * std::int64_t{h_chunks};
    const std::int64_t y0 = blockIdx.y * std::int64_t{h_rows}, tile_k0 = c0 * chunk;
    load_tile(tile, in, stride, height, g, y0, tile_k0);
    __syncthreads();
    const int r = threadIdx.x, local = threadIdx.y;
    const std::int64_t y = y0 + r, ci = c0 + local;
    const bool active = y < height && ci < end;
    float xs[chunk], ys[chunk], before = 0, after1 = 0, after2 = 0;
    if (active) {
        const float* row = &tile[r][1 + local * chunk];
#pragma unroll
        for (int i = 0; i < chunk; ++i) xs[i] = row[i];
        before = row[-1], after1 = row[chunk], after2 = row[chunk + 1];
    }
    __syncthreads();  // the tile now receives the results
    if (active) {
        chunk_output(c, xs, before, after1, after2, causal[ci * height + y], anticausal[ci * height + y], ys);
        float* row = &tile[r][1 + local * chunk];
#pragma unroll
        for (int i = 0; i < chunk; ++i) row[i] = ys[i];
    }
    __syncthreads();
    const int t = threadIdx.y * h_rows + threadIdx.x;
    for (int rr = 0; rr < h_rows; ++rr) {
        const std::int64_t yy = y0 + rr, x = tile_k0 + t - g.pad;
        if (yy < height && x >= 0 && x < g.n) out[yy * out_stride + x] = store_as<U>(tile[rr][1 + t]);
    }
}

// ---- fir, both axes in one kernel -------------------------------------------------------------------
constexpr int fir_tile = 64;       // output tile fir_tile x fir_tile
constexpr int fir_threads = 256;
constexpr int fir_out = 8;         // outputs per thread along the filter direction
constexpr int fir_max_taps = 128;  // per axis (with the zero padding to a multiple of 4): radius <= 63

// The taps of both axes, each zero-padded to 4 * groups (zero taps past the radius read zeros:
// the staged tile is zero there, so no pixel outside the radius reaches a result).
struct fir_2d_taps {
    float w[2][fir_max_taps];
    int radius[2], groups[2];
    border_mode mode[2];
    float cval;
};

// Shared memory (floats): the taps, then the input tile, (TH + 4 G0) rows of TW + 2 r1 columns
// (rows past TH + 2 r0 zero), then the column-filtered tile V, TH rows of `v_stride` (columns
// past TW + 2 r1 zero), then the image row and column each tile row and column reads. The
// result tile reuses the input tile's space, rows `out_stride` apart.
struct fir_2d_layout {
    int in_stride, in_rows, v_stride, out_stride;
    std::size_t taps, in, v, maps;  // offsets in floats (maps: in_rows + in_stride ints)
    std::size_t floats;

    __host__ __device__ explicit fir_2d_layout(const fir_2d_taps& t) {
        in_stride = fir_tile + 2 * t.radius[1];
        in_rows = fir_tile + 4 * t.groups[0];
        v_stride = fir_tile + 4 * t.groups[1];
        v_stride += (12 - v_stride % 8) % 8;  // = 4 mod 8: float4 loads of 8 lanes on 8 rows hit 32 banks
        out_stride = fir_tile + 4;
        taps = 0;
        in = 4 * static_cast<std::size_t>(t.groups[0] + t.groups[1]);
        const std::size_t in_floats = std::size_t(in_rows) * in_stride, out_floats = std::size_t(fir_tile) * out_stride;
        const std::size_t tile_floats = in_floats > out_floats ? in_floats : out_floats;
        v = in + (tile_floats + 3) / 4 * 4;
        maps = v + std::size_t(fir_tile) * v_stride;
        floats = maps + in_rows + in_stride;
    }
};

// acc[o] += sum_m taps[m] window[o + m], over 4 * groups taps; next4(q) returns the window's
// samples 4q .. 4q + 3. The window slides by 4 samples per step.
template <class Next4>
__device__ __forceinline__ void fir_window(const float4* taps, int groups, Next4 next4, float (&acc)[fir_out]) {
    static_assert(fir_out == 8);
    float win[fir_out + 4];
    const float4 a = next4(0), b = next4(1);
    win[0] = a.x, win[1] = a.y, win[2] = a.z, win[3] = a.w, win[4] = b.x, win[5] = b.y, win[6] = b.z, win[7] = b.w;
#pragma unroll 3
    for (int g = 0; g < groups; ++g) {
        const float4 c = next4(g + 2);
        win[8] = c.x, win[9] = c.y, win[10] = c.z, win[11] = c.w;
        const float4 w4 = taps[g];
        const float w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int o = 0; o < fir_out; ++o) acc[o] = fmaf(w[j], win[o + j], acc[o]);
#pragma unroll
        for (int i = 0; i < fir_out; ++i) win[i] = win[i + 4];
    }
}

template <class T, class U>
__global__ void __launch_bounds__(fir_threads)
    fir_2d(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width,
           std::int64_t height, fir_2d_taps t) {
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);
    const fir_2d_layout l(t);
    const int r0 = t.radius[0], r1 = t.radius[1], g0 = t.groups[0], g1 = t.groups[1];
    float* taps = smem + l.taps;
    float* tile = smem + l.in;
    float* v = smem + l.v;
    const int tid = threadIdx.x;
    const std::int64_t ty = blockIdx.y * std::int64_t{fir_tile}, tx = blockIdx.x * std::int64_t{fir_tile};
    for (int i = tid; i < 4 * g0; i += fir_threads) taps[i] = t.w[0][i];
    for (int i = tid; i < 4 * g1; i += fir_threads) taps[4 * g0 + i] = t.w[1][i];
    // Stage the tile: image (row_of[row], col_of[col]) for tile (row, col), mapped once per tile
    // by the border modes. row_of: -1 cval (constant), -2 zero padding; col_of -1: constant
    // (the column is set to cval after the column pass).
    const int cols = l.in_stride, real_rows = fir_tile + 2 * r0;
    int* row_of = reinterpret_cast<int*>(smem + l.maps);
    int* col_of = row_of + l.in_rows;
    for (int i = tid; i < l.in_rows; i += fir_threads)
        row_of[i] = i < real_rows ? static_cast<int>(granula::detail::border_index(ty - r0 + i, height, t.mode[0])) : -2;
    for (int i = tid; i < cols; i += fir_threads)
        col_of[i] = static_cast<int>(granula::detail::border_index(tx - r1 + i, width, t.mode[1]));
    __syncthreads();
    {
        // Element i = row * cols + col, fir_threads apart per step, batched so that `batch`
        // loads are in flight before the first store (the tile is 40-50 elements per thread).
        constexpr int batch = 16;
        const int total = l.in_rows * cols, drow = fir_threads / cols, dcol = fir_threads % cols;
        int row = tid / cols, col = tid % cols;
        for (int i = tid; i < total; i += batch * fir_threads) {
            float v[batch];
#pragma unroll
            for (int b = 0; b < batch; ++b) {
                const int y = row < l.in_rows ? row_of[row] : -2, x = col_of[col];
                v[b] = y == -2 ? 0.0f : y == -1 ? t.cval : x < 0 ? 0.0f : static_cast<float>(in[y * stride + x]);
                row += drow, col += dcol;
                if (col >= cols) col -= cols, ++row;
            }
#pragma unroll
            for (int b = 0; b < batch; ++b)
                if (i + b * fir_threads < total) tile[i + b * fir_threads] = v[b];
        }
    }
    for (int i = tid; i < fir_tile * (l.v_stride - cols); i += fir_threads) {
        const int row = i / (l.v_stride - cols);
        v[row * l.v_stride + cols + (i - row * (l.v_stride - cols))] = 0.0f;
    }
    __syncthreads();
    // Down the columns: thread = (column, 8 rows), adjacent columns in adjacent lanes.
    const float4* taps0 = reinterpret_cast<const float4*>(taps);
    const float4* taps1 = reinterpret_cast<const float4*>(taps + 4 * g0);
    for (int i = tid; i < cols * (fir_tile / fir_out); i += fir_threads) {
        const int col = i % cols, y0 = i / cols * fir_out;
        float acc[fir_out] = {};
        const float* src = tile + y0 * cols + col;
        fir_window(taps0, g0,
                   [&](int q) {
                       const float* p = src + 4 * q * cols;
                       return make_float4(p[0], p[cols], p[2 * cols], p[3 * cols]);
                   },
                   acc);
        const std::int64_t x = tx - r1 + col;
        const bool outside = t.mode[1] == border_mode::constant && (x < 0 || x >= width);
#pragma unroll
        for (int o = 0; o < fir_out; ++o) v[(y0 + o) * l.v_stride + col] = outside ? t.cval : acc[o];
    }
    __syncthreads();
    // Along the rows: thread = (row, 8 columns), adjacent rows in adjacent lanes; the results go
    // to the freed input tile.
    float* res = tile;
    for (int i = tid; i < fir_tile * (fir_tile / fir_out); i += fir_threads) {
        const int row = i % fir_tile, x0 = i / fir_tile * fir_out;
        float acc[fir_out] = {};
        const float4* src = reinterpret_cast<const float4*>(v + row * l.v_stride + x0);
        fir_window(taps1, g1, [&](int q) { return src[q]; }, acc);
        float4* dst = reinterpret_cast<float4*>(res + row * l.out_stride + x0);
        dst[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        dst[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
    }
    __syncthreads();
    for (int i = tid; i < fir_tile * fir_tile; i += fir_threads) {
        const int row = i / fir_tile, col = i % fir_tile;
        const std::int64_t y = ty + row, x = tx + col;
        if (y < height && x < width) out[y * out_stride + x] = store_as<U>(res[row * l.out_stride + col]);
    }
}

// ---- fir and plain conversion: one thread per output pixel ------------------------------------------
template <class T, class U, bool along_rows>
__global__ void fir_pass(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width,
                         std::int64_t height, line_shape g, const float* taps, std::int64_t radius) {
    const std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
    const std::int64_t y = blockIdx.y * std::int64_t{blockDim.y} + threadIdx.y;
    if (x >= width || y >= height) return;
    const T* line = along_rows ? in + y * stride : in + x;
    const std::int64_t step = along_rows ? 1 : stride;
    const std::int64_t k = (along_rows ? x : y) + g.pad;
    float acc = 0.0f;
    for (std::int64_t j = -radius; j <= radius; ++j) acc += taps[j + radius] * load(line, step, k + j, g);
    out[y * out_stride + x] = store_as<U>(acc);
}

template <class T, class U>
__global__ void convert(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width,
                        std::int64_t height) {
    const std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
    const std::int64_t y = blockIdx.y * std::int64_t{blockDim.y} + threadIdx.y;
    if (x < width && y < height) out[y * out_stride + x] = store_as<U>(static_cast<float>(in[y * stride + x]));
}

// ---- host side ----------------------------------------------------------------------------------------
unsigned grid_dim(std::int64_t n, std::int64_t per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

// The chunk's transition matrix A^chunk of each section, A = [[1 - e1, a2], [-e1, a2]] on (y, d),
// computed in double from the float coefficients the recursion uses.
deriche_params make_deriche_params(const deriche_coeffs& c) {
    deriche_params p{c, {}};
    for (int s = 0; s < 2; ++s) {
        const double e1 = c.e1[s], a2 = c.a2[s];
        double m[4] = {1, 0, 0, 1};
        for (int i = 0; i < chunk; ++i) {
            const double n0 = (1 - e1) * m[0] + a2 * m[2], n1 = (1 - e1) * m[1] + a2 * m[3];
            const double n2 = -e1 * m[0] + a2 * m[2], n3 = -e1 * m[1] + a2 * m[3];
            m[0] = n0, m[1] = n1, m[2] = n2, m[3] = n3;
        }
        for (int i = 0; i < 4; ++i) p.t[s][i] = static_cast<float>(m[i]);
    }
    return p;
}

// fir (or identity) on both axes in one fir_2d launch; false when the taps do not fit it.
template <class T, class U>
bool fir_both_axes(device_view<const T> in, device_view<U> out, const axis_plan& rows_axis,
                   const axis_plan& cols_axis, cudaStream_t s) {
    if (in.width() > INT32_MAX || in.height() > INT32_MAX) return false;  // the tile maps hold int indices
    fir_2d_taps t{};
    const axis_plan* plans[2] = {&rows_axis, &cols_axis};
    for (int a = 0; a < 2; ++a) {
        const axis_plan& p = *plans[a];
        const bool identity = p.kind == gaussian_kind::identity;
        if (!identity && p.kind != gaussian_kind::fir) return false;
        const std::size_t n = identity ? 1 : p.taps.size();
        if (n > fir_max_taps) return false;
        t.radius[a] = static_cast<int>(n / 2);
        t.groups[a] = static_cast<int>((n + 3) / 4);
        for (std::size_t i = 0; i < n; ++i) t.w[a][i] = identity ? 1.0f : p.taps[i];
        t.mode[a] = p.mode;
    }
    t.cval = rows_axis.kind == gaussian_kind::identity ? cols_axis.cval : rows_axis.cval;
    const fir_2d_layout l(t);
    const std::size_t bytes = l.floats * sizeof(float);
    int device = 0, limit = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
    if (bytes > static_cast<std::size_t>(limit)) return false;
    check_cuda(cudaFuncSetAttribute(fir_2d<T, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
               "cudaFuncSetAttribute (fir_2d)");
    const dim3 grid(grid_dim(in.width(), fir_tile), grid_dim(in.height(), fir_tile));
    fir_2d<T, U><<<grid, fir_threads, bytes, s>>>(in.data(), in.stride(), out.data(), out.stride(), in.width(),
                                                  in.height(), t);
    check_launch("Gaussian fir_2d");
    return true;
}

// One pass along an axis (0: along columns, 1: along rows).
template <class T, class U>
void axis_pass(device_view<const T> in, device_view<U> out, const axis_plan& plan, int axis, cudaStream_t s) {
    const std::int64_t w = in.width(), h = in.height(), n = axis == 0 ? h : w, lines = axis == 0 ? w : h;
    if (plan.kind == gaussian_kind::identity) {
        const dim3 block(32, 8);
        convert<T, U><<<dim3(grid_dim(w, 32), grid_dim(h, 8)), block, 0, s>>>(in.data(), in.stride(), out.data(),
                                                                             out.stride(), w, h);
        check_launch("Gaussian convert");
        return;
    }
    if (plan.kind == gaussian_kind::fir) {
        const axis_plan identity{};
        if (axis == 0 ? fir_both_axes<T, U>(in, out, plan, identity, s) : fir_both_axes<T, U>(in, out, identity, plan, s))
            return;
        const std::int64_t radius = plan.pad;
        stream_buffer taps(plan.taps.size() * sizeof(float), s, scratch_what);
        check_cuda(cudaMemcpyAsync(taps.as<float>(), plan.taps.data(), plan.taps.size() * sizeof(float),
                                   cudaMemcpyHostToDevice, s),
                   "cudaMemcpyAsync (fir taps)");
        const line_shape g{n, radius, n + 2 * radius, plan.mode, plan.cval};
        const dim3 block(32, 8), grid(grid_dim(w, 32), grid_dim(h, 8));
        if (axis == 0)
            fir_pass<T, U, false><<<grid, block, 0, s>>>(in.data(), in.stride(), out.data(), out.stride(), w, h, g,
                                                         taps.as<float>(), radius);
        else
            fir_pass<T, U, true><<<grid, block, 0, s>>>(in.data(), in.stride(), out.data(), out.stride(), w, h, g,
                                                        taps.as<float>(), radius);
        check_launch("Gaussian fir");  // (a copy from pageable memory has read the taps when it returns)
        return;
    }
    if (plan.kind == gaussian_kind::yvv) return yvv_pass<T, U>(in, out, plan, axis, s);
    // The padded line rounded up to whole chunks (the extra samples continue the extension).
    const std::int64_t chunks = (n + 2 * plan.pad + chunk - 1) / chunk;
    const line_shape g{n, plan.pad, chunks * chunk, plan.mode, plan.cval};
    const deriche_params p = make_deriche_params(plan.deriche);
    // The output pass skips the chunks that lie in the extension only (a third of them at sigma 200);
    // the states pass and the fixup run one direction only there (chunk_states).
    const std::int64_t first = plan.pad / chunk, end = (plan.pad + n - 1) / chunk + 1;
    stream_buffer causal(static_cast<std::size_t>(chunks * lines) * sizeof(state), s, scratch_what);
    stream_buffer anticausal(static_cast<std::size_t>(chunks * lines) * sizeof(state), s, scratch_what);
    if (axis == 0) {
        const dim3 block(v_cols, v_chunks), grid(grid_dim(w, v_cols), grid_dim(chunks, v_chunks));
        columns_states<T><<<grid, block, 0, s>>>(in.data(), in.stride(), w, g, chunks, first, end, p.c,
                                                 causal.as<state>(), anticausal.as<state>());
        check_launch("Gaussian columns_states");
        columns_fixup<T><<<dim3(grid_dim(w, 128), 2), 128, 0, s>>>(in.data(), in.stride(), w, g, chunks, first, end, p,
                                                                   causal.as<state>(), anticausal.as<state>());
        check_launch("Gaussian columns_fixup");
        columns_output<T, U><<<dim3(grid.x, grid_dim(end - first, v_chunks)), block, 0, s>>>(
            in.data(), in.stride(), out.data(), out.stride(), w, g, first, end, p.c, causal.as<state>(),
            anticausal.as<state>());
        check_launch("Gaussian columns_output");
    } else {
        const dim3 block(h_rows, h_chunks), grid(grid_dim(chunks, h_chunks), grid_dim(h, h_rows));
        rows_states<T><<<grid, block, 0, s>>>(in.data(), in.stride(), h, g, chunks, first, end, p.c,
                                              causal.as<state>(), anticausal.as<state>());
        check_launch("Gaussian rows_states");
        rows_fixup<T><<<dim3(grid_dim(h, 128), 2), 128, 0, s>>>(in.data(), in.stride(), h, g, chunks, first, end, p,
                                                                causal.as<state>(), anticausal.as<state>());
        check_launch("Gaussian rows_fixup");
        rows_output<T, U><<<dim3(grid_dim(end - first, h_chunks), grid.y), block, 0, s>>>(
            in.data(), in.stride(), out.data(), out.stride(), h, g, first, end, p.c, causal.as<state>(),
            anticausal.as<state>());
        check_launch("Gaussian rows_output");
    }
}

}  // namespace

template <class T, class U>
void gaussian(device_view<const T> in, device_view<U> out, const axis_plan& rows_axis, const axis_plan& cols_axis,
              stream st) {
    const cudaStream_t s = granula::detail::to_cuda(st.native_handle());
    if (cols_axis.kind == gaussian_kind::identity) return axis_pass<T, U>(in, out, rows_axis, 0, s);
    if (rows_axis.kind == gaussian_kind::identity) return axis_pass<T, U>(in, out, cols_axis, 1, s);
    if (fir_both_axes<T, U>(in, out, rows_axis, cols_axis, s)) return;
    stream_buffer between(static_cast<std::size_t>(in.width() * in.height()) * sizeof(float), s, scratch_what);
    const device_view<float> mid(between.as<float>(), in.width(), in.height());
    axis_pass<T, float>(in, mid, rows_axis, 0, s);
    axis_pass<float, U>(device_view<const float>(mid), out, cols_axis, 1, s);
}

#define GRANULA_INSTANTIATE_PAIR(T, U)                                                                      \
    template void gaussian<T, U>(device_view<const T>, device_view<U>, const axis_plan&, const axis_plan&, \
                                 stream);
GRANULA_INSTANTIATE_PAIR(std::uint8_t, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint8_t, float)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, float)
GRANULA_INSTANTIATE_PAIR(float, float)
#undef GRANULA_INSTANTIATE_PAIR

}  // namespace granula::cuda
