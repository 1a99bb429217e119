// Fused opening/closing by one line along an axis (fused_opening.cuh), for every pixel type.
#include "morphology/cuda/fused_opening.cuh"

namespace granula::cuda::detail {
#define GRANULA_INSTANTIATE(type, name)                                                                       \
    template bool fused_line_pair<type>(device_view<const type>, device_view<type>, bool, const pass_params<type>&, \
                                        const pass_params<type>&, cudaStream_t);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE
}  // namespace granula::cuda::detail
