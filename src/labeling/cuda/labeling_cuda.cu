// CUDA labelling: union-find over horizontal runs with minimum-index roots, for equal-value input
// and both connectivities (the run-based relative of Playne & Hawick 2018 / Allegretti et al. 2019).
//
// Rows are cut into 32-pixel segments, one warp lane per pixel. A run is a maximal stretch of
// equal non-background pixels inside a segment; its first pixel is the run's node, and a pixel
// finds its node with one ballot (the segment's run starts) and a count of leading zeros. Only
// nodes take part in the union-find, whose forest lives in the output at the nodes' element
// indices y * stride + x: a dense image has one node per run instead of one per pixel. A root is
// always the smallest index of its tree, so a component's root is its first pixel in raster
// order (a component's first pixel starts a run); consecutive labels are 1 + the number of
// roots before it in raster order: per segment a root mask and its count, an exclusive scan of
// the counts (CUB) - no sort, no host round trip.
//
// Unions: a pixel unites with its earlier neighbours (left across a segment edge, up, up-left,
// up-right) unless the pair is already joined through pairs united elsewhere: up is skipped
// when left and up-left share the value (the pair left/up-left covers it), the diagonals when
// an edge neighbour shares the value. On all-ones images that leaves one union per segment.
//
//   1. tile_merge: a 128x32 tile unites its runs in shared memory (path halving) and writes each
//      node's local root as a global index, and per segment the node and foreground masks.
//   2. tile_border_merge: pixels on tile borders unite with neighbours in other tiles.
//   3. compress_count: every node points straight at its root; each segment stores its root
//      mask and root count.
//   4. the counts are scanned; finalise: every pixel takes its node's root's label, computed
//      from the scanned count and the mask of the root's segment; background 0.
// Passes 3 and 4 read the segment masks, not the input: 8 bytes per 32 pixels. They and the
// statistics are relabel() (relabel.cuh), which the seed paper's tile merge (tile_merge.cu) shares.
// Indices (and so the forest) are int while the output's elements fit them and the output is
// int32 (the fast path); long long otherwise, in the output when it is int64, else in a scratch
// int64 image (the int32 output is then written by finalise once N is known to fit).
// Statistics (optional): one more pass over the labels, lanes of a warp aggregating runs of one
// label with warp-level reductions before global atomics, into device arrays; min_row and value
// come from the roots (a component's first pixel).
#include "labeling/cuda/labeling_cuda.hpp"

#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include <math_constants.h>

#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"
#include "labeling/cuda/relabel.cuh"

