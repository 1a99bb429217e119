// The CPU backend of the Gaussian filters: axis 0 (down the columns), then axis 1 (along rows).
#pragma once

#include "gaussian/gaussian_plan.hpp"
#include "granula/core/image.hpp"

namespace granula::cpu {

template <class T, class U>
void gaussian(host_view<const T> in, host_view<U> out, const detail::axis_plan& rows_axis,
              const detail::axis_plan& cols_axis);

}  // namespace granula::cpu
