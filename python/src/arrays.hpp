// Turning Python array objects into granula views without copying: numpy (and any host array
// with __dlpack__ or the buffer protocol), and CUDA arrays through __cuda_array_interface__
// (CuPy, PyTorch, Numba, JAX) or __dlpack__. Every rejection is a granula::invalid_argument
// (ValueError in Python) that says what was wrong and what is allowed.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "granula/core/any_image.hpp"
#include "granula/core/error.hpp"

namespace granula::python {

// The element types an import accepts.
enum class accepted_elements {
    pixels,       // the pixel types (pixel_type_names()): every operation on pixels
    label_input,  // labelling's input: uint8, uint16 and uint32 (granula::label_input)
};

// A validated 2-D image borrowed from a Python object.
struct image_arg {
    bool on_device = false;  // CUDA memory (else host memory)
    int device_id = -1;      // CUDA device ordinal when known (DLPack), -1 otherwise
    pixel_type type = pixel_type::uint8;  // the pixel type, unless `uint32`
    // uint32 elements, which are no pixel type (label_element): only a label_input import gives
    // them, and `type` does not apply; read them through uint32_view().
    bool uint32 = false;
    void* data = nullptr;
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::int64_t stride = 0;  // in elements
    // Keeps a DLPack export alive while the view is in use (empty for __cuda_array_interface__,
    // whose memory the caller's object owns).
    nanobind::ndarray<nanobind::ro> dlpack;

    template <class Space>
    any_view<Space> view() const {
        if (uint32) throw invalid_argument("a uint32 image has no pixel type; read it through uint32_view()");
        any_view<Space> v;
        v.type = type;
        v.data = data;
        v.width = width;
        v.height = height;
        v.stride = stride;
        return v;
    }
    // The image as a view of its uint32 elements; throws invalid_argument unless `uint32`.
    template <class Space>
    image_view<const std::uint32_t, Space> uint32_view() const {
        if (!uint32) throw invalid_argument("a " + describe() + " read as uint32");
        return {static_cast<const std::uint32_t*>(data), width, height, stride};
    }
    // "uint8", "uint32": numpy's name of the element type.
    std::string_view dtype_name() const;
    // "uint8 array of shape (480, 640) on the CPU", for messages.
    std::string describe() const;
};

// Reads `obj` as an image of the `accepted` element types. `role` names it in messages ("image",
// "out"); `writable` requires that its memory may be written.
image_arg import_image(nanobind::handle obj, std::string_view role, bool writable,
                       accepted_elements accepted = accepted_elements::pixels);

}  // namespace granula::python
