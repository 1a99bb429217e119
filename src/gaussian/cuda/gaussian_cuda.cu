// CUDA Gaussian filters.
//
// Recursive filters run block-parallel with carried state (Nehab et al. 2011): every line is
// cut into chunks of `chunk` samples and one thread handles one chunk of one line, so a
// 8192-pixel line keeps ~260 threads busy instead of one. A block takes a tile of 8 chunks of
// 32 lines; states pass between the kernels per tile. Three kernels per axis:
//   1. states:  each chunk runs the causal and the anticausal recursion from a zero state; the
//               block combines its chunks' final states into the tile's own states;
//   2. fixup:   one thread per line computes the line's entry states (line_entry) and walks
//               the tiles, state_t = T state_{t-1} + own_t, with T the tile's state-transition
//               matrix (zero input);
//   3. output:  each chunk runs both recursions from zero again, the block combines the chunks'
//               own states with the tile's entry states into each chunk's entry states, and
//               their zero-input response is added to the zero-start result.
// Input is read twice and the result written once; the states, 1/16 byte per sample and
// direction, no longer count (per chunk they were a fourth of the traffic: H200, 8192^2 float32
// both axes 0.80 -> 0.70 ms). The result equals the sequential
// recursion up to float rounding. Along columns the threads of a warp take adjacent columns
// (coalesced); along rows a block stages a tile of 32 rows in shared memory and each thread
// walks one row's chunk there. The tiles cover the line only: the states the recursions carry
// in from the border extension come from the line's own states (wrap, reflect and mirror
// repeat the line, so the extension's state is a sum over its periods; line_entry), where
// running the extension (about 10 sigma per side) had cost in proportion to sigma. Each
// recursion runs once per chunk, in its own direction: the recursion over the line reversed
// that reflect and mirror need follows from the other direction's own state (make_deriche_params).
// Where the line's end cuts its last tile, that tile's output runs in a launch of its own (its
// cut chunk took the output kernels 96 registers, or 60 bytes of spills); lines of whole tiles
// need none, where the extra launch cost 0.023 ms per axis (H200, 8192^2). H200, float32,
// both axes: 0.57 ms at 8192^2 and 0.60 at 8000^2 at every sigma from 3 to 5000, where the
// extension had cost 0.58 ms at sigma 3-20, 0.67 at 200, 1.24 at 1000 and 9.1 at 5000 (8192^2;
// docs/benchmarks.md).
// Running each axis in bands of lines
// that fit the L2, so that the output pass rereads from L2, was 2-5x slower: the per-band
// kernels are too small to hide their latency (docs/benchmarks.md).
//
// fir runs one kernel per axis, down the columns (fir_columns) and then along the rows
// (fir_rows) through a float image between them: scipy's order, so constant borders give
// scipy's result. Each block (down the columns) or warp (along the rows) stages its tile and
// halo in shared memory (float rows by bulk copy, fir_rows); each thread computes 16 outputs
// along the filter direction from a window of inputs held in registers, 4 taps per step, so
// every shared-memory load feeds many FMAs. Taps too many for the tiles (over 511 per axis)
// fall back to fir_pass, one thread per output pixel and axis. Both axes in one kernel
// (column strips stepping down through a ring of input rows, no float image between the
// passes) was slower at every sigma: the strips' halo columns filtered twice and fewer warps
// per SM cost more than the saved traffic (H200, sigma 5: 0.49 -> 0.71 ms; docs/benchmarks.md,
// branch gauss-gpu-fused). Bands of rows with the row pass of band b on a second stream beside
// the column pass of band b + 1 (the float image reread from L2) were no faster either: 0.495
// -> 0.496 ms at 1024 rows, slower with other band heights or with the band's lines discarded
// from L2 after the row pass (docs/benchmarks.md).
#include "gaussian/cuda/gaussian_cuda.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <climits>
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

// Tuning (H200): a chunk of 32 samples keeps a thread's samples in registers. A tile is 8
// consecutive chunks of 32 lines (one block): 32 columns x 8 chunks along columns, 32 rows x 8
// chunks (a 32 x 256 tile) along rows. States travel between the kernels per tile, not per chunk.
constexpr int chunk = 32;
constexpr int tile_chunks = 8;
constexpr int tile_lines = 32;
constexpr int h_tile = tile_chunks * chunk;    // samples per row tile row
constexpr int h_before = 1;                    // samples staged before a row tile, 2 after it
constexpr int h_halo = h_before + 2;
constexpr int h_stride = h_tile + h_halo;      // odd: the 32 rows of a warp fall in 32 banks

// One chunk of padded positions k0 .. k0 + chunk - 1 and its neighbours x[k0 - 1], x[k0 + chunk],
// x[k0 + chunk + 1]; chunks clear of the line's ends (all but a few) skip the border logic.
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
#pragma unroll
    for (int i = 0; i < chunk; ++i) xs[i] = load(line, step, k0 + i, g);
    before = load(line, step, k0 - 1, g);
    after1 = load(line, step, k0 + chunk, g);
    after2 = load(line, step, k0 + chunk + 1, g);
}

// ---- Deriche: the recursion steps (the CPU kernel's arithmetic) -----------------------------------
struct alignas(16) state {  // one 16-byte load or store
    float y0, d0, y1, d1;
};

// The line's entry states of wrap, reflect and mirror (line_entry) take samples at up to
// entry_taps places near its ends.
constexpr int entry_taps = 6;

struct deriche_params {
    deriche_coeffs c;
    // Per section, zero-input transition matrices on (y, d) (t00 t01 t10 t11): A^k over a chunk,
    // a tile, the line's samples in its last chunk (edge_t) and in its last tile (last_t).
    float chunk_t[2][4], tile_t[2][4], edge_t[2][4], last_t[2][4];
    // Entry state of direction d (0 causal, 1 anticausal) from the line's own states of that
    // direction (own) and of the other one (other): k_own own + k_other[d] other + the taps'
    // tap_w[d][j] x[tap_at[j]] (line_entry).
    float k_own[2][4], k_other[2][2][4], tap_w[2][entry_taps][4];
    std::int64_t tap_at[entry_taps];
    int taps;
    // entry_y[s][i] = the first row of A^(i + 1): the y after step i of a zero-input run from (y, d).
    float entry_y[2][chunk][2];
    std::int64_t tiles;       // per line, from its first sample; the last one ends past the line
    std::int64_t reach;       // periodic modes: tiles at each end whose states reach the other end
    std::int64_t last_chunk;  // the chunk of the line's last sample, and its index there
    int last_sample;
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

// t s + own: the state after a stretch with transition t entered in state s, own its state from zero.
__device__ __forceinline__ state transition(const float (&t)[2][4], state s, state own) {
    state r;
    r.y0 = t[0][0] * s.y0 + t[0][1] * s.d0 + own.y0;
    r.d0 = t[0][2] * s.y0 + t[0][3] * s.d0 + own.d0;
    r.y1 = t[1][0] * s.y1 + t[1][1] * s.d1 + own.y1;
    r.d1 = t[1][2] * s.y1 + t[1][3] * s.d1 + own.d1;
    return r;
}

// m = t m, per section.
__device__ __forceinline__ void times(const float (&t)[2][4], float (&m)[2][4]) {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const float m0 = m[s][0], m1 = m[s][1], m2 = m[s][2], m3 = m[s][3];
        m[s][0] = t[s][0] * m0 + t[s][1] * m2, m[s][1] = t[s][0] * m1 + t[s][1] * m3;
        m[s][2] = t[s][2] * m0 + t[s][3] * m2, m[s][3] = t[s][2] * m1 + t[s][3] * m3;
    }
}

// Pass 1 of one chunk: the own states (from zero) of its causal and anticausal runs. xs are its
// samples, before = x[k0 - 1], after1/2 = x[k0 + chunk], +1. Edge: the line's last sample is
// xs[last]; the causal run stops after it, the anticausal one starts at it.
template <bool Edge>
__device__ __forceinline__ void chunk_runs(const deriche_coeffs& c, const float (&xs)[chunk], float before,
                                           float after1, float after2, int last, state& causal, state& anticausal) {
    causal = state{};
    float xp = before;
#pragma unroll
    for (int i = 0; i < chunk; ++i) {
        state t = causal;
        causal_step(c, xs[i], xp, t);
        if (!Edge || i <= last) causal = t;
    }
    anticausal = state{};
    float x1 = after1, x2 = after2;
#pragma unroll
    for (int i = chunk - 1; i >= 0; --i) {
        anticausal_step(c, xs[i], x1, x2, anticausal);
        if (Edge && i > last) anticausal = state{};
    }
}

// Pass 3 of one chunk, both recursions from zero: ys receives causal + anticausal + direct x,
// causal / anticausal their final states. Edge: the line's last sample is xs[last], and the
// anticausal recursion starts there from `start`, the line's anticausal entry state.
template <bool Edge>
__device__ __forceinline__ void chunk_output(const deriche_coeffs& c, const float (&xs)[chunk], float before,
                                             float after1, float after2, float (&ys)[chunk], state& causal,
                                             state& anticausal, int last, state start) {
    causal = {0, 0, 0, 0};
    float xp = before;
#pragma unroll
    for (int i = 0; i < chunk; ++i) {
        causal_step(c, xs[i], xp, causal);
        ys[i] = causal.y0 + causal.y1;
    }
    anticausal = Edge ? start : state{};
    float x1 = after1, x2 = after2;
#pragma unroll
    for (int i = chunk - 1; i >= 0; --i) {
        anticausal_step(c, xs[i], x1, x2, anticausal);
        if (Edge && i > last) anticausal = start;  // past the line: its results are not stored
        ys[i] += (anticausal.y0 + anticausal.y1) + c.direct * xs[i];
    }
}