namespace granula::cuda {
namespace {

using granula::detail::check_cuda;
using granula::detail::check_launch;
using granula::detail::stream_buffer;
using granula::detail::to_cuda;

constexpr const char* scratch_what = "cudaMallocAsync (labelling scratch)";
constexpr unsigned full_mask = 0xffffffffu;

constexpr int tile_segments = 4, tile_w = 32 * tile_segments, tile_h = 32;  // 128x32 pixels
// 32 warps per tile, four segments each: more warps to hide the shared-memory union-find latency
// (H200, 8192^2, 8-connectivity, against 8 warps: d50 g1 22.6 -> 25.8 Gpx/s, d70 g1 22.4 -> 25.4,
// d30 g1 29.3 -> 33.7; all ones 52.1 -> 49.0; slower: 4 or 16 warps, and 64x32, 128x16, 64x64
// tiles with 8 warps, 64x16 with 4).
constexpr int merge_warps = 32;
constexpr int warps_per_block = 8, segments_per_warp = 8;  // the raster passes

// The lane of the run start at or before `lane` in a segment whose run starts are `starts`
// (`lane` must be a foreground pixel, so such a start exists).
__device__ __forceinline__ int node_lane(unsigned starts, int lane) {
    return 31 - __clz(starts & (full_mask >> (31 - lane)));
}

// Root of i with path halving. Plain stores suffice: a pointer only ever moves to an ancestor,
// and a non-root is never linked again (a union that finds its root gone retries), so a
// halving store can only lose another halving's shorter step, never a link.
__device__ __forceinline__ int find_shared(int* parent, int i) {
    int p = parent[i];
    while (p != i) {
        const int grand = parent[p];
        if (grand != p) parent[i] = grand;
        i = p;
        p = grand;
    }
    return i;
}

// Unites the trees of a and b under the smaller root (shared memory).
__device__ void unite_shared(int* parent, int a, int b) {
    while (true) {
        a = find_shared(parent, a);
        b = find_shared(parent, b);
        if (a == b) return;
        if (a > b) {
            const int t = a;
            a = b;
            b = t;
        }
        const int old = atomicMin(&parent[b], a);
        if (old == b) return;
        b = old;  // b was linked elsewhere in the meantime: unite from its new parent
    }
}

// Root of i with path halving: every pointer only ever moves to an ancestor (atomicMin), so
// halving is safe while other threads unite or halve the same tree.
template <class L>
__device__ __forceinline__ L find_global(L* label, L i) {
    L parent = __ldcg(label + i);
    while (parent != i) {
        const L grand = __ldcg(label + parent);
        if (grand != parent) atomicMin(label + i, grand);
        i = parent;
        parent = grand;
    }
    return i;
}

template <class L>
__device__ void unite_global(L* label, L a, L b) {
    while (true) {
        a = find_global(label, a);
        b = find_global(label, b);
        if (a == b) return;
        if (a > b) {
            const L t = a;
            a = b;
            b = t;
        }
        const L old = atomicMin(&label[b], a);
        if (old == b) return;
        b = old;
    }
}

template <class T>
__device__ __forceinline__ T shuffle_left(T v) {
    return static_cast<T>(__shfl_up_sync(full_mask, static_cast<unsigned>(v), 1));
}

// Tiles are numbered along x (one grid dimension: gridDim.y would cap the height at 65535 tiles).
// Warp w handles the segments k = w + merge_warps * i of the tile, k = row * tile_segments + column.
template <class T, class L>
__global__ void __launch_bounds__(32 * merge_warps)
    tile_merge(const T* __restrict__ in, std::int64_t in_stride, L* __restrict__ out, L out_stride, int width,
               int height, T background, bool eight, int tiles_x, int segments_per_row,
               unsigned* __restrict__ node_masks, unsigned* __restrict__ fg_masks) {
    constexpr int per_warp = tile_h * tile_segments / merge_warps;
    __shared__ int parent[tile_w * tile_h];
    __shared__ T value[tile_w * tile_h];
    __shared__ unsigned starts[tile_h * tile_segments];
    const int x0 = (blockIdx.x % tiles_x) * tile_w, y0 = (blockIdx.x / tiles_x) * tile_h;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T v[per_warp];
#pragma unroll
    for (int i = 0; i < per_warp; ++i) {
        const int k = warp + merge_warps * i;
        const int x = x0 + (k % tile_segments) * 32 + lane, y = y0 + k / tile_segments;
        v[i] = x < width && y < height ? in[y * in_stride + x] : background;
    }
#pragma unroll
    for (int i = 0; i < per_warp; ++i) {
        const int k = warp + merge_warps * i;
        const int li = (k / tile_segments) * tile_w + (k % tile_segments) * 32 + lane;
        value[li] = v[i];
        parent[li] = li;
        const T left = shuffle_left(v[i]);
        const unsigned s = __ballot_sync(full_mask, v[i] != background && (lane == 0 || left != v[i]));
        const unsigned fg = __ballot_sync(full_mask, v[i] != background);
        const int x = x0 + (k % tile_segments) * 32, y = y0 + k / tile_segments;
        if (lane == 0) {
            starts[k] = s;
            if (x < width && y < height) {
                node_masks[y * segments_per_row + x / 32] = s;
                fg_masks[y * segments_per_row + x / 32] = fg;
            }
        }
    }
    __syncthreads();
    // Node (shared index) of the foreground pixel (lx, ly) of the tile.
    auto node = [&](int lx, int ly) {
        return ly * tile_w + (lx & ~31) + node_lane(starts[ly * tile_segments + lx / 32], lx & 31);
    };
#pragma unroll 4
    for (int i = 0; i < per_warp; ++i) {
        const int k = warp + merge_warps * i;
        const int lx = (k % tile_segments) * 32 + lane, ly = k / tile_segments, li = ly * tile_w + lx;
        const T p = value[li];
        if (p == background) continue;
        const bool has_left = lx > 0, has_up = ly > 0, has_right = lx + 1 < tile_w;
        const bool l = has_left && value[li - 1] == p, u = has_up && value[li - tile_w] == p;
        const bool ul = has_left && has_up && value[li - tile_w - 1] == p;
        const bool ur = has_right && has_up && value[li - tile_w + 1] == p;
        const bool r = has_right && value[li + 1] == p;
        const bool up_union = u && !(l && ul);
        const bool ul_union = eight && ul && !l && !u, ur_union = eight && ur && !u && !r;
        if (!(up_union || ul_union || ur_union || (lane == 0 && l))) continue;
        const int me = node(lx, ly);
        if (lane == 0 && l) unite_shared(parent, me, node(lx - 1, ly));
        if (up_union) unite_shared(parent, me, node(lx, ly - 1));
        if (ul_union) unite_shared(parent, me, node(lx - 1, ly - 1));
        if (ur_union) unite_shared(parent, me, node(lx + 1, ly - 1));
    }
    __syncthreads();
#pragma unroll 4
    for (int i = 0; i < per_warp; ++i) {
        const int k = warp + merge_warps * i;
        if (!((starts[k] >> lane) & 1u)) continue;
        const int lx = (k % tile_segments) * 32 + lane, ly = k / tile_segments;
        const int r = find_shared(parent, ly * tile_w + lx);
        out[(y0 + ly) * out_stride + x0 + lx] = (y0 + r / tile_w) * out_stride + x0 + r % tile_w;
    }
}

// One thread per tile-border pixel: the top row unites upwards (up-left, up, up-right) and, at
// the left edge, leftwards; the left column (below the top row) leftwards (left, up-left); the
// right column up-right: every neighbour pair that crosses a tile edge is looked at once. The
// skips assume only pairs inside tiles (all joined by tile_merge) and pairs covered earlier in
// the same edge (the left neighbour's on a top row, the row above's on a left column), so no
// two pairs skip each other.
template <class T, class L>
__global__ void tile_border_merge(const T* __restrict__ in, std::int64_t in_stride, L* out, L out_stride,
                                  int width, int height, T background, bool eight, int tiles_x, int tiles_total) {
    constexpr int per_tile = tile_w + 2 * (tile_h - 1);
    const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= static_cast<std::int64_t>(tiles_total) * per_tile) return;
    const int tile = static_cast<int>(t / per_tile), k = static_cast<int>(t % per_tile);
    int lx, ly;
    if (k < tile_w) {
        lx = k, ly = 0;
    } else if (k < tile_w + tile_h - 1) {
        lx = 0, ly = k - tile_w + 1;
    } else {
        lx = tile_w - 1, ly = k - tile_w - tile_h + 2;
    }
    const int x = (tile % tiles_x) * tile_w + lx, y = (tile / tiles_x) * tile_h + ly;
    if (x >= width || y >= height) return;
    const T v = in[y * in_stride + x];
    if (v == background) return;
    auto same = [&](int nx, int ny) {
        return nx >= 0 && nx < width && ny >= 0 && in[ny * in_stride + nx] == v;
    };
    // The node of a pixel of value v: the start of its run within its 32-pixel segment.
    auto node = [&](int nx, int ny) {
        while ((nx & 31) != 0 && in[ny * in_stride + nx - 1] == v) --nx;
        return ny * out_stride + nx;  // an L
    };
    const bool l = same(x - 1, y), u = same(x, y - 1), ul = same(x - 1, y - 1);
    const bool ur = same(x + 1, y - 1), r = same(x + 1, y);
    auto unite = [&](int nx, int ny) { unite_global(out, node(x, y), node(nx, ny)); };
    if (ly == 0) {
        if (u && !(lx > 0 && l && ul)) unite(x, y - 1);
        if (lx == 0 && l) unite(x - 1, y);
    } else if (lx == 0 && l && !(u && ul)) {
        unite(x - 1, y);
    }
    if (eight && (ly == 0 || lx == 0) && ul && !l && !u) unite(x - 1, y - 1);
    if (eight && (ly == 0 || lx == tile_w - 1) && ur && !u && !r) unite(x + 1, y - 1);
}

// The raster passes: one warp per segments_per_warp consecutive segments in raster order, which
// read the segments' node and foreground masks (from tile_merge) instead of the input.
template <class F>
__device__ __forceinline__ void for_segments(int segments, const unsigned* __restrict__ node_masks,
                                             const unsigned* __restrict__ fg_masks, F&& f) {
    const int first = (blockIdx.x * warps_per_block + threadIdx.x / 32) * segments_per_warp, lane = threadIdx.x % 32;
    const bool loads = lane < segments_per_warp && first + lane < segments;
    const unsigned nodes = loads ? node_masks[first + lane] : 0u, fg = loads && fg_masks ? fg_masks[first + lane] : 0u;
#pragma unroll
    for (int i = 0; i < segments_per_warp; ++i) {
        if (first + i >= segments) return;  // the same for the whole warp
        f(first + i, __shfl_sync(full_mask, nodes, i), __shfl_sync(full_mask, fg, i));
    }
}

template <class L>
__global__ void __launch_bounds__(32 * warps_per_block)
    compress_count(L* out, L out_stride, int segments_per_row, int segments,
                   const unsigned* __restrict__ node_masks, unsigned* __restrict__ root_masks,
                   L* __restrict__ counts) {
    const int lane = threadIdx.x % 32;
    for_segments(segments, node_masks, nullptr, [&](int segment, unsigned nodes, unsigned) {
        bool root = false;
        if ((nodes >> lane) & 1u) {
            const L p = (segment / segments_per_row) * out_stride + (segment % segments_per_row) * 32 + lane;
            const L r = find_global(out, p);
            root = r == p;
            if (!root) out[p] = r;  // r is the tree's minimum: no concurrent halving goes below it
        }
        const unsigned mask = __ballot_sync(full_mask, root);
        if (lane == 0) {
            root_masks[segment] = mask;
            counts[segment] = __popc(mask);
        }
    });
}

// Every pixel takes its node's label. A node reads only its own forest entry, which no other
// warp reads any more, so the labels may overwrite the forest in place (out == forest).
template <class L, class O>
__global__ void __launch_bounds__(32 * warps_per_block)
    finalise(const L* forest, O* out, L out_stride, int width, int segments_per_row, int segments,
             const unsigned* __restrict__ node_masks, const unsigned* __restrict__ fg_masks,
             const unsigned* __restrict__ root_masks, const L* __restrict__ offsets) {
    // In place when the types match: one base address for the read and the write, as the compiler
    // cannot tell that the two pointers are equal.
    if constexpr (std::is_same_v<L, O>) forest = out;
    const int lane = threadIdx.x % 32;
    for_segments(segments, node_masks, fg_masks, [&](int segment, unsigned nodes, unsigned fg) {
        const int y = segment / segments_per_row, x = (segment % segments_per_row) * 32 + lane;
        L label = 0;
        if ((nodes >> lane) & 1u) {
            const L r = forest[y * out_stride + x];
            const L ry = r / out_stride, rx = r - ry * out_stride;
            const int rs = static_cast<int>(ry) * segments_per_row + static_cast<int>(rx) / 32;
            label = offsets[rs] + __popc(root_masks[rs] & ((1u << (rx & 31)) - 1u)) + 1;
        }
        const bool is_fg = (fg >> lane) & 1u;
        label = __shfl_sync(full_mask, label, is_fg ? node_lane(nodes, lane) : lane);
        if (x < width) out[y * out_stride + x] = is_fg ? static_cast<O>(label) : 0;
    });
}

template <class L>
__global__ void total_count(const L* counts, const L* offsets, int n, L* total) {
    *total = offsets[n - 1] + counts[n - 1];
}

// ---- statistics ----------------------------------------------------------------------------------
// The device arrays of device_region_statistics; sum_row/sum_col hold the coordinate sums until
// finish_stats turns them into the centroids in place.
struct device_stats {
    unsigned long long *area, *sum_row, *sum_col;
    long long *min_row, *min_col, *max_row, *max_col;
    unsigned* value;
};

device_stats stats_arrays(const device_region_statistics& st) {
    return {reinterpret_cast<unsigned long long*>(st.area()), reinterpret_cast<unsigned long long*>(st.centroid_row()),
            reinterpret_cast<unsigned long long*>(st.centroid_col()), reinterpret_cast<long long*>(st.min_row()),
            reinterpret_cast<long long*>(st.min_col()), reinterpret_cast<long long*>(st.max_row()),
            reinterpret_cast<long long*>(st.max_col()), st.value()};
}

constexpr int stats_run = 64;  // pixels per lane: a warp flushes a large component once per 2048 pixels

// A component's first pixel is its root: its row is min_row and its pixel the value, written
// here once per component instead of by atomics in every flush.
template <class T, class L>
__global__ void __launch_bounds__(32 * warps_per_block)
    root_stats(const T* __restrict__ in, std::int64_t in_stride, int segments_per_row, int segments,
               const unsigned* __restrict__ root_masks, const L* __restrict__ offsets, device_stats s) {
    const int lane = threadIdx.x % 32;
    for_segments(segments, root_masks, nullptr, [&](int segment, unsigned roots, unsigned) {
        if (!((roots >> lane) & 1u)) return;
        const int y = segment / segments_per_row, x = (segment % segments_per_row) * 32 + lane;
        const L c = offsets[segment] + __popc(roots & ((1u << lane) - 1u));
        s.min_row[c] = y;
        s.value[c] = in[y * in_stride + x];
    });
}

// Adds one lane's run (label l, `n` pixels in row y from x0 to x1 inclusive, column sum
// `col_sum` relative to the warp's first column x_warp) to the statistics, first reducing over
// the lanes of the warp that flush the same label at the same step. Relative column sums stay
// under 2^22, so the 32-bit warp reductions cannot overflow.
template <class O>
__device__ void flush(const device_stats& s, unsigned active, O l, unsigned n, int y, int x0, int x1,
                      unsigned col_sum, int x_warp) {
    const unsigned group = __match_any_sync(active, l);
    const unsigned area = __reduce_add_sync(group, n);
    const unsigned long long cols =
        __reduce_add_sync(group, col_sum) + static_cast<unsigned long long>(area) * static_cast<unsigned>(x_warp);
    const int lo = static_cast<int>(__reduce_min_sync(group, static_cast<unsigned>(x0)));
    const int hi = static_cast<int>(__reduce_max_sync(group, static_cast<unsigned>(x1)));
    if ((__ffs(group) - 1) != static_cast<int>(threadIdx.x % 32)) return;
    const O c = l - 1;
    atomicAdd(s.area + c, static_cast<unsigned long long>(area));
    atomicAdd(s.sum_row + c, static_cast<unsigned long long>(area) * y);
    atomicAdd(s.sum_col + c, cols);
    atomicMax(s.max_row + c, static_cast<long long>(y) + 1);
    atomicMin(s.min_col + c, static_cast<long long>(lo));
    atomicMax(s.max_col + c, static_cast<long long>(hi) + 1);
}

// Each lane walks stats_run pixels of a row in lock step with its warp. Background pixels do not
// end a lane's run: only another label does, so a sparse large component is flushed rarely.
// O: the labels' type, L: the index type.
template <class O, class L>
__global__ void accumulate_stats(const O* __restrict__ labels, L out_stride, int width, int blocks_per_row,
                                 device_stats s) {
    const int y = blockIdx.x / blocks_per_row;
    const int x_block = (blockIdx.x % blocks_per_row) * blockDim.x * stats_run;
    const int x_begin = x_block + threadIdx.x * stats_run;
    const int x_warp = x_block + (threadIdx.x / 32) * 32 * stats_run;
    O current = 0;
    int first = 0, last = 0;
    unsigned n = 0, col_sum = 0;
    for (int i = 0; i < stats_run; ++i) {
        const int x = x_begin + i;
        const O l = x < width ? labels[y * out_stride + x] : 0;
        const bool change = l > 0 && l != current;
        const unsigned flushing = __ballot_sync(full_mask, change && current > 0);
        if (change && current > 0) flush(s, flushing, current, n, y, first, last, col_sum, x_warp);
        if (change) current = l, first = x, n = 0, col_sum = 0;
        if (l > 0) ++n, col_sum += static_cast<unsigned>(x - x_warp), last = x;
    }
    const unsigned flushing = __ballot_sync(full_mask, current > 0);
    if (current > 0) flush(s, flushing, current, n, y, first, last, col_sum, x_warp);
}

// min_row and value come from root_stats.
__global__ void init_stats(device_stats s, std::int64_t n) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= n) return;
    s.area[c] = s.sum_row[c] = s.sum_col[c] = 0;
    s.min_col[c] = 0x7fffffffffffffffll;
    s.max_row[c] = s.max_col[c] = -1;
}

