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
// The rest is room for relabel().
class segment_scratch {
public:
    segment_scratch(int width, int height, cudaStream_t s);
    int segments_per_row() const { return segments_per_row_; }
    int segments() const { return segments_; }
    unsigned* node_masks() const { return node_masks_; }
    unsigned* fg_masks() const { return fg_masks_; }

private:
    template <class T>
    friend std::int64_t relabel(device_view<const T>, device_view<std::int32_t>, segment_scratch&,
                                device_region_statistics*, cudaStream_t);
    int segments_per_row_, segments_;
    detail::stream_buffer buffer_;
    std::size_t scan_bytes_ = 0;
    int *counts_, *offsets_, *total_;
    unsigned *node_masks_, *fg_masks_, *root_masks_;
    void* scan_temp_;
};

// Numbers the components and writes their labels over the forest in `out`: there every run
// start holds the element index (y * stride + x) of a pixel of its component, and following
// these pointers (through any pixels' entries) ends at the component's first pixel in raster
// order, which points at itself. Returns N after waiting for it; the statistics, when asked
// for, are queued after that (see label()).
template <class T>
std::int64_t relabel(device_view<const T> in, device_view<std::int32_t> out, segment_scratch& scratch,
                     device_region_statistics* statistics, cudaStream_t s);

}  // namespace granula::cuda
