// Images: non-owning strided views and owning images, typed by memory space at compile time.
//
// A view is (data, width, height, stride) with the stride in elements (>= width), so a
// sub-image of a larger buffer is a view too. host_view and device_view are distinct types:
// passing device memory where host memory is expected does not compile. Owning images are
// move-only; copying pixels is always explicit (clone(), copy(), upload(), download()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "granula/core/error.hpp"
#include "granula/core/pixel_type.hpp"

namespace granula {

struct host_memory {
    static constexpr const char* name = "host";
};
struct device_memory {
    static constexpr const char* name = "device";
};

namespace detail {
[[noreturn]] void throw_bad_view(const std::string& what);
void check_view_shape(std::int64_t width, std::int64_t height, std::int64_t stride, const void* data);
}  // namespace detail

template <class T, class Space>
class image_view {
public:
    using value_type = T;
    using space = Space;

    image_view() = default;
    image_view(T* data, std::int64_t width, std::int64_t height, std::int64_t stride)
        : data_(data), width_(width), height_(height), stride_(stride) {
        detail::check_view_shape(width, height, stride, data);
    }
    image_view(T* data, std::int64_t width, std::int64_t height) : image_view(data, width, height, width) {}

    // A view of mutable pixels converts to a view of const pixels, never the other way.
    template <class U>
        requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
    image_view(const image_view<U, Space>& other)  // NOLINT(google-explicit-constructor)
        : data_(other.data()), width_(other.width()), height_(other.height()), stride_(other.stride()) {}

    T* data() const { return data_; }
    std::int64_t width() const { return width_; }
    std::int64_t height() const { return height_; }
    std::int64_t stride() const { return stride_; }  // in elements
    std::int64_t pixel_count() const { return width_ * height_; }
    bool empty() const { return width_ == 0 || height_ == 0; }
    bool contiguous() const { return stride_ == width_; }
    T* row(std::int64_t y) const { return data_ + y * stride_; }

    T& operator()(std::int64_t y, std::int64_t x) const
        requires std::is_same_v<Space, host_memory>
    {
        return data_[y * stride_ + x];
    }

    // The rectangle [x, x + width) x [y, y + height) of this view.
    image_view subview(std::int64_t x, std::int64_t y, std::int64_t width, std::int64_t height) const {
        if (x < 0 || y < 0 || width < 0 || height < 0 || x + width > width_ || y + height > height_) {
            detail::throw_bad_view("subview (x=" + std::to_string(x) + ", y=" + std::to_string(y) +
                                   ", width=" + std::to_string(width) + ", height=" + std::to_string(height) +
                                   ") lies outside the " + std::to_string(width_) + "x" +
                                   std::to_string(height_) + " view");
        }
        return image_view(data_ + y * stride_ + x, width, height, stride_);
    }

    // Address range [first, last) that the view's pixels occupy (for overlap checks).
    const void* first_byte() const { return data_; }
    const void* last_byte() const {
        return empty() ? static_cast<const void*>(data_)
                       : static_cast<const void*>(data_ + (height_ - 1) * stride_ + width_);
    }

private:
    T* data_ = nullptr;
    std::int64_t width_ = 0;
    std::int64_t height_ = 0;
    std::int64_t stride_ = 0;
};

template <class T>
using host_view = image_view<T, host_memory>;
template <class T>
using device_view = image_view<T, device_memory>;

namespace detail {
// True when two views (anything with empty(), first_byte() and last_byte()) share a byte.
template <class A, class B>
bool views_overlap(const A& a, const B& b) {
    if (a.empty() || b.empty()) return false;
    auto a0 = static_cast<const char*>(a.first_byte()), a1 = static_cast<const char*>(a.last_byte());
    auto b0 = static_cast<const char*>(b.first_byte()), b1 = static_cast<const char*>(b.last_byte());
    return a0 < b1 && b0 < a1;
}
}  // namespace detail

// True when two views share any byte of memory.
template <class T, class U, class Space>
bool overlaps(const image_view<T, Space>& a, const image_view<U, Space>& b) {
    return detail::views_overlap(a, b);
}

namespace detail {
void* allocate(host_memory, std::size_t bytes);
void deallocate(host_memory, void* p) noexcept;
void* allocate(device_memory, std::size_t bytes);
void deallocate(device_memory, void* p) noexcept;
// Elements per row for a new image: hosts keep rows packed (numpy-compatible); devices pad
// rows to 128 bytes so every row starts on a memory transaction boundary.
std::int64_t row_stride(host_memory, std::int64_t width, std::size_t element_size);
std::int64_t row_stride(device_memory, std::int64_t width, std::size_t element_size);
std::size_t checked_image_bytes(std::int64_t width, std::int64_t height, std::int64_t stride,
                                std::size_t element_size);

template <class Space>
struct memory_deleter {
    void operator()(void* p) const noexcept { deallocate(Space{}, p); }
};
}  // namespace detail

// An owning image. Pixels are not initialised on construction (like cv::Mat): call fill().
template <element T, class Space>
class image {
public:
    using value_type = T;
    using space = Space;

    image() = default;
    image(std::int64_t width, std::int64_t height) {
        const std::int64_t stride = detail::row_stride(Space{}, width, sizeof(T));
        const std::size_t bytes = detail::checked_image_bytes(width, height, stride, sizeof(T));
        data_.reset(static_cast<T*>(bytes ? detail::allocate(Space{}, bytes) : nullptr));
        width_ = width;
        height_ = height;
        stride_ = stride;
    }

    image(image&&) noexcept = default;
    image& operator=(image&&) noexcept = default;
    image(const image&) = delete;
    image& operator=(const image&) = delete;

    T* data() const { return data_.get(); }
    std::int64_t width() const { return width_; }
    std::int64_t height() const { return height_; }
    std::int64_t stride() const { return stride_; }
    bool empty() const { return width_ == 0 || height_ == 0; }

    image_view<T, Space> view() { return {data_.get(), width_, height_, stride_}; }
    image_view<const T, Space> view() const { return {data_.get(), width_, height_, stride_}; }
    operator image_view<T, Space>() { return view(); }              // NOLINT
    operator image_view<const T, Space>() const { return view(); }  // NOLINT

private:
    std::unique_ptr<T, detail::memory_deleter<Space>> data_;
    std::int64_t width_ = 0;
    std::int64_t height_ = 0;
    std::int64_t stride_ = 0;
};

template <class T>
using host_image = image<T, host_memory>;
template <class T>
using device_image = image<T, device_memory>;

// Sets every pixel of a host view to `value`.
template <element T>
void fill(host_view<T> view, T value) {
    for (std::int64_t y = 0; y < view.height(); ++y) std::fill_n(view.row(y), view.width(), value);
}

// Copies pixels between host views of equal size.
template <element T>
void copy(host_view<const T> src, host_view<T> dst) {
    if (src.width() != dst.width() || src.height() != dst.height())
        detail::throw_bad_view("copy: source is " + std::to_string(src.width()) + "x" +
                               std::to_string(src.height()) + " but destination is " +
                               std::to_string(dst.width()) + "x" + std::to_string(dst.height()));
    for (std::int64_t y = 0; y < src.height(); ++y) std::copy_n(src.row(y), src.width(), dst.row(y));
}

template <element T>
host_image<T> clone(host_view<const T> src) {
    host_image<T> out(src.width(), src.height());
    copy<T>(src, out.view());
    return out;
}

}  // namespace granula
