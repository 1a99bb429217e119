// Temporary device memory allocated and freed in stream order (cudaMallocAsync/cudaFreeAsync),
// so temporaries cost no host synchronisation: the scratch space of every CUDA backend. Where
// the device has no memory pools it falls back to cudaMalloc/cudaFree.
#pragma once

#include <cstddef>

#include "core/cuda/check.cuh"

namespace granula::detail {

class stream_buffer {
public:
    stream_buffer() = default;
    // `what` names the buffer in the error when the allocation fails.
    stream_buffer(std::size_t bytes, cudaStream_t s, const char* what);
    ~stream_buffer() { release(); }
    stream_buffer(stream_buffer&& other) noexcept
        : ptr_(other.ptr_), stream_(other.stream_), pooled_(other.pooled_) {
        other.ptr_ = nullptr;
    }
    stream_buffer& operator=(stream_buffer&& other) noexcept {
        if (this != &other) {
            release();
            ptr_ = other.ptr_, stream_ = other.stream_, pooled_ = other.pooled_;
            other.ptr_ = nullptr;
        }
        return *this;
    }
    stream_buffer(const stream_buffer&) = delete;
    stream_buffer& operator=(const stream_buffer&) = delete;
    template <class U>
    U* as() const {
        return static_cast<U*>(ptr_);
    }

private:
    void release() noexcept;
    void* ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
    bool pooled_ = false;
};

}  // namespace granula::detail
