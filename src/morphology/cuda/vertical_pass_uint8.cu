// Vertical pass for uint8 pixels (one file per type so the kernels compile in parallel).
#include "morphology/cuda/vertical_pass.cuh"

namespace granula::cuda::detail {
template void vertical_pass<std::uint8_t>(device_view<const std::uint8_t>, device_view<std::uint8_t>, const pass_params<std::uint8_t>&, cudaStream_t);
}  // namespace granula::cuda::detail
