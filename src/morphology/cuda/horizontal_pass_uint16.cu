// Horizontal pass for uint16 pixels (one file per type so the kernels compile in parallel).
#include "morphology/cuda/horizontal_pass.cuh"

namespace granula::cuda::detail {
template void horizontal_pass<std::uint16_t>(device_view<const std::uint16_t>, device_view<std::uint16_t>, const pass_params<std::uint16_t>&, cudaStream_t);
}  // namespace granula::cuda::detail
