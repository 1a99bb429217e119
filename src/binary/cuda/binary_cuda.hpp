// The CUDA backend of binary morphology. Called by the front file (binary.cpp)
// with validated arguments and non-overlapping views; every launch is on stream
// `s` and nothing waits for it. Kernels write only the output's pixels: the
// bits past the width in each row's last word keep their value.
#pragma once

#include <cstddef>

#include "binary/bit_pass.hpp"
#include "granula/binary/bit_image.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula::cuda {

void zero_words(bit_word* words, std::size_t count);
void bit_segment_pass(const_device_bit_view in, device_bit_view out, const detail::bit_pass& pass, stream s);
// A vertical pass followed by a horizontal one (a rectangle) in one kernel,
// when the shapes allow (border ignore or constant, windows short enough for a
// tile in shared memory); returns false, having done nothing, otherwise.
bool rectangle_pass(const_device_bit_view in, device_bit_view out, const detail::bit_pass& vertical,
                    const detail::bit_pass& horizontal, stream s);
void bit_complement(const_device_bit_view in, device_bit_view out, stream s);
void bit_and(const_device_bit_view a, device_bit_view out, stream s);
template <class T>
void pack_bits(device_view<const T> in, device_bit_view out, T threshold, stream s);
template <class T>
void unpack_bits(const_device_bit_view in, device_view<T> out, stream s);
// uint8 or uint16 pixels made 0/1 in place, non-zero being 1.
template <class T>
void zero_one(device_view<T> image, stream s);

}  // namespace granula::cuda
