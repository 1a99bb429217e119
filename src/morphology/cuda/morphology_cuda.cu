// PLACEHOLDER: replaced by the CUDA backend implementation.
#include "morphology/cuda/morphology_cuda.hpp"
namespace granula::cuda {
template <class T>
void morphology(morphology_op, device_view<const T>, device_view<T>, const structuring_element&, border, stream) {
    throw unsupported("CUDA morphology not implemented yet");
}
#define GRANULA_INSTANTIATE(type, name) \
    template void morphology<type>(morphology_op, device_view<const type>, device_view<type>, const structuring_element&, border, stream);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
}