// Centroid = coordinate sum / area, in double like the CPU backend (sums below 2^53 are exact).
__global__ void finish_stats(device_stats s, std::int64_t n) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const double area = static_cast<double>(s.area[c]);
    reinterpret_cast<double*>(s.sum_row)[c] = static_cast<double>(s.sum_row[c]) / area;
    reinterpret_cast<double*>(s.sum_col)[c] = static_cast<double>(s.sum_col[c]) / area;
}

// ---- intensity statistics ------------------------------------------------------------------------
// Doubles as unsigned keys in the same order, for 64-bit atomicMin/atomicMax: a positive
// number's sign bit set, a negative one's bits flipped.
__device__ __forceinline__ unsigned long long order_key(double d) {
    const auto b = static_cast<unsigned long long>(__double_as_longlong(d));
    return (b >> 63) ? ~b : b | (1ull << 63);
}
__device__ __forceinline__ double from_order_key(unsigned long long k) {
    return __longlong_as_double(static_cast<long long>((k >> 63) ? k & ~(1ull << 63) : ~k));
}

struct intensity_arrays {
    double* sum;  // becomes the mean
    unsigned long long *lo, *hi;  // keys, become min and max
    std::int64_t n;
    int* bad_label;  // set when a label exceeds n
};

__global__ void init_intensity(intensity_arrays a) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= a.n) return;
    a.sum[c] = 0;
    a.lo[c] = order_key(__longlong_as_double(0x7ff0000000000000ll));   // +inf
    a.hi[c] = order_key(__longlong_as_double(static_cast<long long>(0xfff0000000000000ull)));  // -inf
}

