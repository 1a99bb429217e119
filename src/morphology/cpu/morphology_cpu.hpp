// The CPU backend of grey morphology. Called by the front file with validated arguments and
// non-overlapping views.
#pragma once

#include "granula/morphology/morphology.hpp"

namespace granula::cpu {

template <class T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                border mode);

}  // namespace granula::cpu