// The recursions are linear: a run entered in state s is the run from zero plus the zero-input
// response of s, whose y after step i is entry_y[i] . (y, d) per section. 8 FMAs per sample,
// where rerunning the recursions from the entry states would need the chunks' own states
// (one more recursion, or their storage in memory).
__device__ __forceinline__ void add_entry_states(const deriche_params& p, state causal, state anticausal,
                                                 float (&ys)[chunk]) {
#pragma unroll
    for (int i = 0; i < chunk; ++i) {
        const int j = chunk - 1 - i;  // the anticausal run reaches sample i after step j
        ys[i] += p.entry_y[0][i][0] * causal.y0 + p.entry_y[0][i][1] * causal.d0 + p.entry_y[1][i][0] * causal.y1 +
                 p.entry_y[1][i][1] * causal.d1 + p.entry_y[0][j][0] * anticausal.y0 +
                 p.entry_y[0][j][1] * anticausal.d0 + p.entry_y[1][j][0] * anticausal.y1 +
                 p.entry_y[1][j][1] * anticausal.d1;
    }
}

// own[d][i][line]: the own states of chunk i of a tile, d = 0 of its forward run, 1 of its backward run.
using tile_states = state[2][tile_chunks][tile_lines];

// The tile's own state of a run from its chunks': forward runs to the tile's last sample in the
// line (in the last tile, chunk last_chunk holds last_sample + 1 of them), backward runs from
// there (the chunks past the line hold zero states).
__device__ __forceinline__ state tile_own(const deriche_params& p, const tile_states& own, bool forward, int line,
                                          bool last_tile) {
    if (forward) {
        const int count = last_tile ? static_cast<int>(p.last_chunk % tile_chunks) + 1 : tile_chunks;
        state s = own[0][0][line];
        for (int i = 1; i < count; ++i)
            s = last_tile && i == count - 1 ? transition(p.edge_t, s, own[0][i][line])
                                            : transition(p.chunk_t, s, own[0][i][line]);
        return s;
    }
    state s = own[1][tile_chunks - 1][line];
    for (int i = tile_chunks - 2; i >= 0; --i) s = transition(p.chunk_t, s, own[1][i][line]);
    return s;
}

// The output kernels copy the tile's entry states (causal, anticausal) of each line into shared
// memory with cp.async while they load and run the chunks, so no registers wait for them (with
// plain loads ahead of the recursions columns_output took 97 registers, with the copy 80).
using tile_entry = state[2][tile_lines];

__device__ __forceinline__ void fetch_entry(tile_entry& entry, const state* causal, const state* anticausal,
                                            std::int64_t at, int local, int line) {
    if (local < 2) __pipeline_memcpy_async(&entry[local][line], (local == 0 ? causal : anticausal) + at, sizeof(state));
    __pipeline_commit();
}

// Chunk `local`'s entry states from the tile's and the own states of the chunks before it
// (causal) and after it (anticausal). In the last tile the anticausal run of the line's last
// chunk started from the line's entry state (chunk_output), so the chunks before it continue
// from its final state.
__device__ __forceinline__ void chunk_entry(const deriche_params& p, const tile_entry& entry, const tile_states& own,
                                            int local, int line, bool last_tile, state& causal, state& anticausal) {
    causal = entry[0][line];
    for (int i = 0; i < local; ++i) causal = transition(p.chunk_t, causal, own[0][i][line]);
    int from = tile_chunks;
    anticausal = entry[1][line];
    if (last_tile) {
        from = static_cast<int>(p.last_chunk % tile_chunks);
        anticausal = local < from ? own[1][from][line] : state{};
    }
    for (int i = from - 1; i > local; --i) anticausal = transition(p.chunk_t, anticausal, own[1][i][line]);
}

// The tiles' own states are read in batches ahead of the dependent walks (line_own,
// fixup_line), so each thread keeps `fixup_batch` loads in flight.
constexpr int fixup_batch = 16;

// A plane's own state over the whole line: causal runs moved to the line's last sample,
// anticausal ones to its first, from the `reach` tiles next to that end only (the others'
// contributions fall below float rounding there).
__device__ __forceinline__ state line_own(const deriche_params& p, const state* plane, std::int64_t lines,
                                          std::int64_t line, bool causal) {
    float m[2][4] = {{1, 0, 0, 1}, {1, 0, 0, 1}};
    state sum{};
    for (std::int64_t b = 0; b < p.reach; b += fixup_batch) {
        state own[fixup_batch];
#pragma unroll
        for (int j = 0; j < fixup_batch; ++j)
            if (b + j < p.reach) own[j] = plane[(causal ? p.tiles - 1 - (b + j) : b + j) * lines + line];
#pragma unroll
        for (int j = 0; j < fixup_batch; ++j) {
            if (b + j >= p.reach) break;
            sum = transition(m, own[j], sum);
            if (causal && b + j == 0)
                times(p.last_t, m);
            else
                times(p.tile_t, m);
        }
    }
    return sum;
}

// The entry states of a line: the causal state before its first sample and the anticausal one
// after its last, of the recursions run over the whole border extension. nearest, constant:
// the steady state of the constant beyond the end. wrap, reflect, mirror: the extension is
// periodic (period n: the line; 2n: the line, then the line reversed; 2n - 2: the same without
// the reversed copy's end samples), so the state is the sum over the periods of the state one
// period leaves from zero: for reflect (I - A^P)^-1 (A^n own + rev), with `own` the
// recursion's own state over the line and `rev` its own state over the line reversed. `rev` is
// the other direction's own state over the line up to a matrix and a few samples at the ends
// (make_deriche_params), so the tiles run each recursion once, in its own direction; the host
// folds the matrices and the samples' weights into k_own, k_other and the taps.
template <class T>
__device__ __forceinline__ state line_entry(const deriche_params& p, const T* line, std::int64_t step,
                                            const line_shape& g, bool causal, const state* states,
                                            std::int64_t lines, std::int64_t l) {
    const deriche_coeffs& c = p.c;
    if (g.mode == border_mode::nearest || g.mode == border_mode::constant) {
        const float e = load(line, step, g.pad + (causal ? -1 : g.n), g);
        return causal ? state{c.causal_gain[0] * e, 0.0f, c.causal_gain[1] * e, 0.0f}
                      : state{c.anticausal_gain[0] * e, 0.0f, c.anticausal_gain[1] * e, 0.0f};
    }
    const std::int64_t plane = p.tiles * lines;
    const int d = causal ? 0 : 1;
    state s = transition(p.k_own, line_own(p, states + d * plane, lines, l, causal), state{});
    if (g.mode == border_mode::wrap) return s;
    s = transition(p.k_other[d], line_own(p, states + (1 - d) * plane, lines, l, !causal), s);
    for (int j = 0; j < p.taps; ++j) {
        const float x = static_cast<float>(line[p.tap_at[j] * step]);
        const float(&w)[4] = p.tap_w[d][j];
        s.y0 += w[0] * x, s.d0 += w[1] * x, s.y1 += w[2] * x, s.d1 += w[3] * x;
    }
    return s;
}

// One thread per line and direction (blockIdx.y: 0 causal, 1 anticausal) computes the line's
// entry state, then walks the tiles, state_t = T state_{t-1} + own_t, and leaves each tile's
// entry state in place of its own (the last tile's anticausal one: the state after the line's
// last sample).
template <class T>
__device__ __forceinline__ void fixup_line(const deriche_params& p, const T* line, std::int64_t step,
                                           const line_shape& g, std::int64_t l, std::int64_t lines, state* states) {
    const bool forward = blockIdx.y == 0;
    const std::int64_t tiles = p.tiles;
    state* own_states = states + (forward ? 0 : tiles * lines);
    state s = line_entry(p, line, step, g, forward, states, lines, l);
    for (std::int64_t b = 0; b < tiles; b += fixup_batch) {
        state own[fixup_batch];
#pragma unroll
        for (int j = 0; j < fixup_batch; ++j) {
            const std::int64_t ti = forward ? b + j : tiles - 1 - (b + j);
            if (b + j < tiles) own[j] = own_states[ti * lines + l];
        }
#pragma unroll
        for (int j = 0; j < fixup_batch; ++j) {
            const std::int64_t ti = forward ? b + j : tiles - 1 - (b + j);
            if (b + j < tiles) {
                own_states[ti * lines + l] = s;  // the state at the tile's entry
                s = !forward && b + j == 0 ? transition(p.last_t, s, own[j]) : transition(p.tile_t, s, own[j]);
            }
        }
    }
}