// As accumulate_stats: each lane walks stats_run pixels of a row and adds its run of one label
// (background does not end it) with one atomic per field. NaN pixels enter the sum (the mean is
// NaN, as on the CPU) and are skipped by min and max.
template <class T, class L>
__global__ void accumulate_intensity(const L* __restrict__ labels, std::int64_t label_stride,
                                     const T* __restrict__ in, std::int64_t in_stride, int width, int blocks_per_row,
                                     intensity_arrays a) {
    const int y = blockIdx.x / blocks_per_row;
    const int x_begin = (blockIdx.x % blocks_per_row) * blockDim.x * stats_run + threadIdx.x * stats_run;
    L current = 0;
    double sum = 0, lo = CUDART_INF, hi = -CUDART_INF;
    auto flush = [&] {
        if (current <= 0) return;
        if (current > a.n) {
            *a.bad_label = 1;
            return;
        }
        atomicAdd(a.sum + current - 1, sum);
        if (lo <= hi) {
            atomicMin(a.lo + current - 1, order_key(lo));
            atomicMax(a.hi + current - 1, order_key(hi));
        }
    };
    for (int i = 0; i < stats_run; ++i) {
        const int x = x_begin + i;
        const L l = x < width ? labels[static_cast<std::int64_t>(y) * label_stride + x] : 0;
        if (l <= 0) continue;
        if (l != current) {
            flush();
            current = l, sum = 0, lo = CUDART_INF, hi = -CUDART_INF;
        }
        const double d = static_cast<double>(in[y * in_stride + x]);
        sum += d;
        if (!isnan(d)) lo = fmin(lo, d), hi = fmax(hi, d);
    }
    flush();
}

