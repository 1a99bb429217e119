// Temporary device memory allocated and freed in stream order (cudaMallocAsync/cudaFreeAsync),
// for the scratch space of CUDA backends.
#pragma once

#include <cstddef>

#include "core/cuda/check.cuh"

namespace granula::detail {

class stream_buffer {
public:
    stream_buffer() = default;
    // `what` names the buffer in the error when the allocation fails.
    stream_buffer(std::size_t bytes, cudaStream_t s, const char* what) : stream_(s) {
        if (bytes) check_cuda(cudaMallocAsync(&ptr_, bytes, s), what);
    }
    ~stream_buffer() {
        if (ptr_) cudaFreeAsync(ptr_, stream_);
    }
    stream_buffer(const stream_buffer&) = delete;
    stream_buffer& operator=(const stream_buffer&) = delete;
    template <class U>
    U* as() const {
        return static_cast<U*>(ptr_);
    }

private:
    void* ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
};

}  // namespace granula::detail
