// Bindings of connected-component labelling: granula.label() (python/granula/labeling.py) calls
// these with the input borrowed through import_image() and an int32 or int64 output it allocated.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "granula/labeling/labeling.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace granula::python {
namespace {

// A numpy array that takes over the vector's memory.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& values) {
    auto* owned = new std::vector<T>(std::move(values));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, owner);
}

nb::object statistics_dict(region_statistics&& s) {
    nb::dict d;
    d["area"] = to_numpy(std::move(s.area));
    d["min_row"] = to_numpy(std::move(s.min_row));
    d["min_col"] = to_numpy(std::move(s.min_col));
    d["max_row"] = to_numpy(std::move(s.max_row));
    d["max_col"] = to_numpy(std::move(s.max_col));
    d["centroid_row"] = to_numpy(std::move(s.centroid_row));
    d["centroid_col"] = to_numpy(std::move(s.centroid_col));
    d["value"] = to_numpy(std::move(s.value));
    if (!s.mean_intensity.empty() || s.area.empty()) {
        d["mean_intensity"] = to_numpy(std::move(s.mean_intensity));
        d["min_intensity"] = to_numpy(std::move(s.min_intensity));
        d["max_intensity"] = to_numpy(std::move(s.max_intensity));
    }
    return d;
}

template <class L>
using host_labels = nb::ndarray<L, nb::ndim<2>, nb::device::cpu>;

// Calls labelled(view) with the input as a typed view for uint32 elements, which have no pixel
// type, and as the run-time typed view of its pixel type otherwise.
template <class Space, class Labelled>
std::int64_t with_input_view(const image_arg& in, Labelled&& labelled) {
    return in.uint32 ? labelled(in.uint32_view<Space>()) : labelled(in.view<Space>());
}

// `out` as the labels of a width x height image.
template <class L>
host_view<L> labels_view(host_labels<L> out, std::int64_t width, std::int64_t height) {
    if (out.shape(0) != static_cast<std::size_t>(height) || out.shape(1) != static_cast<std::size_t>(width) ||
        out.stride(1) != 1)
        throw invalid_argument("out must be a row-contiguous label array of the image's shape");
    return host_view<L>(out.data(), width, height, out.stride(0));
}

// Labels a host image into `out` (int32 or int64, the image's shape, rows contiguous).
template <class L>
std::pair<std::int64_t, nb::object> label_host(nb::handle image, host_labels<L> out, int connectivity,
                                               std::uint32_t background, bool statistics, nb::handle intensity,
                                               const std::string& method) {
    const image_arg in = import_image(image, "image", false, accepted_elements::label_input);
    const host_view<L> labels = labels_view(out, in.width, in.height);
    const label_method m = parse_label_method(method);
    region_statistics stats;
    std::int64_t n = 0;
    {
        nb::gil_scoped_release released;
        n = with_input_view<host_memory>(in, [&](auto view) {
            return label(view, labels, connectivity, background, statistics ? &stats : nullptr, m);
        });
    }
    if (!statistics) return {n, nb::none()};
    if (!intensity.is_none()) {
        const image_arg extra = import_image(intensity, "intensity_image", false);
        if (extra.on_device) throw invalid_argument("intensity_image must be a host array like image");
        intensity_statistics(labels, extra.view<host_memory>(), stats);
    }
    return {n, statistics_dict(std::move(stats))};
}

// Labels the set bits of a host bit image (a PackedImage's words: address, width, height, row
// stride in words) into `out`, without unpacking.
template <class L>
std::pair<std::int64_t, nb::object> label_bits(std::uintptr_t address, std::int64_t width, std::int64_t height,
                                               std::int64_t stride, host_labels<L> out, int connectivity,
                                               bool statistics) {
    const const_host_bit_view bits(reinterpret_cast<const bit_word*>(address), width, height, stride);
    const host_view<L> labels = labels_view(out, width, height);
    region_statistics stats;
    std::int64_t n = 0;
    {
        nb::gil_scoped_release released;
        n = label(bits, labels, connectivity, statistics ? &stats : nullptr);
    }
    if (!statistics) return {n, nb::none()};
    return {n, statistics_dict(std::move(stats))};
}

// A CuPy array over one of the statistics' device arrays; `owner` keeps the memory alive.
template <class T>
nb::object to_cupy(T* data, std::int64_t n, nb::handle owner, int device_id) {
    return nb::cast(nb::ndarray<nb::cupy, T, nb::ndim<1>>(data, {static_cast<std::size_t>(n)}, owner, {},
                                                          nb::dtype<T>(), nb::device::cuda::value, device_id));
}