__global__ void finish_intensity(intensity_arrays a, const std::int64_t* __restrict__ area) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= a.n) return;
    a.sum[c] /= static_cast<double>(area[c]);
    reinterpret_cast<double*>(a.lo)[c] = from_order_key(a.lo[c]);
    reinterpret_cast<double*>(a.hi)[c] = from_order_key(a.hi[c]);
}

}  // namespace

template <class T, class L>
void intensity_statistics(device_view<const L> labels, device_view<const T> intensity,
                          device_region_statistics& statistics, stream st) {
    const cudaStream_t s = to_cuda(st.native_handle());
    const std::int64_t n = statistics.size();
    const std::size_t room = static_cast<std::size_t>(n > 0 ? n : 1);
    auto memory = std::make_shared<stream_buffer>(3 * room * sizeof(double), s, "cudaMallocAsync (intensity statistics)");
    stream_buffer flag(sizeof(int), s, scratch_what);
    double* mean = memory->as<double>();
    const intensity_arrays a{mean, reinterpret_cast<unsigned long long*>(mean + room),
                             reinterpret_cast<unsigned long long*>(mean + 2 * room), n, flag.as<int>()};
    check_cuda(cudaMemsetAsync(a.bad_label, 0, sizeof(int), s), "cudaMemsetAsync (intensity statistics)");
    const int width = static_cast<int>(labels.width()), height = static_cast<int>(labels.height());
    const auto component_blocks = static_cast<unsigned>((room + 255) / 256);
    init_intensity<<<component_blocks, 256, 0, s>>>(a);
    check_launch("init_intensity");
    const int blocks_per_row = (width + 128 * stats_run - 1) / (128 * stats_run);
    accumulate_intensity<T><<<static_cast<unsigned>(blocks_per_row) * height, 128, 0, s>>>(
        labels.data(), labels.stride(), intensity.data(), intensity.stride(), width, blocks_per_row, a);
    check_launch("accumulate_intensity");
    finish_intensity<<<component_blocks, 256, 0, s>>>(a, statistics.area());
    check_launch("finish_intensity");
    int bad = 0;
    check_cuda(cudaMemcpyAsync(&bad, a.bad_label, sizeof(int), cudaMemcpyDeviceToHost, s),
               "cudaMemcpyAsync (intensity statistics check)");
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (intensity statistics)");
    if (bad)
        throw invalid_argument("intensity_statistics: a label exceeds the statistics' " + std::to_string(n) +
                               " components");
    statistics.set_intensity(std::shared_ptr<void>(memory, memory->as<void>()));
}