// ---- along columns: a block takes 32 columns x one tile, thread = (column, chunk) -------------------
// The causal and anticausal runs of one tile: own states per chunk, then per tile. Last: the
// line's last tile, whose last chunk the line's end cuts (a block-uniform branch of the states
// kernels: down the columns it costs 44 bytes of spills at 64 registers, yet measured as fast
// as a launch of its own for the last tile, 0.620 against 0.623 ms both axes).
template <bool Last, class Load>
__device__ __forceinline__ void tile_runs(const deriche_params& p, tile_states& own, std::int64_t ti, int local,
                                          int line, bool active, bool stored, Load load_samples, state* states,
                                          std::int64_t at, std::int64_t plane) {
    const std::int64_t ci = ti * tile_chunks + local;
    state f{}, b{};
    if (active && (!Last || ci <= p.last_chunk)) {
        float xs[chunk], before, after1, after2;
        load_samples(xs, before, after1, after2);
        if (Last && ci == p.last_chunk)
            chunk_runs<true>(p.c, xs, before, after1, after2, p.last_sample, f, b);
        else
            chunk_runs<false>(p.c, xs, before, after1, after2, chunk - 1, f, b);
    }
    own[0][local][line] = f, own[1][local][line] = b;
    __syncthreads();
    if (stored && local < 2) states[local * plane + at] = tile_own(p, own, local == 0, line, Last);
}

// Registers: the states kernels as 4 blocks per SM (64 registers; uncapped the compiler took
// 140 down the columns).
template <class T>
__global__ void __launch_bounds__(tile_lines* tile_chunks, 4)
    columns_states(const T* in, std::int64_t stride, std::int64_t width, line_shape g, deriche_params p,
                   state* states) {
    __shared__ tile_states own;
    const int lane = threadIdx.x, local = threadIdx.y;
    const std::int64_t x = blockIdx.x * std::int64_t{tile_lines} + lane, ti = blockIdx.y;
    const bool active = x < width;
    const auto samples = [&](float (&xs)[chunk], float& before, float& after1, float& after2) {
        load_chunk(in + x, stride, g.pad + (ti * tile_chunks + local) * chunk, g, xs, before, after1, after2);
    };
    if (ti == p.tiles - 1)
        tile_runs<true>(p, own, ti, local, lane, active, active, samples, states, ti * width + x, p.tiles * width);
    else
        tile_runs<false>(p, own, ti, local, lane, active, active, samples, states, ti * width + x, p.tiles * width);
}

template <class T>
__global__ void columns_fixup(const T* in, std::int64_t stride, std::int64_t width, line_shape g, deriche_params p,
                              state* states) {
    const std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
    if (x < width) fixup_line(p, in + x, stride, g, x, width, states);
}

// Last: the line's last tile alone.
template <class T, class U, bool Last>
__global__ void __launch_bounds__(tile_lines* tile_chunks)
    columns_output(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width,
                   line_shape g, deriche_params p, const state* causal, const state* anticausal) {
    __shared__ tile_states own;
    __shared__ tile_entry entry;
    const int lane = threadIdx.x, local = threadIdx.y;
    const std::int64_t x = blockIdx.x * std::int64_t{tile_lines} + lane, ti = Last ? p.tiles - 1 : blockIdx.y;
    const std::int64_t ci = ti * tile_chunks + local, k0 = g.pad + ci * chunk;
    const bool active = x < width;
    float ys[chunk];
    state a{}, b{};
    if (active) {
        fetch_entry(entry, causal, anticausal, ti * width + x, local, lane);
        float xs[chunk], before, after1, after2;
        load_chunk(in + x, stride, k0, g, xs, before, after1, after2);
        if (Last && ci == p.last_chunk)
            chunk_output<true>(p.c, xs, before, after1, after2, ys, a, b, p.last_sample, anticausal[ti * width + x]);
        else
            chunk_output<false>(p.c, xs, before, after1, after2, ys, a, b, chunk - 1, state{});
    }
    own[0][local][lane] = a, own[1][local][lane] = b;
    __pipeline_wait_prior(0);
    __syncthreads();
    if (!active) return;
    state ca, cb;
    chunk_entry(p, entry, own, local, lane, Last, ca, cb);
    add_entry_states(p, ca, cb, ys);
    if (k0 - g.pad + chunk <= g.n) {
        U* d = out + (k0 - g.pad) * out_stride + x;  // most chunks: step a pointer
#pragma unroll
        for (int i = 0; i < chunk; ++i, d += out_stride) *d = store_as<U>(ys[i]);
        return;
    }
#pragma unroll
    for (int i = 0; i < chunk; ++i) {
        const std::int64_t y = k0 + i - g.pad;
        if (y < g.n) out[y * out_stride + x] = store_as<U>(ys[i]);
    }
}

// ---- along rows: a block stages 32 rows x (one tile + halo) in shared memory ------------------------
// Tile column j holds padded position tile_k0 - h_before + j. Tiles clear of the line's ends load
// and store by stepping a pointer: the index logic per sample (64-bit products, bounds tests) had
// made the row pass the slower one (H200, 8192^2 float32, sigma 5: rows 0.41 -> 0.33 ms, columns
// 0.30 -> 0.28 with the same change to their stores). Each warp staging its own 32 rows x one
// chunk, with no barrier before the recursions, was slower (rows 0.41 -> 0.47 ms).
template <class T>
__device__ __forceinline__ void load_tile(float (&tile)[tile_lines][h_stride], const T* in, std::int64_t stride,
                                          std::int64_t height, const line_shape& g, std::int64_t y0,
                                          std::int64_t tile_k0) {
    // Thread t loads column h_before + t of all 32 rows (position tile_k0 + t: a warp reads 32
    // aligned samples), and the first 128 threads one halo sample each (row t / 4, columns 0, 1,
    // h_tile + 2, h_tile + 3), every load issued before the first store: one row at a time the
    // loads waited on each other and the row pass ran at a third of the column pass's speed; the
    // halo in a second round trip still held up the whole block.
    static_assert(tile_lines * h_halo <= h_tile);
    const int t = threadIdx.y * tile_lines + threadIdx.x;  // 0 .. h_tile - 1
    const bool inside = tile_k0 - h_before >= g.pad && tile_k0 + h_tile + 2 <= g.pad + g.n;
    auto fetch = [&](int r, int j) {
        const T* row = in + (y0 + r) * stride;
        const std::int64_t k = tile_k0 - h_before + j;
        return y0 + r >= height ? 0.0f : inside ? static_cast<float>(row[k - g.pad]) : load(row, 1, k, g);
    };
    float v[tile_lines];
    if (inside && y0 + tile_lines <= height) {  // most tiles: step a pointer, no per-sample index logic
        const T* p = in + y0 * stride + (tile_k0 - g.pad + t);
#pragma unroll
        for (int r = 0; r < tile_lines; ++r, p += stride) v[r] = static_cast<float>(*p);
    } else {
#pragma unroll
        for (int r = 0; r < tile_lines; ++r) v[r] = fetch(r, h_before + t);
    }
    const bool halo = t < tile_lines * h_halo;
    const int halo_row = t / h_halo, halo_col = t % h_halo < h_before ? t % h_halo : h_tile + t % h_halo;
    const float halo_value = halo ? fetch(halo_row, halo_col) : 0.0f;
#pragma unroll
    for (int r = 0; r < tile_lines; ++r) tile[r][h_before + t] = v[r];
    if (halo) tile[halo_row][halo_col] = halo_value;
}

// Along the rows 8- and 16-bit input spilled 200 bytes at 4 blocks per SM: 3 for them (8-bit
// input still spills 260 bytes there).
template <class T>
__global__ void __launch_bounds__(tile_lines* tile_chunks, sizeof(T) < 4 ? 3 : 4)
    rows_states(const T* in, std::int64_t stride, std::int64_t height, line_shape g, deriche_params p,
                state* states) {
    __shared__ float tile[tile_lines][h_stride];
    __shared__ tile_states own;
    const std::int64_t y0 = blockIdx.y * std::int64_t{tile_lines}, ti = blockIdx.x;
    const std::int64_t tile_k0 = g.pad + ti * h_tile;
    load_tile(tile, in, stride, height, g, y0, tile_k0);
    __syncthreads();
    const int r = threadIdx.x, local = threadIdx.y;
    const std::int64_t y = y0 + r;
    const float* row = &tile[r][h_before + local * chunk];
    const auto samples = [&](float (&xs)[chunk], float& before, float& after1, float& after2) {
#pragma unroll
        for (int i = 0; i < chunk; ++i) xs[i] = row[i];
        before = row[-1], after1 = row[chunk], after2 = row[chunk + 1];
    };
    if (ti == p.tiles - 1)
        tile_runs<true>(p, own, ti, local, r, true, y < height, samples, states, ti * height + y, p.tiles * height);
    else
        tile_runs<false>(p, own, ti, local, r, true, y < height, samples, states, ti * height + y, p.tiles * height);
}

template <class T>
__global__ void rows_fixup(const T* in, std::int64_t stride, std::int64_t height, line_shape g, deriche_params p,
                           state* states) {
    const std::int64_t y = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
    if (y < height) fixup_line(p, in + y * stride, std::int64_t{1}, g, y, height, states);
}

