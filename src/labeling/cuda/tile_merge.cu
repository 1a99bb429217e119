// CUDA labelling by the seed paper's tile merge (Stava & Benes 2011, "Connected Component
// Labeling in CUDA"), kept as its reference path (label_method::tile_merge) and generalised:
// any width, height and row stride instead of powers of two, 4- as well as 8-connectivity, and
// the consecutive labels and statistics of the default path through its relabel() instead of
// the paper's final flattening (its labels are the roots' addresses, not consecutive).
//
//   kernel 1 (local_labels): one thread per pixel of a 32x32 tile solves the tile in shared
//     memory: every iteration each pixel takes the smallest label of its equal neighbours,
//     lowers its root's entry to it with atomicMin, and jumps to its new root, until no pixel
//     sees a smaller label. The local roots go out as element indices y * stride + x.
//   kernel 2 (merge_tiles), once per level: one block merges 4x4 tiles (of the level below) by
//     the paper's Union (find both roots, atomicMin the larger one's entry to the smaller) over
//     the borders between them, repeated until a pass links nothing.
//   kernel 3 (flatten_borders), between levels: the border pixels of the merged tiles point
//     straight at their roots, so the next level's finds stay short.
// Every entry points at a smaller or equal index of its component, so a root is its tree's
// smallest index: after the last level each component's root is its first pixel in raster
// order, the forest relabel() takes (relabel.cuh). Tiles and groups at the right and bottom
// edges are clipped to the image, which is all the generalisation to any size needs.
#include "labeling/cuda/labeling_cuda.hpp"

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.cuh"
#include "labeling/cuda/relabel.cuh"

