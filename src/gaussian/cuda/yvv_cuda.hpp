// The CUDA Young-van Vliet recursion along one axis in the seed paper's schemes (one thread per
// line, its approximate two-way split, and the split that hands the state over exactly); the
// plan's `split` chooses. Called by the Gaussian's axis pass.
#pragma once

#include <cuda_runtime.h>

#include "gaussian/gaussian_plan.hpp"
#include "granula/core/image.hpp"

namespace granula::cuda {

// axis 0: each column is a line; axis 1: each row.
template <class T, class U>
void yvv_pass(device_view<const T> in, device_view<U> out, const detail::axis_plan& plan, int axis, cudaStream_t s);

}  // namespace granula::cuda
