// Connected-component labelling and region statistics (GUIDE §1 "Labels").
//
// Two pixels connect when they are neighbours (connectivity 1: the 4 edge neighbours,
// connectivity 2: the 8 edge and corner neighbours) and hold the same value other than
// `background`; a 0/1 image is the binary case. Components get the labels 1..N in raster order
// of their first pixel (the numbers of scipy.ndimage.label and skimage.measure.label), the
// background 0. The CPU and CUDA backends give the same labels bit for bit.
//
// Input pixels: uint8, uint16, uint32 (numpy bool arrives as uint8); labels are int32. Images
// whose labels could exceed 2^31 - 1 (over 2^31 - 1 pixels on the CPU; a row stride times height
// over that on the GPU) are rejected with granula::unsupported.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "granula/core/any_image.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {

// The pixel types labelling accepts.
template <class T>
concept label_input = std::is_same_v<std::remove_const_t<T>, std::uint8_t> ||
                      std::is_same_v<std::remove_const_t<T>, std::uint16_t> ||
                      std::is_same_v<std::remove_const_t<T>, std::uint32_t>;

// Statistics of components 1..N, each vector indexed by label - 1. Bounding boxes as
// skimage.measure.regionprops: rows [min_row, max_row), columns [min_col, max_col). The
// centroid is the mean (row, col) of the component's pixels; `value` its input pixel value.
// The intensity fields are filled only by intensity_statistics().
struct region_statistics {
    std::vector<std::int64_t> area;
    std::vector<std::int64_t> min_row, min_col, max_row, max_col;
    std::vector<double> centroid_row, centroid_col;
    std::vector<std::uint32_t> value;
    std::vector<double> mean_intensity, min_intensity, max_intensity;
    std::int64_t size() const { return static_cast<std::int64_t>(area.size()); }
};

// Labels `in` into `out` (same size; they may not overlap) and returns the number of
// components N. When `statistics` is given it receives area, bounding box, centroid and value
// of every component. Throws invalid_argument for an empty image, a size mismatch,
// connectivity other than 1 or 2, or a background the pixel type cannot hold.
template <label_input T>
std::int64_t label(host_view<const T> in, host_view<std::int32_t> out, int connectivity = 2,
                   std::uint32_t background = 0, region_statistics* statistics = nullptr);
// The same on the GPU, on stream `s`; it returns after reading N (and the statistics) back,
// so the labels are ready when it returns. No host round trip happens before that.
template <label_input T>
std::int64_t label(device_view<const T> in, device_view<std::int32_t> out, int connectivity = 2,
                   std::uint32_t background = 0, region_statistics* statistics = nullptr, stream s = {});

// Run-time typed input (the CLI, Python): float32 input is an invalid_argument.
std::int64_t label(const any_host_view& in, host_view<std::int32_t> out, int connectivity = 2,
                   std::uint32_t background = 0, region_statistics* statistics = nullptr);
std::int64_t label(const any_device_view& in, device_view<std::int32_t> out, int connectivity = 2,
                   std::uint32_t background = 0, region_statistics* statistics = nullptr, stream s = {});

// Fills statistics.mean/min/max_intensity for the components 1..statistics.size() of `labels`
// (a result of label()) from `intensity`, an image of the same size and any pixel type.
void intensity_statistics(host_view<const std::int32_t> labels, const any_host_view& intensity,
                          region_statistics& statistics);

}  // namespace granula
