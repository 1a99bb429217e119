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

namespace granula::python {

// A validated 2-D image borrowed from a Python object.
struct image_arg {
    bool on_device = false;  // CUDA memory (else host memory)
    int device_id = -1;      // CUDA device ordinal when known (DLPack), -1 otherwise
    pixel_type type = pixel_type::uint8;
    void* data = nullptr;
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::int64_t stride = 0;  // in elements
    // Keeps a DLPack export alive while the view is in use (empty for __cuda_array_interface__,
    // whose memory the caller's object owns).
    nanobind::ndarray<nanobind::ro> dlpack;

    template <class Space>
    any_view<Space> view() const {
        any_view<Space> v;
        v.type = type;
        v.data = data;
        v.width = width;
        v.height = height;
        v.stride = stride;
        return v;
    }
    // "uint8 array of shape (480, 640) on the CPU", for messages.
    std::string describe() const;
};

// Reads `obj` as an image. `role` names it in messages ("image", "out"); `writable` requires
// that its memory may be written.
image_arg import_image(nanobind::handle obj, std::string_view role, bool writable);

}  // namespace granula::python
