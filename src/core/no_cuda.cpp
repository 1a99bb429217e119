// The core's CUDA services in a build without the CUDA backend: no devices, and a clear
// error for anything that needs one.
#include "granula/core/device.hpp"
#include "granula/core/error.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {
namespace {
[[noreturn]] void no_cuda(const char* what) {
    throw unsupported(std::string(what) + ": this granula build has no CUDA backend");
}
}  // namespace

bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
void stream::synchronize() const {}

namespace detail {
void* allocate(device_memory, std::size_t) { no_cuda("device memory allocation"); }
void deallocate(device_memory, void*) noexcept {}
void copy_2d(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t, copy_direction, stream) {
    no_cuda("host/device copy");
}
}  // namespace detail
}  // namespace granula
