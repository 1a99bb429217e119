// The second half of every CUDA labelling method (labeling_cuda.cu): from a union-find forest
// with minimum-index roots to the consecutive labels 1..N in raster order, and the statistics.
// The methods differ only in how they build the forest (labeling_cuda.cu: run-based union-find,
// tile_merge.cu: the seed paper's tile merge), so their labels and statistics agree bit for bit.
#pragma once

#include <cstddef>

#include "core/cuda/stream_buffer.cuh"
#include "granula/labeling/labeling.hpp"

namespace granula::cuda {

// Rows are cut into 32-pixel segments, segment y * segments_per_row + x / 32. A method fills
// the two masks of every segment inside the image: bit i of node_masks marks the run starts
// (foreground pixels whose left neighbour in the segment is background or another value, lane 0
// included), bit i of fg_masks the non-background pixels; lanes beyond the width are 0 in both.
// The rest is room for relabel(), whose counts are of the index type L (int or long long).
template <class L>
class segment_scratch {
public:
    segment_scratch(int width, int height, cudaStream_t s);
    int segments_per_row() const { return segments_per_row_; }
    int segments() const { return segments_; }
    unsigned* node_masks() const { return node_masks_; }
    unsigned* fg_masks() const { return fg_masks_; }

private:
    template <class T, class I, class O>
    friend std::int64_t relabel(device_view<const T>, O*, I*, I, segment_scratch<I>&, device_region_statistics*,
                                cudaStream_t);
    int segments_per_row_, segments_;
    detail::stream_buffer buffer_;
    std::size_t scan_bytes_ = 0;
    L *counts_, *offsets_, *total_;
    unsigned *node_masks_, *fg_masks_, *root_masks_;
    void* scan_temp_;
};

// Numbers the components and writes their labels into `out` (O: int or long long; the same
// layout as the forest, row stride `stride`). In `forest` (indices of type L: the output itself,
// or a scratch image when O is narrower than L) every run start holds the element index
// (y * stride + x) of a pixel of its component, and following these pointers (through any
// pixels' entries) ends at the component's first pixel in raster order, which points at itself.
// Returns N after waiting for it; when O is narrower than L it throws unsupported, before
// writing any label, for an N that O cannot hold. The statistics, when asked for, are queued
// after that (see label()).
template <class T, class L, class O>
std::int64_t relabel(device_view<const T> in, O* out, L* forest, L stride, segment_scratch<L>& scratch,
                     device_region_statistics* statistics, cudaStream_t s);

}  // namespace granula::cuda
