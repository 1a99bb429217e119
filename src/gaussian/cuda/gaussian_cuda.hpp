// The CUDA backend of the Gaussian filters. Called by the front with validated arguments and
// non-overlapping views; every launch is on stream `s` and nothing synchronises the host.
#pragma once

#include "gaussian/gaussian_plan.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula::cuda {

// rows_axis filters along axis 0 (each column is a line), cols_axis along axis 1.
template <class T, class U>
void gaussian(device_view<const T> in, device_view<U> out, const detail::axis_plan& rows_axis,
              const detail::axis_plan& cols_axis, stream s);

}  // namespace granula::cuda