template <class L>
segment_scratch<L>::segment_scratch(int width, int height, cudaStream_t s)
    : segments_per_row_((width + 31) / 32), segments_(segments_per_row_ * height) {
    check_cuda(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes_, static_cast<L*>(nullptr), static_cast<L*>(nullptr),
                                             segments_, s),
               "cub::DeviceScan::ExclusiveSum (size)");
    // Per segment: node, foreground and root masks, root count and its exclusive scan.
    const auto n = static_cast<std::size_t>(segments_);
    buffer_ = stream_buffer((3 * sizeof(unsigned) + 2 * sizeof(L)) * n + 2 * sizeof(L) + scan_bytes_ + 256, s,
                            scratch_what);
    counts_ = buffer_.as<L>();
    offsets_ = counts_ + segments_;
    node_masks_ = reinterpret_cast<unsigned*>(offsets_ + segments_);
    fg_masks_ = node_masks_ + segments_;
    root_masks_ = fg_masks_ + segments_;
    // The count after the masks, aligned for L.
    total_ = reinterpret_cast<L*>((reinterpret_cast<std::uintptr_t>(root_masks_ + segments_) + sizeof(L) - 1) &
                                  ~std::uintptr_t{sizeof(L) - 1});
    scan_temp_ = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(total_ + 1) + 255) & ~std::uintptr_t{255});
}