nb::object device_statistics_dict(device_region_statistics&& s, int device_id) {
    const std::int64_t n = s.size();
    auto* owned = new device_region_statistics(std::move(s));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<device_region_statistics*>(p); });
    nb::dict d;
    d["area"] = to_cupy(owned->area(), n, owner, device_id);
    d["min_row"] = to_cupy(owned->min_row(), n, owner, device_id);
    d["min_col"] = to_cupy(owned->min_col(), n, owner, device_id);
    d["max_row"] = to_cupy(owned->max_row(), n, owner, device_id);
    d["max_col"] = to_cupy(owned->max_col(), n, owner, device_id);
    d["centroid_row"] = to_cupy(owned->centroid_row(), n, owner, device_id);
    d["centroid_col"] = to_cupy(owned->centroid_col(), n, owner, device_id);
    d["value"] = to_cupy(owned->value(), n, owner, device_id);
    if (owned->mean_intensity()) {
        d["mean_intensity"] = to_cupy(owned->mean_intensity(), n, owner, device_id);
        d["min_intensity"] = to_cupy(owned->min_intensity(), n, owner, device_id);
        d["max_intensity"] = to_cupy(owned->max_intensity(), n, owner, device_id);
    }
    return d;
}

template <class L>
std::pair<std::int64_t, nb::object> label_device_as(const image_arg& in, std::uintptr_t out_ptr,
                                                    std::int64_t out_stride, int connectivity,
                                                    std::uint32_t background, bool statistics, nb::handle intensity,
                                                    std::uintptr_t cuda_stream, int device_id, label_method m) {
    const device_view<L> labels(reinterpret_cast<L*>(out_ptr), in.width, in.height, out_stride);
    const stream s(reinterpret_cast<void*>(cuda_stream));
    device_region_statistics stats;
    std::int64_t n = 0;
    {
        nb::gil_scoped_release released;
        n = with_input_view<device_memory>(in, [&](auto view) {
            return statistics ? label(view, labels, connectivity, background, stats, s, m)
                              : label(view, labels, connectivity, background, nullptr, s, m);
        });
    }
    if (!statistics) return {n, nb::none()};
    if (!intensity.is_none()) {
        const image_arg extra = import_image(intensity, "intensity_image", false);
        if (!extra.on_device) throw invalid_argument("intensity_image must be a CUDA array like image");
        nb::gil_scoped_release released;
        intensity_statistics(labels, extra.view<device_memory>(), stats, s);
    }
    return {n, device_statistics_dict(std::move(stats), device_id)};
}

// Labels a CUDA image into the device buffer at `out_ptr` (int64 when `int64_labels`, else
// int32; row stride in elements); the statistics stay on the device, as CuPy arrays queued on
// `cuda_stream` after the labels.
std::pair<std::int64_t, nb::object> label_device(nb::handle image, std::uintptr_t out_ptr, std::int64_t out_stride,
                                                 bool int64_labels, int connectivity, std::uint32_t background,
                                                 bool statistics, nb::handle intensity, std::uintptr_t cuda_stream,
                                                 int device_id, const std::string& method) {
    const image_arg in = import_image(image, "image", false, accepted_elements::label_input);
    const label_method m = parse_label_method(method);
    if (!in.on_device) throw invalid_argument("label_device needs a CUDA image");
    return int64_labels ? label_device_as<std::int64_t>(in, out_ptr, out_stride, connectivity, background, statistics,
                                                        intensity, cuda_stream, device_id, m)
                        : label_device_as<std::int32_t>(in, out_ptr, out_stride, connectivity, background, statistics,
                                                        intensity, cuda_stream, device_id, m);
}

}  // namespace

void bind_labeling(nb::module_& m) {
    // One name per function: nanobind picks the overload by the dtype of out.
    m.def("label_host", &label_host<std::int32_t>, "image"_a.none(), "out"_a, "connectivity"_a, "background"_a,
          "statistics"_a, "intensity"_a.none(), "method"_a,
          "Labels a host image into out (int32); returns (count, statistics dict or None).");
    m.def("label_host", &label_host<std::int64_t>, "image"_a.none(), "out"_a, "connectivity"_a, "background"_a,
          "statistics"_a, "intensity"_a.none(), "method"_a,
          "Labels a host image into out (int64); returns (count, statistics dict or None).");
    m.def("label_bits", &label_bits<std::int32_t>, "address"_a, "width"_a, "height"_a, "stride"_a, "out"_a,
          "connectivity"_a, "statistics"_a,
          "Labels the set bits of a host bit image into out (int32), without unpacking.");
    m.def("label_bits", &label_bits<std::int64_t>, "address"_a, "width"_a, "height"_a, "stride"_a, "out"_a,
          "connectivity"_a, "statistics"_a,
          "Labels the set bits of a host bit image into out (int64), without unpacking.");
    m.def("label_device", &label_device, "image"_a.none(), "out_ptr"_a, "out_stride"_a, "int64_labels"_a,
          "connectivity"_a, "background"_a, "statistics"_a, "intensity"_a.none(), "cuda_stream"_a, "device_id"_a,
          "method"_a, "Labels a CUDA image into the int32 (int64 with int64_labels) device buffer at out_ptr; returns (count, "
          "dict of CuPy arrays or None).");
}

}  // namespace granula::python
