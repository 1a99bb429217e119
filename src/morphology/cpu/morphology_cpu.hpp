// The CPU backend of grey morphology. Called by the front file with validated arguments and
// non-overlapping views.
#pragma once

#include "granula/morphology/morphology.hpp"

namespace granula::cpu {

// Erosions use `erosion_element`, dilations `dilation_element` (they differ under some
// conventions, e.g. OpenCV's unreflected dilation).
template <class T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& erosion_element,
                const structuring_element& dilation_element, border mode);

}  // namespace granula::cpu
