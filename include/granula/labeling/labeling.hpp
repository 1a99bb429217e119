// Connected-component labelling and region statistics (GUIDE §1 "Labels").
//
// Two pixels connect when they are neighbours (connectivity 1: the 4 edge neighbours,
// connectivity 2: the 8 edge and corner neighbours) and hold the same value other than
// `background`; a 0/1 image is the binary case. Components get the labels 1..N in raster order
// of their first pixel (the numbers of scipy.ndimage.label and skimage.measure.label), the
// background 0. The CPU and CUDA backends give the same labels bit for bit.
//
// Input pixels: uint8, uint16, uint32 (numpy bool arrives as uint8); labels int32 or int64, any
// image size (widths and heights below 2^31). Every label() writes int32 or int64 labels
// (label_output), the same ones; int32 output throws granula::unsupported when N exceeds
// 2^31 - 1 (before writing any label), so a label is never truncated. N can exceed 2^31 - 1 only
// on images of more than 2^31 - 1 pixels; int32 output keeps the fast path of ordinary images
// (int32 indices inside), int64 output indexes in 64 bits at every size. int32 output of
// an image over 2^31 - 1 elements (the GPU counts row stride x height) uses 64-bit indices too,
// the GPU then a scratch forest of 8 bytes per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "granula/binary/bit_image.hpp"
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

// The statistics of a GPU label() left in device memory: the fields of region_statistics, each
// an array of size() elements in device memory indexed by label - 1, with region_statistics's
// types; the intensity arrays are null until intensity_statistics() fills them. label() returns
// once the labels are ready; the statistics are queued on its stream after them, so read the
// arrays on that stream or after synchronising it. Copies share the arrays; the memory is freed
// in that stream's order when the last copy goes.
class device_region_statistics {
public:
    static constexpr std::size_t bytes_per_component = 7 * sizeof(std::int64_t) + sizeof(std::uint32_t);

    device_region_statistics() = default;
    // Adopts `memory`: size * bytes_per_component bytes (at least one component's), in the order
    // area, min_row, min_col, max_row, max_col, centroid_row, centroid_col, value (label() makes these).
    device_region_statistics(std::shared_ptr<void> memory, std::int64_t size)
        : memory_(std::move(memory)), size_(size) {}

    std::int64_t size() const { return size_; }
    std::int64_t* area() const { return field<std::int64_t>(0); }
    std::int64_t* min_row() const { return field<std::int64_t>(1); }
    std::int64_t* min_col() const { return field<std::int64_t>(2); }
    std::int64_t* max_row() const { return field<std::int64_t>(3); }
    std::int64_t* max_col() const { return field<std::int64_t>(4); }
    double* centroid_row() const { return field<double>(5); }
    double* centroid_col() const { return field<double>(6); }
    std::uint32_t* value() const { return field<std::uint32_t>(7); }
    double* mean_intensity() const { return intensity_field(0); }
    double* min_intensity() const { return intensity_field(1); }
    double* max_intensity() const { return intensity_field(2); }

    // Adopts `memory` as the intensity arrays: 3 * size() doubles (at least 3), mean, min, max
    // (intensity_statistics() makes these).
    void set_intensity(std::shared_ptr<void> memory) { intensity_memory_ = std::move(memory); }

    // Copies the arrays into host vectors after the work queued on `s`; waits for the copy.
    region_statistics download(stream s = {}) const;

private:
    // Field k starts after k arrays of 8-byte elements; the room is at least one component's.
    template <class U>
    U* field(int k) const {
        const std::size_t room = static_cast<std::size_t>(size_ > 0 ? size_ : 1);
        return reinterpret_cast<U*>(static_cast<char*>(memory_.get()) + k * room * sizeof(std::int64_t));
    }
    double* intensity_field(int k) const {
        if (!intensity_memory_) return nullptr;
        return static_cast<double*>(intensity_memory_.get()) + k * (size_ > 0 ? size_ : 1);
    }
    std::shared_ptr<void> memory_;
    std::shared_ptr<void> intensity_memory_;
    std::int64_t size_ = 0;
};

// The label types: int32, or int64 where N may exceed 2^31 - 1 (see the top of this file).
template <class L>
concept label_output = std::is_same_v<L, std::int32_t> || std::is_same_v<L, std::int64_t>;

