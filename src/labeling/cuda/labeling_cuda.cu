// CUDA labelling: union-find over pixel indices with minimum-index roots (the union of
// Playne & Hawick 2018 / Allegretti et al. 2019), for equal-value input and both connectivities.
//
// The provisional label of a pixel is its element index y * stride + x in the output, which
// doubles as the union-find forest, so no other per-pixel buffer exists. A root is always the
// smallest index of its tree, so after the merges a component's root is its first pixel in raster
// order; consecutive labels are then 1 + the number of roots before it in raster order, an
// exclusive scan of per-block root counts (CUB) - no sort, no host round trip.
//
//   1. tile_merge_local: a 32x16 tile labels itself in shared memory, writing each pixel's local
//      root as a global index.
//   2. tile_border_merge: pixels on tile borders unite with their neighbours in other tiles.
//   3. compress_count: every pixel points straight at its root; blocks over row segments (raster
//      order) count their roots.
//   4. the per-block counts are scanned; number_roots gives each root -(label).
//   5. finalise: every pixel takes its root's label; background 0.
// Statistics (optional): one more pass, lanes of a warp aggregating runs of one label with
// warp-level reductions before global atomics.
#include "labeling/cuda/labeling_cuda.hpp"

#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"

namespace granula::cuda {
namespace {

using granula::detail::check_cuda;
using granula::detail::stream_buffer;

constexpr const char* scratch_what = "cudaMallocAsync (labelling scratch)";
using granula::detail::check_launch;
using granula::detail::to_cuda;

constexpr int tile_w = 32, tile_h = 16;  // one thread per pixel in the local merge
constexpr int segment = 256;             // row segment per block in the raster-order passes


__device__ __forceinline__ int find_shared(const int* parent, int i) {
    while (parent[i] != i) i = parent[i];
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

__device__ __forceinline__ int find_global(const int* label, int i) {
    int p = __ldcg(label + i);
    while (p != i) {
        i = p;
        p = __ldcg(label + i);
    }
    return i;
}

__device__ void unite_global(int* label, int a, int b) {
    while (true) {
        a = find_global(label, a);
        b = find_global(label, b);
        if (a == b) return;
        if (a > b) {
            const int t = a;
            a = b;
            b = t;
        }
        const int old = atomicMin(&label[b], a);
        if (old == b) return;
        b = old;
    }
}

template <class T>
__global__ void tile_merge_local(const T* __restrict__ in, std::int64_t in_stride, int* __restrict__ out,
                                 int out_stride, int width, int height, T background, bool eight, int tiles_x) {
    __shared__ int parent[tile_w * tile_h];
    __shared__ T value[tile_w * tile_h];
    // Tiles numbered along x (one grid dimension: gridDim.y would cap the height at 65535 tiles).
    const int tx = blockIdx.x % tiles_x, ty = blockIdx.x / tiles_x;
    const int lx = threadIdx.x, ly = threadIdx.y, li = ly * tile_w + lx;
    const int x = tx * tile_w + lx, y = ty * tile_h + ly;
    const bool inside = x < width && y < height;
    const T v = inside ? in[y * in_stride + x] : background;
    value[li] = v;
    parent[li] = li;
    __syncthreads();
    if (v != background) {
        // Neighbours already connected through another union are skipped (left joins up-left,
        // up joins up-left and up-right when they share the value).
        const bool left = lx > 0 && value[li - 1] == v;
        const bool up = ly > 0 && value[li - tile_w] == v;
        if (left) unite_shared(parent, li, li - 1);
        if (up) unite_shared(parent, li, li - tile_w);
        if (eight && ly > 0 && !up) {
            if (lx > 0 && !left && value[li - tile_w - 1] == v) unite_shared(parent, li, li - tile_w - 1);
            if (lx + 1 < tile_w && value[li - tile_w + 1] == v) unite_shared(parent, li, li - tile_w + 1);
        }
    }
    __syncthreads();
    if (inside && v != background) {
        const int r = find_shared(parent, li);
        const int rx = tx * tile_w + r % tile_w, ry = ty * tile_h + r / tile_w;
        out[y * out_stride + x] = ry * out_stride + rx;
    }
}

// One thread per tile-border pixel: the top row unites upwards (up-left, up, up-right), the left
// column leftwards (left, up-left), the right column up-right: every neighbour pair that crosses
// a tile edge is covered once.
template <class T>
__global__ void tile_border_merge(const T* __restrict__ in, std::int64_t in_stride, int* out, int out_stride,
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
    const int p = y * out_stride + x;
    auto try_unite = [&](int nx, int ny) {
        if (nx < 0 || nx >= width || ny < 0) return;
        if (in[ny * in_stride + nx] == v) unite_global(out, p, ny * out_stride + nx);
    };
    if (ly == 0) {
        try_unite(x, y - 1);
        if (eight) {
            try_unite(x - 1, y - 1);
            try_unite(x + 1, y - 1);
        }
    }
    if (lx == 0) {
        try_unite(x - 1, y);
        if (eight && ly != 0) try_unite(x - 1, y - 1);
    }
    if (lx == tile_w - 1 && eight && ly != 0) try_unite(x + 1, y - 1);
}

// Blocks cover row segments in raster order: block b is row b / segments_per_row.
template <class T>
__global__ void compress_count(const T* __restrict__ in, std::int64_t in_stride, int* out, int out_stride,
                               int width, T background, int segments_per_row, int* __restrict__ counts) {
    const int y = blockIdx.x / segments_per_row;
    const int x = (blockIdx.x % segments_per_row) * segment + threadIdx.x;
    bool root = false;
    if (x < width && in[y * in_stride + x] != background) {
        const int p = y * out_stride + x;
        // Path halving: no union runs any more, so every pointer may skip to its grandparent,
        // which shortens the chains the other pixels of the tile walk after this one. atomicMin,
        // not a store: the node's own thread may already have pointed it at the root (the
        // smallest index of the chain), which a stale grandparent must not overwrite.
        int r = p, parent = __ldcg(out + p);
        while (parent != r) {
            const int grand = __ldcg(out + parent);
            if (grand != parent) atomicMin(out + r, grand);
            r = parent;
            parent = grand;
        }
        root = r == p;
        if (!root) out[p] = r;
    }
    const int c = __syncthreads_count(root);
    if (threadIdx.x == 0) counts[blockIdx.x] = c;
}

template <class T>
__global__ void number_roots(const T* __restrict__ in, std::int64_t in_stride, int* __restrict__ out,
                             int out_stride, int width, T background, int segments_per_row,
                             const int* __restrict__ offsets) {
    __shared__ int warp_total[segment / 32];
    const int y = blockIdx.x / segments_per_row;
    const int x = (blockIdx.x % segments_per_row) * segment + threadIdx.x;
    const int p = y * out_stride + x;
    const bool root = x < width && in[y * in_stride + x] != background && out[p] == p;
    const unsigned ballot = __ballot_sync(0xffffffffu, root);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_total[warp] = __popc(ballot);
    __syncthreads();
    if (!root) return;
    int before = offsets[blockIdx.x] + __popc(ballot & ((1u << lane) - 1u));
    for (int w = 0; w < warp; ++w) before += warp_total[w];
    out[p] = -(before + 1);
}

template <class T>
__global__ void finalise(const T* __restrict__ in, std::int64_t in_stride, int* out, int out_stride, int width,
                         T background, int segments_per_row) {
    const int y = blockIdx.x / segments_per_row;
    const int x = (blockIdx.x % segments_per_row) * segment + threadIdx.x;
    if (x >= width) return;
    const int p = y * out_stride + x;
    if (in[y * in_stride + x] == background) {
        out[p] = 0;
        return;
    }
    const int v = out[p];
    // A root holds -label (or label, once its own thread has flipped it); others the root index.
    out[p] = v < 0 ? -v : abs(__ldcg(out + v));
}

__global__ void total_count(const int* counts, const int* offsets, int n, int* total) {
    *total = offsets[n - 1] + counts[n - 1];
}

// ---- statistics ----------------------------------------------------------------------------------
struct device_stats {
    unsigned long long *area, *sum_row, *sum_col;
    int *min_row, *min_col, *max_row, *max_col;
    unsigned *value;
};

constexpr int stats_run = 64;  // pixels per lane: a warp flushes a large component once per 2048 pixels

// Adds one lane's run (label l, `n` pixels in row y from x0 to x1 inclusive, column sum
// `col_sum` relative to the warp's first column x_warp) to the statistics, first reducing over
// the lanes of the warp that flush the same label at the same step. Relative column sums stay
// under 2^22, so the 32-bit warp reductions cannot overflow.
__device__ void flush(const device_stats& s, unsigned active, int l, unsigned n, int y, int x0, int x1,
                      unsigned col_sum, int x_warp, unsigned v) {
    const unsigned group = __match_any_sync(active, l);
    const unsigned area = __reduce_add_sync(group, n);
    const unsigned long long cols =
        __reduce_add_sync(group, col_sum) + static_cast<unsigned long long>(area) * static_cast<unsigned>(x_warp);
    const int lo = static_cast<int>(__reduce_min_sync(group, static_cast<unsigned>(x0)));
    const int hi = static_cast<int>(__reduce_max_sync(group, static_cast<unsigned>(x1)));
    if ((__ffs(group) - 1) != static_cast<int>(threadIdx.x % 32)) return;
    const int c = l - 1;
    atomicAdd(s.area + c, area);
    atomicAdd(s.sum_row + c, static_cast<unsigned long long>(area) * y);
    atomicAdd(s.sum_col + c, cols);
    atomicMin(s.min_row + c, y);
    atomicMax(s.max_row + c, y + 1);
    atomicMin(s.min_col + c, lo);
    atomicMax(s.max_col + c, hi + 1);
    s.value[c] = v;  // every pixel of a component holds its value
}

// Each lane walks stats_run pixels of a row in lock step with its warp. Background pixels do not
// end a lane's run: only another label does, so a sparse large component is flushed rarely.
template <class T>
__global__ void accumulate_stats(const T* __restrict__ in, std::int64_t in_stride, const int* __restrict__ labels,
                                 int out_stride, int width, int blocks_per_row, device_stats s) {
    const int y = blockIdx.x / blocks_per_row;
    const int x_block = (blockIdx.x % blocks_per_row) * blockDim.x * stats_run;
    const int x_begin = x_block + threadIdx.x * stats_run;
    const int x_warp = x_block + (threadIdx.x / 32) * 32 * stats_run;
    int current = 0, first = 0, last = 0;
    unsigned n = 0, col_sum = 0, v = 0;
    for (int i = 0; i < stats_run; ++i) {
        const int x = x_begin + i;
        const int l = x < width ? labels[y * out_stride + x] : 0;
        const bool change = l > 0 && l != current;
        const unsigned flushing = __ballot_sync(0xffffffffu, change && current > 0);
        if (change && current > 0) flush(s, flushing, current, n, y, first, last, col_sum, x_warp, v);
        if (change) {
            current = l, first = x, n = 0, col_sum = 0;
            v = in[y * in_stride + x];
        }
        if (l > 0) ++n, col_sum += static_cast<unsigned>(x - x_warp), last = x;
    }
    const unsigned flushing = __ballot_sync(0xffffffffu, current > 0);
    if (current > 0) flush(s, flushing, current, n, y, first, last, col_sum, x_warp, v);
}

__global__ void init_stats(device_stats s, int n) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    s.area[c] = s.sum_row[c] = s.sum_col[c] = 0;
    s.min_row[c] = s.min_col[c] = 0x7fffffff;
    s.max_row[c] = s.max_col[c] = 0;
}

void download_stats(const device_stats& d, int n, region_statistics& st, cudaStream_t s) {
    std::vector<unsigned long long> area(n), sum_row(n), sum_col(n);
    std::vector<int> min_row(n), min_col(n), max_row(n), max_col(n);
    st = region_statistics{};
    st.value.resize(n);
    auto get = [&](void* dst, const void* src, std::size_t bytes) {
        check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (statistics)");
    };
    get(area.data(), d.area, n * sizeof(unsigned long long));
    get(sum_row.data(), d.sum_row, n * sizeof(unsigned long long));
    get(sum_col.data(), d.sum_col, n * sizeof(unsigned long long));
    get(min_row.data(), d.min_row, n * sizeof(int));
    get(min_col.data(), d.min_col, n * sizeof(int));
    get(max_row.data(), d.max_row, n * sizeof(int));
    get(max_col.data(), d.max_col, n * sizeof(int));
    get(st.value.data(), d.value, n * sizeof(unsigned));
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (statistics)");
    st.area.assign(area.begin(), area.end());
    st.min_row.assign(min_row.begin(), min_row.end());
    st.min_col.assign(min_col.begin(), min_col.end());
    st.max_row.assign(max_row.begin(), max_row.end());
    st.max_col.assign(max_col.begin(), max_col.end());
    st.centroid_row.resize(n);
    st.centroid_col.resize(n);
    for (int c = 0; c < n; ++c) {
        st.centroid_row[c] = static_cast<double>(sum_row[c]) / static_cast<double>(area[c]);
        st.centroid_col[c] = static_cast<double>(sum_col[c]) / static_cast<double>(area[c]);
    }
}

}  // namespace

template <class T>
std::int64_t label(device_view<const T> in, device_view<std::int32_t> out, int connectivity, T background,
                   region_statistics* statistics, stream st) {
    const cudaStream_t s = to_cuda(st.native_handle());
    const int width = static_cast<int>(in.width()), height = static_cast<int>(in.height());
    const int out_stride = static_cast<int>(out.stride());
    const std::int64_t in_stride = in.stride();
    const bool eight = connectivity == 2;
    int* labels = out.data();

    const int tiles_x = (width + tile_w - 1) / tile_w, tiles_y = (height + tile_h - 1) / tile_h;
    tile_merge_local<T><<<tiles_x * tiles_y, dim3(tile_w, tile_h), 0, s>>>(in.data(), in_stride, labels, out_stride,
                                                                         width, height, background, eight, tiles_x);
    check_launch("tile_merge_local");
    const int tiles_total = tiles_x * tiles_y;
    const std::int64_t border_threads = static_cast<std::int64_t>(tiles_total) * (tile_w + 2 * (tile_h - 1));
    tile_border_merge<T><<<static_cast<unsigned>((border_threads + 255) / 256), 256, 0, s>>>(
        in.data(), in_stride, labels, out_stride, width, height, background, eight, tiles_x, tiles_total);
    check_launch("tile_border_merge");

    const int segments_per_row = (width + segment - 1) / segment;
    const int blocks = segments_per_row * height;
    std::size_t scan_bytes = 0;
    check_cuda(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<int*>(nullptr),
                                             static_cast<int*>(nullptr), blocks, s),
               "cub::DeviceScan::ExclusiveSum (size)");
    stream_buffer buffer(2 * sizeof(int) * blocks + sizeof(int) + scan_bytes + 256, s, scratch_what);
    int* counts = buffer.as<int>();
    int* offsets = counts + blocks;
    int* total = offsets + blocks;
    void* scan_temp = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(total + 1) + 255) & ~std::uintptr_t{255});

    compress_count<T><<<blocks, segment, 0, s>>>(in.data(), in_stride, labels, out_stride, width, background,
                                                 segments_per_row, counts);
    check_launch("compress_count");
    check_cuda(cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, counts, offsets, blocks, s),
               "cub::DeviceScan::ExclusiveSum");
    number_roots<T><<<blocks, segment, 0, s>>>(in.data(), in_stride, labels, out_stride, width, background,
                                               segments_per_row, offsets);
    check_launch("number_roots");
    finalise<T><<<blocks, segment, 0, s>>>(in.data(), in_stride, labels, out_stride, width, background,
                                           segments_per_row);
    check_launch("finalise");
    total_count<<<1, 1, 0, s>>>(counts, offsets, blocks, total);
    check_launch("total_count");
    int n = 0;
    check_cuda(cudaMemcpyAsync(&n, total, sizeof(int), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (count)");
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (count)");

    if (statistics) {
        if (n == 0) {
            *statistics = region_statistics{};
            return 0;
        }
        stream_buffer stats_buffer(static_cast<std::size_t>(n) * (3 * 8 + 5 * 4), s, scratch_what);
        device_stats d{};
        d.area = stats_buffer.as<unsigned long long>();
        d.sum_row = d.area + n;
        d.sum_col = d.sum_row + n;
        d.min_row = reinterpret_cast<int*>(d.sum_col + n);
        d.min_col = d.min_row + n;
        d.max_row = d.min_col + n;
        d.max_col = d.max_row + n;
        d.value = reinterpret_cast<unsigned*>(d.max_col + n);
        init_stats<<<(n + 255) / 256, 256, 0, s>>>(d, n);
        check_launch("init_stats");
        const int blocks_per_row = (width + 128 * stats_run - 1) / (128 * stats_run);
        accumulate_stats<T><<<blocks_per_row * height, 128, 0, s>>>(in.data(), in_stride, labels, out_stride, width,
                                                                    blocks_per_row, d);
        check_launch("accumulate_stats");
        download_stats(d, n, *statistics, s);
    }
    return n;
}

template std::int64_t label<std::uint8_t>(device_view<const std::uint8_t>, device_view<std::int32_t>, int,
                                          std::uint8_t, region_statistics*, stream);
template std::int64_t label<std::uint16_t>(device_view<const std::uint16_t>, device_view<std::int32_t>, int,
                                           std::uint16_t, region_statistics*, stream);
template std::int64_t label<std::uint32_t>(device_view<const std::uint32_t>, device_view<std::int32_t>, int,
                                           std::uint32_t, region_statistics*, stream);

}  // namespace granula::cuda