template <class T, class U, bool Last>
__global__ void __launch_bounds__(tile_lines* tile_chunks, 3)  // 3 blocks per SM: 85 registers at most
    rows_output(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t height,
                line_shape g, deriche_params p, const state* causal, const state* anticausal) {
    __shared__ float tile[tile_lines][h_stride];
    __shared__ tile_states own;
    __shared__ tile_entry entry;
    const int r = threadIdx.x, local = threadIdx.y;
    const std::int64_t ti = Last ? p.tiles - 1 : blockIdx.x, ci = ti * tile_chunks + local;
    const std::int64_t y0 = blockIdx.y * std::int64_t{tile_lines}, tile_k0 = g.pad + ti * h_tile, y = y0 + r;
    const bool active = y < height;  // rows past the image hold zeros
    if (active) fetch_entry(entry, causal, anticausal, ti * height + y, local, r);
    load_tile(tile, in, stride, height, g, y0, tile_k0);
    __syncthreads();
    float xs[chunk], ys[chunk];
    float* row = &tile[r][h_before + local * chunk];
#pragma unroll
    for (int i = 0; i < chunk; ++i) xs[i] = row[i];
    if (Last && ci == p.last_chunk)
        chunk_output<true>(p.c, xs, row[-1], row[chunk], row[chunk + 1], ys, own[0][local][r], own[1][local][r],
                           p.last_sample, active ? anticausal[ti * height + y] : state{});
    else
        chunk_output<false>(p.c, xs, row[-1], row[chunk], row[chunk + 1], ys, own[0][local][r], own[1][local][r],
                            chunk - 1, state{});
    __pipeline_wait_prior(0);
    __syncthreads();  // the own and entry states are complete and the tile now receives the results
    if (active) {
        state ca, cb;
        chunk_entry(p, entry, own, local, r, Last, ca, cb);
        add_entry_states(p, ca, cb, ys);
    }
#pragma unroll
    for (int i = 0; i < chunk; ++i) row[i] = ys[i];
    __syncthreads();
    const int t = threadIdx.y * tile_lines + threadIdx.x;
    const std::int64_t x = tile_k0 + t - g.pad;
    if (y0 + tile_lines <= height && tile_k0 - g.pad + h_tile <= g.n) {
        U* d = out + y0 * out_stride + x;  // most tiles: step a pointer, no per-sample index logic
#pragma unroll
        for (int rr = 0; rr < tile_lines; ++rr, d += out_stride) *d = store_as<U>(tile[rr][h_before + t]);
        return;
    }
    for (int rr = 0; rr < tile_lines; ++rr) {
        const std::int64_t yy = y0 + rr;
        if (yy < height && x < g.n) out[yy * out_stride + x] = store_as<U>(tile[rr][h_before + t]);
    }
}

// ---- fir: one kernel per axis -----------------------------------------------------------------------
// A thread computes `outputs` results along the filter direction from a window of inputs held
// in registers, 4 taps per step, so every shared-memory load feeds several FMAs. The column
// pass stages 32 columns x (rows + halo) and writes straight to global memory (the lanes are
// adjacent columns); the row pass works per warp (fir_rows). Staging and write-out step
// pointers, with border logic only in tiles that reach a border: per-element index arithmetic
// had made both passes issue-bound. Tuning (docs/benchmarks.md "GPU fir"; 8192x8192 float32,
// both axes): 16 outputs per thread and the per-warp row pass took sigma 5 / 12 from 0.507 /
// 0.820 to 0.499 / 0.757 ms (H200) but raised the registers to 72-80 (3 blocks per SM);
// capped at 64 (4 blocks) 0.56 / 0.82 -> 0.52 / 0.76 ms on an H100, at 48 (5 blocks, a few
// spills) 0.505 / 0.80. The next row block or row copied with cp.async during the FMAs, in
// one wave of blocks, was slower (H100, sigma 5: 0.54 -> 0.59-0.61 ms); 16 loads in flight per
// thread down the columns did not pay, 512-row column tiles were slower from sigma 10.
struct fir_policy {
    static constexpr int col_outputs = 16, col_rows = 256;  // per thread, per block (32 columns wide)
    static constexpr int row_outputs = 16;                  // per thread (a warp: 32 x 16 of one row)
    static constexpr int row_stages = 2;  // row segments a warp has in flight where they come by bulk copy
    static constexpr int row_rows = 4;    // rows per warp there (more left the last wave's blocks longer)
    // Where the columns come by bulk copy: output rows per tile (two tiles in flight), row blocks per block.
    static constexpr int col_bulk_rows = 128, col_bulk_blocks = 4;
};
constexpr int fir_threads = 256, fir_warps = fir_threads / 32, fir_min_blocks = 4;  // 64 registers
constexpr int fir_max_taps = 512;  // with the zero padding to a multiple of 4: radius <= 255
constexpr int fir_batch = 8;       // tile loads in flight per thread before the first store
constexpr int fir_row_batch = 16;  // the same along the rows (a segment of 512 + halo: 2 rounds)

// The taps of one axis after `lead` zero taps (the row pass's tiles start 16-byte aligned, at
// radius + lead samples before the first output), zero-padded to 4 * groups. A zero tap adds
// nothing to a sum of finite samples; where it meets an infinite or NaN sample outside the
// radius, keep_radius takes its NaN back out.
struct fir_taps {
    float w[fir_max_taps];
    int radius, groups, lead;
    border_mode mode;
    float cval;
};

// acc[o] += sum_m taps[m] window[o + m] over n taps, zero-padded to groups of 4 and taken 4 per
// step; next4(q) returns the window's samples 4q .. 4q + 3. The window slides by 4 samples per
// step. skip_padding: where n = 4k + 1 (even radii: 41 taps at sigma 5, 81 at 10) the last
// group's one real tap takes its samples from the window already loaded instead of running 3
// zero taps. Taken down the columns only (both axes about 1.5% faster on an H100, sigma 3-13);
// along the rows the extra code made the 64-register kernel spill and it lost as much.
template <bool skip_padding, int N, class Next4>
__device__ __forceinline__ void fir_window(const float4* taps, int n, Next4 next4, float (&acc)[N]) {
    static_assert(N % 4 == 0);
    const int full = skip_padding && n % 4 == 1 ? n / 4 : (n + 3) / 4;
    float win[N + 4];
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
        const float4 a = next4(q);
        win[4 * q] = a.x, win[4 * q + 1] = a.y, win[4 * q + 2] = a.z, win[4 * q + 3] = a.w;
    }
#pragma unroll(N / 4 + 1)
    for (int g = 0; g < full; ++g) {
        const float4 c = next4(g + N / 4);
        win[N] = c.x, win[N + 1] = c.y, win[N + 2] = c.z, win[N + 3] = c.w;
        const float4 w4 = taps[g];
        const float w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int o = 0; o < N; ++o) acc[o] = fmaf(w[j], win[o + j], acc[o]);
#pragma unroll
        for (int i = 0; i < N; ++i) win[i] = win[i + 4];
    }
    if (skip_padding && full * 4 < n) {
        const float w = reinterpret_cast<const float*>(taps)[4 * full];
#pragma unroll
        for (int o = 0; o < N; ++o) acc[o] = fmaf(w, win[o], acc[o]);
    }
}

// The zero taps multiply samples up to 3 past the radius on either side, and 0 x inf is NaN where
// the sampled Gaussian (scipy, the CPU) never reads that sample. A NaN among the N outputs shows
// in their sum (one add per output; no branch is taken while the sum is a number); the NaN
// outputs are then summed again over the real taps alone, in fir_window's order, so they come
// out as the padding would have left them. sample(o, m): the sample tap m (counted from the lead
// zeros) weights in output o.
template <int N, class Sample>
__device__ __forceinline__ void keep_radius(const float* taps, const fir_taps& t, Sample sample, float (&acc)[N]) {
    float all = 0.0f;
#pragma unroll
    for (int o = 0; o < N; ++o) all += acc[o];
    if (!isnan(all)) return;
#pragma unroll
    for (int o = 0; o < N; ++o)
        if (isnan(acc[o])) {
            float v = 0.0f;
            for (int m = t.lead; m <= t.lead + 2 * t.radius; ++m) v = fmaf(taps[m], sample(o, m), v);
            acc[o] = v;
        }
}

// Shared memory of the passes, in floats: down the columns the taps, then a tile of col_rows + 4
// groups rows of 32; by bulk copy 32 for the mbarriers, the taps, then two tiles of `boxes` boxes
// of box_rows rows; along the rows the mbarriers, the taps, then per warp `stages` tiles of
// 128-byte aligned lines of N floats and 4 of padding (fir_rows).
__host__ __device__ inline int fir_taps_floats(const fir_taps& t) { return (4 * t.groups + 31) / 32 * 32; }
template <class P>
__host__ __device__ std::size_t fir_columns_floats(const fir_taps& t) {
    return 4 * std::size_t(t.groups) + std::size_t(P::col_rows + 4 * t.groups) * 32;
}
__host__ __device__ inline std::size_t fir_columns_bulk_floats(const fir_taps& t, int boxes, int box_rows) {
    return 32 + fir_taps_floats(t) + 2 * 32 * std::size_t(boxes) * box_rows;
}
template <class P>
__host__ __device__ int fir_rows_lines(const fir_taps& t) {
    constexpr int N = P::row_outputs;
    return (32 * N + 4 * t.groups + N - 1) / N;
}
template <class P>
__host__ __device__ int fir_rows_warp_floats(const fir_taps& t) {
    return ((P::row_outputs + 4) * fir_rows_lines<P>(t) + 31) / 32 * 32;
}
template <class P>
__host__ __device__ std::size_t fir_rows_floats(const fir_taps& t, int stages) {
    return 32 + fir_taps_floats(t) + std::size_t(fir_warps) * stages * fir_rows_warp_floats<P>(t);
}