// How the GPU labels; every method gives the same labels and statistics. automatic: run-based
// union-find (the fastest; docs/labeling.md). tile_merge: the seed paper's algorithm (Stava &
// Benes 2011: tiles labelled in shared memory, merged 4x4 per level), generalised to any size
// and kept as its reference; it labels images of fewer than 2^31 elements into int32 labels
// (unsupported otherwise). The CPU has one method and takes automatic only.
enum class label_method { automatic, tile_merge };

std::string_view to_string(label_method method);
// Parses "auto", "tile_merge"; throws invalid_argument listing the names.
label_method parse_label_method(std::string_view name);

// Labels `in` into `out` (same size; they may not overlap) and returns the number of
// components N (int32 output: unsupported when N > 2^31 - 1, see above). When `statistics` is
// given it receives area, bounding box, centroid and value of every component. Throws
// invalid_argument for an empty image, a size mismatch, connectivity other than 1 or 2, a
// background the pixel type cannot hold, or a method other than automatic (the GPU's).
template <label_input T, label_output L>
std::int64_t label(host_view<const T> in, host_view<L> out, int connectivity = 2, std::uint32_t background = 0,
                   region_statistics* statistics = nullptr, label_method method = label_method::automatic);
// The same on the GPU, on stream `s`; it returns after reading N back, so the labels are ready
// when it returns. No host round trip happens before that. Host `statistics` are copied back
// before it returns (with millions of components that copy costs more than the labelling).
template <label_input T, label_output L>
std::int64_t label(device_view<const T> in, device_view<L> out, int connectivity = 2, std::uint32_t background = 0,
                   region_statistics* statistics = nullptr, stream s = {},
                   label_method method = label_method::automatic);
// The same with the statistics left in device memory (see device_region_statistics).
template <label_input T, label_output L>
std::int64_t label(device_view<const T> in, device_view<L> out, int connectivity, std::uint32_t background,
                   device_region_statistics& statistics, stream s = {},
                   label_method method = label_method::automatic);

// Run-time typed input (the CLI, Python): float32 input is an invalid_argument.
template <label_output L>
std::int64_t label(const any_host_view& in, host_view<L> out, int connectivity = 2, std::uint32_t background = 0,
                   region_statistics* statistics = nullptr, label_method method = label_method::automatic);
template <label_output L>
std::int64_t label(const any_device_view& in, device_view<L> out, int connectivity = 2,
                   std::uint32_t background = 0, region_statistics* statistics = nullptr, stream s = {},
                   label_method method = label_method::automatic);
template <label_output L>
std::int64_t label(const any_device_view& in, device_view<L> out, int connectivity, std::uint32_t background,
                   device_region_statistics& statistics, stream s = {},
                   label_method method = label_method::automatic);

// The set bits of a bit image (granula/binary/bit_image.hpp) labelled without unpacking: the
// labels, count and statistics (value 1) of label() on its 0/1 image, the runs found a word at a
// time (docs/benchmarks.md has it against unpacking first). CPU only.
template <label_output L>
std::int64_t label(const_host_bit_view in, host_view<L> out, int connectivity = 2,
                   region_statistics* statistics = nullptr);

// Fills statistics.mean/min/max_intensity for the components 1..statistics.size() of `labels`
// (a result of label()) from `intensity`, an image of the same size and any pixel type.
void intensity_statistics(host_view<const std::int32_t> labels, const any_host_view& intensity,
                          region_statistics& statistics);
void intensity_statistics(host_view<const std::int64_t> labels, const any_host_view& intensity,
                          region_statistics& statistics);
// The same on the GPU, on stream `s`, into statistics' intensity arrays (the same numbers: sums
// in double, NaN pixels skipped by min and max). Waits for the work it queued: it throws
// invalid_argument, like the CPU, for a label beyond statistics.size().
void intensity_statistics(device_view<const std::int32_t> labels, const any_device_view& intensity,
                          device_region_statistics& statistics, stream s = {});
void intensity_statistics(device_view<const std::int64_t> labels, const any_device_view& intensity,
                          device_region_statistics& statistics, stream s = {});

}  // namespace granula
