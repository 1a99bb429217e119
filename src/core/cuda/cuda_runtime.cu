// The core's CUDA services: device discovery, device memory, copies, streams, scratch buffers.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"
#include "granula/core/device.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {

bool cuda_built() { return true; }

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // no driver or no device: report none
        return 0;
    }
    return count;
}

void stream::synchronize() const { detail::check_cuda(cudaStreamSynchronize(detail::to_cuda(handle_)), "cudaStreamSynchronize"); }

namespace detail {

void* allocate(device_memory, std::size_t bytes) {
    if (!cuda_available()) throw cuda_error("cannot allocate device memory: no CUDA device is available");
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        std::size_t free_bytes = 0, total_bytes = 0;
        cudaMemGetInfo(&free_bytes, &total_bytes);
        throw cuda_error("out of GPU memory: asked for " + std::to_string(bytes) + " bytes, " +
                         std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " free");
    }
    check_cuda(status, "cudaMalloc");
    return p;
}

void deallocate(device_memory, void* p) noexcept { cudaFree(p); }

void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
             std::size_t rows, copy_direction direction, stream s) {
    if (row_bytes == 0 || rows == 0) return;
    const cudaMemcpyKind kind = direction == copy_direction::host_to_device   ? cudaMemcpyHostToDevice
                                : direction == copy_direction::device_to_host ? cudaMemcpyDeviceToHost
                                                                              : cudaMemcpyDeviceToDevice;
    if (dst_pitch == row_bytes && src_pitch == row_bytes) {
        // Contiguous rows: the 1-D copy runs at full bandwidth, the 2-D one at 40% of it (H200).
        check_cuda(cudaMemcpyAsync(dst, src, row_bytes * rows, kind, to_cuda(s.native_handle())), "cudaMemcpyAsync");
        return;
    }
    check_cuda(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, kind, to_cuda(s.native_handle())),
               "cudaMemcpy2DAsync");
}

namespace {

// The pool of `device` keeps freed memory mapped up to an eighth of the device (at most 4 GiB)
// instead of unmapping it at every synchronisation: the next call's scratch images (hundreds of
// MB for a large image) are then not mapped again. Set once per device, on first use.
void keep_freed_scratch(int device) {
    static std::mutex mutex;
    static std::uint64_t done = 0;  // bit d: device d (devices past 63 keep the default)
    const std::lock_guard<std::mutex> lock(mutex);
    if (device >= 64 || (done >> device & 1u)) return;
    done |= std::uint64_t{1} << device;
    cudaMemPool_t pool = nullptr;
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
        cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        cudaGetLastError();  // a tuning, not a requirement
        return;
    }
    std::uint64_t keep = std::min<std::uint64_t>(total_bytes / 8, std::uint64_t{4} << 30);
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
}

}  // namespace

stream_buffer::stream_buffer(std::size_t bytes, cudaStream_t s, const char* what) : stream_(s) {
    if (bytes == 0) return;
    int device = 0, pools = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device), "cudaDeviceGetAttribute");
    pooled_ = pools != 0;
    if (pooled_) keep_freed_scratch(device);
    const cudaError_t status = pooled_ ? cudaMallocAsync(&ptr_, bytes, s) : cudaMalloc(&ptr_, bytes);
    if (status != cudaSuccess) ptr_ = nullptr;
    check_cuda(status, what);
}

void stream_buffer::release() noexcept {
    if (ptr_ == nullptr) return;
    if (pooled_)
        cudaFreeAsync(ptr_, stream_);  // runs after the work queued on the stream that uses it
    else
        cudaFree(ptr_);
    ptr_ = nullptr;
}

}  // namespace detail
}  // namespace granula
