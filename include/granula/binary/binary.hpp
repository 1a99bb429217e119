// Binary morphology on bit-packed images (docs/binary.md).
//
// On 0/1 images every operation equals granula's grey operation of the same
// name (erosion, dilation, opening, closing in
// granula/morphology/morphology.hpp) bit for bit, with the same structuring
// element and border: erosion ANDs over the footprint, dilation ORs over the
// reflected footprint. Border modes: all of ignore, constant (cval 0 or 1),
// nearest, reflect, mirror, wrap for horizontal and vertical line segments
// (every rectangle); other segment directions support ignore and constant.
// Input and output may be the same view.
#pragma once

#include <string_view>

#include "granula/binary/bit_image.hpp"
#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula {

// --- packing
// ------------------------------------------------------------------------------------
// Bit (y, x) = in(y, x) > threshold. The threshold must lie in the pixel type's
// range (and not be NaN); NaN pixels pack to 0. With the default threshold 0
// every non-zero pixel is 1.
template <pixel T>
void pack(host_view<const T> in, host_bit_view out, double threshold = 0);
template <pixel T>
void pack(device_view<const T> in, device_bit_view out, double threshold = 0, stream s = {});
template <pixel T>
host_bit_image pack(host_view<const T> in, double threshold = 0) {
    host_bit_image out(in.width(), in.height());
    pack<T>(in, out.view(), threshold);
    return out;
}

// out(y, x) = 1 where the bit is set, 0 elsewhere.
template <pixel T>
void unpack(const_host_bit_view in, host_view<T> out);
template <pixel T>
void unpack(const_device_bit_view in, device_view<T> out, stream s = {});
template <pixel T>
host_image<T> unpack(const_host_bit_view in) {
    host_image<T> out(in.width(), in.height());
    unpack<T>(in, out.view());
    return out;
}

// --- operations
// -----------------------------------------------------------------------------------
enum class binary_op { erosion, dilation, opening, closing };
std::string_view to_string(binary_op op);

// Throws invalid_argument when sizes differ, an image is empty or cval is not 0
// or 1; unsupported for a border mode a segment direction does not support.
void binary_morphology(binary_op op, const_host_bit_view in, host_bit_view out, const structuring_element& footprint,
                       border mode = {});
void binary_morphology(binary_op op, const_device_bit_view in, device_bit_view out,
                       const structuring_element& footprint, border mode = {}, stream s = {});

#define GRANULA_DECLARE_BINARY_OP(name)                                                                            \
    inline void binary_##name(const_host_bit_view in, host_bit_view out, const structuring_element& footprint,     \
                              border mode = {}) {                                                                  \
        binary_morphology(binary_op::name, in, out, footprint, mode);                                              \
    }                                                                                                              \
    inline void binary_##name(const_device_bit_view in, device_bit_view out, const structuring_element& footprint, \
                              border mode = {}, stream s = {}) {                                                   \
        binary_morphology(binary_op::name, in, out, footprint, mode, s);                                           \
    }                                                                                                              \
    inline host_bit_image binary_##name(const_host_bit_view in, const structuring_element& footprint,              \
                                        border mode = {}) {                                                        \
        host_bit_image out(in.width(), in.height());                                                               \
        binary_morphology(binary_op::name, in, out.view(), footprint, mode);                                       \
        return out;                                                                                                \
    }
GRANULA_DECLARE_BINARY_OP(erosion)
GRANULA_DECLARE_BINARY_OP(dilation)
GRANULA_DECLARE_BINARY_OP(opening)
GRANULA_DECLARE_BINARY_OP(closing)
#undef GRANULA_DECLARE_BINARY_OP

// Hit-or-miss transform: out = erosion(f, foreground) AND erosion(NOT f,
// background). The border extends f; the complement sees the complement of that
// extension (constant cval c becomes 1 - c, ignore stays ignore). The two
// elements should not share an offset (the result is then empty).
void hit_or_miss(const_host_bit_view in, host_bit_view out, const structuring_element& foreground,
                 const structuring_element& background, border mode = {});
void hit_or_miss(const_device_bit_view in, device_bit_view out, const structuring_element& foreground,
                 const structuring_element& background, border mode = {}, stream s = {});

// The operations on 0/1 pixel images: pack (non-zero is 1), operate, unpack to
// 0/1. These are the registry's binary_erosion, ... (CLI commands and Python
// functions).
template <pixel T>
void binary_morphology(binary_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                       border mode = {});
template <pixel T>
void binary_morphology(binary_op op, device_view<const T> in, device_view<T> out, const structuring_element& footprint,
                       border mode = {}, stream s = {});

}  // namespace granula
