// Backend selection, CUDA availability and host<->device transfers.
#pragma once

#include <cstddef>
#include <string_view>

#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {

enum class device {
    automatic,  // CUDA when a device is present, the CPU otherwise
    cpu,
    cuda,
};

std::string_view to_string(device d);
// Parses "auto", "cpu", "cuda"; throws invalid_argument.
device parse_device(std::string_view name);

// True when this build has the CUDA backend (whether or not a GPU is present).
bool cuda_built();
// Number of usable CUDA devices; 0 without the CUDA backend or without a GPU.
int cuda_device_count();
// True when cuda_built() and a device is present.
bool cuda_available();
// Resolves automatic; throws cuda_error when cuda is asked for and none is available.
device resolve_device(device requested);

namespace detail {
enum class copy_direction { host_to_device, device_to_host, device_to_device };
// 2-D copy of `rows` rows of `row_bytes` bytes, asynchronous on `s`.
void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
             std::size_t row_bytes, std::size_t rows, copy_direction direction, stream s);
}  // namespace detail

template <element T>
void copy(host_view<const T> src, device_view<T> dst, stream s = {}) {
    if (src.width() != dst.width() || src.height() != dst.height())
        detail::throw_bad_view("upload: source and destination sizes differ");
    detail::copy_2d(dst.data(), dst.stride() * sizeof(T), src.data(), src.stride() * sizeof(T),
                    src.width() * sizeof(T), src.height(), detail::copy_direction::host_to_device, s);
}

template <element T>
void copy(device_view<const T> src, host_view<T> dst, stream s = {}) {
    if (src.width() != dst.width() || src.height() != dst.height())
        detail::throw_bad_view("download: source and destination sizes differ");
    detail::copy_2d(dst.data(), dst.stride() * sizeof(T), src.data(), src.stride() * sizeof(T),
                    src.width() * sizeof(T), src.height(), detail::copy_direction::device_to_host, s);
}

template <element T>
void copy(device_view<const T> src, device_view<T> dst, stream s = {}) {
    if (src.width() != dst.width() || src.height() != dst.height())
        detail::throw_bad_view("device copy: source and destination sizes differ");
    detail::copy_2d(dst.data(), dst.stride() * sizeof(T), src.data(), src.stride() * sizeof(T),
                    src.width() * sizeof(T), src.height(), detail::copy_direction::device_to_device, s);
}

// New device image holding a copy of `src` (asynchronous on `s`).
template <element T>
device_image<T> upload(host_view<const T> src, stream s = {}) {
    device_image<T> out(src.width(), src.height());
    copy<T>(src, out.view(), s);
    return out;
}

// New host image holding a copy of `src`; synchronises `s` before returning.
template <element T>
host_image<T> download(device_view<const T> src, stream s = {}) {
    host_image<T> out(src.width(), src.height());
    copy<T>(src, out.view(), s);
    s.synchronize();
    return out;
}

}  // namespace granula