// Four results as U to d, aligned to 4 U, in one store.
template <class U>
__device__ __forceinline__ void store4(U* d, float4 v) {
    if constexpr (std::is_same_v<U, float>) {
        *reinterpret_cast<float4*>(d) = v;
    } else {
        static_assert(sizeof(U) <= 2);
        constexpr int bits = 8 * sizeof(U);
        const unsigned lo = unsigned(store_as<U>(v.x)) | unsigned(store_as<U>(v.y)) << bits;
        const unsigned hi = unsigned(store_as<U>(v.z)) | unsigned(store_as<U>(v.w)) << bits;
        if constexpr (sizeof(U) == 1)
            *reinterpret_cast<unsigned*>(d) = lo | hi << 16;
        else
            *reinterpret_cast<uint2*>(d) = make_uint2(lo, hi);
    }
}

// The row pass's bulk copies (Hopper's tensor memory accelerator): one lane starts a copy of a
// box of the image into shared memory, and the warp waits on an mbarrier that counts its bytes.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(std::uint32_t bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbarrier_wait(std::uint32_t bar, std::uint32_t parity) {
    std::uint32_t done = 0;
    do {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}
// The next phase of bar completes when `bytes` have arrived. The fence orders the block's
// earlier reads and writes of the tiles (generic proxy) before the copies' writes.
__device__ __forceinline__ void mbarrier_expect(std::uint32_t bar, std::uint32_t bytes) {
    asm volatile(
        "fence.proxy.async.shared::cta;\n\t"
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
        "r"(bytes)
        : "memory");
}
// The box of a 2-D / 3-D tensor map at (x, y(, z)) to dst, counted on bar.
__device__ __forceinline__ void bulk_copy(std::uint32_t dst, const CUtensorMap& map, int x, int y, std::uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
            "r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void bulk_copy(std::uint32_t dst, const CUtensorMap& map, int x, int y, int z,
                                          std::uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(z), "r"(bar)
        : "memory");
}

// Down the columns: a block takes 32 columns (one per lane) and col_rows output rows; tile row
// i holds image row y0 + i, y0 = first output row - radius (rows past col_rows + 2 radius zero).
// Row blocks past gridDim.y are taken in turn (tall images). Warp w stages rows w, w + 8, ...
// of its lane's column; blocks clear of the top and bottom borders step a pointer down the
// column (the per-element index and border arithmetic made the first version issue-bound).
// fir_columns_bulk takes float images by bulk copy.
//
// Output rows [first, first + rows) of the block's columns from the tile.
template <class U, class P>
__device__ __forceinline__ void fir_columns_filter(const float* tile, const float* taps, const fir_taps& t, U* out,
                                                   std::int64_t out_stride, std::int64_t x, bool column,
                                                   std::int64_t height, std::int64_t first, int rows) {
    constexpr int N = P::col_outputs;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float4* taps4 = reinterpret_cast<const float4*>(taps);
    for (int o0 = warp * N; o0 < rows; o0 += fir_warps * N) {
        float acc[N] = {};
        const float* src = tile + o0 * 32 + lane;
        fir_window<true>(taps4, 2 * t.radius + 1,
                         [&](int q) {
                             const float* p = src + 4 * q * 32;
                             return make_float4(p[0], p[32], p[64], p[96]);
                         },
                         acc);
        keep_radius(taps, t, [&](int o, int m) { return src[(o + m) * 32]; }, acc);
        const std::int64_t y = first + o0;
        U* q = out + y * out_stride + x;
        if (column && y + N <= height) {
#pragma unroll
            for (int o = 0; o < N; ++o, q += out_stride) *q = store_as<U>(acc[o]);
        } else if (column) {
#pragma unroll
            for (int o = 0; o < N; ++o, q += out_stride)
                if (y + o < height) *q = store_as<U>(acc[o]);
        }
    }
}

template <class T, class U, class P>
__global__ void __launch_bounds__(fir_threads, fir_min_blocks)
    fir_columns(const T* in, std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width,
                std::int64_t height, fir_taps t) {
    constexpr int R = P::col_rows;
    static_assert(R % P::col_outputs == 0);
    extern __shared__ float4 smem4[];
    float* taps = reinterpret_cast<float*>(smem4);
    float* tile = taps + 4 * t.groups;
    for (int i = threadIdx.x; i < 4 * t.groups; i += fir_threads) taps[i] = t.w[i];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int real_rows = R + 2 * t.radius, tile_rows = R + 4 * t.groups;
    const std::int64_t x = blockIdx.x * std::int64_t{32} + lane;
    const bool column = x < width;
    const T* col = in + (column ? x : width - 1);  // columns past the width read a real one, never written
    const std::int64_t row_blocks = (height + R - 1) / R, step = fir_warps * stride;
    for (std::int64_t by = blockIdx.y; by < row_blocks; by += gridDim.y) {
        const std::int64_t y0 = by * R - t.radius;
        float* dst = tile + warp * 32 + lane;  // tile row `row`, fir_warps rows per step
        int row = warp;
        if (y0 >= 0 && y0 + real_rows <= height) {
            const T* p = col + (y0 + warp) * stride;
            for (; row + (fir_batch - 1) * fir_warps < real_rows; row += fir_batch * fir_warps) {
                float v[fir_batch];
#pragma unroll
                for (int b = 0; b < fir_batch; ++b, p += step) v[b] = static_cast<float>(*p);
#pragma unroll
                for (int b = 0; b < fir_batch; ++b, dst += fir_warps * 32) *dst = v[b];
            }
            for (; row < real_rows; row += fir_warps, p += step, dst += fir_warps * 32) *dst = static_cast<float>(*p);
        } else {
            for (; row < real_rows; row += fir_warps, dst += fir_warps * 32) {
                const std::int64_t y = granula::detail::border_index(y0 + row, height, t.mode);
                *dst = y < 0 ? t.cval : static_cast<float>(col[y * stride]);
            }
        }
        for (; row < tile_rows; row += fir_warps, dst += fir_warps * 32) *dst = 0.0f;
        __syncthreads();
        fir_columns_filter<U, P>(tile, taps, t, out, out_stride, x, column, height, by * R, R);
        __syncthreads();  // the next row block reuses the tile
    }
}

// Down the columns, float images 16-byte aligned with rows 16 bytes apart: tiles of
// col_bulk_rows output rows come by bulk copy, each `boxes` boxes of box_rows rows x 32 columns
// of a 2-D tensor map (rows and columns past the image arrive as zeros; the threads then fill
// the rows outside it through the border mode), two tiles in flight (an mbarrier each), a block
// taking col_bulk_blocks row blocks. H200, 8192^2 float32, sigma 5, columns only (a harness,
// docs/benchmarks.md "fir rows by bulk copy"): 0.234 -> 0.175 ms; tiles of 256 rows (77 KB for
// two: 2 blocks per SM) 0.187. In fir_columns behind a branch it spilled 44 bytes.
template <class U, class P>
__global__ void __launch_bounds__(fir_threads, fir_min_blocks)
    fir_columns_bulk(const __grid_constant__ CUtensorMap map, int boxes, int box_rows, const float* in,
                     std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width, std::int64_t height,
                     fir_taps t) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    constexpr int R = P::col_bulk_rows;
    static_assert(R % P::col_outputs == 0);
    extern __shared__ __align__(128) float4 smem4[];  // bulk copies write 128-byte aligned tiles
    std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(smem4);
    float* taps = reinterpret_cast<float*>(smem4) + 32;
    float* tiles = taps + fir_taps_floats(t);
    for (int i = threadIdx.x; i < 4 * t.groups; i += fir_threads) taps[i] = t.w[i];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const std::int64_t x = blockIdx.x * std::int64_t{32} + lane;
    const bool column = x < width;
    const float* col = in + (column ? x : width - 1);
    const int real_rows = R + 2 * t.radius, tile_rows = R + 4 * t.groups, tile_floats = 32 * boxes * box_rows;
    const std::int64_t row_blocks = (height + R - 1) / R;
    const std::uint32_t bar0 = shared_address(bars), tiles_at = shared_address(tiles);
    if (threadIdx.x == 0) {
        mbarrier_init(bar0);
        mbarrier_init(bar0 + 8);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();  // the taps and mbarriers
    auto issue = [&](std::int64_t by, int i) {
        if (threadIdx.x == 0) {
            mbarrier_expect(bar0 + 8 * i, tile_floats * sizeof(float));
            for (int k = 0; k < boxes; ++k)
                bulk_copy(tiles_at + (i * tile_floats + 32 * k * box_rows) * sizeof(float), map,
                          static_cast<int>(blockIdx.x * 32), static_cast<int>(by * R - t.radius + k * box_rows),
                          bar0 + 8 * i);
        }
    };
    std::int64_t by = blockIdx.y;
    for (int i = 0; i < 2; ++i)
        if (by + i * gridDim.y < row_blocks) issue(by + i * gridDim.y, i);
    for (int k = 0; by < row_blocks; by += gridDim.y, ++k) {
        const int i = k & 1;
        float* tile = tiles + i * tile_floats;
        mbarrier_wait(bar0 + 8 * i, (k >> 1) & 1);
        for (int row = real_rows + warp; row < tile_rows; row += fir_warps) tile[row * 32 + lane] = 0.0f;
        const std::int64_t y0 = by * R - t.radius;
        if (y0 < 0 || y0 + real_rows > height)
            for (int row = warp; row < real_rows; row += fir_warps) {
                const std::int64_t y = granula::detail::border_index(y0 + row, height, t.mode);
                if (y < 0 || y != y0 + row)  // y = -1 (constant's padding) can equal row -1's own index
                    tile[row * 32 + lane] = y < 0 ? t.cval : col[y * stride];
            }
        __syncthreads();
        fir_columns_filter<U, P>(tile, taps, t, out, out_stride, x, column, height, by * R, R);
        __syncthreads();  // the tile is free again
        if (by + 2 * gridDim.y < row_blocks) issue(by + 2 * gridDim.y, i);
    }
#endif
}

