// Geometric transforms of whole images (used to straighten a page after detect_rotation).
#pragma once

#include "granula/core/image.hpp"
#include "granula/core/pixel_type.hpp"

namespace granula {

// Rotation about the image centre ((width - 1) / 2, (height - 1) / 2) by `angle` degrees,
// counter-clockwise as seen on screen (y down; GUIDE §1), keeping the size (the corners that
// leave are cut off, those that come in get `fill`). Each output pixel is the bilinear
// interpolation of the input at its pre-image; a pre-image outside [0, width - 1] x
// [0, height - 1] gives `fill`. Integer pixels round half up; float NaN propagates into the
// pixels whose four neighbours include it. Multiples of 90 degrees use exact sines, so 0 degrees
// copies the image and quarter turns of a square image move pixels exactly. This is
// scipy.ndimage.rotate(image, angle, reshape=False, order=1, mode='constant', cval=fill).
// in and out must have the same size and must not overlap; fill must be representable in T
// (NaN is allowed for float32).
template <pixel T>
void rotate(host_view<const T> in, host_view<T> out, double angle, double fill);

}  // namespace granula