template <class T, class L, class O>
std::int64_t relabel(device_view<const T> in, O* out, L* forest, L out_stride, segment_scratch<L>& scratch,
                     device_region_statistics* statistics, cudaStream_t s) {
    const int width = static_cast<int>(in.width()), height = static_cast<int>(in.height());
    const std::int64_t in_stride = in.stride();
    const int segments_per_row = scratch.segments_per_row_, segments = scratch.segments_;
    const unsigned *node_masks = scratch.node_masks_, *fg_masks = scratch.fg_masks_;
    unsigned* root_masks = scratch.root_masks_;
    L *counts = scratch.counts_, *offsets = scratch.offsets_, *total = scratch.total_;

    const int raster_blocks =
        (segments + warps_per_block * segments_per_warp - 1) / (warps_per_block * segments_per_warp);
    compress_count<<<raster_blocks, 32 * warps_per_block, 0, s>>>(forest, out_stride, segments_per_row, segments,
                                                                  node_masks, root_masks, counts);
    check_launch("compress_count");
    check_cuda(cub::DeviceScan::ExclusiveSum(scratch.scan_temp_, scratch.scan_bytes_, counts, offsets, segments, s),
               "cub::DeviceScan::ExclusiveSum");
    auto labels_out = [&] {
        finalise<<<raster_blocks, 32 * warps_per_block, 0, s>>>(forest, out, out_stride, width, segments_per_row,
                                                                segments, node_masks, fg_masks, root_masks, offsets);
        check_launch("finalise");
    };
    auto read_count = [&] {
        total_count<<<1, 1, 0, s>>>(counts, offsets, segments, total);
        check_launch("total_count");
        L n = 0;
        check_cuda(cudaMemcpyAsync(&n, total, sizeof(L), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (count)");
        check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (count)");
        return static_cast<std::int64_t>(n);
    };
    std::int64_t n = 0;
    if constexpr (sizeof(O) < sizeof(L)) {
        // The count first: a label past int32 must not be written at all.
        n = read_count();
        if (n > std::numeric_limits<O>::max())
            throw unsupported("label: this image has " + std::to_string(n) +
                              " components, more than int32 labels hold (2^31 - 1); use int64 labels");
        labels_out();
    } else {
        labels_out();
        n = read_count();
    }

    if (statistics) {
        // At least one component's room, so the arrays have addresses even when there are none.
        const std::size_t room = static_cast<std::size_t>(n > 0 ? n : 1) * device_region_statistics::bytes_per_component;
        auto memory = std::make_shared<stream_buffer>(room, s, "cudaMallocAsync (statistics)");
        *statistics = device_region_statistics(std::shared_ptr<void>(memory, memory->as<void>()), n);
        if (n > 0) {
            const device_stats d = stats_arrays(*statistics);
            const auto component_blocks = static_cast<unsigned>((n + 255) / 256);
            init_stats<<<component_blocks, 256, 0, s>>>(d, n);
            check_launch("init_stats");
            root_stats<T><<<raster_blocks, 32 * warps_per_block, 0, s>>>(in.data(), in_stride, segments_per_row,
                                                                         segments, root_masks, offsets, d);
            check_launch("root_stats");
            const int blocks_per_row = (width + 128 * stats_run - 1) / (128 * stats_run);
            accumulate_stats<<<blocks_per_row * height, 128, 0, s>>>(out, out_stride, width, blocks_per_row, d);
            check_launch("accumulate_stats");
            finish_stats<<<component_blocks, 256, 0, s>>>(d, n);
            check_launch("finish_stats");
        }
    }
    return n;
}

namespace {

// Labels into `out` (O: int or long long) with indices and forest of type L in `forest` (the
// output itself, or a scratch image of the output's stride when O is narrower than L).
template <class T, class L, class O>
std::int64_t label_with(device_view<const T> in, O* out, L* forest, L out_stride, int connectivity, T background,
                        device_region_statistics* statistics, cudaStream_t s) {
    const int width = static_cast<int>(in.width()), height = static_cast<int>(in.height());
    const std::int64_t in_stride = in.stride();
    const bool eight = connectivity == 2;
    segment_scratch<L> scratch(width, height, s);

    const int tiles_x = (width + tile_w - 1) / tile_w, tiles_y = (height + tile_h - 1) / tile_h;
    const int tiles_total = tiles_x * tiles_y;
    tile_merge<T><<<tiles_total, 32 * merge_warps, 0, s>>>(in.data(), in_stride, forest, out_stride, width, height,
                                                          background, eight, tiles_x, scratch.segments_per_row(),
                                                          scratch.node_masks(), scratch.fg_masks());
    check_launch("tile_merge");
    const std::int64_t border_threads = static_cast<std::int64_t>(tiles_total) * (tile_w + 2 * (tile_h - 1));
    tile_border_merge<T><<<static_cast<unsigned>((border_threads + 255) / 256), 256, 0, s>>>(
        in.data(), in_stride, forest, out_stride, width, height, background, eight, tiles_x, tiles_total);
    check_launch("tile_border_merge");
    return relabel<T>(in, out, forest, out_stride, scratch, statistics, s);
}

}  // namespace

template <class T, class L>
std::int64_t label(device_view<const T> in, device_view<L> out, int connectivity, T background,
                   device_region_statistics* statistics, stream st) {
    const cudaStream_t s = to_cuda(st.native_handle());
    const std::int64_t elements = out.stride() * out.height();
    if ((in.width() + 31) / 32 * in.height() > std::numeric_limits<int>::max())
        throw unsupported("label: the CUDA backend labels images of fewer than 2^31 32-pixel row segments (about "
                          "2^36 pixels); this one is " +
                          std::to_string(in.width()) + "x" + std::to_string(in.height()));
    if constexpr (std::is_same_v<L, std::int32_t>) {
        if (elements <= std::numeric_limits<int>::max())
            return label_with<T, int>(in, out.data(), out.data(), static_cast<int>(out.stride()), connectivity,
                                      background, statistics, s);
        // int64 indices in a scratch forest of the output's layout.
        stream_buffer forest(static_cast<std::size_t>(elements) * sizeof(long long), s, scratch_what);
        return label_with<T, long long>(in, out.data(), forest.as<long long>(), static_cast<long long>(out.stride()),
                                        connectivity, background, statistics, s);
    } else {
        long long* labels = reinterpret_cast<long long*>(out.data());  // the same 64-bit integers
        return label_with<T, long long>(in, labels, labels, static_cast<long long>(out.stride()), connectivity,
                                        background, statistics, s);
    }
}

#define GRANULA_INSTANTIATE(type, labels)                                                                      \
    template std::int64_t label(device_view<const type>, device_view<labels>, int, type, device_region_statistics*, \
                                stream);
#define GRANULA_INSTANTIATE_INTENSITY(type, labels)                                                            \
    template void intensity_statistics(device_view<const labels>, device_view<const type>,                      \
                                       device_region_statistics&, stream);
#define GRANULA_INSTANTIATE_ALL(labels)                 \
    GRANULA_INSTANTIATE(std::uint8_t, labels)           \
    GRANULA_INSTANTIATE(std::uint16_t, labels)          \
    GRANULA_INSTANTIATE(std::uint32_t, labels)          \
    GRANULA_INSTANTIATE_INTENSITY(std::uint8_t, labels) \
    GRANULA_INSTANTIATE_INTENSITY(std::uint16_t, labels) \
    GRANULA_INSTANTIATE_INTENSITY(float, labels)
GRANULA_INSTANTIATE_ALL(std::int32_t)
GRANULA_INSTANTIATE_ALL(std::int64_t)
// The tile merge (tile_merge.cu) relabels int forests into int labels.
template std::int64_t relabel(device_view<const std::uint8_t>, int*, int*, int, segment_scratch<int>&,
                              device_region_statistics*, cudaStream_t);
template std::int64_t relabel(device_view<const std::uint16_t>, int*, int*, int, segment_scratch<int>&,
                              device_region_statistics*, cudaStream_t);
template std::int64_t relabel(device_view<const std::uint32_t>, int*, int*, int, segment_scratch<int>&,
                              device_region_statistics*, cudaStream_t);
#undef GRANULA_INSTANTIATE_ALL
#undef GRANULA_INSTANTIATE_INTENSITY
#undef GRANULA_INSTANTIATE

}  // namespace granula::cuda