// Along the rows: each warp takes row segments of S = 32 N outputs on its own (no barrier across
// the block, so the warps' loads and FMAs overlap): lane l computes outputs N l .. N l + N - 1
// from a window in registers, float4 reads from the warp's tile. The tile holds segment
// position p (image column first - radius - lead + p) at p + 4 (p / N): lane l's reads are then
// N + 4 floats apart, on distinct banks.
//
// Float rows 16-byte aligned (the float image between the passes always; `map` set) come by
// bulk copy: the tile is a box of lines of N floats, each followed by 4 floats past the tensor
// map's innermost extent, which the copy fills with zeros: the padded layout at no cost. A warp
// takes row_rows rows and keeps row_stages copies in flight, so its FMAs run while the next
// rows arrive; the copies cost one instruction per row where staging by the lanes cost two per
// sample (ncu, H200, 8192^2, sigma 5: 1310 -> 1073 warp instructions per segment, first version). The copy
// reads whole lines from line 0 at image column `delta` (lead makes a segment start on a line),
// so in segments at the row's ends the lanes fill the columns outside [delta, delta + N lines)
// through the border mode. Other rows (8- and 16-bit input, odd strides) are staged by the lanes.
//
// Results leave through the tile: lane l writes its N outputs there and takes back outputs
// 128 k + 4 l .. + 3, so each store instruction writes 512 contiguous bytes (position p at
// p + 4 (p / 32): no bank conflicts either way). Stored straight from registers, each lane's
// 64 contiguous bytes made every instruction write 16 bytes of 32 sectors, and that held the
// pass: H200, 8192^2 float32, sigma 5, rows only: 0.264 ms before, 0.22 with these stores and
// the lanes' staging, 0.184 with the bulk copy too (which alone gained nothing below radius 32);
// 3 copies in flight or 8-32 rows per warp were no faster (docs/benchmarks.md "fir rows by bulk
// copy").
template <class T, class U, class P>
__global__ void __launch_bounds__(fir_threads, fir_min_blocks)
    fir_rows(const __grid_constant__ CUtensorMap map, int delta, std::int64_t lines, const T* in,
             std::int64_t stride, U* out, std::int64_t out_stride, std::int64_t width, std::int64_t height,
             fir_taps t) {
    constexpr int N = P::row_outputs, S = 32 * N, stages = P::row_stages;
    static_assert(N % 4 == 0 && 32 % N == 0 && S % 128 == 0);
    extern __shared__ __align__(128) float4 smem4[];  // bulk copies write 128-byte aligned tiles
    const bool bulk = std::is_same_v<T, float> && lines > 0;  // the host sets lines only where it can
    std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(smem4);
    float* taps = reinterpret_cast<float*>(smem4) + 32;
    for (int i = threadIdx.x; i < 4 * t.groups; i += fir_threads) taps[i] = t.w[i];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warp_floats = fir_rows_warp_floats<P>(t);
    float* tiles = taps + fir_taps_floats(t) + warp * (bulk ? stages : 1) * warp_floats;
    const int ahead = t.radius + t.lead, real = S + 2 * t.radius, cols = S + 4 * t.groups;
    const std::int64_t first = blockIdx.x * std::int64_t{S};
    const bool full = first + S <= width;
    const line_shape g{width, t.radius, width + 2 * std::int64_t{t.radius}, t.mode, t.cval};
    const std::int64_t ystep = gridDim.y * std::int64_t{fir_warps};
    std::int64_t y = blockIdx.y * std::int64_t{fir_warps} + warp;
    auto at = [](int p) { return p + 4 * (p / N); };  // tile position p
    // Filter the tile to the row's outputs.
    auto filter = [&](float* tile, std::int64_t row) {
        float acc[N] = {};
        const float4* src = reinterpret_cast<const float4*>(tile + (N + 4) * lane);
        fir_window<false>(reinterpret_cast<const float4*>(taps), 4 * t.groups,
                          [&](int q) { return src[q + q / (N / 4)]; }, acc);
        keep_radius(taps, t, [&](int o, int m) { return tile[at(N * lane + o + m)]; }, acc);
        __syncwarp();
        float4* t4 = reinterpret_cast<float4*>(tile);
#pragma unroll
        for (int k = 0; k < N / 4; ++k) {
            const int p = N * lane + 4 * k;
            t4[(p + 4 * (p / 32)) / 4] = make_float4(acc[4 * k], acc[4 * k + 1], acc[4 * k + 2], acc[4 * k + 3]);
        }
        __syncwarp();
        float4 o[N / 4];
#pragma unroll
        for (int k = 0; k < N / 4; ++k) {
            const int p = 128 * k + 4 * lane;
            o[k] = t4[(p + 4 * (p / 32)) / 4];
        }
        __syncwarp();  // the tile is free again
        return [=](void) {
            U* d = out + row * out_stride + first;
            const bool vectors = full && reinterpret_cast<std::uintptr_t>(d) % (4 * sizeof(U)) == 0;
#pragma unroll
            for (int k = 0; k < N / 4; ++k) {
                const int x = 128 * k + 4 * lane;
                if (vectors) {
                    store4(d + x, o[k]);
                } else {
                    const float v[4] = {o[k].x, o[k].y, o[k].z, o[k].w};
                    for (int j = 0; j < 4; ++j)
                        if (first + x + j < width) d[x + j] = store_as<U>(v[j]);
                }
            }
        };
    };
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if constexpr (std::is_same_v<T, float>) {
        if (bulk) {
            static_assert(stages * fir_warps <= 16);  // mbarriers in the first 128 bytes
            const std::uint32_t bar0 = shared_address(bars + stages * warp);
            if (lane == 0) {
                for (int i = 0; i < stages; ++i) mbarrier_init(bar0 + 8 * i);
                asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
            }
            __syncthreads();  // the taps
            const int line = static_cast<int>((first - ahead - delta) / N);
            const auto bytes = static_cast<std::uint32_t>((N + 4) * sizeof(float) * fir_rows_lines<P>(t));
            // Segment samples q (image column q0 + q) outside the copied columns [delta, end) come
            // through the border mode: q < left and q >= right.
            const std::int64_t q0 = first - t.radius, end = delta + N * lines;
            const int left = static_cast<int>(std::clamp<std::int64_t>(delta - q0, 0, real));
            const int right = static_cast<int>(std::clamp<std::int64_t>(end - q0, 0, real));
            const int border = left + real - right, tail = ahead + S + t.radius;  // tail: the first zero after them
            const std::uint32_t tiles_at = shared_address(tiles);
            auto issue = [&](std::int64_t row, int i) {
                const std::uint32_t tile_at = tiles_at + i * warp_floats * sizeof(float);
                if (lane == 0) {
                    mbarrier_expect(bar0 + 8 * i, bytes);
                    bulk_copy(tile_at, map, 0, line, static_cast<int>(row), bar0 + 8 * i);
                }
            };
            for (int i = 0; i < stages; ++i)
                if (y + i * ystep < height) issue(y + i * ystep, i);
            for (int k = 0; y < height; y += ystep, ++k) {
                const int i = k % stages;
                float* tile = tiles + i * warp_floats;
                mbarrier_wait(bar0 + 8 * i, (k / stages) & 1);
                // Zeros before and after the real samples (the copy brought image columns there).
                if (lane < t.lead) tile[lane] = 0.0f;
                if (lane >= 4 && lane - 4 < cols - tail) tile[at(tail + lane - 4)] = 0.0f;
                for (int j = lane; j < border; j += 32) {
                    const int q = j < left ? j : right + j - left;
                    tile[at(t.lead + q)] = load(in + y * stride, 1, first + q, g);
                }
                __syncwarp();
                const auto store = filter(tile, y);
                if (y + stages * ystep < height) issue(y + stages * ystep, i);
                store();
            }
            return;
        }
    }
#endif
    __syncthreads();  // the taps
    float* dst0 = tiles + at(lane);  // position lane + 32 b at dst0[(32 + 4 * 32 / N) b]
    constexpr int dst_step = 32 + 4 * 32 / N;
    const bool inside = first - t.radius >= 0 && first - t.radius + real <= width;
    for (; y < height; y += ystep) {
        const T* row = in + y * stride;
        // Blocks clear of the borders read the row directly, the others through the border logic.
        auto stage = [&](auto fetch) {
            for (int c0 = 0; c0 < cols; c0 += fir_row_batch * 32) {
                float v[fir_row_batch];
#pragma unroll
                for (int b = 0; b < fir_row_batch; ++b) {
                    const int j = c0 + lane + 32 * b - t.lead;
                    v[b] = j >= 0 && j < real ? fetch(j) : 0.0f;
                }
#pragma unroll
                for (int b = 0; b < fir_row_batch; ++b)
                    if (c0 + lane + 32 * b < cols) dst0[(c0 / 32 + b) * dst_step] = v[b];
            }
        };
        if (inside) {
            const T* p = row + (first - t.radius);
            stage([&](int j) { return static_cast<float>(p[j]); });
        } else {
            stage([&](int j) { return load(row, 1, first + j, g); });
        }
        __syncwarp();
        filter(tiles, y)();
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

// The recursion's matrices for lines of n samples, computed in double from the float
// coefficients the recursion uses: A = [[1 - e1, a2], [-e1, a2]] on (y, d) per section (a step
// is s' = A s + e u, e = (1, 1)), its powers, and the entry states' k_own, k_other and taps
// (line_entry; mode is the line's border mode, decay the samples after which its responses fall
// below float rounding).
deriche_params make_deriche_params(const deriche_coeffs& c, std::int64_t n, border_mode mode, std::int64_t decay) {
    using mat = std::array<double, 4>;
    using vec = std::array<double, 2>;
    const auto mul = [](const mat& a, const mat& b) {
        return mat{a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                   a[2] * b[1] + a[3] * b[3]};
    };
    const auto apply = [](const mat& a, const vec& v) {
        return vec{a[0] * v[0] + a[1] * v[1], a[2] * v[0] + a[3] * v[1]};
    };
    const auto scale = [](double k, const vec& v) { return vec{k * v[0], k * v[1]}; };
    const auto add = [](const vec& v, const vec& w) { return vec{v[0] + w[0], v[1] + w[1]}; };
    const auto sub = [](const vec& v, const vec& w) { return vec{v[0] - w[0], v[1] - w[1]}; };
    const auto inverse = [](const mat& a) {
        const double det = a[0] * a[3] - a[1] * a[2];
        return mat{a[3] / det, -a[1] / det, -a[2] / det, a[0] / det};
    };
    const auto to_float = [](const mat& a, float (&t)[4]) {
        for (int j = 0; j < 4; ++j) t[j] = static_cast<float>(a[j]);
    };
    deriche_params p{};
    p.c = c;
    p.tiles = (n + h_tile - 1) / h_tile;
    p.last_chunk = (n - 1) / chunk;
    p.last_sample = static_cast<int>((n - 1) % chunk);
    const bool periodic = mode == border_mode::reflect || mode == border_mode::mirror || mode == border_mode::wrap;
    p.reach = periodic ? std::min(p.tiles, decay / h_tile + 2) : 0;
    double tap_w[2][entry_taps][4] = {};
    // Adds k v x[i] to direction d's entry state; i may lie beyond the line (its border sample).
    const auto tap = [&](int d, int s, std::int64_t i, const mat& k, const vec& v) {
        const std::int64_t at = granula::detail::border_index(i, n, mode);
        int j = 0;
        while (j < p.taps && p.tap_at[j] != at) ++j;
        if (j == p.taps) p.tap_at[p.taps++] = at;
        const vec w = apply(k, v);
        tap_w[d][j][2 * s] += w[0], tap_w[d][j][2 * s + 1] += w[1];
    };
    for (int s = 0; s < 2; ++s) {
        const double e1 = c.e1[s], a2 = c.a2[s];
        const mat a{1 - e1, a2, -e1, a2};
        const auto power = [&](std::int64_t k) {  // A^k by squaring
            mat r{1, 0, 0, 1}, b = a;
            for (; k > 0; k /= 2, b = mul(b, b))
                if (k % 2) r = mul(r, b);
            return r;
        };
        mat m{1, 0, 0, 1};
        for (int i = 0; i < chunk; ++i) {
            m = mul(a, m);
            p.entry_y[s][i][0] = static_cast<float>(m[0]), p.entry_y[s][i][1] = static_cast<float>(m[1]);
        }
        to_float(m, p.chunk_t[s]);
        to_float(power(h_tile), p.tile_t[s]);
        to_float(power(p.last_sample + 1), p.edge_t[s]);
        to_float(power(n - (p.tiles - 1) * h_tile), p.last_t[s]);
        if (!periodic) continue;
        // The sum over the extension's periods (line_entry): entry = k_same own + k_rev rev, with
        // own and rev the recursion's own states over the line and over the line reversed.
        // Mirror's period lacks the reversed copy's end samples: the steps there (each adds its
        // input to y and d) are taken off own and rev, which leaves A^(n - 2) in k_same and
        // A^-1 in k_rev.
        const std::int64_t period = mode == border_mode::wrap ? n : mode == border_mode::reflect ? 2 * n : 2 * n - 2;
        const mat ap = power(period);
        const mat sum = inverse(mat{1 - ap[0], -ap[1], -ap[2], 1 - ap[3]});  // (I - A^P)^-1
        const mat k_same = mode == border_mode::wrap      ? sum
                           : mode == border_mode::reflect ? mul(sum, power(n))
                                                          : mul(sum, power(n - 2));
        to_float(k_same, p.k_own[s]);
        if (mode == border_mode::wrap) continue;
        const mat k_rev = mode == border_mode::reflect ? sum : mul(sum, inverse(a));
        // rev from the other direction's own state over the line. In the anticausal own state
        // (from zero, after x[0], started with x[n], x[n + 1] beyond the end) x[j] has the weight
        // Q_j = A^(j - 2) g_c, g_c = c1 A e + c2 e, for 2 <= j <= n; in the causal recursion over
        // the line reversed (started with x[n]) R_j = A^(j - 2) g_b, g_b = A (b0 A e + b1 e), for
        // 1 <= j <= n - 1. With M g_c = g_b, M = alpha I + beta A (a polynomial in A, so it
        // commutes with A), R_j = M Q_j inside, so rev = M own_anticausal + the end samples'
        // R_j - M Q_j: x[0] b0 e, x[1] (R_1 - M c1 e), x[n] (b1 A^(n - 1) e - M Q_n), x[n + 1]
        // (-M c2 A^(n - 1) e). The anticausal recursion run forwards is the mirror image, with
        // M^-1 and the causal own state (started with x[-1]).
        const double b0 = c.b0[s], b1 = c.b1[s], c1 = c.c1[s], c2 = c.c2[s];
        const vec e{1, 1}, ae = apply(a, e), an1e = apply(power(n - 1), e), an2e = apply(power(n - 2), e);
        const vec gc = add(scale(c1, ae), scale(c2, e)), r1 = add(scale(b0, ae), scale(b1, e)), gb = apply(a, r1);
        const vec agc = apply(a, gc);
        const double det = gc[0] * agc[1] - agc[0] * gc[1];
        const double alpha = (gb[0] * agc[1] - agc[0] * gb[1]) / det, beta = (gc[0] * gb[1] - gb[0] * gc[1]) / det;
        const mat mm{alpha + beta * a[0], beta * a[1], beta * a[2], alpha + beta * a[3]}, mi = inverse(mm);
        const vec qn = add(scale(c1, an1e), scale(c2, an2e)), qn1 = scale(c2, an1e), bn = scale(b1, an1e);
        to_float(mul(k_rev, mm), p.k_other[0][s]);
        tap(0, s, 0, k_rev, scale(b0, e));
        tap(0, s, 1, k_rev, sub(r1, apply(mm, scale(c1, e))));
        tap(0, s, n, k_rev, sub(bn, apply(mm, qn)));
        tap(0, s, n + 1, k_rev, scale(-1, apply(mm, qn1)));
        to_float(mul(k_rev, mi), p.k_other[1][s]);
        tap(1, s, n - 1, k_rev, scale(-b0, apply(mi, e)));
        tap(1, s, n - 2, k_rev, sub(scale(c1, e), apply(mi, r1)));
        tap(1, s, -1, k_rev, sub(qn, apply(mi, bn)));
        tap(1, s, -2, k_rev, qn1);
        if (mode != border_mode::mirror) continue;
        tap(0, s, 0, k_rev, scale(-b0, e)), tap(0, s, 1, k_rev, scale(-b1, e));
        tap(0, s, n - 1, k_same, scale(-b0, e)), tap(0, s, n, k_same, scale(-b1, e));
        tap(1, s, n - 2, k_rev, scale(-c1, e)), tap(1, s, n - 3, k_rev, scale(-c2, e));
        tap(1, s, 1, k_same, scale(-c1, e)), tap(1, s, 2, k_same, scale(-c2, e));
    }
    for (int d = 0; d < 2; ++d)
        for (int j = 0; j < entry_taps; ++j)
            for (int i = 0; i < 4; ++i) p.tap_w[d][j][i] = static_cast<float>(tap_w[d][j][i]);
    return p;
}

// cuTensorMapEncodeTiled from the driver (the runtime has no wrapper), or null.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static const auto encode = [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult found{};
        const bool ok = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                                         &found) == cudaSuccess &&
                        found == cudaDriverEntryPointSuccess;
        return ok ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f) : nullptr;
    }();
    return encode;
}

