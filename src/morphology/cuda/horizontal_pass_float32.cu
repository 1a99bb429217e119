// Horizontal pass for float32 pixels (one file per type so the kernels compile in parallel).
#include "morphology/cuda/horizontal_pass.cuh"

namespace granula::cuda::detail {
template void horizontal_pass<float>(device_view<const float>, device_view<float>, const pass_params<float>&, cudaStream_t);
}  // namespace granula::cuda::detail