namespace granula::cuda {
namespace {

using granula::detail::check_launch;
using granula::detail::to_cuda;

constexpr unsigned full_mask = 0xffffffffu;
// A tile row is one 32-pixel segment of relabel(), so kernel 1 also writes the segment masks.
constexpr int tile = 32;
constexpr int group = 4;          // tiles merged per block and level along each axis (the paper's 4x4)
constexpr int border_lanes = 32;  // threads per tile in kernel 2, walking one border together

// The 8 neighbours; 4-connectivity uses the first 4.
__constant__ int neighbour_dx[8] = {-1, 1, 0, 0, -1, 1, -1, 1};
__constant__ int neighbour_dy[8] = {0, 0, -1, 1, -1, -1, 1, 1};

__device__ __forceinline__ int find_local(const int* parent, int i) {
    while (parent[i] != i) i = parent[i];
    return i;
}

template <class T>
__global__ void __launch_bounds__(tile * tile)
    local_labels(const T* __restrict__ in, std::int64_t in_stride, int* __restrict__ out, int out_stride, int width,
                 int height, T background, int neighbours, int tiles_x, int segments_per_row,
                 unsigned* __restrict__ node_masks, unsigned* __restrict__ fg_masks) {
    __shared__ T value[tile * tile];
    __shared__ int parent[tile * tile];
    __shared__ int changed;
    const int lx = threadIdx.x, ly = threadIdx.y, li = ly * tile + lx;
    const int x0 = (blockIdx.x % tiles_x) * tile, y0 = (blockIdx.x / tiles_x) * tile;
    const int x = x0 + lx, y = y0 + ly;
    const bool inside = x < width && y < height;
    const T v = inside ? in[y * in_stride + x] : background;
    const bool fg = v != background;
    value[li] = v;
    const T left = static_cast<T>(__shfl_up_sync(full_mask, static_cast<unsigned>(v), 1));
    const unsigned starts = __ballot_sync(full_mask, fg && (lx == 0 || left != v));
    const unsigned fgs = __ballot_sync(full_mask, fg);
    if (lx == 0 && inside) {
        node_masks[y * segments_per_row + x / 32] = starts;
        fg_masks[y * segments_per_row + x / 32] = fgs;
    }
    __syncthreads();
    // The values do not change: the equal neighbours inside the tile once, as a bit mask.
    unsigned equal = 0;
    for (int k = 0; fg && k < neighbours; ++k) {
        const int nx = lx + neighbour_dx[k], ny = ly + neighbour_dy[k];
        if (nx >= 0 && nx < tile && ny >= 0 && ny < tile && value[ny * tile + nx] == v) equal |= 1u << k;
    }
    int label = li;
    while (true) {
        parent[li] = label;
        if (li == 0) changed = 0;
        __syncthreads();
        int lowest = label;
        for (unsigned e = equal; e; e &= e - 1) {
            const int k = __ffs(e) - 1;
            lowest = min(lowest, parent[(ly + neighbour_dy[k]) * tile + lx + neighbour_dx[k]]);
        }
        __syncthreads();
        if (lowest < label) {
            atomicMin(&parent[label], lowest);
            changed = 1;
        }
        __syncthreads();
        if (!changed) break;
        label = find_local(parent, label);
        __syncthreads();
    }
    if (fg && inside) out[y * out_stride + x] = (y0 + label / tile) * out_stride + x0 + label % tile;
}

// The paper's FindRoot; L1 is bypassed because other blocks' links land in L2.
__device__ __forceinline__ int find_global(const int* labels, int i) {
    int p = __ldcg(labels + i);
    while (p != i) {
        i = p;
        p = __ldcg(labels + i);
    }
    return i;
}

// The paper's Union: true when a and b were in two trees. A link can overwrite another
// thread's link of the same root; the pass then links again, so its block repeats the pass.
__device__ __forceinline__ bool link(int* labels, int a, int b) {
    a = find_global(labels, a);
    b = find_global(labels, b);
    if (a == b) return false;
    atomicMin(labels + max(a, b), min(a, b));
    return true;
}

// Block = group x group tiles of side `sub` (clipped to the image), border_lanes threads per
// tile: a tile links its bottom row with the row below and its right column with the column to
// the right, as far as those lie in the block's group; pairs leaving the group are the next
// level's. Every neighbour pair across two tiles of the group is covered (corners twice).
template <class T>
__global__ void __launch_bounds__(border_lanes * group * group)
    merge_tiles(const T* __restrict__ in, std::int64_t in_stride, int* labels, int out_stride, int width, int height,
                T background, bool eight, std::int64_t sub, int groups_x) {
    __shared__ int changed;
    const int lane = threadIdx.x, i = threadIdx.y / group, j = threadIdx.y % group;
    const std::int64_t gx0 = (blockIdx.x % groups_x) * group * sub, gy0 = (blockIdx.x / groups_x) * group * sub;
    const int gx1 = static_cast<int>(std::min<std::int64_t>(gx0 + group * sub, width));
    const int gy1 = static_cast<int>(std::min<std::int64_t>(gy0 + group * sub, height));
    const int sx0 = static_cast<int>(std::min<std::int64_t>(gx0 + j * sub, gx1));
    const int sy0 = static_cast<int>(std::min<std::int64_t>(gy0 + i * sub, gy1));
    const int sx1 = static_cast<int>(std::min<std::int64_t>(sx0 + sub, gx1));
    const int sy1 = static_cast<int>(std::min<std::int64_t>(sy0 + sub, gy1));
    auto pixel = [&](int px, int py) { return in[py * in_stride + px]; };
    auto try_link = [&](int ax, int ay, int bx, int by, T v) {
        return pixel(bx, by) == v && link(labels, ay * out_stride + ax, by * out_stride + bx);
    };
    while (true) {
        if (threadIdx.x == 0 && threadIdx.y == 0) changed = 0;
        __syncthreads();
        bool linked = false;
        if (sy1 < gy1)
            for (int x = sx0 + lane, y = sy1 - 1; x < sx1; x += border_lanes) {
                const T v = pixel(x, y);
                if (v == background) continue;
                if (eight && x > gx0) linked |= try_link(x, y, x - 1, y + 1, v);
                linked |= try_link(x, y, x, y + 1, v);
                if (eight && x + 1 < gx1) linked |= try_link(x, y, x + 1, y + 1, v);
            }
        if (sx1 < gx1)
            for (int y = sy0 + lane, x = sx1 - 1; y < sy1; y += border_lanes) {
                const T v = pixel(x, y);
                if (v == background) continue;
                if (eight && y > gy0) linked |= try_link(x, y, x + 1, y - 1, v);
                linked |= try_link(x, y, x + 1, y, v);
                if (eight && y + 1 < gy1) linked |= try_link(x, y, x + 1, y + 1, v);
            }
        if (linked) changed = 1;
        __syncthreads();
        if (!changed) break;
        __syncthreads();  // everyone has read `changed` before it is cleared
    }
}

// One thread per pixel of the first and last row of every merged tile of side `side` (the
// first `row_threads` threads), then of its first and last column; background pixels (from the
// foreground masks) hold no entry.
__global__ void flatten_borders(int* labels, int out_stride, int width, int height, std::int64_t side,
                                std::int64_t row_threads, std::int64_t total, int segments_per_row,
                                const unsigned* __restrict__ fg_masks) {
    std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= total) return;
    std::int64_t x, y;
    if (t < row_threads) {
        const std::int64_t line = t / width;
        y = (line / 2) * side + (line % 2) * (side - 1), x = t % width;
    } else {
        t -= row_threads;
        const std::int64_t line = t / height;
        x = (line / 2) * side + (line % 2) * (side - 1), y = t % height;
    }
    if (x >= width || y >= height) return;
    if (!((fg_masks[y * segments_per_row + x / 32] >> (x % 32)) & 1u)) return;
    const int i = static_cast<int>(y) * out_stride + static_cast<int>(x);
    labels[i] = find_global(labels, i);
}

}  // namespace

