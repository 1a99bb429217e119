// Bindings of binary morphology on bit-packed images (granula/binary.py wraps
// them). Packed images travel as (address, width, height, row stride in words,
// on_device) of a uint64 array that granula.binary validated and keeps alive;
// pixel arrays go through import_image.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <string>

#include "arrays.hpp"
#include "granula/granula.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace granula::python {
namespace {

struct packed_arg {
    std::uintptr_t address;
    std::int64_t width, height, stride;
    bool on_device;

    template <class W, class Space>
    bit_view<W, Space> view() const {
        return {reinterpret_cast<W*>(address), width, height, stride};
    }
};

packed_arg packed(std::uintptr_t address, std::int64_t width, std::int64_t height, std::int64_t stride,
                  bool on_device) {
    return {address, width, height, stride, on_device};
}

stream to_stream(std::uintptr_t cuda_stream) { return stream(reinterpret_cast<void*>(cuda_stream)); }

void check_same_memory(bool image_on_device, bool packed_on_device) {
    if (image_on_device != packed_on_device)
        throw invalid_argument(std::string("the image is ") + (image_on_device ? "a CUDA array" : "a host array") +
                               " but the packed words are " + (packed_on_device ? "on the GPU" : "in host memory") +
                               "; both must be in the same kind of memory");
}

void pack_into(nb::handle image, std::uintptr_t address, std::int64_t width, std::int64_t height, std::int64_t stride,
               bool on_device, double threshold, std::uintptr_t cuda_stream) {
    const image_arg in = import_image(image, "image", false);
    check_same_memory(in.on_device, on_device);
    const packed_arg out = packed(address, width, height, stride, on_device);
    nb::gil_scoped_release released;
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        if (in.on_device)
            pack<T>(in.view<device_memory>().as<const T>(), out.view<bit_word, device_memory>(), threshold,
                    to_stream(cuda_stream));
        else
            pack<T>(in.view<host_memory>().as<const T>(), out.view<bit_word, host_memory>(), threshold);
    });
}

void unpack_into(std::uintptr_t address, std::int64_t width, std::int64_t height, std::int64_t stride, bool on_device,
                 nb::handle image, std::uintptr_t cuda_stream) {
    const image_arg dst = import_image(image, "out", true);
    check_same_memory(dst.on_device, on_device);
    const packed_arg in = packed(address, width, height, stride, on_device);
    nb::gil_scoped_release released;
    visit_pixel_type(dst.type, [&]<class T>(type_tag<T>) {
        if (on_device)
            unpack<T>(in.view<const bit_word, device_memory>(), dst.view<device_memory>().as<T>(),
                      to_stream(cuda_stream));
        else
            unpack<T>(in.view<const bit_word, host_memory>(), dst.view<host_memory>().as<T>());
    });
}

binary_op parse_binary_op(std::string_view name) {
    for (const auto op : {binary_op::erosion, binary_op::dilation, binary_op::opening, binary_op::closing})
        if (to_string(op) == name) return op;
    throw invalid_argument("unknown binary operation '" + std::string(name) +
                           "'; known: binary_erosion, binary_dilation, "
                           "binary_opening, binary_closing");
}

void run_packed(std::string_view name, std::uintptr_t in_address, std::uintptr_t out_address, std::int64_t width,
                std::int64_t height, std::int64_t in_stride, std::int64_t out_stride, bool on_device,
                const structuring_element& footprint, std::string_view mode, double cval, std::uintptr_t cuda_stream) {
    const binary_op op = parse_binary_op(name);
    const border b{parse_border_mode(mode), cval};
    const packed_arg in = packed(in_address, width, height, in_stride, on_device);
    const packed_arg out = packed(out_address, width, height, out_stride, on_device);
    nb::gil_scoped_release released;
    if (on_device)
        binary_morphology(op, in.view<const bit_word, device_memory>(), out.view<bit_word, device_memory>(), footprint,
                          b, to_stream(cuda_stream));
    else
        binary_morphology(op, in.view<const bit_word, host_memory>(), out.view<bit_word, host_memory>(), footprint, b);
}

void run_hit_or_miss(std::uintptr_t in_address, std::uintptr_t out_address, std::int64_t width, std::int64_t height,
                     std::int64_t in_stride, std::int64_t out_stride, bool on_device,
                     const structuring_element& foreground, const structuring_element& background,
                     std::string_view mode, double cval, std::uintptr_t cuda_stream) {
    const border b{parse_border_mode(mode), cval};
    const packed_arg in = packed(in_address, width, height, in_stride, on_device);
    const packed_arg out = packed(out_address, width, height, out_stride, on_device);
    nb::gil_scoped_release released;
    if (on_device)
        hit_or_miss(in.view<const bit_word, device_memory>(), out.view<bit_word, device_memory>(), foreground,
                    background, b, to_stream(cuda_stream));
    else
        hit_or_miss(in.view<const bit_word, host_memory>(), out.view<bit_word, host_memory>(), foreground, background,
                    b);
}

}  // namespace

void bind_binary(nb::module_& m) {
    m.def("pack_into", &pack_into, "image"_a.none(), "address"_a, "width"_a, "height"_a, "stride"_a, "on_device"_a,
          "threshold"_a, "cuda_stream"_a, "Packs image > threshold into the uint64 words at address.");
    m.def("unpack_into", &unpack_into, "address"_a, "width"_a, "height"_a, "stride"_a, "on_device"_a, "out"_a.none(),
          "cuda_stream"_a, "Writes the packed bits as 0/1 into out.");
    m.def("binary_packed", &run_packed, "name"_a, "in_address"_a, "out_address"_a, "width"_a, "height"_a, "in_stride"_a,
          "out_stride"_a, "on_device"_a, "footprint"_a, "mode"_a, "cval"_a, "cuda_stream"_a,
          "Runs binary_erosion/dilation/opening/closing on packed words.");
    m.def("hit_or_miss_packed", &run_hit_or_miss, "in_address"_a, "out_address"_a, "width"_a, "height"_a, "in_stride"_a,
          "out_stride"_a, "on_device"_a, "foreground"_a, "background"_a, "mode"_a, "cval"_a, "cuda_stream"_a,
          "Hit-or-miss transform on packed words.");
}

}  // namespace granula::python