// Whether an image can come by bulk copy: float, 16-byte aligned rows 16 bytes apart, sizes
// that fit the copies' int coordinates, sm_90 or later.
template <class T>
bool bulk_copy_possible(device_view<const T> in, int device) {
    int major = 0;
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
    return std::is_same_v<T, float> && major >= 9 && reinterpret_cast<std::uintptr_t>(in.data()) % 16 == 0 &&
           in.stride() % 4 == 0 && in.width() <= INT32_MAX && in.height() <= INT32_MAX;
}

// A tensor map of floats (rank 2 or 3; zeros past the extents); false where the driver refuses it.
bool float_tensor_map(CUtensorMap& map, int rank, const void* base, const cuuint64_t* dims, const cuuint64_t* strides,
                      const cuuint32_t* box) {
    const auto encode = tensor_map_encoder();
    const cuuint32_t steps[3] = {1, 1, 1};
    return encode && encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank, const_cast<void*>(base), dims, strides, box,
                            steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The row pass's tensor map: the rows as lines of N floats from column delta, a box being a
// tile's lines of N + 4 floats (fir_rows). Returns the whole lines per row, 0 where the rows
// cannot come by bulk copy.
template <class T, class P>
std::int64_t fir_rows_map(device_view<const T> in, const fir_taps& t, int delta, int device, CUtensorMap& map) {
    constexpr int N = P::row_outputs;
    const std::int64_t lines = (in.width() - delta) / N;
    if (lines <= 0 || !bulk_copy_possible(in, device)) return 0;
    const cuuint64_t dims[3] = {N, static_cast<cuuint64_t>(lines), static_cast<cuuint64_t>(in.height())};
    const cuuint64_t strides[2] = {N * sizeof(float), static_cast<cuuint64_t>(in.stride()) * sizeof(float)};
    const cuuint32_t box[3] = {N + 4, static_cast<cuuint32_t>(fir_rows_lines<P>(t)), 1};
    return float_tensor_map(map, 3, in.data() + delta, dims, strides, box) ? lines : 0;
}

// fir along one axis (0: down the columns, 1: along the rows); false when the taps do not fit
// the tile kernels (more than fir_max_taps, or a tile over the device's shared memory).
template <class T, class U, class P = fir_policy>
bool fir_axis(device_view<const T> in, device_view<U> out, const axis_plan& plan, int axis, cudaStream_t s) {
    const std::size_t n = plan.taps.size();
    if (n > fir_max_taps) return false;
    fir_taps t{};
    t.radius = static_cast<int>(n / 2);
    t.lead = axis == 0 ? 0 : (4 - t.radius % 4) % 4;  // at most 3: lead + n <= fir_max_taps
    t.groups = static_cast<int>((t.lead + n + 3) / 4);
    std::copy(plan.taps.begin(), plan.taps.end(), t.w + t.lead);
    t.mode = plan.mode;
    t.cval = plan.cval;
    int device = 0, limit = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
    const std::int64_t w = in.width(), h = in.height();
    constexpr std::int64_t max_grid_y = 65535;  // further row blocks are taken in turn
    if (axis == 0) {
        if constexpr (std::is_same_v<T, float>) {
            // A tile's rows in boxes of at most 256 (the copy's limit).
            const int tile_rows = P::col_bulk_rows + 4 * t.groups, boxes = (tile_rows + 255) / 256;
            const int box_rows = (tile_rows + boxes - 1) / boxes;
            const std::size_t bytes = fir_columns_bulk_floats(t, boxes, box_rows) * sizeof(float);
            const cuuint64_t dims[2] = {static_cast<cuuint64_t>(w), static_cast<cuuint64_t>(h)};
            const cuuint64_t strides[1] = {static_cast<cuuint64_t>(in.stride()) * sizeof(float)};
            const cuuint32_t box[2] = {32, static_cast<cuuint32_t>(box_rows)};
            CUtensorMap map{};
            if (bytes <= static_cast<std::size_t>(limit) && bulk_copy_possible(in, device) &&
                float_tensor_map(map, 2, in.data(), dims, strides, box)) {
                check_cuda(cudaFuncSetAttribute(fir_columns_bulk<U, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(bytes)),
                           "cudaFuncSetAttribute (fir_columns_bulk)");
                const std::int64_t rows = std::int64_t{P::col_bulk_rows} * P::col_bulk_blocks;  // per block
                const dim3 grid(grid_dim(w, 32), static_cast<unsigned>(std::min(max_grid_y, (h + rows - 1) / rows)));
                fir_columns_bulk<U, P><<<grid, fir_threads, bytes, s>>>(map, boxes, box_rows, in.data(), in.stride(),
                                                                       out.data(), out.stride(), w, h, t);
                check_launch("Gaussian fir_columns_bulk");
                return true;
            }
        }
        const std::size_t bytes = fir_columns_floats<P>(t) * sizeof(float);
        if (bytes > static_cast<std::size_t>(limit)) return false;
        check_cuda(cudaFuncSetAttribute(fir_columns<T, U, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)),
                   "cudaFuncSetAttribute (fir_columns)");
        const dim3 grid(grid_dim(w, 32), static_cast<unsigned>(std::min(max_grid_y, (h + P::col_rows - 1) / P::col_rows)));
        fir_columns<T, U, P><<<grid, fir_threads, bytes, s>>>(in.data(), in.stride(), out.data(), out.stride(), w, h, t);
        check_launch("Gaussian fir_columns");
    } else {
        const int delta = (P::row_outputs - (t.radius + t.lead) % P::row_outputs) % P::row_outputs;
        CUtensorMap map{};
        std::int64_t lines = fir_rows_map<T, P>(in, t, delta, device, map);
        std::size_t bytes = fir_rows_floats<P>(t, lines > 0 ? P::row_stages : 1) * sizeof(float);
        if (lines > 0 && bytes > static_cast<std::size_t>(limit)) {  // the lanes stage, in one tile per warp
            lines = 0;
            bytes = fir_rows_floats<P>(t, 1) * sizeof(float);
        }
        if (bytes > static_cast<std::size_t>(limit)) return false;
        check_cuda(cudaFuncSetAttribute(fir_rows<T, U, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)),
                   "cudaFuncSetAttribute (fir_rows)");
        const std::int64_t rows = fir_warps * (lines > 0 ? P::row_rows : 1);  // per block
        const dim3 grid(grid_dim(w, 32 * P::row_outputs),
                        static_cast<unsigned>(std::min(max_grid_y, (h + rows - 1) / rows)));
        fir_rows<T, U, P><<<grid, fir_threads, bytes, s>>>(map, delta, lines, in.data(), in.stride(), out.data(),
                                                           out.stride(), w, h, t);
        check_launch("Gaussian fir_rows");
    }
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
        if (fir_axis<T, U>(in, out, plan, axis, s)) return;
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
    // The line's tiles start at its first sample; the padded shape serves the neighbours read
    // across its ends. A line of one sample continues it in every mode but constant.
    const border_mode mode = n == 1 && plan.mode != border_mode::constant ? border_mode::nearest : plan.mode;
    const deriche_params p = make_deriche_params(plan.deriche, n, mode, plan.pad);
    const std::int64_t tiles = p.tiles, plane = tiles * lines;
    const line_shape g{n, chunk, chunk + tiles * h_tile + chunk, mode, plan.cval};
    stream_buffer states(static_cast<std::size_t>(2 * plane) * sizeof(state), s, scratch_what);
    state* const causal = states.as<state>();
    state* const anticausal = causal + plane;
    // The tiles the output kernels run without the line's end: all of them where it ends a tile.
    const bool cut = n % h_tile != 0;
    const auto hot = static_cast<unsigned>(cut ? tiles - 1 : tiles);
    const dim3 block(tile_lines, tile_chunks), fixup_grid(grid_dim(lines, 128), 2);
    if (axis == 0) {
        const unsigned blocks = grid_dim(w, tile_lines);
        columns_states<T><<<dim3(blocks, static_cast<unsigned>(tiles)), block, 0, s>>>(in.data(), in.stride(), w, g,
                                                                                    p, causal);
        check_launch("Gaussian columns_states");
        columns_fixup<T><<<fixup_grid, 128, 0, s>>>(in.data(), in.stride(), w, g, p, causal);
        check_launch("Gaussian columns_fixup");
        if (hot > 0)
            columns_output<T, U, false><<<dim3(blocks, hot), block, 0, s>>>(in.data(), in.stride(), out.data(),
                                                                            out.stride(), w, g, p, causal, anticausal);
        if (cut)
            columns_output<T, U, true><<<dim3(blocks, 1), block, 0, s>>>(in.data(), in.stride(), out.data(),
                                                                         out.stride(), w, g, p, causal, anticausal);
        check_launch("Gaussian columns_output");
    } else {
        const unsigned blocks = grid_dim(h, tile_lines);
        rows_states<T><<<dim3(static_cast<unsigned>(tiles), blocks), block, 0, s>>>(in.data(), in.stride(), h, g, p,
                                                                                 causal);
        check_launch("Gaussian rows_states");
        rows_fixup<T><<<fixup_grid, 128, 0, s>>>(in.data(), in.stride(), h, g, p, causal);
        check_launch("Gaussian rows_fixup");
        if (hot > 0)
            rows_output<T, U, false><<<dim3(hot, blocks), block, 0, s>>>(in.data(), in.stride(), out.data(),
                                                                         out.stride(), h, g, p, causal, anticausal);
        if (cut)
            rows_output<T, U, true><<<dim3(1, blocks), block, 0, s>>>(in.data(), in.stride(), out.data(),
                                                                      out.stride(), h, g, p, causal, anticausal);
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
    // Rows 128-byte aligned, so that the row pass can take them by bulk copy (fir_rows).
    const std::int64_t mid_stride = (in.width() + 31) / 32 * 32;
    stream_buffer between(static_cast<std::size_t>(mid_stride * in.height()) * sizeof(float), s, scratch_what);
    const device_view<float> mid(between.as<float>(), in.width(), in.height(), mid_stride);
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
