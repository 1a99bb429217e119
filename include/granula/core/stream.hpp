// An explicit CUDA stream handle. granula never creates hidden streams: every device
// operation runs on the stream it is given (the default stream when none is).
#pragma once

namespace granula {

class stream {
public:
    stream() = default;  // the CUDA default stream
    // Wraps an existing cudaStream_t (passed as void* so this header needs no CUDA headers).
    explicit stream(void* cuda_stream) : handle_(cuda_stream) {}
    void* native_handle() const { return handle_; }
    // Blocks until all work queued on the stream has finished; throws cuda_error.
    void synchronize() const;

private:
    void* handle_ = nullptr;
};

}  // namespace granula