template <class T>
std::int64_t label_tile_merge(device_view<const T> in, device_view<std::int32_t> out, int connectivity, T background,
                              device_region_statistics* statistics, stream st) {
    const cudaStream_t s = to_cuda(st.native_handle());
    const int width = static_cast<int>(in.width()), height = static_cast<int>(in.height());
    const int out_stride = static_cast<int>(out.stride());
    segment_scratch<int> scratch(width, height, s);

    const int tiles_x = (width + tile - 1) / tile, tiles_y = (height + tile - 1) / tile;
    local_labels<T><<<static_cast<unsigned>(tiles_x) * tiles_y, dim3(tile, tile), 0, s>>>(
        in.data(), in.stride(), out.data(), out_stride, width, height, background, connectivity == 2 ? 8 : 4, tiles_x,
        scratch.segments_per_row(), scratch.node_masks(), scratch.fg_masks());
    check_launch("local_labels");
    // Levels until one merged tile covers the image: 32, 128, 512, ... pixels on a side.
    for (std::int64_t sub = tile; sub < width || sub < height; sub *= group) {
        const std::int64_t side = sub * group;
        const std::int64_t groups_x = (width + side - 1) / side, groups_y = (height + side - 1) / side;
        merge_tiles<T><<<static_cast<unsigned>(groups_x * groups_y), dim3(border_lanes, group * group), 0, s>>>(
            in.data(), in.stride(), out.data(), out_stride, width, height, background, connectivity == 2, sub,
            static_cast<int>(groups_x));
        check_launch("merge_tiles");
        if (side >= width && side >= height) break;  // the last level: relabel() flattens everything
        const std::int64_t row_threads = 2 * groups_y * width, total = row_threads + 2 * groups_x * height;
        flatten_borders<<<static_cast<unsigned>((total + 255) / 256), 256, 0, s>>>(
            out.data(), out_stride, width, height, side, row_threads, total, scratch.segments_per_row(),
            scratch.fg_masks());
        check_launch("flatten_borders");
    }
    return relabel<T>(in, out.data(), out.data(), out_stride, scratch, statistics, s);
}

template std::int64_t label_tile_merge<std::uint8_t>(device_view<const std::uint8_t>, device_view<std::int32_t>, int,
                                                     std::uint8_t, device_region_statistics*, stream);
template std::int64_t label_tile_merge<std::uint16_t>(device_view<const std::uint16_t>, device_view<std::int32_t>,
                                                      int, std::uint16_t, device_region_statistics*, stream);
template std::int64_t label_tile_merge<std::uint32_t>(device_view<const std::uint32_t>, device_view<std::int32_t>,
                                                      int, std::uint32_t, device_region_statistics*, stream);

}  // namespace granula::cuda
