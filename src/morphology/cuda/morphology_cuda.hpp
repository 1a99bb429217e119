// The CUDA backend of grey morphology. Called by the front file with validated arguments and
// non-overlapping views; every launch is on stream `s`, and nothing synchronises the host.
#pragma once

#include "granula/morphology/morphology.hpp"

namespace granula::cuda {

// Erosions use `erosion_element`, dilations `dilation_element` (they differ under some
// conventions, e.g. OpenCV's unreflected dilation).
template <class T>
void morphology(morphology_op op, device_view<const T> in, device_view<T> out,
                const structuring_element& erosion_element, const structuring_element& dilation_element, border mode,
                stream s);

}  // namespace granula::cuda
