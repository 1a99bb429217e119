// Checking of every CUDA runtime call and kernel launch: failures become granula::cuda_error.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "granula/core/error.hpp"

namespace granula::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* what) {
    cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
    throw cuda_error(std::string(what) + " failed: " + cudaGetErrorName(status) + " (" +
                     cudaGetErrorString(status) + ")");
}

inline void check_cuda(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw_cuda_error(status, what);
}

// Call after every kernel launch.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

inline cudaStream_t to_cuda(void* handle) { return static_cast<cudaStream_t>(handle); }

// An attribute of the current device.
inline int device_attribute(cudaDeviceAttr attribute) {
    int device = 0, value = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&value, attribute, device), "cudaDeviceGetAttribute");
    return value;
}

// The current device's multiprocessors (for launches sized to a wave of blocks).
inline int multiprocessors() { return device_attribute(cudaDevAttrMultiProcessorCount); }

}  // namespace granula::detail
